package kernel

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/parallel"
)

// This file holds the kernels of the data-dependent and sketching maps
// (polynomial, additive and skewed chi-squared), a serialisable Spec of
// every kernel of the package, and GramOf, the Gram matrix of any Kernel.

// Polynomial is the polynomial kernel (Gamma·xᵀy + Coef0)^Degree, the
// kernel of scikit-learn's PolynomialCountSketch and polynomial_kernel.
type Polynomial struct {
	Gamma, Coef0 float64
	Degree       int
}

// Eval returns (γxᵀy + c)^p.
func (k Polynomial) Eval(x, y []float64) float64 {
	return ipow(k.Gamma*dot(x, y)+k.Coef0, k.Degree)
}

// ipow returns b^p for p ≥ 0 by repeated squaring.
func ipow(b float64, p int) float64 {
	r := 1.0
	for ; p > 0; p >>= 1 {
		if p&1 == 1 {
			r *= b
		}
		b *= b
	}
	return r
}

// Chi2 is the additive χ² kernel k(x, y) = Σ_i 2x_iy_i/(x_i + y_i) on
// non-negative vectors (terms with x_i + y_i = 0 count 0): the kernel that
// scikit-learn's AdditiveChi2Sampler approximates (Vedaldi & Zisserman,
// 2012). scikit-learn's additive_chi2_kernel is the different, not
// positive-definite −Σ(x_i − y_i)²/(x_i + y_i).
type Chi2 struct{}

// Eval returns Σ 2x_iy_i/(x_i + y_i). Negative entries give NaN.
func (Chi2) Eval(x, y []float64) float64 {
	var s float64
	for i, a := range x {
		b := y[i]
		if a < 0 || b < 0 {
			return math.NaN()
		}
		if a+b > 0 {
			s += 2 * a * b / (a + b)
		}
	}
	return s
}

// SkewedChi2 is the skewed χ² kernel of Li, Ionescu & Sminchisescu (2010),
// k(x, y) = Π_i 2√(x_i+c)√(y_i+c)/(x_i+y_i+2c) for x_i, y_i > −c, the
// kernel of scikit-learn's SkewedChi2Sampler (c = skewedness).
type SkewedChi2 struct {
	C float64
}

// Eval returns Π 2√(x_i+c)√(y_i+c)/(x_i+y_i+2c), computed as the
// exponential of a sum of logarithms. Entries at or below −c give NaN.
func (k SkewedChi2) Eval(x, y []float64) float64 {
	var s float64
	for i, a := range x {
		u, v := a+k.C, y[i]+k.C
		if !(u > 0) || !(v > 0) {
			return math.NaN()
		}
		s += math.Log(2) + 0.5*(math.Log(u)+math.Log(v)) - math.Log(u+v)
	}
	return math.Exp(s)
}

// validateExtra checks the kernels of this file; ok is false for the
// kernels of kernel.go.
func validateExtra(k Kernel) (ok bool, err error) {
	switch k := k.(type) {
	case Polynomial:
		if !(k.Gamma > 0) || math.IsInf(k.Gamma, 0) || !(k.Coef0 >= 0) || math.IsInf(k.Coef0, 0) {
			return true, fmt.Errorf("kernel: polynomial needs gamma > 0 and coef0 ≥ 0, finite, got %v and %v", k.Gamma, k.Coef0)
		}
		if k.Degree < 1 || k.Degree > 64 {
			return true, fmt.Errorf("kernel: polynomial degree must be between 1 and 64, got %d", k.Degree)
		}
		return true, nil
	case Chi2:
		return true, nil
	case SkewedChi2:
		if !(k.C > 0) || math.IsInf(k.C, 0) {
			return true, fmt.Errorf("kernel: skewed chi-squared needs c > 0 and finite, got %v", k.C)
		}
		return true, nil
	}
	return false, nil
}

// Check reports whether k has usable parameters: Validate for the kernels
// of kernel.go, and the checks of Polynomial, Chi2 and SkewedChi2.
func Check(k Kernel) error {
	if ok, err := validateExtra(k); ok {
		return err
	}
	return Validate(k)
}

