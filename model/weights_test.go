package model

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/linear"
)

// memBatches streams an in-memory data set, weights and several targets
// included, through ReadBatch.
type memBatches struct {
	ds  *data.Dataset
	pos int
}

func (b *memBatches) Read(max int) (*mat.Dense, []float64, error) {
	bt, err := b.ReadBatch(max)
	if err != nil {
		return nil, nil, err
	}
	return bt.X, bt.Y, nil
}

func (b *memBatches) ReadBatch(max int) (*data.Batch, error) {
	n := b.ds.Rows()
	if b.pos == n {
		return nil, io.EOF
	}
	hi := min(n, b.pos+max)
	idx := make([]int, 0, hi-b.pos)
	for i := b.pos; i < hi; i++ {
		idx = append(idx, i)
	}
	b.pos = hi
	s := b.ds.Subset(idx)
	return &data.Batch{X: s.X, Y: s.Y, Targets: s.Targets, Weights: s.Weights}, nil
}

// opener returns an Opener of passes over ds.
func opener(ds *data.Dataset) Opener {
	return func() (Batches, func() error, error) {
		return &memBatches{ds: ds}, func() error { return nil }, nil
	}
}

// repeated returns the rows of ds, row i repeated w[i] times (integers),
// without weights.
func repeated(ds *data.Dataset, w []float64) *data.Dataset {
	var idx []int
	for i, v := range w {
		for range int(v) {
			idx = append(idx, i)
		}
	}
	s := ds.Subset(idx)
	s.Weights, s.WeightColumn = nil, ""
	return s
}

// letterRows returns the first n rows of letter.
func letterRows(n int) *data.Dataset {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return data.Letter().Subset(idx)
}

// regressionSet returns n rows of d uniform inputs in [−1, 1] and k smooth
// targets with noise, seeded.
func regressionSet(n, d, k int, seed uint64) *data.Dataset {
	r := rng.New(seed)
	x := mat.NewDense(n, d, nil)
	y := mat.NewDense(n, k, nil)
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for j := range row {
			row[j] = 2*r.Float64() - 1
		}
		for c := 0; c < k; c++ {
			y.Set(i, c, math.Sin(float64(c+1)*row[0])+row[1%d]*float64(c)+0.1*r.NormFloat64())
		}
	}
	names := []string{"t0", "t1", "t2", "t3"}[:k]
	return &data.Dataset{X: x, Targets: y, TargetNames: names}
}

// column returns ds with target column c of its Targets as its one target.
func column(ds *data.Dataset, c int) *data.Dataset {
	n := ds.Rows()
	y := make([]float64, n)
	for i := range y {
		y[i] = ds.Targets.At(i, c)
	}
	return &data.Dataset{X: ds.X, Y: y, Weights: ds.Weights}
}

// relDiff returns max|a − b| / max(1, max|b|) over the weights and
// intercepts of two models.
func relDiff(a, b *Model) float64 {
	diff, scale := 0.0, 1.0
	wa, wb := a.Linear.W.RawMatrix().Data, b.Linear.W.RawMatrix().Data
	for i := range wb {
		diff = math.Max(diff, math.Abs(wa[i]-wb[i]))
		scale = math.Max(scale, math.Abs(wb[i]))
	}
	for i := range b.Linear.B {
		diff = math.Max(diff, math.Abs(a.Linear.B[i]-b.Linear.B[i]))
		scale = math.Max(scale, math.Abs(b.Linear.B[i]))
	}
	return diff / scale
}

