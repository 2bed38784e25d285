package hybrid

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
)

// Pair is an asymmetric random feature map: the estimate of a kernel is
// Query(x)ᵀKey(y).
type Pair interface {
	// Dim is the feature dimension of both sides.
	Dim() int
	// InputDim is the input dimension d.
	InputDim() int
	// Query writes Φ₁ of the rows of x into dst (n×Dim).
	Query(dst, x *mat.Dense) error
	// Key writes Φ₂ of the rows of y into dst (n×Dim).
	Key(dst, y *mat.Dense) error
}

// Symmetric makes a Pair of a symmetric feature map (Φ₁ = Φ₂).
type Symmetric struct {
	features.Transformer
}

// Query applies the map.
func (s Symmetric) Query(dst, x *mat.Dense) error { return s.Transform(dst, x) }

// Key applies the map.
func (s Symmetric) Key(dst, y *mat.Dense) error { return s.Transform(dst, y) }

// apply returns side(x) as a new matrix.
func apply(p Pair, x *mat.Dense, query bool) (*mat.Dense, error) {
	n, d := x.Dims()
	if d != p.InputDim() {
		return nil, fmt.Errorf("hybrid: input has %d columns, map expects %d", d, p.InputDim())
	}
	z := mat.NewDense(n, p.Dim(), nil)
	var err error
	if query {
		err = p.Query(z, x)
	} else {
		err = p.Key(z, x)
	}
	return z, err
}

// Queries returns Φ₁ of the rows of x.
func Queries(p Pair, x *mat.Dense) (*mat.Dense, error) { return apply(p, x, true) }

// Keys returns Φ₂ of the rows of y.
func Keys(p Pair, y *mat.Dense) (*mat.Dense, error) { return apply(p, y, false) }

// Estimate returns Φ₁(x)ᵀΦ₂(y) for single vectors.
func Estimate(p Pair, x, y []float64) (float64, error) {
	if len(x) != p.InputDim() || len(y) != p.InputDim() {
		return 0, fmt.Errorf("hybrid: inputs of lengths %d and %d, map expects %d", len(x), len(y), p.InputDim())
	}
	qx, err := Queries(p, mat.NewDense(1, len(x), append([]float64(nil), x...)))
	if err != nil {
		return 0, err
	}
	ky, err := Keys(p, mat.NewDense(1, len(y), append([]float64(nil), y...)))
	if err != nil {
		return 0, err
	}
	return mat.Dot(qx.RowView(0), ky.RowView(0)), nil
}

// Matrix returns the n×p matrix of estimates Φ₁(x_i)ᵀΦ₂(y_j).
func Matrix(p Pair, x, y *mat.Dense) (*mat.Dense, error) {
	qx, err := Queries(p, x)
	if err != nil {
		return nil, err
	}
	ky, err := Keys(p, y)
	if err != nil {
		return nil, err
	}
	var out mat.Dense
	out.Mul(qx, ky.T())
	return &out, nil
}
