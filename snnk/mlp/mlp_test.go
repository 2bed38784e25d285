package mlp

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/sampler"
)

// TestTrainSeparable: a linearly separable two-class problem is learned
// (test accuracy ≥ 0.95), and the same seed gives the same model.
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
	r2, _ := Train(cfg, mat.DenseCopyOf(tr), y[:200], mat.DenseCopyOf(te), y[200:])
	if r2.TestAccuracy != r1.TestAccuracy {
		t.Errorf("same seed, accuracies %v and %v", r1.TestAccuracy, r2.TestAccuracy)
	}
	if _, err := Train(Config{}, tr, y[:200], te, y[200:]); err == nil {
		t.Error("empty configuration accepted")
	}
}