// sameModel reports whether two models have the same weights and
// intercepts bit for bit.
func sameModel(a, b *Model) bool {
	return mat.Equal(a.Linear.W, b.Linear.W) && slicesEqual(a.Linear.B, b.Linear.B)
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFitWeightsEqualRepetition: a fit with integer sample weights 0…3
// equals the fit on the rows repeated that often, to 1e-10 relative in the
// linear model's weights and intercepts (measured: 2e-15 for letter, 2e-13
// for the regression), in memory
// (Fit with Options.SampleWeights, and with the data set's weight column)
// and streamed (FitStream with weighted batches against FitStream on the
// repeated rows, and against Fit) — standardised (the scaler weighted),
// in chunks of 128 rows over both lanes, for a letter classification and a
// three-target regression at a fixed λ. (λ selection is not repetition:
// weighted GCV counts rows of positive weight, k-fold keeps a weighted row
// in one fold; see linear.GCV and linear.KFold.)
func TestFitWeightsEqualRepetition(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ds   *data.Dataset
		opt  Options
	}{
		{"letter classification", letterRows(500), Options{Task: Classification, Lambda: 0.5}},
		{"three-target regression", regressionSet(400, 3, 3, 5), Options{Task: Regression, Lambda: 0.05}},
	} {
		opt := tc.opt
		opt.Standardize, opt.ChunkRows = true, 128
		opt.Features = features.Config{Kernel: "rbf", Gamma: 0.1, Features: 64, Seed: 3}
		w := make([]float64, tc.ds.Rows())
		for i := range w {
			w[i] = float64((i * 5) % 4)
		}
		rep := repeated(tc.ds, w)
		want, err := Fit(ctx, opt, rep)
		if err != nil {
			t.Fatal(err)
		}
		wopt := opt
		wopt.SampleWeights = w
		got, err := Fit(ctx, wopt, tc.ds)
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, got *Model, tol float64) {
			t.Helper()
			if e := relDiff(got, want); e > tol || got.Linear.Lambda != want.Linear.Lambda {
				t.Errorf("%s: %s differs from the fit on repeated rows by %.3g (λ %v, %v)", tc.name, what, e, got.Linear.Lambda, want.Linear.Lambda)
			}
			for i := range want.Scores {
				if math.Abs(got.Scores[i]-want.Scores[i]) > 1e-10*want.Scores[i] {
					t.Errorf("%s: %s: GCV score %d %v, repeated rows %v", tc.name, what, i, got.Scores[i], want.Scores[i])
				}
			}
		}
		check("Fit with SampleWeights", got, 1e-10)
		wds := *tc.ds
		wds.Weights, wds.WeightColumn = w, "w"
		col, err := Fit(ctx, opt, &wds)
		if err != nil {
			t.Fatal(err)
		}
		if !sameModel(col, got) {
			t.Errorf("%s: the data set's weight column fits differently from the same Options.SampleWeights", tc.name)
		}
		sRep, err := FitStream(ctx, opt, opener(rep), nil)
		if err != nil {
			t.Fatal(err)
		}
		sW, err := FitStream(ctx, opt, opener(&wds), nil)
		if err != nil {
			t.Fatal(err)
		}
		if e := relDiff(sW, sRep); e > 1e-10 {
			t.Errorf("%s: weighted FitStream differs from FitStream on repeated rows by %.3g", tc.name, e)
		}
		check("FitStream with weighted batches", sW, 1e-10)
	}
}

