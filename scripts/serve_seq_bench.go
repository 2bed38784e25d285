//go:build ignore

// Command serve_seq_bench measures kernelkit serve on sequence models
// (issue 36) against the in-process forward pass of the same inference
// file: for each model it times, in this process, seqmodel.Scorer.Logits
// (the server's scorer settings: the default memory budget and passes,
// GOMAXPROCS replicas) called by as many goroutines as there will be
// clients, one sequence per call, and on calls of --batch sequences; then
// closed loops of --concurrency clients that each send one sequence per
// request, as text (BYTES), over REST JSON and over gRPC (bytes_contents,
// one connection per client). It reports sequences/s and the exact p50
// and p99 latencies (each caller's first call, which grows the buffers
// and opens the connections, is not timed), and each client cell's share
// of the best in-process rate for the same sequences: as many callers or,
// from --batch clients on, one caller of --batch sequences if faster. scripts/serve_seq_bench.sh runs it
// against a server it starts. Run from the repository root:
//
//	go run scripts/serve_seq_bench.go --url http://127.0.0.1:18090 --grpc-addr 127.0.0.1:18091 \
//	    --model fdtnn=fd.kks --data listops_test.tsv --concurrency 1,16 --duration 3s
//
// It only connects to a loopback address.
package main

import (
	"bytes"
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
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/seqmodel"
	"github.com/kernelkit/kernelkit/serve/oippb"
	"github.com/kernelkit/kernelkit/tasks"
)

// cell is one measurement: sequences/s, latency percentiles (ms) and,
// over rounds, the least and most sequences/s.
type cell struct {
	model, mode    string
	n              int // clients, callers or sequences per call
	client         bool
	seqs, p50, p99 float64
	lo, hi         float64
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "serve_seq_bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		base, grpcAddr, dataPath string
		models                   []string
		conc                     []int
		batch, rounds            int
		dur                      time.Duration
	)
	pflag.StringVar(&base, "url", "", "server base URL (loopback)")
	pflag.StringVar(&grpcAddr, "grpc-addr", "", "server gRPC address (loopback; empty: REST only)")
	pflag.StringArrayVar(&models, "model", nil, "NAME=PATH of a served inference file (repeat)")
	pflag.StringVar(&dataPath, "data", "", "LRA TSV file of the sequences to send")
	pflag.IntSliceVar(&conc, "concurrency", []int{1, 16}, "numbers of concurrent clients")
	pflag.IntVar(&batch, "batch", 16, "sequences per call of the in-process batched forward pass")
	pflag.DurationVar(&dur, "duration", 3*time.Second, "time per cell")
	pflag.IntVar(&rounds, "rounds", 3, "rounds of every cell (the table gives their medians)")
	pflag.Parse()
	if err := blas.UseOpenBLAS(); err != nil {
		fmt.Fprintln(os.Stderr, "serve_seq_bench: pure-Go BLAS:", err)
	}
	if batch < 1 || batch > 4096 || rounds < 1 || rounds > 100 || !(dur > 0) || len(conc) == 0 {
		return errors.New("--batch must lie in [1, 4096], --rounds in [1, 100], --duration be positive, --concurrency non-empty")
	}
	for _, c := range conc {
		if c < 1 || c > 1024 {
			return fmt.Errorf("--concurrency %d: want 1 to 1024", c)
		}
	}
	u, err := url.Parse(base)
	if err != nil || !loopback(u.Hostname()) {
		return fmt.Errorf("--url %q: want a loopback address", base)
	}
	if grpcAddr != "" {
		h, _, err := net.SplitHostPort(grpcAddr)
		if err != nil || !loopback(h) {
			return fmt.Errorf("--grpc-addr %q: want a loopback address", grpcAddr)
		}
	}
	f, err := os.Open(dataPath)
	if err != nil {
		return err
	}
	samples, err := tasks.ReadTSV(f, tasks.Classes)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	texts := make([]string, len(samples))
	for i, s := range samples {
		texts[i] = s.Source
	}
	fmt.Printf("== %d CPUs (GOMAXPROCS %d), BLAS %s, %s, %d sequences, %v per cell, %d rounds\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), blas.Name(), runtime.Version(), len(texts), dur, rounds)
	type served struct {
		name  string
		s     *seqmodel.Scorer
		seqs  [][]int32
		cells map[string][]cell
	}
	var all []*served
	for _, spec := range models {
		name, path, ok := strings.Cut(spec, "=")
		if !ok {
			return fmt.Errorf("--model %q: want NAME=PATH", spec)
		}
		m, err := seqmodel.LoadFile(path)
		if err != nil {
			return err
		}
		c := m.Config()
		params, fixed, err := c.ParamCount()
		if err != nil {
			return err
		}
		fmt.Printf("== %s: %s, length %d, width %d, depth %d, %d parameters and %d random-feature values\n", name, c.Kind, c.Length, c.Width, c.Depth, params, fixed)
		var seqs [][]int32
		for _, t := range texts {
			ids, err := m.Tokenize(t)
			if err != nil {
				return err
			}
			seqs = append(seqs, ids[:min(len(ids), m.MaxLength())])
		}
		s, err := m.NewScorer(seqmodel.ScorerOptions{Replicas: runtime.GOMAXPROCS(0)})
		if err != nil {
			return err
		}
		all = append(all, &served{name: name, s: s, seqs: seqs, cells: map[string][]cell{}})
	}
	// Rounds of every cell of every model, one after the other, so that
	// the machine's other load spreads over all of them.
	var order []string
	for range rounds {
		for _, sv := range all {
			cs, err := measure(sv.name, sv.s, sv.seqs, texts, base, grpcAddr, conc, batch, dur)
			if err != nil {
				return err
			}
			for _, c := range cs {
				key := sv.name + "\x00" + c.mode + "\x00" + fmt.Sprint(c.n)
				if _, seen := sv.cells[key]; !seen {
					order = append(order, key)
				}
				sv.cells[key] = append(sv.cells[key], c)
			}
		}
	}
	byKey := map[string]cell{}
	for _, sv := range all {
		for key, cs := range sv.cells {
			byKey[key] = median(cs)
		}
	}
	fmt.Println("| model | path | clients, callers or sequences per call | sequences/s (median; min–max) | p50 ms | p99 ms | of the in-process forward |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, key := range order {
		c := byKey[key]
		ratio := "—"
		if c.client {
			// The best in-process way to score the same sequences: as
			// many callers, or (for as many clients as a call takes) one
			// caller of batches.
			ceiling := byKey[c.model+"\x00"+inCallers+"\x00"+fmt.Sprint(c.n)].seqs
			if c.n >= batch {
				ceiling = max(ceiling, byKey[c.model+"\x00"+inBatch+"\x00"+fmt.Sprint(batch)].seqs)
			}
			ratio = fmt.Sprintf("%.0f %%", 100*c.seqs/ceiling)
		}
		fmt.Printf("| %s | %s | %d | %.0f; %.0f–%.0f | %.1f | %.1f | %s |\n", c.model, c.mode, c.n, c.seqs, c.lo, c.hi, c.p50, c.p99, ratio)
	}
	return nil
}

