package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/sampler"
)

// fitLetterBytes fits letter (all 20000 rows, standardised) with 256 RBF
// features drawn by ORF from seed 7, at GOMAXPROCS procs, and returns the
// saved model file. The chunk size of 1000 rows gives 20 chunks, so the
// chunks are spread over the workers.
func fitLetterBytes(t *testing.T, procs int) []byte {
	t.Helper()
	old := runtime.GOMAXPROCS(procs)
	defer runtime.GOMAXPROCS(old)
	m, err := Fit(context.Background(), Options{
		Task:        Classification,
		Features:    features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 256, Sampler: sampler.Orthogonal{}, Seed: 7},
		Lambda:      0.5,
		Standardize: true,
		ChunkRows:   1000,
	}, data.Letter())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSameSeedSameBytes: fitting letter twice with the same seed gives
// byte-identical model files, and so do fits on 1, 2 and 3 cores: the
// statistics are added up in chunk order whatever the scheduling (before,
// per-worker partial sums were merged in an order that depended on which
// worker got which chunk, and the files differed in the last bits).
func TestSameSeedSameBytes(t *testing.T) {
	want := fitLetterBytes(t, 2)
	for _, procs := range []int{2, 1, 3} {
		if got := fitLetterBytes(t, procs); !bytes.Equal(got, want) {
			t.Errorf("GOMAXPROCS=%d: model file differs from the first fit's (%d and %d bytes)", procs, len(got), len(want))
		}
	}
}

// withBLAS runs fn with impl installed as the blas64 and blas32
// implementation, restoring the previous ones afterwards.
func withBLAS(impl interface {
	gblas.Float64
	gblas.Float32
}, fn func()) {
	old64, old32 := blas64.Implementation(), blas32.Implementation()
	defer func() {
		blas64.Use(old64)
		blas32.Use(old32)
	}()
	blas64.Use(impl)
	blas32.Use(impl)
	fn()
}

// TestSameSeedAcrossBackends: with pure-Go BLAS and with OpenBLAS the same
// seed draws the same ORF map (W and b byte for byte: the sampler's QR
// does not go through the installed BLAS), and the fitted weights, whose
// GEMMs and SYRKs round differently on the two backends, agree to 5e-8
// relative. The bound: each fit solves (C + λI)w = c with C = ZᵀZ over
// n = 20000 rows summed in chunks of 1000 (rounding γ_{1000+20}·‖C‖ at
// worst, 1.1e-13 relative) and a factorisation of D = 256 (γ_D, 2.8e-14);
// each RBF feature row has ‖z‖² ≤ 2, so κ(C + λI) ≤ (2n + λ)/λ = 8·10⁴, and
// each solution is within κ·(γ_{1020} + γ_D) ≈ 1.1e-8 of the exact one at
// worst; the two within twice that. Rounding errors that add as a random
// walk give far less (2e-13 is measured here).
func TestSameSeedAcrossBackends(t *testing.T) {
	ob, err := blas.LoadOpenBLAS()
	if err != nil {
		t.Skipf("OpenBLAS not available: %v", err)
	}
	type parts struct {
		Features json.RawMessage `json:"features"`
		Weights  []float64       `json:"weights"`
	}
	var files [2]parts
	for i, impl := range []interface {
		gblas.Float64
		gblas.Float32
	}{gonum.Implementation{}, ob} {
		withBLAS(impl, func() {
			if err := json.Unmarshal(fitLetterBytes(t, 2), &files[i]); err != nil {
				t.Fatal(err)
			}
		})
	}
	if !bytes.Equal(files[0].Features, files[1].Features) {
		t.Error("the ORF map (W, b) drawn from one seed differs between pure-Go BLAS and OpenBLAS")
	}
	a, b := files[0].Weights, files[1].Weights
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("weights have %d and %d values", len(a), len(b))
	}
	diff := make([]float64, len(a))
	floats.SubTo(diff, a, b)
	rel := floats.Norm(diff, 2) / floats.Norm(a, 2)
	t.Logf("relative difference of the weights between backends: %.2g", rel)
	if rel > 5e-8 {
		t.Errorf("weights differ between backends by %.3g relative, want ≤ 5e-8", rel)
	}
}

