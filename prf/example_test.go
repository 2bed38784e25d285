package prf_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/prf"
	"github.com/kernelkit/kernelkit/sampler"
)

// Fit FAVOR++ (OPRF) features to queries and keys and compare the
// closed-form variance of the estimate with FAVOR+'s.
func Example() {
	q := mat.NewDense(2, 4, []float64{1, 0.5, 0, 0.2, 0.8, -0.3, 0.4, 0})
	k := mat.NewDense(2, 4, []float64{0.9, 0.4, 0.1, 0, 0.7, 0.6, -0.2, 0.3})
	st, err := prf.NewStats(q, k)
	if err != nil {
		panic(err)
	}
	mp, err := prf.New(prf.Config{Family: prf.OPRF, Features: 64, Sampler: sampler.Orthogonal{}, Seed: 1}, st)
	if err != nil {
		panic(err)
	}
	fmt.Printf("A* = %.4f\n", prf.FitOPRF(st))
	x, y := q.RawRowView(0), k.RawRowView(0)
	fmt.Printf("relative variance, iid rows: OPRF %.3f, FAVOR+ %.3f\n",
		mp.Variance(x, y)/math.Exp(2*mat.Dot(q.RowView(0), k.RowView(0))),
		features.PositiveMSE(x, y, 64)/math.Exp(2*mat.Dot(q.RowView(0), k.RowView(0))))
	// Output:
	// A* = -0.2938
	// relative variance, iid rows: OPRF 0.103, FAVOR+ 1.349
}
