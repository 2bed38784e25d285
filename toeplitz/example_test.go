package toeplitz_test

import (
	"fmt"

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
