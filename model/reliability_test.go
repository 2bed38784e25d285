package model

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/calibrate"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/linear"
)

// TestOneClassOfPositiveWeight (issue 22): a classification in which one
// class alone has rows of positive weight — by class weights of zero, by
// sample weights of zero on every row of the other classes, or by both —
// is refused, in memory and streamed, as a training set of one label is;
// with two classes of positive weight the same fits succeed.
func TestOneClassOfPositiveWeight(t *testing.T) {
	ctx := context.Background()
	ds := letterRows(120)
	labels, k, err := ds.Labels()
	if err != nil {
		t.Fatal(err)
	}
	keep, other := labels[0], -1
	for _, l := range labels {
		if l != keep {
			other = l
			break
		}
	}
	// classWeights weighs the classes in on with 1, the others with 0.
	classWeights := func(on ...int) map[int]float64 {
		w := map[int]float64{}
		for c := range k {
			w[c] = 0
		}
		for _, c := range on {
			w[c] = 1
		}
		return w
	}
	// sampleWeights weighs the rows of the classes in on with 2, the
	// others with 0.
	sampleWeights := func(on ...int) []float64 {
		w := make([]float64, len(labels))
		for i, l := range labels {
			for _, c := range on {
				if l == c {
					w[i] = 2
				}
			}
		}
		return w
	}
	for _, c := range []struct {
		name   string
		class  map[int]float64
		sample []float64
		ok     bool
	}{
		{"class weights", classWeights(keep), nil, false},
		{"sample weights", nil, sampleWeights(keep), false},
		{"sample and class weights", classWeights(keep), sampleWeights(keep, other), false},
		{"class weights, two classes", classWeights(keep, other), nil, true},
		{"sample weights, two classes", nil, sampleWeights(keep, other), true},
	} {
		opt := Options{Task: Classification, Lambda: 0.5, ClassWeights: c.class,
			Features: features.Config{Kernel: "rbf", Gamma: 0.1, Features: 16, Seed: 1}}
		weighted := *ds
		weighted.Weights = c.sample
		for _, stream := range []bool{false, true} {
			var err error
			if stream {
				_, err = FitStream(ctx, opt, opener(&weighted), nil)
			} else {
				_, err = Fit(ctx, opt, &weighted)
			}
			switch {
			case c.ok && err != nil:
				t.Errorf("%s, stream %v: %v", c.name, stream, err)
			case !c.ok && (err == nil || !strings.Contains(err.Error(), "only class "+strconv.Itoa(keep)+" has rows of positive weight")):
				t.Errorf("%s, stream %v: error %v, want the refusal of one class of positive weight", c.name, stream, err)
			}
		}
	}
}

// TestFoldCountChecks (issue 22): k-fold selection with more folds than
// rows is refused by the streamed fit as by Fit, and per-fold statistics
// beyond the memory limit (lowered here to 2²⁰ values, 8 MiB) are refused
// before any of them is allocated, with the memory they would need: 40
// folds of D = 128 and 26 classes take 2 lanes × 40 × (128·155 + 52)
// values, 12.1 MiB, on the CPU, and 40 × that / 2, 6.1 MiB — within the
// limit — on a device accumulator.
func TestFoldCountChecks(t *testing.T) {
	ctx := context.Background()
	ds := letterRows(90)
	opt := Options{Task: Classification, Lambda: 0.5, Select: "kfold", Folds: 1000,
		Features: features.Config{Kernel: "rbf", Gamma: 0.1, Features: 8, Seed: 1}}
	if _, err := FitStream(ctx, opt, opener(ds), nil); err == nil || !strings.Contains(err.Error(), "got 1000 folds for 90 rows") {
		t.Errorf("streamed fit, 1000 folds of 90 rows: error %v", err)
	}
	if _, err := Fit(ctx, opt, ds); err == nil || !strings.Contains(err.Error(), "got 1000 folds for 90 rows") {
		t.Errorf("fit, 1000 folds of 90 rows: error %v", err)
	}

	defer func(v int) { maxStatsValues = v }(maxStatsValues)
	maxStatsValues = 1 << 20
	opt.Folds, opt.Features.Features = 40, 128
	for _, stream := range []bool{false, true} {
		var err error
		if stream {
			_, err = FitStream(ctx, opt, opener(ds), nil)
		} else {
			_, err = Fit(ctx, opt, ds)
		}
		if err == nil || !strings.Contains(err.Error(), "ridge statistics of 40 folds") || !strings.Contains(err.Error(), "would need 12.1 MiB (limit 8 MiB)") {
			t.Errorf("stream %v: error %v, want the memory of the statistics of 40 folds", stream, err)
		}
	}
	var got int
	dev := opt
	dev.Accumulator = func(_ features.Transformer, _, folds int) (StatsAccumulator, error) {
		got = folds
		return nil, errors.New("no device")
	}
	if _, err := Fit(ctx, dev, ds); err == nil || err.Error() != "no device" || got != 40 {
		t.Errorf("device accumulator within the limit: error %v, folds %d", err, got)
	}
	dev.Folds = 80
	got = 0
	if _, err := Fit(ctx, dev, ds); err == nil || !strings.Contains(err.Error(), "would need 12.1 MiB") || got != 0 {
		t.Errorf("device accumulator beyond the limit: error %v, accumulator called with %d folds", err, got)
	}
}

