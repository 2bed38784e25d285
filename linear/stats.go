package linear

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Stats holds the sufficient statistics of a least-squares problem with D
// features and K targets. The zero value is not usable; call NewStats.
// Stats values form a commutative monoid under Merge, with NewStats as the
// identity, up to rounding: floating-point addition is not associative,
// so the order of Adds and Merges changes the last bits, and a reduction
// that must give the same bits on every run merges in a fixed order (as
// model.Accumulate does, in chunk order).
type Stats struct {
	D, K int
	N    int
	// ZtZ holds ZᵀZ in its upper triangle (row-major D×D); the lower
	// triangle is not referenced.
	ZtZ   []float64
	ZtY   []float64 // D×K row-major
	SumZ  []float64 // D
	SumY  []float64 // K
	SumY2 []float64 // K: Σ y_k²
}

// NewStats returns empty statistics for d features and k targets. It
// allocates d² + d·k + d + 2k values, so sizes that come from users must be
// checked before (kernelkit's own callers check them against its
// documented limits).
func NewStats(d, k int) *Stats {
	return &Stats{D: d, K: k, ZtZ: make([]float64, d*d), ZtY: make([]float64, d*k),
		SumZ: make([]float64, d), SumY: make([]float64, k), SumY2: make([]float64, k)}
}

// Add accumulates the rows of z (n×D) and targets y (n×K).
func (s *Stats) Add(z, y *mat.Dense) error {
	n, d := z.Dims()
	ny, k := y.Dims()
	if d != s.D || k != s.K || n != ny {
		return fmt.Errorf("linear: Add: got features %dx%d and targets %dx%d, want D=%d, K=%d and equal rows", n, d, ny, k, s.D, s.K)
	}
	if n == 0 {
		return nil
	}
	zr := z.RawMatrix()
	yr := y.RawMatrix()
	blas64.Syrk(blas.Trans, 1, zr, 1, blas64.Symmetric{N: d, Stride: d, Uplo: blas.Upper, Data: s.ZtZ})
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, zr, yr, 1, blas64.General{Rows: d, Cols: k, Stride: k, Data: s.ZtY})
	for i := 0; i < n; i++ {
		zi := zr.Data[i*zr.Stride : i*zr.Stride+d]
		for j, v := range zi {
			s.SumZ[j] += v
		}
		yi := yr.Data[i*yr.Stride : i*yr.Stride+k]
		for j, v := range yi {
			s.SumY[j] += v
			s.SumY2[j] += v * v
		}
	}
	s.N += n
	return nil
}

// Merge adds the statistics of o into s.
func (s *Stats) Merge(o *Stats) error {
	return s.axpy(1, o)
}

func (s *Stats) axpy(a float64, o *Stats) error {
	if o.D != s.D || o.K != s.K {
		return fmt.Errorf("linear: Merge: shapes D=%d,K=%d and D=%d,K=%d differ", s.D, s.K, o.D, o.K)
	}
	// Only the upper triangle of ZᵀZ is referenced.
	d := s.D
	for i := 0; i < d; i++ {
		dst := s.ZtZ[i*d+i : (i+1)*d]
		for j, v := range o.ZtZ[i*d+i : (i+1)*d] {
			dst[j] += a * v
		}
	}
	for i, v := range o.ZtY {
		s.ZtY[i] += a * v
	}
	for i, v := range o.SumZ {
		s.SumZ[i] += a * v
	}
	for i, v := range o.SumY {
		s.SumY[i] += a * v
	}
	for i, v := range o.SumY2 {
		s.SumY2[i] += a * v
	}
	s.N += int(a) * o.N
	return nil
}

// Reset empties s, keeping its shape and memory.
func (s *Stats) Reset() {
	for _, arr := range [][]float64{s.ZtZ, s.ZtY, s.SumZ, s.SumY, s.SumY2} {
		clear(arr)
	}
	s.N = 0
}

// Clone returns a deep copy of s.
func (s *Stats) Clone() *Stats {
	c := NewStats(s.D, s.K)
	copy(c.ZtZ, s.ZtZ)
	copy(c.ZtY, s.ZtY)
	copy(c.SumZ, s.SumZ)
	copy(c.SumY, s.SumY)
	copy(c.SumY2, s.SumY2)
	c.N = s.N
	return c
}

// centred returns C = ZᵀZ − n z̄z̄ᵀ (full symmetric), c = Zᵀy − n z̄ȳᵀ, the
// centred Σ(y − ȳ)², z̄ and ȳ. Without intercept it returns the raw ones.
func (s *Stats) centred(intercept bool) (c *mat.SymDense, cy *mat.Dense, yy, zbar, ybar []float64) {
	d, k := s.D, s.K
	c = mat.NewSymDense(d, nil)
	cy = mat.NewDense(d, k, nil)
	yy = make([]float64, k)
	zbar = make([]float64, d)
	ybar = make([]float64, k)
	n := float64(s.N)
	if intercept && s.N > 0 {
		for j := range zbar {
			zbar[j] = s.SumZ[j] / n
		}
		for j := range ybar {
			ybar[j] = s.SumY[j] / n
		}
	}
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			c.SetSym(i, j, s.ZtZ[i*d+j]-n*zbar[i]*zbar[j])
		}
		for j := 0; j < k; j++ {
			cy.Set(i, j, s.ZtY[i*k+j]-n*zbar[i]*ybar[j])
		}
	}
	for j := range yy {
		yy[j] = s.SumY2[j] - n*ybar[j]*ybar[j]
	}
	return
}

// Validate reports non-finite statistics (from NaN or Inf rows).
func (s *Stats) Validate() error {
	if s.N == 0 {
		return errors.New("linear: no rows to fit")
	}
	for _, arr := range [][]float64{s.ZtZ, s.ZtY, s.SumZ, s.SumY, s.SumY2} {
		for _, v := range arr {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return errors.New("linear: statistics contain NaN or Inf (non-finite features or targets)")
			}
		}
	}
	return nil
}
