package toeplitz_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/toeplitz"
)

// A Toeplitz product by FFT equals the direct one.
func ExampleToeplitz_Spectrum() {
	t, _ := toeplitz.FromKernel(4, func(k int) float64 { return 1 / float64(1+k*k) })
	x := []float64{1, 2, 3, 4}
	fast, _ := t.Spectrum().MulVec(x)
	direct := t.MulVecDirect(x)
	for i := range x {
		fmt.Printf("%.4f %.4f\n", fast[i], direct[i])
	}
	// Output:
	// 3.0000 3.0000
	// 4.8000 4.8000
	// 6.2000 6.2000
	// 6.0000 6.0000
}

// A causal frequency-domain operator (FD-TNO): its output before an
// impulse at position 9 is zero to roundoff.
func ExampleNewCausalFD() {
	const n = 16
	m, err := toeplitz.NewMLP([]int{8}, 1, toeplitz.GeLU, 1)
	if err != nil {
		panic(err)
	}
	fd, err := toeplitz.NewCausalFD(n, toeplitz.MLPResponse(m))
	if err != nil {
		panic(err)
	}
	x := mat.NewDense(n, 1, nil)
	x.Set(9, 0, 1)
	y, err := fd.Apply(x)
	if err != nil {
		panic(err)
	}
	var before float64
	for i := 0; i < 9; i++ {
		before = math.Max(before, math.Abs(y.At(i, 0)))
	}
	fmt.Printf("largest output before the impulse below 1e-15: %v\n", before < 1e-15)
	// Output: largest output before the impulse below 1e-15: true
}
