package model

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/calibrate"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/linear"
)

// TestOutOfFoldScores: the out-of-fold score of row i equals the
// prediction of the model fitted by Fit, with the same map and λ, on the
// rows outside fold i mod F of the rows in the stratified order of
// calibrationOrder — the complement solved from the fold statistics is
// that model up to the rounding of the sums (1e-9) — and Fit's
// calibration is calibrate.Fit on exactly these scores.
func TestOutOfFoldScores(t *testing.T) {
	ctx := context.Background()
	const folds, lambda = 4, 0.5
	d := smallSet(t)
	{
		labels, k, err := d.Labels()
		if err != nil {
			t.Fatal(err)
		}
		order, err := calibrationOrder(labels, k, nil, folds)
		if err != nil {
			t.Fatal(err)
		}
		d = d.Subset(order)
	}
	mp, err := features.New(features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 64, Seed: 1}, d.Cols())
	if err != nil {
		t.Fatal(err)
	}
	m, err := Fit(ctx, Options{Task: Classification, Map: mp, Lambda: lambda, Calibrate: true, Folds: folds}, d)
	if err != nil {
		t.Fatal(err)
	}
	labels, k, err := d.Labels()
	if err != nil {
		t.Fatal(err)
	}
	targets, err := linear.OneHot(labels, k)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := Accumulate(ctx, mp, d.X, targets, folds, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	oof, err := outOfFold(ctx, mp, d.X, stats, lambda)
	if err != nil {
		t.Fatal(err)
	}
	for f := range folds {
		var in, out []int
		for i := range d.Rows() {
			if i%folds == f {
				out = append(out, i)
			} else {
				in = append(in, i)
			}
		}
		mf, err := Fit(ctx, Options{Task: Classification, Map: mp, Lambda: lambda}, d.Subset(in))
		if err != nil {
			t.Fatal(err)
		}
		if mf.Classes != k {
			t.Fatalf("fold %d: the complement has %d classes, want %d", f, mf.Classes, k)
		}
		want, err := mf.Predict(d.Subset(out).X)
		if err != nil {
			t.Fatal(err)
		}
		for j, i := range out {
			for c := range k {
				if diff := math.Abs(oof.At(i, c) - want.At(j, c)); diff > 1e-9 {
					t.Fatalf("fold %d row %d class %d: out-of-fold score %v, complement model %v", f, i, c, oof.At(i, c), want.At(j, c))
				}
			}
		}
	}
	want, err := calibrate.Fit(oof, labels)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Calibration, want) {
		t.Errorf("Fit's calibration %+v, calibrate.Fit on the out-of-fold scores %+v", m.Calibration, want)
	}
}

