package features_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/sampler"
)

// Random Fourier features estimate the Gaussian kernel by an inner product.
func Example() {
	x := []float64{0.1, 0.4, -0.3}
	y := []float64{0.2, -0.1, 0.5}
	mp, err := features.New(features.Config{
		Kernel:   "rbf",
		Gamma:    0.5,
		Features: 20000,
		Sampler:  sampler.Orthogonal{},
		Seed:     1,
	}, 3)
	if err != nil {
		panic(err)
	}
	est, _ := mp.Estimate(x, y)
	exact := kernel.RBF{Gamma: 0.5}.Eval(x, y)
	fmt.Printf("exact %.3f, estimate %.3f\n", exact, est)
	// Output: exact 0.638, estimate 0.631
}

// Transform maps a batch of rows at once.
func ExampleMap_Transform() {
	x := mat.NewDense(2, 2, []float64{1, 0, 0, 1})
	mp, _ := features.New(features.Config{Kernel: "arccos0", Features: 4096, Seed: 7}, 2)
	z := mat.NewDense(2, mp.Dim(), nil)
	if err := mp.Transform(z, x); err != nil {
		panic(err)
	}
	// Orthogonal inputs: the order-0 arc-cosine kernel is 1 − (π/2)/π = 0.5.
	fmt.Printf("%.2f\n", mat.Dot(z.RowView(0), z.RowView(1)))
	// Output: 0.51
}

// A temperature τ gives the softmax kernel exp(xᵀy/τ): Draw applies the
// map of exp(xᵀy) to x/√τ. For these rows of norm about 3 the unscaled
// kernel is exp(5.75) and the positive estimator's relative variance
// (exp(‖x+y‖²) − 1)/m = (e^27.5 − 1)/m; at τ = 9 they are exp(0.64) and
// (e^3.06 − 1)/m, a relative standard deviation of 3 % at m = 20000.
func ExampleDraw() {
	x := []float64{1.5, 2, -1.5}
	y := []float64{1, 2.5, 0.5}
	mp, err := features.Draw(features.Config{
		Kernel:      "softmax",
		Form:        "positive",
		Temperature: 9,
		Features:    20000,
		Sampler:     sampler.Orthogonal{},
		Seed:        1,
	}, 3)
	if err != nil {
		panic(err)
	}
	z, err := features.Apply(mp, mat.NewDense(2, 3, append(x, y...)))
	if err != nil {
		panic(err)
	}
	exact := features.TemperedKernel{Kernel: kernel.Softmax{}, Temperature: 9}.Eval(x, y)
	fmt.Printf("exp(xᵀy/9) = %.3f, estimate %.3f\n", exact, mat.Dot(z.RowView(0), z.RowView(1)))
	// Output: exp(xᵀy/9) = 1.894, estimate 1.918
}
