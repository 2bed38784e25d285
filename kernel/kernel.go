package kernel

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/parallel"
)

// Kernel is a positive-definite kernel function on vectors of equal length.
type Kernel interface {
	// Eval returns k(x, y). x and y must have the same length.
	Eval(x, y []float64) float64
}

// RBF is the Gaussian (radial basis function) kernel exp(−Gamma‖x−y‖²).
type RBF struct {
	Gamma float64
}

// Eval returns exp(−γ‖x−y‖²).
func (k RBF) Eval(x, y []float64) float64 {
	var s float64
	for i, v := range x {
		d := v - y[i]
		s += d * d
	}
	return math.Exp(-k.Gamma * s)
}

// Softmax is the softmax kernel SM(x, y) = exp(xᵀy) of the HRF paper.
type Softmax struct{}

// Eval returns exp(xᵀy).
func (Softmax) Eval(x, y []float64) float64 {
	return math.Exp(dot(x, y))
}

// ArcCos is the arc-cosine kernel of Cho & Saul of order 0, 1 or 2.
type ArcCos struct {
	Order int
}

// Eval returns (1/π)‖x‖ⁿ‖y‖ⁿ J_n(θ). For order 0 the value at x = 0 or y = 0
// is taken as 1/2 (the limit of the Heaviside estimator with Θ(0) = 0 is not
// defined there); for orders 1 and 2 it is 0.
func (k ArcCos) Eval(x, y []float64) float64 {
	nx := math.Sqrt(dot(x, x))
	ny := math.Sqrt(dot(y, y))
	if nx == 0 || ny == 0 {
		if k.Order == 0 {
			return 0.5
		}
		return 0
	}
	c := dot(x, y) / (nx * ny)
	c = math.Max(-1, math.Min(1, c))
	return ArcCosFromCos(k.Order, c, nx, ny)
}

// ArcCosFromCos returns the arc-cosine kernel of the given order from the
// cosine c of the angle between x and y and their norms.
func ArcCosFromCos(order int, c, nx, ny float64) float64 {
	theta := math.Acos(c)
	s := math.Sqrt(math.Max(0, 1-c*c))
	switch order {
	case 0:
		return 1 - theta/math.Pi
	case 1:
		return nx * ny * (s + (math.Pi-theta)*c) / math.Pi
	case 2:
		return nx * nx * ny * ny * (3*s*c + (math.Pi-theta)*(1+2*c*c)) / math.Pi
	}
	panic(fmt.Sprintf("kernel: arc-cosine order %d not in {0,1,2}", order))
}

// Validate reports whether k has usable parameters.
func Validate(k Kernel) error {
	switch k := k.(type) {
	case RBF:
		if !(k.Gamma > 0) || math.IsInf(k.Gamma, 0) {
			return fmt.Errorf("kernel: RBF gamma must be positive and finite, got %v", k.Gamma)
		}
	case ArcCos:
		if k.Order < 0 || k.Order > 2 {
			return fmt.Errorf("kernel: arc-cosine order must be 0, 1 or 2, got %d", k.Order)
		}
	case Softmax:
	case nil:
		return errors.New("kernel: nil kernel")
	}
	return nil
}

func dot(x, y []float64) float64 {
	var s float64
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// Gram returns the n×p matrix G with G[i][j] = k(x_i, y_j) for the rows x_i
// of x and y_j of y. The inner products come from one matrix product
// (blas64.Gemm), so the cost is that of a GEMM plus n·p scalar kernel
// evaluations, spread over the cores.
func Gram(k Kernel, x, y *mat.Dense) (*mat.Dense, error) {
	if err := Validate(k); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	p, dy := y.Dims()
	if d != dy {
		return nil, fmt.Errorf("kernel: Gram: x has %d columns, y has %d", d, dy)
	}
	g := mat.NewDense(n, p, nil)
	nx := rowNorms2(x)
	ny := rowNorms2(y)
	raw := g.RawMatrix()
	xr := x.RawMatrix()
	parallel.Chunks(n, 64, func(_, lo, hi int) {
		xs := blas64.General{Rows: hi - lo, Cols: d, Stride: xr.Stride, Data: xr.Data[lo*xr.Stride:]}
		gs := blas64.General{Rows: hi - lo, Cols: p, Stride: raw.Stride, Data: raw.Data[lo*raw.Stride:]}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, xs, y.RawMatrix(), 0, gs)
		for i := lo; i < hi; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+p]
			for j, ip := range row {
				row[j] = fromInner(k, ip, nx[i], ny[j])
			}
		}
	})
	return g, nil
}