// TestCalibratedModel: calibration leaves the model fitted on all rows as
// it is (same λ by GCV, weights to rounding), its probabilities sum to one,
// survive a save and load bit for bit, and every misuse is an error: no
// calibration, regression, more folds than streamed rows, one fold,
// a class without rows, and inconsistent calibrations in a model file.
func TestCalibratedModel(t *testing.T) {
	ctx := context.Background()
	d := smallSet(t)
	opt := Options{Task: Classification, Standardize: true, Select: "gcv",
		Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 64, Seed: 2}}
	plain, err := Fit(ctx, opt, d)
	if err != nil {
		t.Fatal(err)
	}
	opt.Calibrate = true
	m, err := Fit(ctx, opt, d)
	if err != nil {
		t.Fatal(err)
	}
	if m.Linear.Lambda != plain.Linear.Lambda || !mat.EqualApprox(m.Linear.W, plain.Linear.W, 1e-9) {
		t.Errorf("calibrated fit: λ %v and weights differ from the plain fit's (λ %v)", m.Linear.Lambda, plain.Linear.Lambda)
	}
	if _, err := plain.Probabilities(d.X); err == nil || !strings.Contains(err.Error(), "no calibration") {
		t.Errorf("uncalibrated model: %v", err)
	}
	p, err := m.Probabilities(d.X)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := p.Dims(); r != d.Rows() || c != m.Classes {
		t.Fatalf("probabilities %d×%d, want %d×%d", r, c, d.Rows(), m.Classes)
	}
	for i := range d.Rows() {
		var sum float64
		for _, v := range p.RawRowView(i) {
			sum += v
		}
		if math.Abs(sum-1) > 1e-14 {
			t.Fatalf("row %d: probabilities sum to 1%+.3g", i, sum-1)
		}
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	back, err := Load(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Calibration, m.Calibration) {
		t.Error("loaded calibration differs")
	}
	if q, err := back.Probabilities(d.X); err != nil || !mat.Equal(p, q) {
		t.Errorf("loaded model's probabilities differ (%v)", err)
	}
	var plainBuf bytes.Buffer
	if err := plain.Save(&plainBuf); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plainBuf.Bytes(), []byte("calibration")) {
		t.Error("an uncalibrated model file has a calibration field")
	}
	if old, err := Load(&plainBuf); err != nil || old.Calibration != nil {
		t.Errorf("file without calibration: %v, calibration %v", err, old.Calibration)
	}
	i := bytes.Index(raw, []byte(`"calibration":`))
	if i < 0 {
		t.Fatal("no calibration in the model file")
	}
	head := raw[:i]
	for _, c := range []struct{ field, want string }{
		{`"calibration":{"classes":3,"sigmoids":[{"a":-1,"b":0},{"a":-1,"b":0},{"a":-1,"b":0}]}}`, "calibration of 3 classes in a model of 26"},
		{`"calibration":{"classes":26,"sigmoids":[{"a":-1,"b":0}]}}`, "1 sigmoids for 26 classes"},
		{`"calibration":{"classes":26,"sigmoids":[{"a":-1,"b":1e999}]}}`, "model file"},
	} {
		file := append(append([]byte(nil), head...), c.field...)
		if _, err := Load(bytes.NewReader(file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.field, err, c.want)
		}
	}
	var regBuf bytes.Buffer
	if err := plainRegression(t, d).Save(&regBuf); err != nil {
		t.Fatal(err)
	}
	reg := bytes.TrimRight(regBuf.Bytes(), "}\n")
	reg = append(reg, `,"calibration":{"classes":2,"sigmoids":[{"a":-1,"b":0}]}}`...)
	if _, err := Load(bytes.NewReader(reg)); err == nil || !strings.Contains(err.Error(), "regression model with a calibration") {
		t.Errorf("regression file with a calibration: %v", err)
	}

	for _, c := range []struct {
		name string
		opt  Options
		ds   *data.Dataset
		want string
	}{
		{"regression", Options{Task: Regression, Calibrate: true, Features: opt.Features}, d, "calibration is for classification"},
		{"one fold", Options{Task: Classification, Calibrate: true, Folds: 1, Features: opt.Features}, d, "at least 2 folds"},
		{"empty class", Options{Task: Classification, Calibrate: true, Features: opt.Features}, &data.Dataset{X: d.X, Y: relabel(d.Y)}, "class 1 has no rows"},
		{"selection", Options{Task: Classification, Calibrate: true, Select: "loo", Features: opt.Features}, d, "unknown lambda selection"},
	} {
		if _, err := Fit(ctx, c.opt, c.ds); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := plainRegression(t, d).Probabilities(d.X); err == nil || !strings.Contains(err.Error(), "regression") {
		t.Errorf("regression model: %v", err)
	}
	open := func() (Batches, func() error, error) {
		r, err := data.NewCSVReader(strings.NewReader("a,label\n1,0\n2,1\n"), data.CSVOptions{})
		return r, func() error { return nil }, err
	}
	if _, err := FitStream(ctx, Options{Task: Classification, Calibrate: true, Features: opt.Features}, open, nil); err == nil ||
		!strings.Contains(err.Error(), "got 5 folds for 2 rows") {
		t.Errorf("FitStream with calibration, 5 folds of 2 rows: %v", err)
	}
}

// relabel maps labels to 0 and 2 only, so that class 1 has no rows.
func relabel(y []float64) []float64 {
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = 2 * float64(int(v)%2)
	}
	return out
}

