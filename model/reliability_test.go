package model

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/features"
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
