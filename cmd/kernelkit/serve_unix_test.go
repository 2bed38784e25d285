//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer collects the server's log lines from its goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// serveModel fits a small letter model into dir and returns its path.
func serveModel(t *testing.T, dir string) string {
	t.Helper()
	train := letterCSV(t, dir, "train.csv", 0, 500)
	mpath := filepath.Join(dir, "m.kk")
	if _, err := run(t, "fit", "--train", train, "--kernel", "rbf", "--gamma", "0.0625", "--features", "32",
		"--lambda", "0.5", "--seed", "1", "--model", mpath); err != nil {
		t.Fatal(err)
	}
	return mpath
}

var servingRE = regexp.MustCompile(`msg=serving addr=(\S+)`)

// startServe runs kernelkit serve in process on a loopback port with args
// and returns its address, its log and the channel of its result. The
// command handles SIGTERM itself from before it listens.
func startServe(t *testing.T, args ...string) (addr string, logs *lockedBuffer, done <-chan error) {
	t.Helper()
	root := newRoot()
	logs = &lockedBuffer{}
	root.SetOut(io.Discard)
	root.SetErr(logs)
	root.SetArgs(append([]string{"--blas", "gonum", "serve", "--addr", "127.0.0.1:0"}, args...))
	res := make(chan error, 1)
	go func() { res <- root.ExecuteContext(context.Background()) }()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := servingRE.FindStringSubmatch(logs.String()); m != nil {
			return m[1], logs, res
		}
		select {
		case err := <-res:
			t.Fatalf("serve returned before listening: %v\n%s", err, logs.String())
		default:
		}
	}
	t.Fatalf("serve did not listen:\n%s", logs.String())
	return "", nil, nil
}

// sigterm sends SIGTERM to this process (the serve command is handling it)
// and waits for the command's result.
func sigterm(t *testing.T, done <-chan error) error {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return after SIGTERM")
	}
	return nil
}

// TestServeFIFOThenSIGTERM (issue 22): with the model file replaced by a
// named pipe, a load request is answered at once (400: not a regular
// file) instead of blocking in open with the reload lock held, a second
// one too, and SIGTERM then ends the command with success.
func TestServeFIFOThenSIGTERM(t *testing.T) {
	dir := t.TempDir()
	mpath := serveModel(t, dir)
	addr, logs, done := startServe(t, "--model", "m="+mpath, "--enable-repository", "--log-level", "info")
	if err := os.Remove(mpath); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(mpath, 0o600); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	for i := range 2 {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v2/repository/models/m/load", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("load %d: %v", i, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "not a regular file") ||
			strings.Contains(string(body), dir) {
			t.Errorf("load %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if err := sigterm(t, done); err != nil {
		t.Errorf("serve after SIGTERM: %v, want success\n%s", err, logs.String())
	}
}

// TestServeSIGTERMCutsSlowRequest: a request still in flight when the
// shutdown timeout ends is cut, which the log says, but SIGTERM ends the
// command with success: the shutdown asked for happened.
func TestServeSIGTERMCutsSlowRequest(t *testing.T) {
	mpath := serveModel(t, t.TempDir())
	addr, logs, done := startServe(t, "--model", "m="+mpath, "--shutdown-timeout", "300ms", "--log-level", "info")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The header and half the body of an infer request; the rest never
	// comes.
	body := `{"inputs":[{"name":"input","shape":[1,16],"datatype":"FP64","data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}]}`
	if _, err := fmt.Fprintf(conn, "POST /v2/models/m/infer HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr, len(body), body[:len(body)/2]); err != nil {
		t.Fatal(err)
	}
	// Wait until the server is reading it: two requests in flight, it and
	// the metrics request.
	inflight := func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return err == nil && bytes.Contains(b, []byte("\nkernelkit_serve_inflight_requests 2\n"))
	}
	for deadline := time.Now().Add(10 * time.Second); !inflight(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slow request never became in flight")
		}
	}
	if err := sigterm(t, done); err != nil {
		t.Errorf("serve after SIGTERM with a request cut: %v, want success\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), "were cut") {
		t.Errorf("the log does not say a request was cut:\n%s", logs.String())
	}
}