// plainRegression fits a small regression model on the labels as values.
func plainRegression(t *testing.T, d *data.Dataset) *Model {
	t.Helper()
	m, err := Fit(context.Background(), Options{Task: Regression, Lambda: 1,
		Features: features.Config{Kernel: "rbf", Gamma: 0.1, Features: 16, Seed: 1}}, d)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLetterCalibration measures calibration on letter (first 16000 rows
// train, last 4000 test; standardised, RBF γ = 1/16, D = 512, λ = 0.5,
// seed 0, 5 folds): the log-loss and the expected calibration error (15
// bins) of the calibrated probabilities against those of the softmax of
// the raw scores. The calibrated ones must be better on both, with a
// log-loss below 0.5 and an ECE below 0.1 (measured 0.451 and 0.079;
// scikit-learn 1.2.1's CalibratedClassifierCV(method='sigmoid', cv=5,
// ensemble=False) around RBFSampler and RidgeClassifier with the same
// settings gives 0.450 and 0.085 at random_state 0; the softmax of ridge
// scores in [0, 1] is nearly uniform: 2.70 and 0.81). Run with -v for the
// figures.
func TestLetterCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("letter fit")
	}
	train, test, err := data.Letter().SplitAt(16000)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Fit(context.Background(), Options{Task: Classification, Standardize: true, Lambda: 0.5, Calibrate: true,
		Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 512, Seed: 0}}, train)
	if err != nil {
		t.Fatal(err)
	}
	scores, err := m.Predict(test.X)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := m.Calibration.Probabilities(scores)
	if err != nil {
		t.Fatal(err)
	}
	labels, _, err := test.Labels()
	if err != nil {
		t.Fatal(err)
	}
	measure := func(p *mat.Dense) (ll, ece float64) {
		if ll, err = calibrate.LogLoss(p, labels); err != nil {
			t.Fatal(err)
		}
		if ece, err = calibrate.ECE(p, labels, 15); err != nil {
			t.Fatal(err)
		}
		return ll, ece
	}
	llCal, eceCal := measure(cal)
	llSoft, eceSoft := measure(calibrate.Softmax(scores))
	acc := accuracy(linear.Argmax(scores), test.Y)
	t.Logf("letter, D = 512: accuracy %.4f; calibrated log-loss %.4f, ECE %.4f; softmax of scores log-loss %.4f, ECE %.4f",
		acc, llCal, eceCal, llSoft, eceSoft)
	if !(llCal < llSoft) || !(eceCal < eceSoft) || llCal > 0.5 || eceCal > 0.1 {
		t.Errorf("calibrated log-loss %.4f, ECE %.4f; softmax %.4f, %.4f (want the calibrated lower, log-loss ≤ 0.5, ECE ≤ 0.1)", llCal, eceCal, llSoft, eceSoft)
	}
}

// TestCalibrationZeroWeightRow: a row of sample weight zero is no row for
// the calibration either. A last row (so that the other rows keep their
// folds) with the features of row 0, a wrong label and weight zero leaves
// Model.Calibration as the fit without that row gives it: bit for bit
// without the scaler (the weighted statistics add exact zeros for it,
// and calibrate drops it), to 1e-12 with it (the weighted scaler's sums
// round differently with the extra row); with weight 1 the same row moves
// the calibration.
func TestCalibrationZeroWeightRow(t *testing.T) {
	ctx := context.Background()
	d, _, err := data.Letter().SplitAt(601)
	if err != nil {
		t.Fatal(err)
	}
	const n = 600
	d.Y[n] = float64((int(d.Y[0]) + 7) % 26) // a wrong label
	copy(d.X.RawRowView(n), d.X.RawRowView(0))
	w := make([]float64, n+1)
	for i := range w {
		w[i] = 0.5 + 0.5*float64(i%3)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	without := d.Subset(idx)
	for _, std := range []bool{false, true} {
		opt := Options{Task: Classification, Lambda: 0.5, Calibrate: true, Standardize: std,
			Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 64, Seed: 3}}
		o := opt
		o.SampleWeights = w[:n]
		want, err := Fit(ctx, o, without)
		if err != nil {
			t.Fatal(err)
		}
		w[n] = 0
		o.SampleWeights = w
		got, err := Fit(ctx, o, d)
		if err != nil {
			t.Fatal(err)
		}
		e := sigmoidDiff(got.Calibration, want.Calibration)
		t.Logf("standardize %v: calibrations differ by %.3g", std, e)
		if (!std && e != 0) || !(e <= 1e-12) {
			t.Errorf("standardize %v: with a row of weight zero the calibration differs by %.3g from the one without it", std, e)
		}
		w[n] = 1
		moved, err := Fit(ctx, o, d)
		if err != nil {
			t.Fatal(err)
		}
		if reflect.DeepEqual(moved.Calibration, want.Calibration) {
			t.Errorf("standardize %v: the row with weight 1 leaves the calibration as it is; the test shows nothing", std)
		}
	}
}

