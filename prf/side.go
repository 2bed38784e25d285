package prf

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/internal/vmath"
)

// side is one feature map of the family in its evaluated form,
//
//	z_j(x) = exp((W_eff x)_j + off_j − ½·q(x)),  j = 1 … m,
//
// with W_eff = W·diag(√(1−4a))·T, off_j = Σ_l a_l W_jl² + ¼Σ_l log(1−4a_l)
// − ½·log m and q(x) = ‖Tx‖² (xᵀGx with G = TᵀT, or ‖x‖² when T is
// orthogonal or the identity): the GERF of u = Tx with per-direction
// parameters a_l (package documentation).
type side struct {
	m, d int
	weff *mat.Dense // m×d
	off  []float64  // m
	gram *mat.Dense // d×d, nil: q(x) = ‖x‖²
	proj features.Projector
}

// newSide evaluates the map of draw w (m×d), parameters a (d) and
// transform t (nil: identity; orth: t is orthogonal, so ‖Tx‖ = ‖x‖).
func newSide(w *mat.Dense, a []float64, t *mat.Dense, orth bool) side {
	m, d := w.Dims()
	wa := mat.NewDense(m, d, nil)
	off := make([]float64, m)
	var logD float64
	for _, al := range a {
		logD += 0.25 * math.Log1p(-4*al)
	}
	logD -= 0.5 * math.Log(float64(m))
	for j := 0; j < m; j++ {
		src, dst := w.RawRowView(j), wa.RawRowView(j)
		var c float64
		for l, v := range src {
			dst[l] = v * math.Sqrt(1-4*a[l])
			c += a[l] * v * v
		}
		off[j] = c + logD
	}
	s := side{m: m, d: d, weff: wa, off: off}
	if t != nil {
		s.weff = mat.NewDense(m, d, nil)
		s.weff.Mul(wa, t)
		if !orth {
			s.gram = mat.NewDense(d, d, nil)
			s.gram.Mul(t.T(), t)
		}
	}
	return s
}

// chunkRows is the number of rows projected by one GEMM.
const chunkRows = 64

// transform writes the features of the rows of x into dst, and with
// logScale (n values) the row-scaled features exp(−s_i)·z(x_i) with
// s_i = max_j of the exponent, so that the largest feature of a row is 1.
func (s *side) transform(dst, x *mat.Dense, logScale []float64) error {
	n, d := x.Dims()
	if d != s.d {
		return fmt.Errorf("prf: input has %d columns, map expects %d", d, s.d)
	}
	if r, c := dst.Dims(); r != n || c != s.m {
		return fmt.Errorf("prf: destination is %d×%d, want %d×%d", r, c, n, s.m)
	}
	for i := 0; i < n; i++ {
		for _, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("prf: input row %d has a non-finite value", i)
			}
		}
	}
	var projected *mat.Dense
	if s.proj != nil {
		projected = mat.NewDense(n, s.m, nil)
		if err := s.proj.ProjectFrom(projected, x, 0); err != nil {
			return err
		}
	}
	workers := parallel.Workers((n + chunkRows - 1) / chunkRows)
	overflow := make([]bool, workers)
	bufs := make([][]float64, workers)
	parallel.Chunks(n, chunkRows, func(wk, lo, hi int) {
		rows := hi - lo
		if bufs[wk] == nil {
			bufs[wk] = make([]float64, chunkRows*s.d)
		}
		dr := dst.RawMatrix()
		out := blas64.General{Rows: rows, Cols: s.m, Stride: dr.Stride, Data: dr.Data[lo*dr.Stride:]}
		if projected != nil {
			for i := 0; i < rows; i++ {
				copy(dst.RawRowView(lo+i), projected.RawRowView(lo+i))
			}
		} else {
			xr := x.RawMatrix()
			blas64.Gemm(blas.NoTrans, blas.Trans, 1,
				blas64.General{Rows: rows, Cols: s.d, Stride: xr.Stride, Data: xr.Data[lo*xr.Stride:]},
				s.weff.RawMatrix(), 0, out)
		}
		var xg []float64 // rows×d: X·G for the quadratic form
		if s.gram != nil {
			xr := x.RawMatrix()
			xg = bufs[wk][:rows*s.d]
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
				blas64.General{Rows: rows, Cols: s.d, Stride: xr.Stride, Data: xr.Data[lo*xr.Stride:]},
				s.gram.RawMatrix(), 0, blas64.General{Rows: rows, Cols: s.d, Stride: s.d, Data: xg})
		}
		for i := 0; i < rows; i++ {
			xi := x.RawRowView(lo + i)
			var q float64
			if xg != nil {
				q = dot(xi, xg[i*s.d:(i+1)*s.d])
			} else {
				q = dot(xi, xi)
			}
			row := dst.RawRowView(lo + i)
			for j := range row {
				row[j] += s.off[j]
			}
			shift := -0.5 * q
			if logScale != nil {
				mx := math.Inf(-1)
				for _, v := range row {
					mx = math.Max(mx, v)
				}
				logScale[lo+i] = mx + shift
				shift = -mx // the largest exponent becomes exactly 0
			}
			for j := range row {
				row[j] += shift
			}
			vmath.Exp(row, row)
			for _, v := range row {
				if math.IsInf(v, 0) || math.IsNaN(v) {
					overflow[wk] = true
				}
			}
		}
	})
	for _, o := range overflow {
		if o {
			return features.ErrOverflow
		}
	}
	return nil
}

// withProjector returns a copy of the side whose projection XW_effᵀ is
// computed by a projector made by np.
func (s side) withProjector(np features.NewProjector) (side, error) {
	p, err := np(s.weff)
	if err != nil {
		return side{}, err
	}
	s.proj = p
	return s, nil
}

// logSecondMoment returns log E[z(x)_j²·z'(y)_j²]·m² — the log of the
// second moment of one feature product f⁽¹⁾(ω, u)f⁽²⁾(ω, v) of the
// per-direction GERF with parameters a, at u and v (DERF paper Theorem
// 4.1 in the basis where A is diagonal):
//
//	Σ_l [log(1−4a_l) − ½log(1−8a_l) + 2(1−4a_l)(u_l+v_l)²/(1−8a_l)] − ‖u‖² − ‖v‖².
func logSecondMoment(a, u, v []float64) float64 {
	var s float64
	for l, al := range a {
		z := u[l] + v[l]
		s += math.Log1p(-4*al) - 0.5*math.Log1p(-8*al) + 2*(1-4*al)*z*z/(1-8*al) - u[l]*u[l] - v[l]*v[l]
	}
	return s
}

// iidVariance returns the variance of the m-feature estimate with iid
// rows, (exp(logE2) − exp(2xᵀy))/m, computed as exp(2xᵀy)·expm1(logE2 −
// 2xᵀy)/m so that a second moment close to the square of the mean keeps
// its digits.
func iidVariance(logE2, ip float64, m int) float64 {
	return math.Exp(2*ip) * math.Expm1(logE2-2*ip) / float64(m)
}

// apply returns T·x (x itself for a nil t).
func apply(t *mat.Dense, x []float64) []float64 {
	if t == nil {
		return x
	}
	out := make([]float64, len(x))
	r, _ := t.Dims()
	for i := 0; i < r; i++ {
		out[i] = dot(t.RawRowView(i), x)
	}
	return out
}
