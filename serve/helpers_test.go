package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/atomicfile"
	"github.com/kernelkit/kernelkit/model"
)

// The test models: classifiers A and B (the same data, different random
// features, so different weights) and a regression model, fitted once on
// the first 2000 letter rows with D = 64; test rows come from the letter
// test split.
var fixture struct {
	once      sync.Once
	a, b, reg *model.Model
	rows      *mat.Dense // 64 test rows
	names     []string
	err       error
}

func models(t testing.TB) (a, b, reg *model.Model, rows *mat.Dense) {
	t.Helper()
	f := &fixture
	f.once.Do(func() {
		// The first 2000 letter rows and 64 rows of the test split, read
		// from the data file (parsing all 20000 rows is slow under -race).
		train, test, err := letterRows(2000, 16000, 64)
		if err != nil {
			f.err = err
			return
		}
		fit := func(task model.Task, seed uint64) *model.Model {
			if f.err != nil {
				return nil
			}
			m, err := model.Fit(context.Background(), model.Options{Task: task,
				Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 64, Seed: seed},
				Lambda:   0.5, Standardize: true}, train)
			f.err = err
			return m
		}
		f.a = fit(model.Classification, 1)
		f.b = fit(model.Classification, 2)
		f.reg = fit(model.Regression, 3)
		f.rows = test.X
		f.names = train.Names
	})
	if f.err != nil {
		t.Fatal(f.err)
	}
	return f.a, f.b, f.reg, f.rows
}

// letterRows reads rows [0, n) and [lo, lo+m) of data/letter.csv.
func letterRows(n, lo, m int) (train, test *data.Dataset, err error) {
	raw, err := os.ReadFile(filepath.Join("..", "data", "letter.csv"))
	if err != nil {
		return nil, nil, err
	}
	lines := strings.SplitAfter(string(raw), "\n")
	if len(lines) < lo+m+1 {
		return nil, nil, fmt.Errorf("letter.csv has %d lines", len(lines))
	}
	read := func(rows []string) (*data.Dataset, error) {
		return data.ReadCSV(strings.NewReader(lines[0]+strings.Join(rows, "")), data.CSVOptions{})
	}
	if train, err = read(lines[1 : n+1]); err != nil {
		return nil, nil, err
	}
	test, err = read(lines[lo+1 : lo+m+1])
	return train, test, err
}

// saveModel writes m to path atomically.
func saveModel(t testing.TB, path string, m *model.Model) {
	t.Helper()
	if err := atomicfile.Write(path, m.Save); err != nil {
		t.Fatal(err)
	}
}

// modelFile writes m into the test's directory and returns the path.
func modelFile(t testing.TB, name string, m *model.Model) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".kk")
	saveModel(t, path, m)
	return path
}

// start serves a new Server on a loopback port and returns it and its base
// URL; the server is closed when the test ends.
func start(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return s, "http://" + ln.Addr().String()
}

var client = &http.Client{Timeout: 10 * time.Second}

// call sends a request and returns the status and body.
func call(t testing.TB, method, url string, body []byte) (int, []byte) {
	t.Helper()
	code, b, err := do(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return code, b
}

// do is call for goroutines other than the test's.
func do(method, url string, body []byte) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return 0, nil, err
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json") // every POST must say so
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// inferBody is an infer request for rows [lo, hi) of x.
func inferBody(x *mat.Dense, lo, hi int, datatype string, nested bool, extra map[string]any) []byte {
	_, d := x.Dims()
	var dataField any
	if nested {
		rows := make([][]float64, 0, hi-lo)
		for i := lo; i < hi; i++ {
			rows = append(rows, x.RawRowView(i))
		}
		dataField = rows
	} else {
		flat := make([]float64, 0, (hi-lo)*d)
		for i := lo; i < hi; i++ {
			flat = append(flat, x.RawRowView(i)...)
		}
		dataField = flat
	}
	req := map[string]any{"inputs": []any{map[string]any{"name": "input", "shape": []int{hi - lo, d}, "datatype": datatype, "data": dataField}}}
	for k, v := range extra {
		req[k] = v
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	return b
}

// decodeInfer parses an infer response and returns its outputs by name.
func decodeInfer(t testing.TB, body []byte) (InferResponse, map[string]ResponseOutput) {
	t.Helper()
	var r InferResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("response %.300s: %v", body, err)
	}
	out := map[string]ResponseOutput{}
	for _, o := range r.Outputs {
		out[o.Name] = o
	}
	return r, out
}

// metric returns the value of a counter or gauge (or the sample count of a
// histogram) with the given labels, 0 if it has not been set.
func metric(t testing.TB, s *Server, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := s.Metrics().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				switch {
				case m.Counter != nil:
					return m.Counter.GetValue()
				case m.Gauge != nil:
					return m.Gauge.GetValue()
				case m.Histogram != nil:
					return float64(m.Histogram.GetSampleCount())
				}
			}
		}
	}
	return 0
}

func matches(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, lp := range m.GetLabel() {
		if v, ok := labels[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}

// errorBody checks that body is a V2 error object and returns its message.
func errorBody(t testing.TB, body []byte) string {
	t.Helper()
	var e map[string]any
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %.200q is not JSON: %v", body, err)
	}
	msg, ok := e["error"].(string)
	if !ok || len(e) != 1 || strings.TrimSpace(msg) == "" {
		t.Fatalf("error body %.200s is not {\"error\": \"...\"}", body)
	}
	return msg
}

// rowsOf returns rows [lo, hi) of x as a new matrix.
func rowsOf(x *mat.Dense, lo, hi int) *mat.Dense {
	_, d := x.Dims()
	out := mat.NewDense(hi-lo, d, nil)
	out.Copy(x.Slice(lo, hi, 0, d))
	return out
}

// fp32 returns x rounded to single precision.
func fp32(x *mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(x)
	r := out.RawMatrix()
	for i, v := range r.Data {
		r.Data[i] = float64(float32(v))
	}
	return out
}

func jsonUnmarshal(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("response %.200s: %w", b, err)
	}
	return nil
}

func maxAbsDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var d float64
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// batchesWithMoreThanOne returns the number of feature passes that served
// more than one request.
func batchesWithMoreThanOne(t testing.TB, s *Server) uint64 {
	t.Helper()
	fams, err := s.Metrics().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "kernelkit_serve_batch_requests" {
			continue
		}
		var n uint64
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			one := uint64(0)
			for _, b := range h.GetBucket() {
				if b.GetUpperBound() == 1 {
					one = b.GetCumulativeCount()
				}
			}
			n += h.GetSampleCount() - one
		}
		return n
	}
	return 0
}
