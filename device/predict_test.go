package device

import (
	"context"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

// TestPredict compares the device predictions (scaler, features and
// weights in one graph) with model.Predict for a classifier fitted on the
// letter set, with several maps: float64 graphs to 1e-12 of the scores'
// scale and the same classes, float32 graphs within the float32
// tolerance and at most 1% of the classes changed (rows whose two best
// scores are that close).
func TestPredict(t *testing.T) {
	train, test := letterSets(t)
	x := test.X
	n, _ := x.Dims()
	for _, mc := range []features.Config{
		{Kernel: "rbf", Gamma: 0.1, Features: 128, Seed: 5},
		{Kernel: "softmax", Form: "hyperbolic", Features: 128, Seed: 5},
		{Kernel: "arccos1", Features: 128, Seed: 5},
	} {
		m, err := model.Fit(context.Background(), model.Options{Task: model.Classification, Lambda: 0.1, Standardize: true, Features: mc}, train)
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		wantC := linear.Argmax(want)
		for _, dev := range testDevices(t) {
			p, err := dev.Predictor(m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Predict(context.Background(), x)
			if err != nil {
				t.Fatalf("%s on %v: %v", mc.Kernel, dev, err)
			}
			if e, tol := relDiff(got, want, nil), tolerance(dev, 1e-12); !(e <= tol) {
				t.Errorf("%s/%s on %v: scores differ from model.Predict by %.3g of their scale, tolerance %.1g", mc.Kernel, mc.Form, dev, e, tol)
			}
			gotC, err := p.Classify(context.Background(), x)
			if err != nil {
				t.Fatal(err)
			}
			changed := 0
			for i := range gotC {
				if gotC[i] != wantC[i] {
					changed++
				}
			}
			if limit := 0.01 * float64(n); (!dev.Float32() && changed > 0) || float64(changed) > limit {
				t.Errorf("%s/%s on %v: %d of %d classes differ from model.Classify", mc.Kernel, mc.Form, dev, changed, n)
			}
		}
	}
}

// TestPredictRegression compares a regression model's device predictions
// (one output column) with model.Predict, through Device.Predict, and
// checks the errors of a non-finite input and of Classify.
func TestPredictRegression(t *testing.T) {
	train, test := letterSets(t)
	m, err := model.Fit(context.Background(), model.Options{Task: model.Regression, Lambda: 1, Standardize: true,
		Features: features.Config{Kernel: "rbf", Form: "sincos", Gamma: 0.05, Features: 64, Seed: 9}}, train)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Predict(test.X)
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range testDevices(t) {
		got, err := dev.Predict(context.Background(), m, test.X)
		if err != nil {
			t.Fatal(err)
		}
		if e, tol := relDiff(got, want, nil), tolerance(dev, 1e-12); !(e <= tol) {
			t.Errorf("%v: regression predictions differ by %.3g, tolerance %.1g", dev, e, tol)
		}
	}
	dev, err := Open(Go)
	if err != nil {
		t.Fatal(err)
	}
	p, err := dev.Predictor(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Classify(context.Background(), test.X); err == nil {
		t.Error("Classify of a regression model succeeded")
	}
	_, d := test.X.Dims()
	bad := mat.NewDense(1, d, slices.Repeat([]float64{math.NaN()}, d))
	if _, err := p.Predict(context.Background(), bad); err == nil {
		t.Error("Predict of NaN inputs succeeded")
	}
	if _, err := p.Predict(context.Background(), mat.NewDense(1, d+1, nil)); err == nil {
		t.Error("Predict of too many columns succeeded")
	}
}

// TestPredictMultiOutput: a regression model of three outputs (the label
// and two squared feature columns as targets) predicts all three columns
// on the device, each equal to model.Predict's within the tolerance.
func TestPredictMultiOutput(t *testing.T) {
	train, test := letterSets(t)
	const k = 3
	n := train.Rows()
	y := mat.NewDense(n, k, nil)
	for i := range n {
		y.Set(i, 0, train.Y[i])
		y.Set(i, 1, train.X.At(i, 0)*train.X.At(i, 0))
		y.Set(i, 2, train.X.At(i, 3)*train.X.At(i, 3))
	}
	multi := *train
	multi.Y, multi.Targets, multi.TargetNames = nil, y, []string{"label", "x0²", "x3²"}
	m, err := model.Fit(context.Background(), model.Options{Task: model.Regression, Lambda: 1, Standardize: true,
		Features: features.Config{Kernel: "rbf", Gamma: 0.05, Features: 64, Seed: 10}}, &multi)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Predict(test.X)
	if err != nil {
		t.Fatal(err)
	}
	if _, c := want.Dims(); c != k {
		t.Fatalf("model.Predict gives %d columns, want %d", c, k)
	}
	for _, dev := range testDevices(t) {
		got, err := dev.Predict(context.Background(), m, test.X)
		if err != nil {
			t.Fatal(err)
		}
		if r, c := got.Dims(); r != test.Rows() || c != k {
			t.Fatalf("%v: %d×%d predictions, want %d×%d", dev, r, c, test.Rows(), k)
		}
		for j := range k {
			g, w := got.Slice(0, test.Rows(), j, j+1).(*mat.Dense), want.Slice(0, test.Rows(), j, j+1).(*mat.Dense)
			if e, tol := relDiff(g, w, nil), tolerance(dev, 1e-12); !(e <= tol) {
				t.Errorf("%v: output %d differs by %.3g, tolerance %.1g", dev, j, e, tol)
			}
		}
	}
}
