package study

import (
	"bytes"
	"context"
	"io"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/krr"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/nystrom"
)

// letterRows returns rows lo…hi−1 of the embedded letter data.
func letterRows(lo, hi int) *data.Dataset {
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	return data.Letter().Subset(idx)
}

// sliceBatches serves the rows of x in batches, for ScaleGammaStream.
type sliceBatches struct {
	x  *mat.Dense
	at int
}

func (b *sliceBatches) Read(max int) (*mat.Dense, []float64, error) {
	n, d := b.x.Dims()
	if b.at >= n {
		return nil, nil, io.EOF
	}
	hi := min(n, b.at+max)
	out := mat.DenseCopyOf(b.x.Slice(b.at, hi, 0, d))
	b.at = hi
	return out, make([]float64, out.RawMatrix().Rows), nil
}

// ScaleGamma is scikit-learn's gamma='scale', 1/(d·X.var()) with numpy's
// population variance over all entries: for [[1, 2], [3, 4]] the variance
// is 1.25 and γ = 0.4; standardised, every column has variance 1 and
// γ = 1/d; a constant column counts zero variance; an all-constant matrix
// gives 1 (as scikit-learn). The streamed version agrees to 1e-15.
func TestScaleGamma(t *testing.T) {
	for _, tc := range []struct {
		name  string
		x     *mat.Dense
		std   bool
		gamma float64
	}{
		{"raw", mat.NewDense(2, 2, []float64{1, 2, 3, 4}), false, 0.4},
		{"standardised", mat.NewDense(3, 2, []float64{1, 20, 3, 40, 8, 10}), true, 0.5},
		{"constant column", mat.NewDense(3, 2, []float64{1, 7, 3, 7, 8, 7}), true, 1},
		{"all constant", mat.NewDense(2, 2, []float64{5, 5, 5, 5}), false, 1},
		// numpy: 1/(3*np.var([[0.5,-1,2],[1.5,0,2],[-0.5,3,2]])) = 0.20377358490566042
		{"numpy", mat.NewDense(3, 3, []float64{0.5, -1, 2, 1.5, 0, 2, -0.5, 3, 2}), false, 0.20377358490566042},
	} {
		g, err := ScaleGamma(tc.x, tc.std)
		if err != nil || math.Abs(g-tc.gamma) > 1e-15*tc.gamma {
			t.Errorf("%s: gamma %.17g, want %.17g (%v)", tc.name, g, tc.gamma, err)
		}
		open := func() (model.Batches, func() error, error) {
			return &sliceBatches{x: tc.x}, func() error { return nil }, nil
		}
		gs, err := ScaleGammaStream(open, tc.std, 1)
		if err != nil || math.Abs(gs-g) > 1e-15*g {
			t.Errorf("%s: streamed gamma %.17g, in memory %.17g (%v)", tc.name, gs, g, err)
		}
	}
}

// Fit with GammaScale draws its map with γ from the training rows: the
// standardised letter columns are all non-constant, so γ = 1/16.
func TestFitGammaScale(t *testing.T) {
	train, test := letterRows(0, 800), letterRows(19800, 20000)
	opt := model.Options{Task: model.Classification, Lambda: 0.5, Standardize: true,
		Features: features.Config{Kernel: "rbf", Gamma: 7, Features: 64, Seed: 1}}
	r, m, err := Fit(context.Background(), FitConfig{Model: opt, Train: train, Test: test, GammaScale: true, GramRows: 50}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ScaleGamma(train.X, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Gamma != want || m.Map.(*features.Map).Spec().Gamma != want || math.Abs(want-1.0/16) > 1e-12 {
		t.Errorf("gamma %v (map %v), want %v ≈ 1/16", r.Gamma, m.Map.(*features.Map).Spec().Gamma, want)
	}
}

// Fit with Exact is exact kernel ridge regression with intercept on the
// standardised rows: its test accuracy is that of krr.Fit directly, the
// returned model (kernel columns and dual coefficients) predicts the same
// scores and survives a save and load bit for bit; streamed rows and λ
// selection are errors.
func TestFitExact(t *testing.T) {
	train, test := letterRows(0, 600), letterRows(19800, 20000)
	opt := model.Options{Task: model.Classification, Lambda: 0.5, Standardize: true,
		Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 64}}
	r, m, err := Fit(context.Background(), FitConfig{Model: opt, Train: train, Test: test, Exact: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := data.FitScaler(train.X)
	xs, _ := sc.Transform(train.X)
	ts, _ := sc.Transform(test.X)
	labels, k, _ := train.Labels()
	y, _ := linear.OneHot(labels, k)
	em, err := krr.Fit(xs, y, krr.Config{Kernel: kernel.RBF{Gamma: 1.0 / 16}, Lambda: 0.5, Intercept: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := em.Predict(ts)
	if err != nil {
		t.Fatal(err)
	}
	acc := model.Accuracy(linear.Argmax(want), test.Y)
	if r.TestAccuracy == nil || *r.TestAccuracy != acc || r.Form != "exact" || r.Features != 600 || r.GramError != nil {
		t.Errorf("result %+v, krr accuracy %v", r, acc)
	}
	got, err := m.Predict(test.X)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(got, want, 1e-12) {
		t.Error("the returned model predicts differently from krr")
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := model.Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	again, err := back.Predict(test.X)
	if err != nil || !mat.Equal(again, got) {
		t.Errorf("loaded exact model differs (%v)", err)
	}
	if !strings.Contains(r.Text(), "rbf/exact") {
		t.Errorf("text:\n%s", r.Text())
	}
	sel := opt
	sel.Select = "gcv"
	if _, _, err := Fit(context.Background(), FitConfig{Model: sel, Train: train, Test: test, Exact: true}, nil); err == nil {
		t.Error("λ selection accepted with Exact")
	}
	open := func() (model.Batches, func() error, error) { return nil, nil, io.EOF }
	if _, _, err := Fit(context.Background(), FitConfig{Model: opt, Stream: open, Test: test, Exact: true}, nil); err == nil {
		t.Error("streamed rows accepted with Exact")
	}
}

// NystromCompare returns one row per method and seed (and RFF), with
// accuracies well above chance on letter and Gram errors in (0, 1); the
// table has one row per method.
func TestNystromCompare(t *testing.T) {
	train, test := letterRows(0, 1000), letterRows(19800, 20000)
	rows, err := NystromCompare(context.Background(), NystromConfig{Name: "letter", Train: train, Test: test, Components: 64,
		Gamma: 1.0 / 16, Seeds: 2, RFF: true, GramRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 8 {
		t.Fatalf("%d rows, want 8", len(rows))
	}
	for _, r := range rows {
		if !(r.TestAccuracy > 0.3) || !(r.GramError > 0 && r.GramError < 1) || r.GramRows != 100 {
			t.Errorf("row %+v", r)
		}
	}
	var b strings.Builder
	if err := NystromTable(rows).Render(&b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	for _, m := range []nystrom.Method{nystrom.Uniform, nystrom.KMeans, nystrom.Leverage} {
		if !strings.Contains(b.String(), string(m)) {
			t.Errorf("table lacks %s:\n%s", m, b.String())
		}
	}
}
