package kernel_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/kernel"
)

// The exact kernels at two orthogonal unit vectors: the Gaussian kernel
// with γ = 1/2 is exp(−‖x−y‖²/2) = e⁻¹, the softmax kernel exp(xᵀy) = 1,
// and the arc-cosine kernels of orders 0 and 1 are (π − π/2)/π = 1/2 and
// sin(π/2)/π = 1/π.
func Example() {
	x := []float64{1, 0}
	y := []float64{0, 1}
	for _, k := range []kernel.Kernel{
		kernel.RBF{Gamma: 0.5},
		kernel.Softmax{},
		kernel.ArcCos{Order: 0},
		kernel.ArcCos{Order: 1},
	} {
		fmt.Printf("%-8s %.6f\n", kernel.Name(k), k.Eval(x, y))
	}
	fmt.Printf("θ/π      %.6f\n", kernel.Angle(x, y)/math.Pi)
	// Output:
	// rbf      0.367879
	// softmax  1.000000
	// arccos0  0.500000
	// arccos1  0.318310
	// θ/π      0.500000
}

// Gram evaluates a kernel between every row of x and every row of y
// through one matrix product of the inner products; RelativeError then
// measures an approximation of it by the relative Frobenius error. The
// values printed to four decimals lie far from a rounding boundary, so
// the BLAS's rounding (of the order of 1e-16 here) cannot change them.
func ExampleGram() {
	x := mat.NewDense(3, 2, []float64{
		0, 0,
		1, 0,
		0, 2,
	})
	g, err := kernel.Gram(kernel.RBF{Gamma: 0.5}, x, x)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.4f\n", mat.Formatted(g))

	// An approximation 1 % too large everywhere is 1 % off.
	approx := mat.DenseCopyOf(g)
	approx.Scale(1.01, approx)
	e, err := kernel.RelativeError(g, approx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("relative error %.4f\n", e)
	// Output:
	// ⎡1.0000  0.6065  0.1353⎤
	// ⎢0.6065  1.0000  0.0821⎥
	// ⎣0.1353  0.0821  1.0000⎦
	// relative error 0.0100
}

// A Spec is the serialisable form of a kernel, as model files store it;
// Spec.Kernel rebuilds the kernel.
func ExampleDescribe() {
	s, err := kernel.Describe(kernel.Polynomial{Gamma: 0.5, Coef0: 1, Degree: 2})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", s)
	k, err := s.Kernel()
	if err != nil {
		panic(err)
	}
	// (0.5·xᵀy + 1)² at xᵀy = 2 is 4.
	fmt.Println(k.Eval([]float64{1, 1}, []float64{1, 1}))
	// Output:
	// {Name:polynomial Gamma:0.5 Coef0:1 Degree:2 C:0}
	// 4
}