// clusters returns n rows of three well-separated clusters in the plane,
// row i of cluster (and label) i mod 3 at a distance of 0.5 from its
// centre: the layout of issue 22, whose folds i mod 3 each held one class
// only.
func clusters(n, phase int) *data.Dataset {
	centres := [3][2]float64{{0, 0}, {6, 0}, {0, 6}}
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range n {
		c := i % 3
		a := float64(i*7 + phase)
		x.Set(i, 0, centres[c][0]+0.5*math.Cos(a))
		x.Set(i, 1, centres[c][1]+0.5*math.Sin(a))
		y[i] = float64(c)
	}
	return &data.Dataset{X: x, Y: y, Names: []string{"a", "b"}}
}

// TestStratifiedCalibration (issue 22): with labels i mod 3 and 3 folds,
// folds i mod 3 would each hold one class, so that every out-of-fold model
// lacks the class it scores and the calibrated probabilities contradict
// the labels (log-loss 4.4). The folds are stratified: every fold's
// complement has every class, the calibrated probabilities of 30 test
// rows of the same clusters put the most mass on the true class and their
// log-loss is below that of the uniform guess, ln 3. A class with fewer
// rows of positive weight than folds, or none (class weight zero), is
// refused.
func TestStratifiedCalibration(t *testing.T) {
	ctx := context.Background()
	const folds = 3
	train, test := clusters(30, 0), clusters(30, 1)
	labels, k, err := train.Labels()
	if err != nil {
		t.Fatal(err)
	}
	order, err := calibrationOrder(labels, k, nil, folds)
	if err != nil {
		t.Fatal(err)
	}
	for f := range folds {
		seen := make([]bool, k)
		for p, i := range order {
			if p%folds != f {
				seen[labels[i]] = true
			}
		}
		for c, ok := range seen {
			if !ok {
				t.Errorf("the complement of fold %d has no row of class %d", f, c)
			}
		}
	}
	opt := Options{Task: Classification, Lambda: 1e-3, Calibrate: true, Folds: folds, Standardize: true,
		Features: features.Config{Kernel: "rbf", Gamma: 0.5, Features: 64, Seed: 1}}
	m, err := Fit(ctx, opt, train)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Probabilities(test.X)
	if err != nil {
		t.Fatal(err)
	}
	testLabels, _, err := test.Labels()
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for i, l := range testLabels {
		if linear.Argmax(mat.NewDense(1, k, p.RawRowView(i)))[0] != l {
			wrong++
		}
	}
	ll, err := calibrate.LogLoss(p, testLabels)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("calibrated probabilities: %d of 30 test rows contradict their labels, log-loss %.4g", wrong, ll)
	if wrong > 0 || !(ll < math.Log(3)) {
		t.Errorf("calibrated probabilities contradict %d of 30 labels, log-loss %.4g (want none, below ln 3 = %.4g)", wrong, ll, math.Log(3))
	}

	few := clusters(30, 0)
	few.Y[2], few.Y[5] = 0, 0 // class 2 keeps 8 rows
	for _, c := range []struct {
		name  string
		ds    *data.Dataset
		folds int
		class map[int]float64
		want  string
	}{
		{"8 rows, 9 folds", few, 9, nil, "9 folds needs at least 9 rows of positive weight in each class, class 2 has 8"},
		{"class weight zero", train, 3, map[int]float64{1: 0}, "class 1 has no rows of positive weight"},
	} {
		o := opt
		o.Folds, o.ClassWeights = c.folds, c.class
		if _, err := Fit(ctx, o, c.ds); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	few.Y[8] = 0 // class 2 keeps 7 rows; 7 folds do
	o := opt
	o.Folds = 7
	if _, err := Fit(ctx, o, few); err != nil {
		t.Errorf("7 rows of a class, 7 folds: %v", err)
	}
}
