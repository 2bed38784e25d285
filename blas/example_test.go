package blas_test

import (
	"fmt"
	"os"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/blas"
)

// A program installs OpenBLAS once, at start, before any goroutine
// computes. Where the library is missing, or KERNELKIT_BLAS=gonum says so,
// the pure-Go BLAS stays in place and the error says why. Every product of gonum's mat, and so of
// kernelkit, then runs on it. The implementations differ only in rounding
// (none here: these products of small integers are exact in any of them).
func Example() {
	if err := blas.CheckEnv(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if err := blas.UseOpenBLAS(); err != nil {
		fmt.Fprintln(os.Stderr, "pure-Go BLAS:", err)
	}
	// blas.Name() now names the implementation, e.g. "openblas
	// (libopenblas.so.0, core Haswell, 1 threads)" or "gonum (pure Go)".

	a := mat.NewDense(2, 3, []float64{
		1, 2, 3,
		4, 5, 6,
	})
	var c mat.Dense
	c.Mul(a, a.T())
	fmt.Printf("%.6g\n", mat.Formatted(&c))
	// Output:
	// ⎡14  32⎤
	// ⎣32  77⎦
}
