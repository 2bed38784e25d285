// Command loadtest measures a kernelkit V2 server on the loopback
// interface with vegeta: for each request size (rows per request) and
// number of concurrent clients it sends infer requests as fast as the
// clients get answers for a fixed time and reports requests/s, rows/s and
// the exact p50 and p99 latencies. With --model-file it also reports the
// in-process ceiling: Classify's rows/s for the same rows, on one goroutine
// and on every CPU. scripts/serve_bench.sh runs it.
//
// With --transports it compares transports side by side instead, each
// driven by the same closed loop of its own (not vegeta): REST with JSON
// data (rest-json), REST with the binary tensor data extension, raw bytes
// in and out (rest-binary), and gRPC ModelInfer with raw_input_contents
// and raw outputs (grpc-raw, one connection per client).
// scripts/bench_serve_grpc.sh runs it.
//
//	go run ./cmd/kernelkit-loadtest --url http://127.0.0.1:8080 --model letter \
//	    --rows 1,256 --concurrency 1,4,16 --duration 3s --model-file letter.kk
//
// It only ever connects to a loopback address.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"
	vegeta "github.com/tsenart/vegeta/v12/lib"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/report"
)

type options struct {
	url, model, dataPath, modelFile, datatype, blas string
	grpcAddr                                        string
	transports                                      []string
	rows, concurrency                               []int
	duration, wait                                  time.Duration
	firstRow                                        int
}

func main() {
	var o options
	fl := pflag.NewFlagSet("loadtest", pflag.ContinueOnError)
	fl.StringVar(&o.url, "url", "http://127.0.0.1:8080", "base URL of the server (loopback only)")
	fl.StringVar(&o.model, "model", "letter", "model name")
	fl.StringVar(&o.dataPath, "data", "data/letter.csv", "CSV of rows to send (label column last, ignored)")
	fl.IntVar(&o.firstRow, "first-row", 16000, "first data row to send (the letter test split)")
	fl.StringVar(&o.modelFile, "model-file", "", "model file for the in-process Classify ceiling")
	fl.StringVar(&o.datatype, "datatype", "FP64", "input datatype: FP64 or FP32")
	fl.StringVar(&o.blas, "blas", "auto", "BLAS of the in-process ceiling: auto, openblas or gonum")
	fl.StringVar(&o.grpcAddr, "grpc-addr", "127.0.0.1:8081", "address of the server's gRPC service (loopback only), for --transports grpc-raw")
	fl.StringSliceVar(&o.transports, "transports", nil, "compare transports side by side with one closed-loop driver: rest-json, rest-binary, grpc-raw (default: REST JSON through vegeta)")
	fl.IntSliceVar(&o.rows, "rows", []int{1, 256}, "rows per request")
	fl.IntSliceVar(&o.concurrency, "concurrency", []int{1, 4, 16}, "concurrent clients")
	fl.DurationVar(&o.duration, "duration", 3*time.Second, "duration of each measurement")
	fl.DurationVar(&o.wait, "wait", 30*time.Second, "how long to wait for the server to be ready")
	if err := fl.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return
		}
		fail(err)
	}
	if err := o.run(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadtest:", err)
	os.Exit(1)
}

func (o *options) run() error {
	if err := loopback(o.url); err != nil {
		return err
	}
	x, err := o.readRows()
	if err != nil {
		return err
	}
	if err := o.waitReady(); err != nil {
		return err
	}
	if len(o.transports) > 0 {
		if err := o.compareTransports(x); err != nil {
			return err
		}
		if o.modelFile == "" {
			return nil
		}
		return o.ceiling(x)
	}
	t := report.Table{Title: fmt.Sprintf("server %s, model %s, %s, %v per cell, closed loop (each client sends its next request on an answer)",
		o.url, o.model, o.datatype, o.duration),
		Header: []string{"rows/req", "clients", "requests", "req/s", "rows/s", "p50 ms", "p99 ms", "errors", "srv CPU µs/req", "srv CPU µs/row"}}
	for _, r := range o.rows {
		bodies, err := o.bodies(x, r)
		if err != nil {
			return err
		}
		for _, c := range o.concurrency {
			cpu0, err := o.serverCPU()
			if err != nil {
				return err
			}
			res, err := o.attack(bodies, c)
			if err != nil {
				return err
			}
			cpu1, err := o.serverCPU()
			if err != nil {
				return err
			}
			perReq := (cpu1 - cpu0) / float64(res.requests) * 1e6
			t.Add(r, c, res.requests, report.Fixed(res.rps, 0), report.Fixed(res.rps*float64(r), 0),
				report.Fixed(res.p50*1e3, 2), report.Fixed(res.p99*1e3, 2), res.errors,
				report.Fixed(perReq, 0), report.Fixed(perReq/float64(r), 1))
		}
	}
	if err := t.Render(os.Stdout); err != nil {
		return err
	}
	if o.modelFile == "" {
		return nil
	}
	return o.ceiling(x)
}

// serverCPU returns the server process's CPU seconds (user + system) from
// its metrics: a cost per request that a loaded machine distorts far less
// than the wall-clock rates.
func (o *options) serverCPU() (float64, error) {
	resp, err := http.Get(o.url + "/metrics")
	if err != nil {
		return 0, err
	}
	b, err := io.ReadAll(resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "process_cpu_seconds_total "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, errors.New("the server's metrics have no process_cpu_seconds_total")
}

// loopback refuses a URL whose host is not a loopback address.
func loopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--url %q: only loopback addresses are allowed", raw)
	}
	return nil
}