// GramOf returns the n×p Gram matrix of any Kernel: Gram for the kernels
// Gram knows (RBF, Softmax, ArcCos), one GEMM and an element-wise power for
// Polynomial, and pairwise Eval spread over the cores for every other
// kernel (Chi2, SkewedChi2, a user's). Inputs outside a kernel's domain
// (negative histograms) and non-finite kernel values are errors.
func GramOf(k Kernel, x, y *mat.Dense) (*mat.Dense, error) {
	switch k.(type) {
	case RBF, Softmax, ArcCos:
		return Gram(k, x, y)
	}
	if err := Check(k); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	p, dy := y.Dims()
	if d != dy {
		return nil, fmt.Errorf("kernel: Gram: x has %d columns, y has %d", d, dy)
	}
	g := mat.NewDense(n, p, nil)
	raw := g.RawMatrix()
	if pk, ok := k.(Polynomial); ok {
		xr := x.RawMatrix()
		parallel.Chunks(n, 64, func(_, lo, hi int) {
			xs := blas64.General{Rows: hi - lo, Cols: d, Stride: xr.Stride, Data: xr.Data[lo*xr.Stride:]}
			gs := blas64.General{Rows: hi - lo, Cols: p, Stride: raw.Stride, Data: raw.Data[lo*raw.Stride:]}
			blas64.Gemm(blas.NoTrans, blas.Trans, pk.Gamma, xs, y.RawMatrix(), 0, gs)
			for i := lo; i < hi; i++ {
				row := raw.Data[i*raw.Stride : i*raw.Stride+p]
				for j, v := range row {
					row[j] = ipow(v+pk.Coef0, pk.Degree)
				}
			}
		})
	} else {
		parallel.Chunks(n, 16, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				xi := x.RawRowView(i)
				row := raw.Data[i*raw.Stride : i*raw.Stride+p]
				for j := range row {
					row[j] = k.Eval(xi, y.RawRowView(j))
				}
			}
		})
	}
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+p] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("kernel: %s(x_%d, y_%d) = %v: inputs outside the kernel's domain or beyond float64", Name(k), i, j, v)
			}
		}
	}
	return g, nil
}

// Spec is the serialisable description of a kernel of this package, as
// model files and the specs of data-dependent maps store it.
type Spec struct {
	// Name is "rbf", "softmax", "arccos0", "arccos1", "arccos2",
	// "polynomial", "chi2" or "skewed-chi2".
	Name string `json:"name"`
	// Gamma is the RBF bandwidth or the polynomial scale.
	Gamma float64 `json:"gamma,omitempty"`
	// Coef0 is the polynomial offset c.
	Coef0 float64 `json:"coef0,omitempty"`
	// Degree is the polynomial degree.
	Degree int `json:"degree,omitempty"`
	// C is the skewness of the skewed χ² kernel.
	C float64 `json:"c,omitempty"`
}

// Name returns the Spec name of a kernel of this package, or its Go type
// for any other Kernel.
func Name(k Kernel) string {
	if s, err := Describe(k); err == nil {
		return s.Name
	}
	return fmt.Sprintf("%T", k)
}

// Describe returns the Spec of a kernel of this package, or an error for a
// Kernel it does not know.
func Describe(k Kernel) (Spec, error) {
	switch k := k.(type) {
	case RBF:
		return Spec{Name: "rbf", Gamma: k.Gamma}, nil
	case Softmax:
		return Spec{Name: "softmax"}, nil
	case ArcCos:
		if k.Order < 0 || k.Order > 2 {
			return Spec{}, fmt.Errorf("kernel: arc-cosine order must be 0, 1 or 2, got %d", k.Order)
		}
		return Spec{Name: fmt.Sprintf("arccos%d", k.Order)}, nil
	case Polynomial:
		return Spec{Name: "polynomial", Gamma: k.Gamma, Coef0: k.Coef0, Degree: k.Degree}, nil
	case Chi2:
		return Spec{Name: "chi2"}, nil
	case SkewedChi2:
		return Spec{Name: "skewed-chi2", C: k.C}, nil
	case nil:
		return Spec{}, errors.New("kernel: nil kernel")
	}
	return Spec{}, fmt.Errorf("kernel: kernel %T has no spec", k)
}

// Kernel returns the kernel a Spec describes, with its parameters checked
// (see Check).
func (s Spec) Kernel() (Kernel, error) {
	var k Kernel
	name := strings.ToLower(strings.TrimSpace(s.Name))
	switch name {
	case "rbf", "gaussian":
		k = RBF{Gamma: s.Gamma}
	case "softmax":
		k = Softmax{}
	case "arccos0", "arccos1", "arccos2":
		k = ArcCos{Order: int(name[6] - '0')}
	case "polynomial", "poly":
		k = Polynomial{Gamma: s.Gamma, Coef0: s.Coef0, Degree: s.Degree}
	case "chi2":
		k = Chi2{}
	case "skewed-chi2":
		k = SkewedChi2{C: s.C}
	default:
		return nil, fmt.Errorf("kernel: unknown kernel %.40q (want rbf, softmax, arccos0, arccos1, arccos2, polynomial, chi2 or skewed-chi2)", s.Name)
	}
	if err := Check(k); err != nil {
		return nil, err
	}
	return k, nil
}