// sigmoidDiff returns the largest difference of the sigmoids' A and B
// between two calibrations of the same classes, relative to max(1, |·|).
func sigmoidDiff(a, b *calibrate.Platt) float64 {
	if a.Classes != b.Classes || len(a.Sigmoids) != len(b.Sigmoids) {
		return math.Inf(1)
	}
	var e float64
	for c, g := range a.Sigmoids {
		h := b.Sigmoids[c]
		e = math.Max(e, math.Abs(g.A-h.A)/math.Max(1, math.Abs(h.A)))
		e = math.Max(e, math.Abs(g.B-h.B)/math.Max(1, math.Abs(h.B)))
	}
	return e
}

// TestCalibrationWeights: Fit's calibration is calibrate.FitWeighted on
// the out-of-fold scores of the weighted fit (the rows in row order, in
// the stratified folds of stratifiedFolds, zero-weight rows last) with
// the rows' sample weights,
// not their products with the class weights (which weigh the ridge
// statistics only, as in scikit-learn), bit for bit.
func TestCalibrationWeights(t *testing.T) {
	ctx := context.Background()
	d := smallSet(t)
	mp, err := features.New(features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 64, Seed: 1}, d.Cols())
	if err != nil {
		t.Fatal(err)
	}
	sw := make([]float64, d.Rows())
	for i := range sw {
		sw[i] = float64(i % 4) // a quarter of the rows weigh zero
	}
	const folds, lambda = 4, 0.5
	opt := Options{Task: Classification, Map: mp, Lambda: lambda, Calibrate: true, Folds: folds, SampleWeights: sw, ClassWeight: "balanced"}
	m, err := Fit(ctx, opt, d)
	if err != nil {
		t.Fatal(err)
	}
	labels, k, err := d.Labels()
	if err != nil {
		t.Fatal(err)
	}
	targets, err := linear.OneHot(labels, k)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, k)
	for _, l := range labels {
		counts[l]++
	}
	cw, err := opt.classWeightVector(counts)
	if err != nil {
		t.Fatal(err)
	}
	rows := combineWeights(sw, labels, cw)
	fold, err := stratifiedFolds(labels, k, rows, folds)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := newAccumulator(mp, k, folds, 0, d.Rows(), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := acc.add(ctx, d.X, targets, rows, fold, nil); err != nil {
		t.Fatal(err)
	}
	stats, err := acc.Result()
	if err != nil {
		t.Fatal(err)
	}
	models, err := foldModels(ctx, stats, lambda)
	if err != nil {
		t.Fatal(err)
	}
	oof := mat.NewDense(d.Rows(), k, nil)
	if err := scoreFolds(ctx, mp, d.X, models, fold, 0, oof); err != nil {
		t.Fatal(err)
	}
	want, err := calibrate.FitWeighted(oof, labels, sw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Calibration, want) {
		t.Errorf("Fit's calibration %+v, calibrate.FitWeighted with the sample weights %+v", m.Calibration.Sigmoids[:2], want.Sigmoids[:2])
	}
	combined, err := calibrate.FitWeighted(oof, labels, rows)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(m.Calibration, combined) {
		t.Error("the calibration with class weights equals the one without; the test shows nothing")
	}
}

