package model

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/krr"
	"github.com/kernelkit/kernelkit/linear"
)

// letterRange returns rows lo…hi−1 of the embedded letter data.
func letterRange(lo, hi int) *data.Dataset {
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	return data.Letter().Subset(idx)
}

// TestRunJob: the result's metrics are Evaluate's on the returned
// model, the Gram error is GramError on the first rows (scaled as
// the model scales them), and a streamed fit of the same rows gives the
// same test accuracy.
func TestRunJob(t *testing.T) {
	train, test := letterRange(0, 1500), letterRange(19800, 20000)
	opt := Options{Task: Classification, Lambda: 0.5, Standardize: true,
		Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 128, Seed: 1}}
	r, m, err := RunJob(context.Background(), Job{Model: opt, Test: test, Train: train, GramRows: 150}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := m.Evaluate(test, 0)
	if err != nil {
		t.Fatal(err)
	}
	x, err := m.Scaler.Transform(test.X.Slice(0, 150, 0, 16).(*mat.Dense))
	if err != nil {
		t.Fatal(err)
	}
	ge, err := GramError(m.Map, x)
	if err != nil {
		t.Fatal(err)
	}
	if r.TestAccuracy == nil || *r.TestAccuracy != ev.Accuracy || r.GramError == nil || *r.GramError != ge || r.GramRows != 150 ||
		r.TrainRows != 1500 || r.TestRows != 200 || r.Kernel != "rbf" || r.Form != "cos" || r.Sampler != "iid" || r.Features != 128 ||
		r.TrainAccuracy != nil || r.TestRMSE != nil {
		t.Errorf("result %+v; Evaluate accuracy %v, Gram error %v", r, ev.Accuracy, ge)
	}
	if !strings.Contains(r.Text(), "test accuracy   "+strconv.FormatFloat(ev.Accuracy, 'f', 4, 64)+" (200 rows)") {
		t.Errorf("text:\n%s", r.Text())
	}

	// The same rows streamed from a CSV file.
	var b strings.Builder
	b.WriteString(strings.Join(train.Names, ",") + ",label\n")
	for i := 0; i < train.Rows(); i++ {
		for _, v := range train.X.RawRowView(i) {
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64) + ",")
		}
		b.WriteString(strconv.FormatFloat(train.Y[i], 'g', -1, 64) + "\n")
	}
	path := filepath.Join(t.TempDir(), "train.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	open, names, err := StreamCSV(path, data.CSVOptions{})
	if err != nil || len(names) != 16 {
		t.Fatalf("StreamCSV: %v, %d names", err, len(names))
	}
	done := 0
	rs, _, err := RunJob(context.Background(), Job{Model: opt, Stream: open, Names: names, Test: test, GramRows: 150},
		func(d, total int) { done = d })
	if err != nil {
		t.Fatal(err)
	}
	if *rs.TestAccuracy != *r.TestAccuracy || rs.TrainRows != 1500 || done != 1500 {
		t.Errorf("streamed: accuracy %v (in memory %v), %d rows, progress %d", *rs.TestAccuracy, *r.TestAccuracy, rs.TrainRows, done)
	}
	if _, _, err := RunJob(context.Background(), Job{Model: opt, Stream: open, Names: names}, nil); err == nil {
		t.Error("streamed fit without a test set accepted")
	}

	// Without a test set the metrics are the training set's.
	opt.Task = Regression
	r, _, err = RunJob(context.Background(), Job{Model: opt, Train: train}, nil)
	if err != nil || r.TrainRMSE == nil || r.TestRMSE != nil || r.TestRows != 0 || r.GramRows != 1000 {
		t.Errorf("regression on the training rows: %v, %+v", err, r)
	}
}

func TestParseTask(t *testing.T) {
	cls := &data.Dataset{Y: []float64{0, 3, 999}}
	reg := &data.Dataset{Y: []float64{0, 1.5}}
	big := &data.Dataset{Y: []float64{1000}}
	for _, c := range []struct {
		s    string
		d    *data.Dataset
		want Task
	}{
		{"auto", cls, Classification}, {"auto", reg, Regression}, {"auto", big, Regression},
		{"auto", nil, Auto}, {"classify", reg, Classification}, {"regress", cls, Regression},
		{"regression", cls, Regression}, {"classification", nil, Classification}, {"poisson", cls, ""},
	} {
		got, err := ParseTask(c.s, c.d)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("ParseTask(%q): %q, %v, want %q", c.s, got, err, c.want)
		}
	}
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
		open := func() (Batches, func() error, error) {
			return &sliceBatches{x: tc.x}, func() error { return nil }, nil
		}
		gs, err := ScaleGammaStream(open, tc.std, 1)
		if err != nil || math.Abs(gs-g) > 1e-15*g {
			t.Errorf("%s: streamed gamma %.17g, in memory %.17g (%v)", tc.name, gs, g, err)
		}
	}
}

// RunJob with GammaScale draws its map with γ from the training rows: the
// standardised letter columns are all non-constant, so γ = 1/16.
func TestRunJobGammaScale(t *testing.T) {
	train, test := letterRange(0, 800), letterRange(19800, 20000)
	opt := Options{Task: Classification, Lambda: 0.5, Standardize: true,
		Features: features.Config{Kernel: "rbf", Gamma: 7, Features: 64, Seed: 1}}
	r, m, err := RunJob(context.Background(), Job{Model: opt, Train: train, Test: test, GammaScale: true, GramRows: 50}, nil)
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

// RunJob with Exact is exact kernel ridge regression with intercept on the
// standardised rows: its test accuracy is that of krr.Fit directly, the
// returned model (kernel columns and dual coefficients) predicts the same
// scores and survives a save and load bit for bit; streamed rows and λ
// selection are errors.
func TestRunJobExact(t *testing.T) {
	train, test := letterRange(0, 600), letterRange(19800, 20000)
	opt := Options{Task: Classification, Lambda: 0.5, Standardize: true,
		Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 64}}
	r, m, err := RunJob(context.Background(), Job{Model: opt, Train: train, Test: test, Exact: true}, nil)
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
	acc := Accuracy(linear.Argmax(want), test.Y)
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
	back, err := Load(&buf)
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
	if _, _, err := RunJob(context.Background(), Job{Model: sel, Train: train, Test: test, Exact: true}, nil); err == nil {
		t.Error("λ selection accepted with Exact")
	}
	open := func() (Batches, func() error, error) { return nil, nil, io.EOF }
	if _, _, err := RunJob(context.Background(), Job{Model: opt, Stream: open, Test: test, Exact: true}, nil); err == nil {
		t.Error("streamed rows accepted with Exact")
	}
}
