package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// TestReloadUnderTraffic swaps the model file between two models with
// different weights six times, through each way of reloading (Reload, the
// repository load endpoint, a signal), plus one bad file, while 8
// goroutines send requests. No request fails, and every response is the
// whole prediction of the model version it names: A for odd versions, B
// for even ones, to within the rounding of batched products (1e-9, against
// a gap of more than 1e-3 between the models on every row).
func TestReloadUnderTraffic(t *testing.T) {
	a, b, _, rows := models(t)
	predA, err := a.Predict(rows)
	if err != nil {
		t.Fatal(err)
	}
	predB, err := b.Predict(rows)
	if err != nil {
		t.Fatal(err)
	}
	n, k := predA.Dims()
	for i := range n {
		if d := maxAbsDiff(predA.RawRowView(i), predB.RawRowView(i)); d < 1e-3 {
			t.Fatalf("models A and B agree on row %d to %g: the test could not tell them apart", i, d)
		}
	}
	path := filepath.Join(t.TempDir(), "m.kk")
	saveModel(t, path, a)
	s, base := start(t, Config{Models: []ModelSpec{{Name: "m", Path: path}}, BatchWait: time.Millisecond, BatchWorkers: 2,
		EnableRepository: true})
	sig := make(chan os.Signal, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.ReloadOnSignal(ctx, sig)

	var stop atomic.Bool
	var wg sync.WaitGroup
	var answered atomic.Int64
	seen := make([]atomic.Int64, 8) // responses per version
	failures := make(chan error, 100)
	for g := range 8 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				lo, cnt := (g*7+i*3)%(n-4), 1+(g+i)%4
				code, body, err := do("POST", base+"/v2/models/m/infer", inferBody(rows, lo, lo+cnt, FP64, i%2 == 0,
					map[string]any{"outputs": []map[string]string{{"name": "scores"}}}))
				if err != nil || code != http.StatusOK {
					failures <- fmt.Errorf("status %d: %s (%v)", code, body, err)
					return
				}
				var r InferResponse
				if err := json.Unmarshal(body, &r); err != nil {
					failures <- err
					return
				}
				v, err := strconv.Atoi(r.ModelVersion)
				if err != nil || v < 1 || v >= len(seen) || len(r.Outputs) != 1 {
					failures <- fmt.Errorf("response %.200s", body)
					return
				}
				want := predA
				if v%2 == 0 {
					want = predB
				}
				got := r.Outputs[0].Data
				if d := maxAbsDiff(got, want.RawMatrix().Data[lo*k:(lo+cnt)*k]); d > 1e-9 {
					failures <- fmt.Errorf("version %d, rows %d..%d: scores differ from the version's model by %g", v, lo, lo+cnt, d)
					return
				}
				seen[v].Add(1)
				answered.Add(1)
			}
		})
	}

	version := func() int64 { return s.models["m"].cur.Load().version }
	reloads := []func(){
		func() {
			if err := s.Reload("m"); err != nil {
				t.Error(err)
			}
		},
		func() {
			if code, body := call(t, "POST", base+"/v2/repository/models/m/load", nil); code != http.StatusOK {
				t.Errorf("load: %d %s", code, body)
			}
		},
		func() {
			v := version()
			sig <- syscall.SIGHUP
			waitFor(t, func() bool { return version() == v+1 })
		},
	}
	for swap := range 6 {
		time.Sleep(40 * time.Millisecond)
		next := b
		if swap%2 == 1 {
			next = a
		}
		if swap == 3 {
			// A bad file: the reload fails and version 4 keeps serving.
			if err := os.WriteFile(path, []byte(`{"format":"kernelkit-model","version":2}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := s.Reload("m"); err == nil || !strings.Contains(err.Error(), "map_kind") {
				t.Errorf("bad file reloaded: %v", err)
			}
			if v := version(); v != 4 {
				t.Errorf("version %d after a failed reload, want 4", v)
			}
			time.Sleep(20 * time.Millisecond)
		}
		saveModel(t, path, next)
		reloads[swap%3]()
		if v := version(); v != int64(swap+2) {
			t.Errorf("version %d after swap %d, want %d", v, swap, swap+2)
		}
	}
	time.Sleep(40 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	for v := 1; v <= 7; v++ {
		if seen[v].Load() == 0 {
			t.Errorf("no response from version %d (answered %d)", v, answered.Load())
		}
	}
	if ok, bad := metric(t, s, "kernelkit_serve_model_reloads_total", map[string]string{"model": "m", "result": "ok"}),
		metric(t, s, "kernelkit_serve_model_reloads_total", map[string]string{"model": "m", "result": "error"}); ok != 6 || bad != 1 {
		t.Errorf("reloads ok %v, error %v; want 6 and 1", ok, bad)
	}
	t.Logf("%d requests answered across 7 versions", answered.Load())
}

// slowRequest opens a connection and sends an infer request for rows
// [lo, hi) but for the last 10 bytes of its body; finish sends them and
// returns the response.
func slowRequest(t *testing.T, addr string, rows *mat.Dense, lo, hi int) (finish func() (*http.Response, []byte, error)) {
	t.Helper()
	body := inferBody(rows, lo, hi, FP64, false, nil)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := fmt.Sprintf("POST /v2/models/m/infer HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, len(body))
	if _, err := io.WriteString(conn, head+string(body[:len(body)-10])); err != nil {
		t.Fatal(err)
	}
	return func() (*http.Response, []byte, error) {
		if _, err := conn.Write(body[len(body)-10:]); err != nil {
			return nil, nil, err
		}
		if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
			return nil, nil, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}
}

// TestGracefulShutdown: three requests are in flight (their bodies half
// sent) when Run's context ends. New connections are refused at once, the
// three are answered correctly, then Run returns nil.
func TestGracefulShutdown(t *testing.T) {
	a, _, _, rows := models(t)
	s, err := New(Config{Models: []ModelSpec{{Name: "m", Model: a}}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, ln) }()

	var finish []func() (*http.Response, []byte, error)
	for i := range 3 {
		finish = append(finish, slowRequest(t, addr, rows, 4*i, 4*i+4))
	}
	waitFor(t, func() bool { return metric(t, s, "kernelkit_serve_inflight_requests", nil) == 3 })
	cancel()
	waitFor(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	select {
	case err := <-done:
		t.Fatalf("Run returned (%v) with requests in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	for i, f := range finish {
		resp, body, err := f()
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		want, err := a.Classify(rowsOf(rows, 4*i, 4*i+4))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, body)
		}
		_, outs := decodeInfer(t, body)
		checkLabels(t, outs["label"], want)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the requests finished")
	}
	// The workers are stopped: a request through the handler is refused.
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

// TestShutdownTimeout: a request that never finishes does not hold Run
// past the shutdown timeout; Run reports the timeout.
func TestShutdownTimeout(t *testing.T) {
	a, _, _, rows := models(t)
	s, err := New(Config{Models: []ModelSpec{{Name: "m", Model: a}}, ShutdownTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, ln) }()
	slowRequest(t, ln.Addr().String(), rows, 0, 1) // never finished
	waitFor(t, func() bool { return metric(t, s, "kernelkit_serve_inflight_requests", nil) == 1 })
	began := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run: %v, want the deadline", err)
		}
		if took := time.Since(began); took > 3*time.Second {
			t.Errorf("Run took %v", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
}