// TestClassWeightErrorOrder: with several bad class weights the error
// names the smallest class, the same on every run (the weights are a
// map, whose order Go randomises).
func TestClassWeightErrorOrder(t *testing.T) {
	d := smallSet(t)
	for _, c := range []struct {
		weights map[int]float64
		want    string
	}{
		{map[int]float64{7: -1, 3: -2, 12: math.NaN(), 5: -4, -2: 1, 9: -6}, "class weight for class -2, classes are from 0"},
		{map[int]float64{7: -1, 3: -2, 12: math.NaN(), 5: -4, 9: -6}, "class weight -2 of class 3"},
		{map[int]float64{70: 1, 30: 1, 120: 1, 50: 1, 90: 1}, "class weight for class 30, the labels are 0 to 25"},
	} {
		for range 20 {
			_, err := Fit(context.Background(), Options{Task: Classification, Lambda: 1, ClassWeights: c.weights,
				Features: features.Config{Kernel: "rbf", Gamma: 0.1, Features: 8, Seed: 1}}, d)
			if err == nil || !strings.HasPrefix(err.Error(), "model: "+c.want) {
				t.Fatalf("error %v, want one starting %q", err, "model: "+c.want)
			}
		}
	}
}

// calibrationOrder returns the rows in the stratified order of a
// calibration with folds folds (see Plan.Strata): the rows of positive
// weight (w[i] > 0, every row for w nil) class by class, in row order
// within a class, then the rows of weight zero; the row at position p is
// in fold p mod folds.
func calibrationOrder(labels []int, k int, w []float64, folds int) ([]int, error) {
	next, err := testStrata(labels, k, w, folds)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(labels))
	for i, l := range labels {
		if w != nil && !(w[i] > 0) {
			l = k
		}
		order[next[l]] = i
		next[l]++
	}
	return order, nil
}

// stratifiedFolds returns the fold of each row of a calibration with
// folds folds, as the fit assigns them in a pass over the rows
// (Plan.Prepare).
func stratifiedFolds(labels []int, k int, w []float64, folds int) ([]int, error) {
	start, err := testStrata(labels, k, w, folds)
	if err != nil {
		return nil, err
	}
	n := len(labels)
	p := &Plan{Task: Classification, Classes: k, Outputs: k, Folds: folds, Rows: n, Cols: 1, Weighted: w != nil, Strata: start}
	y := make([]float64, n)
	for i, l := range labels {
		y[i] = float64(l)
	}
	r, err := p.Prepare(&data.Batch{X: mat.NewDense(n, 1, nil), Y: y, Weights: w}, 0, make([]int, k))
	if err != nil {
		return nil, err
	}
	return r.Fold, nil
}

// testStrata returns the stratified positions (Plan.Strata) of rows with
// class indices labels (k classes) and ridge weights w.
func testStrata(labels []int, k int, w []float64, folds int) ([]int, error) {
	count := make([]int, k)
	for i, l := range labels {
		if w == nil || w[i] > 0 {
			count[l]++
		}
	}
	return strata(count, folds)
}

// TestStratifiedFoldsInAPass: the folds the fit assigns row by row are
// those of the stratified order — row order[p] in fold p mod F — for
// weighted and unweighted rows, so a stream computes them as it reads.
func TestStratifiedFoldsInAPass(t *testing.T) {
	d := smallSet(t)
	labels, k, err := d.Labels()
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, len(labels))
	for i := range w {
		w[i] = float64(i % 3)
	}
	for _, weights := range [][]float64{nil, w} {
		order, err := calibrationOrder(labels, k, weights, 4)
		if err != nil {
			t.Fatal(err)
		}
		fold, err := stratifiedFolds(labels, k, weights, 4)
		if err != nil {
			t.Fatal(err)
		}
		seen := make([]bool, len(labels))
		for p, i := range order {
			if seen[i] {
				t.Fatalf("row %d twice in the order", i)
			}
			seen[i] = true
			if fold[i] != p%4 {
				t.Fatalf("weighted %v: row %d at position %d is in fold %d, want %d", weights != nil, i, p, fold[i], p%4)
			}
		}
	}
}