// The in-process cells' modes.
const (
	inCallers = "in-process forward, callers of 1 sequence"
	inBatch   = "in-process forward, sequences per call"
)

// measure runs one round of a model's cells: in process, n callers of one
// sequence per call (the work of n clients without the server) and one
// caller of batch sequences per call; then each transport with each
// number of clients sending one sequence per request.
func measure(name string, s *seqmodel.Scorer, seqs [][]int32, texts []string, base, grpcAddr string, conc []int, batch int, dur time.Duration) ([]cell, error) {
	var cells []cell
	for _, n := range append(slices.Clone(conc), -batch) {
		per, callers, mode := 1, n, inCallers
		if n < 0 {
			per, callers, mode = -n, 1, inBatch
		}
		next := make([]int, callers)
		lat, err := loop(callers, dur, func(w int) error {
			call := make([][]int32, per)
			for j := range call {
				call[j] = seqs[(w+(next[w]*callers+j)*7)%len(seqs)]
			}
			next[w]++
			_, err := s.Logits(context.Background(), call)
			return err
		})
		if err != nil {
			return nil, err
		}
		cells = append(cells, summarise(name, mode, max(n, per), per, lat, dur))
	}
	for _, tr := range []string{"rest-json", "grpc"} {
		if tr == "grpc" && grpcAddr == "" {
			continue
		}
		for _, n := range conc {
			send, closeAll, err := client(tr, base, grpcAddr, name, n)
			if err != nil {
				return nil, err
			}
			next := make([]int, n) // each client's next text: client w sends texts w, w + n, …
			lat, err := loop(n, dur, func(w int) error {
				i := (w + next[w]*n) % len(texts)
				next[w]++
				return send(w, texts[i])
			})
			closeAll()
			if err != nil {
				return nil, fmt.Errorf("%s %s, %d clients: %w", name, tr, n, err)
			}
			c := summarise(name, tr+", clients of 1 sequence", n, 1, lat, dur)
			c.client = true
			cells = append(cells, c)
		}
	}
	return cells, nil
}

