package model

import (
	"bytes"
	"context"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
)

// letterFit fits letter's first 16000 rows (standardised, 512 RBF
// features, λ = 0.5, chunks of 1000 rows) with the float32 path on or off
// at GOMAXPROCS procs, and returns the model, its file and its accuracy
// on the last 4000 rows.
func letterFit(t *testing.T, f32 bool, procs int) (*Model, []byte, float64) {
	t.Helper()
	old := runtime.GOMAXPROCS(procs)
	defer runtime.GOMAXPROCS(old)
	train, test, err := data.Letter().SplitAt(16000)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Fit(context.Background(), Options{Task: Classification, Standardize: true, Lambda: 0.5, ChunkRows: 1000, Float32: f32,
		Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 512, Seed: 3, Float32: f32}}, train)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	ev, err := m.Evaluate(test, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, buf.Bytes(), ev.Accuracy
}

// TestFloat32Fit: the float32 path (single-precision features and chunk
// statistics, float64 sums across chunks and solve) gives letter's test
// accuracy within 0.003 of the float64 path's, weights within 10⁻³
// relative, and the same model file on 1, 2 and 3 cores.
func TestFloat32Fit(t *testing.T) {
	m64, _, acc64 := letterFit(t, false, 2)
	m32, file, acc32 := letterFit(t, true, 2)
	t.Logf("test accuracy float64 %.4f, float32 %.4f", acc64, acc32)
	if d := acc32 - acc64; d > 0.003 || d < -0.003 {
		t.Errorf("float32 accuracy %.4f, float64 %.4f: differ by more than 0.003", acc32, acc64)
	}
	var diff mat.Dense
	diff.Sub(m32.Linear.W, m64.Linear.W)
	if rel := mat.Norm(&diff, 2) / mat.Norm(m64.Linear.W, 2); rel > 1e-3 {
		t.Errorf("float32 weights differ from float64 ones by %.3g relative, want ≤ 1e-3", rel)
	}
	for _, p := range []int{1, 3} {
		if _, f, _ := letterFit(t, true, p); !bytes.Equal(f, file) {
			t.Errorf("float32 path, GOMAXPROCS=%d: model file differs from the one on 2 cores", p)
		}
	}
}

// TestFloat32StreamSameBits: FitStream on the float32 path gives Fit's
// model bit for bit (no standardisation, k-fold selection included), as
// on the float64 path.
func TestFloat32StreamSameBits(t *testing.T) {
	d := data.Letter()
	var csv strings.Builder
	csv.WriteString("a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,label\n")
	for i := 0; i < 1500; i++ {
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
	for _, sel := range []string{"", "kfold"} {
		opt := Options{Task: Classification, Lambda: 0.5, Select: sel, Folds: 3, ChunkRows: 400, Float32: true,
			Features: features.Config{Kernel: "rbf", Gamma: 0.01, Features: 300, Seed: 2}}
		a, err := Fit(context.Background(), opt, train)
		if err != nil {
			t.Fatal(err)
		}
		b, err := FitStream(context.Background(), opt, open, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(a.Linear.W, b.Linear.W) || a.Linear.Lambda != b.Linear.Lambda {
			t.Errorf("select=%q: streamed float32 model differs from Fit's", sel)
		}
	}
}

// TestPredictFused: Predict, which maps and multiplies the rows block by
// block, gives the features of all rows at once times the weights, for a
// batch of rows that is not a whole number of blocks: the same bits with
// the pure-Go BLAS, whose products sum every row in one order; with
// OpenBLAS, which may take a row through another kernel by the shape of
// the call or the row's place in it (small-matrix and remainder kernels),
// within the rounding of that: a feature's argument may differ by a few
// ulps (features.TestRowIndependentOfBatch: 1e-13 relative), and the dot
// product with the weights by γ_D·Σ|z_j||w_j|, so each prediction to
// (1e-13 + 2γ_D)·Σ_j |z_j||w_j|.
func TestPredictFused(t *testing.T) {
	m, _, _ := letterFit(t, false, 2)
	x := data.Letter().X.Slice(0, 700, 0, 16).(*mat.Dense)
	got, err := m.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	z, err := m.Features(x)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Linear.Predict(z)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(blas.Name(), "gonum") {
		if !mat.Equal(got, want) {
			t.Error("block-wise Predict differs from features × weights")
		}
	} else {
		_, d := z.Dims()
		const u = 0x1p-53
		tol := 1e-13 + 2*float64(d)*u/(1-float64(d)*u)
		r, k := got.Dims()
		for i := 0; i < r; i++ {
			for c := 0; c < k; c++ {
				var scale float64
				for j := 0; j < d; j++ {
					scale += math.Abs(z.At(i, j) * m.Linear.W.At(j, c))
				}
				if diff := math.Abs(got.At(i, c) - want.At(i, c)); diff > tol*scale {
					t.Fatalf("row %d output %d: block-wise Predict %v, features × weights %v (bound %.3g)", i, c, got.At(i, c), want.At(i, c), tol*scale)
				}
			}
		}
	}
	if _, err := m.Predict(mat.NewDense(3, 5, nil)); err == nil {
		t.Error("Predict of rows with 5 columns for a 16-column model: no error")
	}
}
