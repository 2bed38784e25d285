// Package testblas is the shared TestMain of kernelkit's packages: it
// installs the OpenBLAS backend when it loads, unless KERNELKIT_BLAS=gonum
// (pure Go) or KERNELKIT_BLAS=perturbed (pure Go with rounding-level noise
// in the products, blas.Perturbed: it stands for the BLAS of another
// CPU), and reports on standard error which backend the tests and
// benchmarks run on. CI runs the suite each of the three ways.
package testblas

import (
	"fmt"
	"os"
	"testing"

	"github.com/kernelkit/kernelkit/blas"
)

// Main installs the backend and runs the tests of package pkg.
func Main(m *testing.M, pkg string) {
	if os.Getenv("KERNELKIT_BLAS") == "perturbed" {
		blas.UsePerturbed()
	} else if err := blas.UseOpenBLAS(); err != nil {
		fmt.Fprintf(os.Stderr, "%s tests: pure-Go BLAS (%v)\n", pkg, err)
	}
	fmt.Fprintf(os.Stderr, "%s tests: BLAS backend %s\n", pkg, blas.Name())
	os.Exit(m.Run())
}
