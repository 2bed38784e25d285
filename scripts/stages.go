//go:build ignore

// Command stages times each stage of a kernelkit fit and prediction —
// CSV parse, scaler, map draw, feature pass, statistics, solve, predict,
// Gram error — with wall-clock and CPU (user+sys) seconds per stage, so
// that a profile taken on a loaded machine still says where the time
// goes. Run from the repository root:
//
//	go run scripts/stages.go --features 2048
//	go run scripts/stages.go --data /tmp/synth.csv --train-rows 200000 --features 2048 --float32
//	go run scripts/stages.go --stream /tmp/higgs-synth.csv --test /tmp/higgs-test.csv --features 4096 --float32
//
// Without --data it uses letter (first 16000 rows train, last 4000 test,
// γ = 1/16, λ = 0.5: scripts/compare.sh's setting). --cpuprofile writes a
// pprof CPU profile of the end-to-end fit+predict (the "fit" row).
//
// With --stream it fits the CSV file in two streaming passes as
// `kernelkit fit --stream` does (model.RunJob with a Stream, model.FitStream)
// and evaluates on --test, timing the second pass (features and
// statistics) from its progress reports; run it under /usr/bin/time -v
// for the peak memory.
package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/sampler"
)

type clock struct {
	wall time.Time
	cpu  time.Duration
}

func now() clock {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return clock{time.Now(), cpu}
}

func (c clock) row(name string, extra string) clock {
	e := now()
	w := e.wall.Sub(c.wall).Seconds()
	u := (e.cpu - c.cpu).Seconds()
	fmt.Printf("%-22s wall %8.3f s  cpu %8.3f s  (%.2f cores) %s\n", name, w, u, u/max(w, 1e-9), extra)
	return now()
}

func main() {
	path := pflag.String("data", "letter", "CSV file (label last) or letter")
	trainRows := pflag.Int("train-rows", 16000, "rows for training; the rest (at most --test-rows) test")
	testRows := pflag.Int("test-rows", 4000, "test rows (taken after the training rows)")
	D := pflag.Int("features", 2048, "number of random features D")
	gamma := pflag.Float64("gamma", 1.0/16, "RBF γ")
	lambda := pflag.Float64("lambda", 0.5, "ridge λ")
	f32 := pflag.Bool("float32", false, "float32 projection and statistics")
	regress := pflag.Bool("regression", false, "regression instead of classification")
	prof := pflag.String("cpuprofile", "", "write a CPU profile of the end-to-end fit+predict")
	reps := pflag.Int("reps", 1, "repeat the end-to-end fit+predict")
	stream := pflag.String("stream", "", "fit this CSV file in two streaming passes (needs --test)")
	testPath := pflag.String("test", "", "test CSV file for --stream")
	pflag.Parse()
	if err := blas.UseOpenBLAS(); err != nil {
		fmt.Fprintln(os.Stderr, "stages:", err)
	}
	fmt.Printf("backend %s, GOMAXPROCS %d, D=%d, float32=%v\n", blas.Name(), runtime.GOMAXPROCS(0), *D, *f32)
	if *stream != "" {
		streamFit(*stream, *testPath, *D, *gamma, *lambda, *f32)
		return
	}

	c := now()
	var all *data.Dataset
	var err error
	if *path == "letter" {
		all = data.Letter()
	} else if all, err = data.Open(*path, data.OpenOptions{}); err != nil {
		fail(err)
	}
	n := all.Rows()
	ntr := min(*trainRows, n)
	train, rest, err := all.SplitAt(ntr)
	if err != nil {
		fail(err)
	}
	test := rest
	if rest.Rows() > *testRows {
		if test, _, err = rest.SplitAt(*testRows); err != nil {
			fail(err)
		}
	}
	c = c.row("parse", fmt.Sprintf("%d train, %d test rows, %d columns", train.Rows(), test.Rows(), train.Cols()))

	task := model.Classification
	if *regress {
		task = model.Regression
	}
	opt := model.Options{Task: task, Standardize: true, Lambda: *lambda, Float32: *f32,
		Features: features.Config{Kernel: "rbf", Gamma: *gamma, Features: *D, Sampler: sampler.Gaussian{}, Float32: *f32}}

	// End to end, as model.RunJob times it (fit + predict of the test rows).
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	var m *model.Model
	for r := 0; r < *reps; r++ {
		c = now()
		if m, err = model.Fit(context.Background(), opt, train); err != nil {
			fail(err)
		}
		c = c.row("fit", "")
		ev, err := m.Evaluate(test, 0)
		if err != nil {
			fail(err)
		}
		c = c.row("predict+score", fmt.Sprintf("accuracy %.4f rmse %.4g", ev.Accuracy, ev.RMSE))
	}
	if *prof != "" {
		pprof.StopCPUProfile()
	}

	// Stage by stage.
	c = now()
	sc, err := data.FitScaler(train.X)
	if err != nil {
		fail(err)
	}
	xtr, err := sc.Transform(train.X)
	if err != nil {
		fail(err)
	}
	xte, err := sc.Transform(test.X)
	if err != nil {
		fail(err)
	}
	c = c.row("scaler", "")
	mp, err := features.New(opt.Features, train.Cols())
	if err != nil {
		fail(err)
	}
	c = c.row("map draw", "")
	z, err := features.Apply(mp, xtr)
	if err != nil {
		fail(err)
	}
	c = c.row("features (train)", "")
	var y *mat.Dense
	k := 1
	if task == model.Classification {
		labels, kk, err := train.Labels()
		if err != nil {
			fail(err)
		}
		k = kk
		if y, err = linear.OneHot(labels, k); err != nil {
			fail(err)
		}
	} else {
		y = mat.NewDense(train.Rows(), 1, append([]float64(nil), train.Y...))
	}
	st := linear.NewStats(*D, k)
	const chunk = 2048
	for lo := 0; lo < ntr; lo += chunk {
		hi := min(lo+chunk, ntr)
		if err := st.Add(z.Slice(lo, hi, 0, *D).(*mat.Dense), y.Slice(lo, hi, 0, k).(*mat.Dense)); err != nil {
			fail(err)
		}
	}
	w := c
	c = c.row("statistics (Add)", "")
	fl := float64(ntr) * float64(*D) * float64(*D+1)
	fmt.Printf("%-22s %.1f GFLOP/s (n·D·(D+1) flops)\n", "", fl/c.wall.Sub(w.wall).Seconds()/1e9)
	stats, err := model.Accumulate(context.Background(), mp, xtr, y, 1, 0, nil)
	if err != nil {
		fail(err)
	}
	c = c.row("accumulate (feat+stat)", "")
	lm, err := linear.Fit(stats[0], *lambda, true)
	if err != nil {
		fail(err)
	}
	c = c.row("solve", "")
	zt, err := features.Apply(mp, xte)
	if err != nil {
		fail(err)
	}
	c = c.row("features (test)", "")
	if _, err := lm.Predict(zt); err != nil {
		fail(err)
	}
	c = c.row("predict GEMM", "")
	g := min(1000, test.Rows())
	ge, err := model.GramError(mp, xte.Slice(0, g, 0, test.Cols()).(*mat.Dense))
	if err != nil {
		fail(err)
	}
	c.row("Gram error", fmt.Sprintf("%.4f on %d rows", ge, g))
}