// TestSamplersIgnoreBackend: every sampler draws the same bits with
// pure-Go BLAS and with OpenBLAS.
func TestSamplersIgnoreBackend(t *testing.T) {
	ob, err := blas.LoadOpenBLAS()
	if err != nil {
		t.Skipf("OpenBLAS not available: %v", err)
	}
	for _, s := range []sampler.Sampler{sampler.Gaussian{}, sampler.Orthogonal{}, sampler.Structured{}, sampler.Truncated{K: 3}, sampler.Halton{}} {
		var w [2][]float64
		for i, impl := range []interface {
			gblas.Float64
			gblas.Float32
		}{gonum.Implementation{}, ob} {
			withBLAS(impl, func() {
				m, err := s.Sample(300, 70, 11)
				if err != nil {
					t.Fatal(err)
				}
				w[i] = m.RawMatrix().Data
			})
		}
		for j := range w[0] {
			if w[0][j] != w[1][j] {
				t.Errorf("%s: entry %d is %v with pure-Go BLAS and %v with OpenBLAS", s.Name(), j, w[0][j], w[1][j])
				break
			}
		}
	}
}

// BenchmarkAccumulate times the statistics pass of a fit alone: letter's
// 20000 standardised rows through D RBF features into linear.Stats.
func BenchmarkAccumulate(b *testing.B) {
	ds := data.Letter()
	s, err := data.FitScaler(ds.X)
	if err != nil {
		b.Fatal(err)
	}
	x, err := s.Transform(ds.X)
	if err != nil {
		b.Fatal(err)
	}
	labels, k, err := ds.Labels()
	if err != nil {
		b.Fatal(err)
	}
	y, err := linear.OneHot(labels, k)
	if err != nil {
		b.Fatal(err)
	}
	for _, D := range []int{512, 2048} {
		mp, err := features.New(features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: D, Seed: 1}, ds.Cols())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("D=%d", D), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Accumulate(context.Background(), mp, x, y, 1, 0, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFitStreamSameBits: without standardisation, FitStream's statistics
// are Fit's chunk for chunk, so the models are identical bit for bit, on
// one core and on several, with and without k-fold selection.
func TestFitStreamSameBits(t *testing.T) {
	d := data.Letter()
	var csv strings.Builder
	csv.WriteString("a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,label\n")
	const rows = 2500
	for i := 0; i < rows; i++ {
		for j := 0; j < 16; j++ {
			csv.WriteString(strconv.FormatFloat(d.X.At(i, j), 'g', -1, 64) + ",")
		}
		csv.WriteString(strconv.Itoa(int(d.Y[i])) + "\n")
	}
	text := csv.String()
	open := func() (Batches, func() error, error) {
		r, err := data.NewCSVReader(strings.NewReader(text), data.CSVOptions{})
		return r, func() error { return nil }, err
	}
	train, err := data.ReadCSV(strings.NewReader(text), data.CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{1, 2} {
		for _, sel := range []string{"", "kfold"} {
			old := runtime.GOMAXPROCS(procs)
			opt := Options{Task: Classification, Lambda: 0.5, Select: sel, Folds: 3, ChunkRows: 300,
				Features: features.Config{Kernel: "rbf", Gamma: 0.01, Features: 64, Seed: 2}}
			a, err := Fit(context.Background(), opt, train)
			if err != nil {
				t.Fatal(err)
			}
			b, err := FitStream(context.Background(), opt, open, nil)
			runtime.GOMAXPROCS(old)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(a.Linear.W, b.Linear.W) || !floats.Equal(a.Linear.B, b.Linear.B) || a.Linear.Lambda != b.Linear.Lambda {
				t.Errorf("GOMAXPROCS=%d, select=%q: streamed model differs from Fit's in the last bits", procs, sel)
			}
		}
	}
}