func (o *options) readRows() (*mat.Dense, error) {
	f, err := os.Open(o.dataPath)
	if err != nil {
		return nil, err
	}
	ds, err := data.ReadCSV(bufio.NewReader(f), data.CSVOptions{})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	n, d := ds.X.Dims()
	if o.firstRow < 0 || o.firstRow >= n {
		return nil, fmt.Errorf("--first-row %d: the data has %d rows", o.firstRow, n)
	}
	return mat.DenseCopyOf(ds.X.Slice(o.firstRow, n, 0, d)), nil
}

func (o *options) waitReady() error {
	deadline := time.Now().Add(o.wait)
	for {
		resp, err := http.Get(o.url + "/v2/models/" + o.model + "/ready")
		if err == nil {
			err = resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("model %s not ready at %s after %v (%v)", o.model, o.url, o.wait, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bodies returns infer request bodies of r consecutive rows each, cycling
// through the rows.
func (o *options) bodies(x *mat.Dense, r int) ([][]byte, error) {
	n, d := x.Dims()
	if r < 1 || r > n {
		return nil, fmt.Errorf("--rows %d: want 1 to %d", r, n)
	}
	var out [][]byte
	for lo := 0; lo+r <= n && len(out) < 512; lo += r {
		flat := make([]float64, 0, r*d)
		for i := lo; i < lo+r; i++ {
			flat = append(flat, x.RawRowView(i)...)
		}
		b, err := json.Marshal(map[string]any{"inputs": []any{map[string]any{
			"name": "input", "shape": []int{r, d}, "datatype": o.datatype, "data": flat}}})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

type result struct {
	requests, errors int
	rps, p50, p99    float64
}

// attack runs c clients for the duration, each sending its next request
// when the last is answered.
func (o *options) attack(bodies [][]byte, c int) (result, error) {
	targets := make([]vegeta.Target, len(bodies))
	header := http.Header{"Content-Type": []string{"application/json"}}
	for i, b := range bodies {
		targets[i] = vegeta.Target{Method: "POST", URL: o.url + "/v2/models/" + o.model + "/infer", Header: header, Body: b}
	}
	atk := vegeta.NewAttacker(vegeta.Workers(uint64(c)), vegeta.MaxWorkers(uint64(c)), vegeta.KeepAlive(true),
		vegeta.Connections(c), vegeta.Timeout(30*time.Second))
	var lat []float64
	var res result
	var first, last time.Time
	for r := range atk.Attack(vegeta.NewStaticTargeter(targets...), vegeta.Rate{}, o.duration, "loadtest") {
		if r.Code != http.StatusOK || r.Error != "" {
			res.errors++
			continue
		}
		if first.IsZero() || r.Timestamp.Before(first) {
			first = r.Timestamp
		}
		if end := r.Timestamp.Add(r.Latency); end.After(last) {
			last = end
		}
		lat = append(lat, r.Latency.Seconds())
	}
	res.requests = len(lat) + res.errors
	if len(lat) == 0 {
		return res, errors.New("no request succeeded")
	}
	slices.Sort(lat)
	res.p50, res.p99 = quantile(lat, 0.5), quantile(lat, 0.99)
	res.rps = float64(len(lat)) / last.Sub(first).Seconds()
	return res, nil
}

// quantile returns the q-quantile of sorted values (nearest rank).
func quantile(sorted []float64, q float64) float64 {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// ceiling reports Classify's rows/s for the same request sizes, in process.
func (o *options) ceiling(x *mat.Dense) error {
	switch o.blas {
	case "auto":
		if err := blas.UseOpenBLAS(); err != nil {
			blas.UseGonum()
		}
	case "openblas":
		if err := blas.UseOpenBLAS(); err != nil {
			return err
		}
	case "gonum":
		blas.UseGonum()
	default:
		return fmt.Errorf("--blas %q: want auto, openblas or gonum", o.blas)
	}
	f, err := os.Open(o.modelFile)
	if err != nil {
		return err
	}
	m, err := model.Load(bufio.NewReader(f))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	procs := runtime.GOMAXPROCS(0)
	t := report.Table{Title: fmt.Sprintf("in-process Classify ceiling (%s rows, %v per cell)", o.datatype, o.duration),
		Header: []string{"rows/call", "goroutines", "calls/s", "rows/s"}}
	for _, r := range o.rows {
		n, d := x.Dims()
		var chunks []*mat.Dense
		for lo := 0; lo+r <= n && len(chunks) < 512; lo += r {
			c := mat.DenseCopyOf(x.Slice(lo, lo+r, 0, d))
			if o.datatype == "FP32" {
				raw := c.RawMatrix().Data
				for i, v := range raw {
					raw[i] = float64(float32(v))
				}
			}
			chunks = append(chunks, c)
		}
		for _, g := range slices.Compact([]int{1, procs}) {
			calls, err := classifyFor(m, chunks, g, o.duration)
			if err != nil {
				return err
			}
			t.Add(r, g, report.Fixed(calls, 0), report.Fixed(calls*float64(r), 0))
		}
	}
	return t.Render(os.Stdout)
}

// classifyFor calls Classify on the chunks from g goroutines for the
// duration and returns the calls per second.
func classifyFor(m *model.Model, chunks []*mat.Dense, g int, d time.Duration) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var calls atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, g)
	start := time.Now()
	for w := range g {
		wg.Go(func() {
			for i := w; ctx.Err() == nil; i++ {
				if _, err := m.Classify(chunks[i%len(chunks)]); err != nil {
					errs[w] = err
					return
				}
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(calls.Load()) / time.Since(start).Seconds(), errors.Join(errs...)
}