// streamFit fits the CSV file path in two streaming passes and reports
// the time of each and the rate of the second.
func streamFit(path, testPath string, D int, gamma, lambda float64, f32 bool) {
	open, names, err := model.StreamCSV(path, data.CSVOptions{})
	if err != nil {
		fail(err)
	}
	test, err := data.Open(testPath, data.OpenOptions{Columns: names, Width: len(names)})
	if err != nil {
		fail(err)
	}
	opt := model.Options{Task: model.Classification, Standardize: true, Lambda: lambda, Float32: f32,
		Features: features.Config{Kernel: "rbf", Gamma: gamma, Features: D, Sampler: sampler.Gaussian{}, Float32: f32}}
	start := time.Now()
	var first, last time.Time
	var firstRows, rows int
	progress := func(done, total int) {
		now := time.Now()
		if first.IsZero() {
			first, firstRows = now, done
		}
		last, rows = now, done
	}
	c := now()
	r, _, err := model.RunJob(context.Background(), model.Job{Model: opt, Stream: open, Names: names, Test: test}, progress)
	if err != nil {
		fail(err)
	}
	end := time.Now()
	c.row("stream fit+evaluate", fmt.Sprintf("%d training rows, test accuracy %.4f, Gram error %.4f", r.TrainRows, deref(r.TestAccuracy), deref(r.GramError)))
	fmt.Printf("pass 1 (scaler, classes) and the first chunk  %.1f s\n", first.Sub(start).Seconds())
	p2 := last.Sub(first).Seconds()
	fl := float64(rows-firstRows) * float64(D) * float64(D+1)
	fmt.Printf("pass 2 (features + statistics) rows %d..%d   %.1f s   %.1f GFLOP/s (n·D·(D+1) flops)\n", firstRows, rows, p2, fl/p2/1e9)
	fmt.Printf("solve, predict %d test rows, Gram error  %.1f s\n", test.Rows(), end.Sub(last).Seconds())
	fmt.Printf("fit+predict seconds (model.RunJob) %.1f s\n", r.Seconds)
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "stages:", err)
	os.Exit(1)
}