// TestZeroWeightIsNoRow: rows of weight zero — their labels and targets
// included — fit as if they were not there, to 1e-12 (in chunks of 64
// rows, whose boundaries fall differently), in memory and streamed.
func TestZeroWeightIsNoRow(t *testing.T) {
	ctx := context.Background()
	ds := letterRows(400)
	w := make([]float64, ds.Rows())
	var keep []int
	for i := range w {
		if i%3 != 1 {
			w[i] = 1
			keep = append(keep, i)
		}
	}
	opt := Options{Task: Classification, Lambda: 0.5, Standardize: true, ChunkRows: 64,
		Features: features.Config{Kernel: "rbf", Gamma: 0.1, Features: 32, Seed: 4}}
	want, err := Fit(ctx, opt, ds.Subset(keep))
	if err != nil {
		t.Fatal(err)
	}
	wopt := opt
	wopt.SampleWeights = w
	got, err := Fit(ctx, wopt, ds)
	if err != nil {
		t.Fatal(err)
	}
	if e := relDiff(got, want); e > 1e-12 {
		t.Errorf("Fit: rows of weight zero change the fit by %.3g", e)
	}
	wds := *ds
	wds.Weights = w
	sw, err := FitStream(ctx, opt, opener(&wds), nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := relDiff(sw, want); e > 1e-12 {
		t.Errorf("FitStream: rows of weight zero change the fit by %.3g", e)
	}
}

// imbalanced returns letter rows of classes 0 to 3 with 1/1, 1/2, 1/3 and
// 1/4 of their rows kept, and the row count of each class.
func imbalanced() (*data.Dataset, []int) {
	all := letterRows(3000)
	var idx []int
	counts := make([]int, 4)
	seen := make([]int, 4)
	for i, v := range all.Y {
		c := int(v)
		if c >= 4 {
			continue
		}
		if seen[c]%(c+1) == 0 {
			idx = append(idx, i)
			counts[c]++
		}
		seen[c]++
	}
	return all.Subset(idx), counts
}

// TestClassWeights: ClassWeight "balanced" gives the fit of the explicit
// class weights n/(C·n_c) computed by hand — bit for bit with
// Options.ClassWeights, to 1e-12 with the same weights as per-row sample
// weights — class weights multiply sample weights (1e-12), and the
// streamed fit, counting the classes in its first pass, equals Fit bit for
// bit (unstandardised, one chunk). The class counts here are 132, 67, 41
// and 33 (273 rows), the balanced weights 0.517, 1.019, 1.665 and 2.068;
// they change the unweighted fit by more than 1e-3.
func TestClassWeights(t *testing.T) {
	ctx := context.Background()
	ds, counts := imbalanced()
	n, c := ds.Rows(), len(counts)
	hand := map[int]float64{}
	for k, nc := range counts {
		hand[k] = float64(n) / (float64(c) * float64(nc))
	}
	base := Options{Task: Classification, Lambda: 0.5,
		Features: features.Config{Kernel: "rbf", Gamma: 0.01, Features: 48, Seed: 5}}
	fit := func(mod func(*Options), ds *data.Dataset) *Model {
		t.Helper()
		o := base
		mod(&o)
		m, err := Fit(ctx, o, ds)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	balanced := fit(func(o *Options) { o.ClassWeight = "balanced" }, ds)
	explicit := fit(func(o *Options) { o.ClassWeights = hand }, ds)
	if !sameModel(balanced, explicit) {
		t.Error("balanced class weights differ from the explicit weights n/(C·n_c)")
	}
	perRow := make([]float64, n)
	for i, v := range ds.Y {
		perRow[i] = hand[int(v)]
	}
	asSample := fit(func(o *Options) { o.SampleWeights = perRow }, ds)
	if e := relDiff(asSample, balanced); e > 1e-12 {
		t.Errorf("balanced class weights differ from the same weights as sample weights by %.3g", e)
	}
	plain := fit(func(*Options) {}, ds)
	if e := relDiff(plain, balanced); e < 1e-3 {
		t.Errorf("balanced class weights change the fit by only %.3g", e)
	}
	sample := make([]float64, n)
	prod := make([]float64, n)
	for i := range sample {
		sample[i] = 0.5 + float64(i%3)
		prod[i] = sample[i] * perRow[i]
	}
	both := fit(func(o *Options) { o.SampleWeights, o.ClassWeight = sample, "balanced" }, ds)
	product := fit(func(o *Options) { o.SampleWeights = prod }, ds)
	if e := relDiff(both, product); e > 1e-12 {
		t.Errorf("class weights times sample weights differ from their product by %.3g", e)
	}
	o := base
	o.ClassWeight = "balanced"
	streamed, err := FitStream(ctx, o, opener(ds), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sameModel(streamed, balanced) {
		t.Errorf("streamed balanced fit differs from Fit's by %.3g", relDiff(streamed, balanced))
	}
}

// TestMultiOutput: a regression on three target columns equals three
// regressions on one column each, column by column, to 1e-12 (weights
// and intercepts; also with sample weights, and streamed); its RMSE per
// target equals the single fits' RMSE to 1e-12, its RMSE is their mean;
// the model file stores the outputs and the target names and loads to the
// same predictions bit for bit, while a one-target file has neither field.
func TestMultiOutput(t *testing.T) {
	ctx := context.Background()
	ds := regressionSet(300, 4, 3, 7)
	test := regressionSet(100, 4, 3, 8)
	w := make([]float64, ds.Rows())
	for i := range w {
		w[i] = 0.25 + float64(i%5)/2
	}
	wds := *ds
	wds.Weights = w
	opt := Options{Task: Regression, Lambda: 0.02, Standardize: true, ChunkRows: 100,
		Features: features.Config{Kernel: "rbf", Gamma: 0.5, Features: 40, Seed: 6}}
	for _, set := range []*data.Dataset{ds, &wds} {
		multi, err := Fit(ctx, opt, set)
		if err != nil {
			t.Fatal(err)
		}
		if _, k := multi.Linear.W.Dims(); k != 3 || len(multi.Targets) != 3 {
			t.Fatalf("multi-output model has %d outputs, targets %q", k, multi.Targets)
		}
		streamed, err := FitStream(ctx, opt, opener(set), nil)
		if err != nil {
			t.Fatal(err)
		}
		if e := relDiff(streamed, multi); e > 1e-12 {
			t.Errorf("streamed multi-output fit differs by %.3g", e)
		}
		ev, err := multi.Evaluate(test, 0)
		if err != nil {
			t.Fatal(err)
		}
		var mean float64
		for c := 0; c < 3; c++ {
			one, err := Fit(ctx, opt, column(set, c))
			if err != nil {
				t.Fatal(err)
			}
			var diff, scale float64
			for j := 0; j < multi.Linear.W.RawMatrix().Rows; j++ {
				diff = math.Max(diff, math.Abs(multi.Linear.W.At(j, c)-one.Linear.W.At(j, 0)))
				scale = math.Max(scale, math.Abs(one.Linear.W.At(j, 0)))
			}
			diff = math.Max(diff, math.Abs(multi.Linear.B[c]-one.Linear.B[0]))
			if diff > 1e-12*math.Max(1, scale) {
				t.Errorf("weighted %v, target %d: multi-output column differs from the single fit by %.3g", set.Weights != nil, c, diff)
			}
			ev1, err := one.Evaluate(column(test, c), 0)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(ev.RMSEs[c]-ev1.RMSE) > 1e-12*ev1.RMSE {
				t.Errorf("target %d: RMSE %v, single fit %v", c, ev.RMSEs[c], ev1.RMSE)
			}
			mean += ev1.RMSE / 3
		}
		if math.Abs(ev.RMSE-mean) > 1e-12 {
			t.Errorf("RMSE %v, mean of the targets' %v", ev.RMSE, mean)
		}
		var buf bytes.Buffer
		if err := multi.Save(&buf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `"outputs":3,"targets":["t0","t1","t2"]`) {
			t.Errorf("model file lacks outputs and targets: %.200s…", buf.String())
		}
		back, err := Load(&buf)
		if err != nil {
			t.Fatal(err)
		}
		p0, err := multi.Predict(test.X)
		if err != nil {
			t.Fatal(err)
		}
		p1, err := back.Predict(test.X)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(p0, p1) || len(back.Targets) != 3 {
			t.Error("loaded multi-output model predicts differently")
		}
	}
	one, err := Fit(ctx, opt, column(ds, 0))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := one.Save(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `"outputs"`) || strings.Contains(buf.String(), `"targets"`) {
		t.Error("a one-target model file has outputs or targets")
	}
}

// TestLoadOutputs: the outputs and targets fields are checked: weights
// for another number of outputs, target names of another count, a
// negative count, and either field in a classification model are refused.
func TestLoadOutputs(t *testing.T) {
	set := func(base string, fields map[string]any) string {
		var f map[string]any
		if err := json.Unmarshal([]byte(base), &f); err != nil {
			t.Fatal(err)
		}
		for k, v := range fields {
			f[k] = v
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	two := map[string]any{"outputs": 2, "weights": []float64{1, 2, 3, 4}, "intercept": []float64{0.25, 0.5}}
	good := set(tinyRegression, two)
	m, err := Load(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if _, k := m.Linear.W.Dims(); k != 2 {
		t.Errorf("loaded %d outputs, want 2", k)
	}
	for _, c := range []struct {
		name, file, want string
	}{
		{"weights for one output", set(tinyRegression, map[string]any{"outputs": 2}), "weights have"},
		{"target names", set(good, map[string]any{"targets": []string{"a"}}), "1 target names for 2 outputs"},
		{"negative", set(tinyRegression, map[string]any{"outputs": -1}), "-1 outputs"},
		{"classification", set(tinyModel, map[string]any{"outputs": 2}), "fields of regression models"},
	} {
		_, err := Load(strings.NewReader(c.file))
		checkLoadError(t, c.name, err, c.want)
	}
}

// fakeAccumulator stands for a device accumulator (no weights).
type fakeAccumulator struct{}

func (fakeAccumulator) Add(context.Context, *mat.Dense, *mat.Dense, func(int)) error { return nil }
func (fakeAccumulator) Result() ([]*linear.Stats, error)                             { return nil, nil }

// TestWeightErrors: bad weights and weight options are errors, each one
// line naming the problem.
func TestWeightErrors(t *testing.T) {
	ctx := context.Background()
	ds := letterRows(60)
	reg := regressionSet(60, 2, 2, 9)
	w := func(v float64) []float64 {
		s := make([]float64, 60)
		for i := range s {
			s[i] = 1
		}
		s[7] = v
		return s
	}
	acc := func(features.Transformer, int, int) (StatsAccumulator, error) { return fakeAccumulator{}, nil }
	weighted := *ds
	weighted.Weights, weighted.WeightColumn = w(1), "w"
	for _, c := range []struct {
		name string
		opt  Options
		ds   *data.Dataset
		want string
	}{
		{"negative", Options{Task: Classification, SampleWeights: w(-1)}, ds, "weight -1 of row 7"},
		{"NaN", Options{Task: Classification, SampleWeights: w(math.NaN())}, ds, "weight NaN of row 7"},
		{"Inf", Options{Task: Classification, SampleWeights: w(math.Inf(1))}, ds, "weight +Inf of row 7"},
		{"length", Options{Task: Classification, SampleWeights: []float64{1, 2}}, ds, "2 sample weights for 60 rows"},
		{"all zero", Options{Task: Classification, SampleWeights: make([]float64, 60)}, ds, "every row has weight zero"},
		{"twice", Options{Task: Classification, SampleWeights: w(1)}, &weighted, "weight column"},
		{"class weight on regression", Options{Task: Regression, ClassWeight: "balanced"}, column(reg, 0), "class weights are for classification"},
		{"unknown class weight", Options{Task: Classification, ClassWeight: "even"}, ds, `unknown class weight "even"`},
		{"both class weights", Options{Task: Classification, ClassWeight: "balanced", ClassWeights: map[int]float64{0: 2}}, ds, "not both"},
		{"class beyond labels", Options{Task: Classification, ClassWeights: map[int]float64{40: 2}}, ds, "class 40"},
		{"negative class weight", Options{Task: Classification, ClassWeights: map[int]float64{1: -2}}, ds, "class weight -2 of class 1"},
		{"accumulator", Options{Task: Classification, SampleWeights: w(1), Accumulator: acc}, ds, "CPU accumulator"},
		{"classification of targets", Options{Task: Classification}, reg, "several target columns"},
	} {
		c.opt.Lambda = 0.5
		c.opt.Features = features.Config{Kernel: "rbf", Gamma: 0.1, Features: 8, Seed: 1}
		_, err := Fit(ctx, c.opt, c.ds)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
	opt := Options{Task: Classification, Lambda: 0.5, Features: features.Config{Kernel: "rbf", Gamma: 0.1, Features: 8, Seed: 1}}
	bad := *ds
	bad.Weights = w(-3)
	for _, c := range []struct {
		name string
		opt  Options
		ds   *data.Dataset
		want string
	}{
		{"stream negative", opt, &bad, "weight -3 of row 7"},
		{"stream SampleWeights", Options{Task: Classification, SampleWeights: w(1)}, ds, "SampleWeights is for Fit"},
		{"stream accumulator", Options{Task: Classification, Accumulator: acc, ClassWeight: "balanced"}, ds, "CPU accumulator"},
	} {
		_, err := FitStream(ctx, c.opt, opener(c.ds), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
