package hybrid_test

import (
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/sampler"
)

// The angular hybrid estimator is exact for same-length inputs at angle 0
// and π, where trigonometric and positive features respectively are.
func ExampleAngular() {
	h, err := hybrid.Angular(3, hybrid.Options{M: 16, N: 4, Sampler: sampler.Orthogonal{}, Seed: 1})
	if err != nil {
		panic(err)
	}
	x := []float64{0.6, 0.8, 0}
	for _, y := range [][]float64{{0.6, 0.8, 0}, {-0.6, -0.8, 0}} {
		est, err := features.EstimatePair(h, x, y)
		if err != nil {
			panic(err)
		}
		exact := math.Exp(x[0]*y[0] + x[1]*y[1])
		fmt.Printf("estimate %.6f, exact %.6f\n", est, exact)
	}
	// Output:
	// estimate 2.718282, exact 2.718282
	// estimate 0.367879, exact 0.367879
}