// fromInner evaluates k from xᵀy and the squared norms.
func fromInner(k Kernel, ip, nx2, ny2 float64) float64 {
	switch k := k.(type) {
	case RBF:
		d2 := math.Max(0, nx2+ny2-2*ip)
		return math.Exp(-k.Gamma * d2)
	case Softmax:
		return math.Exp(ip)
	case ArcCos:
		nx, ny := math.Sqrt(nx2), math.Sqrt(ny2)
		if nx == 0 || ny == 0 {
			if k.Order == 0 {
				return 0.5
			}
			return 0
		}
		c := math.Max(-1, math.Min(1, ip/(nx*ny)))
		return ArcCosFromCos(k.Order, c, nx, ny)
	}
	panic("kernel: unknown kernel type")
}

func rowNorms2(x *mat.Dense) []float64 {
	n, _ := x.Dims()
	out := make([]float64, n)
	for i := range out {
		r := x.RawRowView(i)
		out[i] = dot(r, r)
	}
	return out
}

// RelativeError returns ‖K − K̂‖_F / ‖K‖_F, the Gram-matrix error measure of
// the analog paper (Results, Fig. 2b) and of scikit-learn comparisons.
func RelativeError(exact, approx *mat.Dense) (float64, error) {
	r, c := exact.Dims()
	ra, ca := approx.Dims()
	if r != ra || c != ca {
		return 0, fmt.Errorf("kernel: RelativeError: shapes %dx%d and %dx%d differ", r, c, ra, ca)
	}
	var num, den float64
	for i := 0; i < r; i++ {
		e := exact.RawRowView(i)
		a := approx.RawRowView(i)
		for j, v := range e {
			d := v - a[j]
			num += d * d
			den += v * v
		}
	}
	if den == 0 {
		return 0, errors.New("kernel: RelativeError: exact Gram matrix is zero")
	}
	if math.IsInf(den, 0) || math.IsNaN(den) || math.IsInf(num, 0) || math.IsNaN(num) {
		return 0, errors.New("kernel: RelativeError: Gram matrix entries overflow float64 (inputs too large for this kernel)")
	}
	return math.Sqrt(num / den), nil
}

// Angle returns the angle θ ∈ [0, π] between x and y, computed as
// 2·atan2(‖x̂−ŷ‖, ‖x̂+ŷ‖) with x̂, ŷ the unit vectors, which keeps full
// relative precision for nearly parallel and nearly antiparallel inputs
// (acos of a rounded cosine loses half the digits there). A zero vector
// gives θ = π/2 by convention. Lengths must match (it panics otherwise).
func Angle(x, y []float64) float64 {
	if len(x) != len(y) {
		panic("kernel: Angle of vectors of different lengths")
	}
	nx, ny := math.Sqrt(dot(x, x)), math.Sqrt(dot(y, y))
	if nx == 0 || ny == 0 {
		return math.Pi / 2
	}
	var dm, dp float64
	for i, v := range x {
		a, b := v/nx, y[i]/ny
		dm += (a - b) * (a - b)
		dp += (a + b) * (a + b)
	}
	return 2 * math.Atan2(math.Sqrt(dm), math.Sqrt(dp))
}
