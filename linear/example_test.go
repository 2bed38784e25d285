package linear_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/linear"
)

// Statistics accumulated on two shards and merged give the same fit as
// one pass: the basis of a distributed fit.
func ExampleStats_Merge() {
	z := mat.NewDense(4, 2, []float64{1, 0, 0, 1, 1, 1, 2, 1})
	y := mat.NewDense(4, 1, []float64{1, 2, 3, 4})
	a, b := linear.NewStats(2, 1), linear.NewStats(2, 1)
	_ = a.Add(z.Slice(0, 2, 0, 2).(*mat.Dense), y.Slice(0, 2, 0, 1).(*mat.Dense))
	_ = b.Add(z.Slice(2, 4, 0, 2).(*mat.Dense), y.Slice(2, 4, 0, 1).(*mat.Dense))
	_ = a.Merge(b)
	m, _ := linear.Fit(a, 0.1, true)
	fmt.Printf("w = [%.3f %.3f], b = %.3f\n", m.W.At(0, 0), m.W.At(1, 0), m.B[0])
	// Output: w = [0.952 1.765], b = 0.224
}

// With λ = 0 and two identical features the least-squares problem has
// infinitely many solutions; Fit returns the one of minimum norm, which
// splits the weight equally, as numpy's lstsq does.
func ExampleFit_minimumNorm() {
	z := mat.NewDense(3, 2, []float64{1, 1, 2, 2, 3, 3})
	y := mat.NewDense(3, 1, []float64{2, 4, 6})
	s := linear.NewStats(2, 1)
	if err := s.Add(z, y); err != nil {
		fmt.Println(err)
		return
	}
	m, err := linear.Fit(s, 0, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("w = [%.6f %.6f]\n", m.W.At(0, 0), m.W.At(1, 0))
	// Output: w = [1.000000 1.000000]
}
