package mlp_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/snnk/mlp"
)

// Train fits inputs → Dense(8) → ReLU → Dense(2) with Adam on GoMLX's
// pure-Go backend. The two classes are Gaussian clouds whose centres lie
// 10 apart along the first axis, 5 standard deviations on either side of
// the boundary, so every test row is classified right; the parameter
// count is 4·8 + 8 (first layer) + 8·2 + 2 (second).
func ExampleTrain() {
	const n, d = 300, 4
	x, err := sampler.Gaussian{}.Sample(n, d, 1)
	if err != nil {
		panic(err)
	}
	y := make([]int, n)
	for i := range y {
		y[i] = i % 2
		x.Set(i, 0, x.At(i, 0)+10*float64(y[i])-5)
	}
	xtr := mat.DenseCopyOf(x.Slice(0, 200, 0, d))
	xte := mat.DenseCopyOf(x.Slice(200, n, 0, d))
	cfg := mlp.Config{Hidden: 8, FirstBias: true, FirstReLU: true, Classes: 2,
		Epochs: 10, BatchSize: 50, LearningRate: 0.05, Seed: 3}
	r, err := mlp.Train(cfg, xtr, y[:200], xte, y[200:])
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d parameters, test accuracy %.2f\n", r.Params, r.TestAccuracy)
	// Output: 58 parameters, test accuracy 1.00
}
