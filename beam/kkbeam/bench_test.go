package kkbeam

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

// The two costs of the package documentation's cost model, for one
// worker: the second pass's rows per second (a batch of rows standardised,
// mapped to D features and added to the D×D statistics) and the cost of
// one merge of the combining tree (decode an accumulator of D×D
// statistics, add it into another, encode the result). Run them on one
// core for per-core figures:
//
//	go test -run '^$' -bench . -cpu 1 -benchtime 1x ./kkbeam/

var benchDims = []int{512, 1024, 4096}

func BenchmarkAddInput(b *testing.B) {
	const d, n = 16, 2048
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, n*d)
	y := make([]float64, n)
	lines := make([]int64, n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	for i := range y {
		y[i] = float64(i % 10)
		lines[i] = int64(i + 2)
	}
	batch := Batch{File: "f", Lines: lines, Cols: d, X: x, Y: y}
	sc := &data.Scaler{Mean: make([]float64, d), Scale: make([]float64, d)}
	for j := range sc.Scale {
		sc.Scale[j] = 1
	}
	for _, dim := range benchDims {
		b.Run(fmt.Sprintf("D=%d", dim), func(b *testing.B) {
			mp, err := features.New(features.Config{Kernel: "rbf", Gamma: 1.0 / d, Features: dim, Seed: 1}, d)
			if err != nil {
				b.Fatal(err)
			}
			mc, err := NewMapConfig(mp)
			if err != nil {
				b.Fatal(err)
			}
			plan := &model.Plan{Task: model.Classification, Classes: 10, Outputs: 10, Folds: 1, Rows: n, Cols: d, Scaler: sc}
			fn := &statsFn{rowsFn{Map: mc, Plan: plan, Offsets: map[string]int64{"f": 0}}}
			if err := fn.Setup(); err != nil {
				b.Fatal(err)
			}
			s := fn.CreateAccumulator()
			b.ResetTimer()
			for range b.N {
				if s, err = fn.AddInput(s, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func BenchmarkMerge(b *testing.B) {
	for _, dim := range benchDims {
		b.Run(fmt.Sprintf("D=%d", dim), func(b *testing.B) {
			st := &Stats{Folds: []*linear.Stats{linear.NewStats(dim, 10)}}
			for i := range st.Folds[0].ZtZ {
				st.Folds[0].ZtZ[i] = float64(i % 7)
			}
			enc, err := EncodeStats(st)
			if err != nil {
				b.Fatal(err)
			}
			into, err := DecodeStats(enc)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(enc)))
			b.ResetTimer()
			for range b.N {
				o, err := DecodeStats(enc)
				if err != nil {
					b.Fatal(err)
				}
				if err := into.Merge(o); err != nil {
					b.Fatal(err)
				}
				if _, err := EncodeStats(into); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