// median returns a cell of the rounds' median sequences/s, p50 and p99,
// with the least and most sequences/s.
func median(cs []cell) cell {
	pick := func(f func(cell) float64) float64 {
		v := make([]float64, len(cs))
		for i, c := range cs {
			v[i] = f(c)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	out := cs[0]
	out.seqs = pick(func(c cell) float64 { return c.seqs })
	out.p50 = pick(func(c cell) float64 { return c.p50 })
	out.p99 = pick(func(c cell) float64 { return c.p99 })
	out.lo, out.hi = out.seqs, out.seqs
	for _, c := range cs {
		out.lo, out.hi = min(out.lo, c.seqs), max(out.hi, c.seqs)
	}
	return out
}

// loop runs n workers calling fn until dur has passed and returns every
// call's latency; each worker first makes one call that is not timed (it
// grows the buffers and opens the connections), and the timing starts
// when all have. The first error stops it.
func loop(n int, dur time.Duration, fn func(worker int) error) ([]time.Duration, error) {
	var mu sync.Mutex
	var lat []time.Duration
	var first error
	var warm, wg sync.WaitGroup
	start := make(chan struct{})
	var end time.Time
	warm.Add(n)
	for w := range n {
		wg.Go(func() {
			err := fn(w)
			warm.Done()
			<-start
			var mine []time.Duration
			for err == nil && time.Now().Before(end) {
				t0 := time.Now()
				if err = fn(w); err == nil {
					mine = append(mine, time.Since(t0))
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			first = cmpErr(first, err)
			mu.Unlock()
		})
	}
	warm.Wait()
	end = time.Now().Add(dur)
	close(start)
	wg.Wait()
	return lat, first
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// summarise turns latencies into sequences/s (per sequences each call)
// and exact percentiles.
func summarise(model, mode string, n, per int, lat []time.Duration, dur time.Duration) cell {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1e6
	}
	return cell{model: model, mode: mode, n: n, seqs: float64(len(lat)*per) / dur.Seconds(), p50: pct(0.5), p99: pct(0.99)}
}

// client returns a function that sends one text as a request of worker w,
// and a function that closes the clients' connections.
func client(transport, base, grpcAddr, model string, n int) (func(w int, text string) error, func(), error) {
	if transport == "grpc" {
		conns := make([]*grpc.ClientConn, n)
		cls := make([]oippb.GRPCInferenceServiceClient, n)
		for i := range conns {
			c, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return nil, nil, err
			}
			conns[i], cls[i] = c, oippb.NewGRPCInferenceServiceClient(c)
		}
		closeAll := func() {
			for _, c := range conns {
				if err := c.Close(); err != nil {
					fmt.Fprintln(os.Stderr, "serve_seq_bench:", err)
				}
			}
		}
		return func(w int, text string) error {
			resp, err := cls[w].ModelInfer(context.Background(), &oippb.ModelInferRequest{ModelName: model,
				Inputs: []*oippb.ModelInferRequest_InferInputTensor{{Name: "input", Datatype: "BYTES", Shape: []int64{1},
					Contents: &oippb.InferTensorContents{BytesContents: [][]byte{[]byte(text)}}}}})
			if err == nil && len(resp.Outputs) != 1 {
				err = errors.New("no label")
			}
			return err
		}, closeAll, nil
	}
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: n + 1}}
	target := base + "/v2/models/" + model + "/infer"
	return func(_ int, text string) error {
		body, err := json.Marshal(map[string]any{"inputs": []any{map[string]any{"name": "input", "shape": []int{1}, "datatype": "BYTES", "data": []string{text}}}})
		if err != nil {
			return err
		}
		resp, err := hc.Post(target, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		if cerr := resp.Body.Close(); err == nil {
			err = cerr
		}
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
		}
		return err
	}, hc.CloseIdleConnections, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
