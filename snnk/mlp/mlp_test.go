package mlp

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/sampler"
)

// TestTrainSeparable: a linearly separable two-class problem is learned
// (test accuracy ≥ 0.95).
func TestTrainSeparable(t *testing.T) {
	x, _ := sampler.Gaussian{}.Sample(300, 4, 1)
	y := make([]int, 300)
	for i := range y {
		if x.At(i, 0)+0.5*x.At(i, 1) > 0 {
			y[i] = 1
		}
	}
	tr := x.Slice(0, 200, 0, 4).(*mat.Dense)
	te := x.Slice(200, 300, 0, 4).(*mat.Dense)
	cfg := Config{Hidden: 8, FirstBias: true, FirstReLU: true, Classes: 2, Epochs: 30, BatchSize: 50, LearningRate: 0.05, Seed: 3}
	r1, err := Train(cfg, mat.DenseCopyOf(tr), y[:200], mat.DenseCopyOf(te), y[200:])
	if err != nil {
		t.Fatal(err)
	}
	if r1.TestAccuracy < 0.95 {
		t.Errorf("test accuracy %.3f on a separable problem", r1.TestAccuracy)
	}
	if r1.Params != 4*8+8+8*2+2 {
		t.Errorf("parameter count %d", r1.Params)
	}
	// Training is bit-reproducible: a second run with the same seed gives
	// identical test logits, and another seed gives other ones.
	_, l1, err := fit(context.Background(), cfg, mat.DenseCopyOf(tr), y[:200], mat.DenseCopyOf(te), y[200:])
	if err != nil {
		t.Fatal(err)
	}
	_, l2, err := fit(context.Background(), cfg, mat.DenseCopyOf(tr), y[:200], mat.DenseCopyOf(te), y[200:])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l1, l2) {
		t.Error("two runs with the same seed give different test logits")
	}
	other := cfg
	other.Seed++
	_, l3, err := fit(context.Background(), other, mat.DenseCopyOf(tr), y[:200], mat.DenseCopyOf(te), y[200:])
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(l1, l3) {
		t.Error("seeds 3 and 4 give identical test logits: the seed is not used")
	}
	if _, err := Train(Config{}, tr, y[:200], te, y[200:]); err == nil {
		t.Error("empty configuration accepted")
	}
}

// TestBadInput: inconsistent shapes and labels are errors, not panics.
func TestBadInput(t *testing.T) {
	x, _ := sampler.Gaussian{}.Sample(20, 3, 2)
	y := make([]int, 20)
	for i := range y {
		y[i] = i % 2
	}
	cfg := Config{Hidden: 4, Classes: 2, Epochs: 1, BatchSize: 5, LearningRate: 0.01, Seed: 1}
	narrow, _ := sampler.Gaussian{}.Sample(20, 2, 3)
	for _, c := range []struct {
		name     string
		xtr, xte *mat.Dense
		ytr, yte []int
	}{
		{"fewer training labels", x, x, y[:19], y},
		{"fewer test labels", x, x, y, y[:19]},
		{"test width differs", x, narrow, y, y},
		{"training label out of range", x, x, append([]int{2}, y[1:]...), y},
		{"test label out of range", x, x, y, append([]int{-1}, y[1:]...)},
		{"nil test inputs", x, nil, y, y},
	} {
		if _, err := Train(cfg, c.xtr, c.ytr, c.xte, c.yte); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

// TestTrainCancelled: a cancelled context stops training with its error.
func TestTrainCancelled(t *testing.T) {
	x := mat.NewDense(8, 2, []float64{0, 0, 1, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0})
	y := []int{0, 0, 1, 1, 0, 0, 1, 1}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := Config{Hidden: 4, FirstBias: true, FirstReLU: true, Classes: 2, Epochs: 1 << 20, BatchSize: 4, LearningRate: 0.01, Seed: 1}
	if _, err := TrainContext(ctx, cfg, x, y, x, y); !errors.Is(err, context.Canceled) {
		t.Errorf("TrainContext with a cancelled context: %v, want context.Canceled", err)
	}
}
