package prf

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// Stats are the statistics of queries x_1 … x_n and keys y_1 … y_p from
// which the variance-optimal parameters are fitted: the means μ_x, μ_y
// and the second-moment matrices M_x = (1/n)Σ x_i x_iᵀ, M_y = (1/p)Σ
// y_j y_jᵀ (DERF paper Sec. 4, M⁽¹⁾, M⁽²⁾, μ⁽⁴⁾, μ⁽⁵⁾). They are all the
// fits need: the mean over every query/key pair of (x_i + y_j)(x_i + y_j)ᵀ
// is M_x + M_y + μ_xμ_yᵀ + μ_yμ_xᵀ, computed in O((n+p)d²) rather than
// O(npd).
type Stats struct {
	// D is the input dimension.
	D int
	// MeanX and MeanY are μ_x and μ_y (D values each).
	MeanX, MeanY []float64
	// MomentX and MomentY are M_x and M_y.
	MomentX, MomentY *mat.SymDense
}

// NewStats returns the statistics of the rows of x (queries) and y (keys).
// Rows must be finite; x and y must have the same number of columns and at
// least one row each. Rows whose second moments overflow float64 (norms
// beyond about 1.3e154, where ‖x‖² is not representable) give an error
// wrapping features.ErrOverflow: no fit of the family exists for them.
func NewStats(x, y *mat.Dense) (*Stats, error) {
	if x == nil || y == nil {
		return nil, errors.New("prf: statistics need queries and keys")
	}
	nx, d := x.Dims()
	ny, dy := y.Dims()
	if nx == 0 || ny == 0 {
		return nil, errors.New("prf: statistics need at least one query and one key")
	}
	if d != dy {
		return nil, fmt.Errorf("prf: queries have %d columns, keys %d", d, dy)
	}
	if _, err := limits.Matrix("prf: second-moment matrix", d, d); err != nil {
		return nil, err
	}
	st := &Stats{D: d}
	var err error
	if st.MeanX, st.MomentX, err = moments(x); err != nil {
		return nil, err
	}
	if st.MeanY, st.MomentY, err = moments(y); err != nil {
		return nil, err
	}
	return st, nil
}

// moments returns the mean and the second-moment matrix (1/n)XᵀX of the
// rows of x.
func moments(x *mat.Dense) ([]float64, *mat.SymDense, error) {
	n, d := x.Dims()
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("prf: row %d has a non-finite value", i)
			}
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	m := mat.NewSymDense(d, nil)
	m.SymRankK(m, 1/float64(n), x.T())
	for _, v := range m.RawSymmetric().Data {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, nil, fmt.Errorf("prf: the second moments of the rows overflow float64 (row norms beyond about 1.3e154): %w", features.ErrOverflow)
		}
	}
	for _, v := range mean {
		if math.IsInf(v, 0) {
			return nil, nil, fmt.Errorf("prf: the mean of the rows overflows float64: %w", features.ErrOverflow)
		}
	}
	return mean, m, nil
}

// check returns an error unless the statistics are usable by the fits:
// the sizes agree with D, every value is finite and the pair moment
// M_x + M_y + μ_xμ_yᵀ + μ_yμ_xᵀ is representable in float64 (an error
// wrapping features.ErrOverflow when it is not).
func (s *Stats) check() error {
	if s == nil {
		return errors.New("prf: the fit needs query and key statistics")
	}
	d := s.D
	if len(s.MeanX) != d || len(s.MeanY) != d || s.MomentX == nil || s.MomentY == nil ||
		s.MomentX.SymmetricDim() != d || s.MomentY.SymmetricDim() != d {
		return fmt.Errorf("prf: statistics of inconsistent sizes (D = %d)", d)
	}
	for _, v := range [][]float64{s.MeanX, s.MeanY, s.MomentX.RawSymmetric().Data, s.MomentY.RawSymmetric().Data} {
		for _, x := range v {
			if math.IsNaN(x) {
				return errors.New("prf: statistics with a NaN value")
			}
			if math.IsInf(x, 0) {
				return fmt.Errorf("prf: statistics with an infinite value: %w", features.ErrOverflow)
			}
		}
	}
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := s.MomentX.At(i, j) + s.MomentY.At(i, j) + s.MeanX[i]*s.MeanY[j] + s.MeanY[i]*s.MeanX[j]
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return fmt.Errorf("prf: the pair moment M_x + M_y + μ_xμ_yᵀ + μ_yμ_xᵀ overflows float64: %w", features.ErrOverflow)
			}
		}
	}
	if math.IsInf(s.PairNorm(), 0) {
		return fmt.Errorf("prf: the mean ‖x + y‖² overflows float64: %w", features.ErrOverflow)
	}
	return nil
}

// IsotropicStats returns the statistics of centred queries and keys of
// typical norm r with no preferred direction: M_x = M_y = (r²/d)·I, zero
// means. The catalog's maps use them when no sample rows are given.
func IsotropicStats(d int, r float64) (*Stats, error) {
	if err := limits.Dim("prf: dimension", d); err != nil {
		return nil, err
	}
	if _, err := limits.Matrix("prf: second-moment matrix", d, d); err != nil {
		return nil, err
	}
	if !(r >= 0) || math.IsInf(r, 0) {
		return nil, fmt.Errorf("prf: typical norm must be finite and non-negative, got %v", r)
	}
	if math.IsInf(r*r, 0) {
		return nil, fmt.Errorf("prf: typical norm %v: its square overflows float64 (norms up to about 1.3e154): %w", r, features.ErrOverflow)
	}
	m := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		m.SetSym(i, i, r*r/float64(d))
	}
	return &Stats{D: d, MeanX: make([]float64, d), MeanY: make([]float64, d), MomentX: m, MomentY: mat.NewSymDense(d, append([]float64(nil), m.RawSymmetric().Data...))}, nil
}

// PairMoment returns the mean over query/key pairs of (x+y)(x+y)ᵀ:
// M_x + M_y + μ_xμ_yᵀ + μ_yμ_xᵀ.
func (s *Stats) PairMoment() *mat.SymDense {
	d := s.D
	out := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			out.SetSym(i, j, s.MomentX.At(i, j)+s.MomentY.At(i, j)+s.MeanX[i]*s.MeanY[j]+s.MeanY[i]*s.MeanX[j])
		}
	}
	return out
}

// PairNorm returns the mean over query/key pairs of ‖x + y‖²:
// tr M_x + tr M_y + 2μ_xᵀμ_y.
func (s *Stats) PairNorm() float64 {
	var t float64
	for i := 0; i < s.D; i++ {
		t += s.MomentX.At(i, i) + s.MomentY.At(i, i) + 2*s.MeanX[i]*s.MeanY[i]
	}
	return math.Max(t, 0)
}

// OptimalA returns the variance-optimal parameter A < 0 of the GERF/OPRF
// f(ω, x) = D·exp(A‖ω‖² + √(1−4A)·ωᵀx − ‖x‖²/2) for inputs in k
// dimensions whose mean ‖x + y‖² over the pairs is sum (CRT Theorem 3.3;
// DERF paper Eq. 12 with φ = sum/k):
//
//	A* = (1 − 2φ − √((2φ+1)² + 8φ))/16 = −φ/(1 + (12φ+1)/(2φ + √((2φ+1)² + 8φ))).
//
// It minimises the mean over the pairs of the log second moment
// k·log(1−4A) − (k/2)·log(1−8A) + sum/(1−8A) (the homogeneity heuristic,
// exact for that objective, DERF paper Sec. 3). The second form, used
// here, has no cancellation for small or large φ: A* = −φ + O(φ²) near 0
// (A* = 0 is FAVOR+) and A* ≈ −φ/4 for large φ; beyond φ = 1e150 the
// square root is taken as a hypotenuse, so it does not overflow before φ
// does. A* < 0 for
// φ > 0, so the features are bounded in ω. sum must be finite (0 is
// returned for sum ≤ 0 or NaN).
func OptimalA(sum float64, k int) float64 {
	if !(sum > 0) || k <= 0 {
		return 0
	}
	phi := sum / float64(k)
	r := math.Sqrt((2*phi+1)*(2*phi+1) + 8*phi)
	if phi > 1e150 { // (2φ+1)² would overflow
		r = math.Hypot(2*phi+1, math.Sqrt(8*phi))
	}
	return -phi / (1 + (12*phi+1)/(2*phi+r))
}

// FitOPRF returns the OPRF (FAVOR++) parameter A* of OptimalA for the
// statistics: φ = (tr M_x + tr M_y + 2μ_xᵀμ_y)/d, the mean ‖x + y‖² over all
// query/key pairs divided by d (CRT Sec. 3.3 and App.: the FAVOR++
// parameter of a batch or layer).
func FitOPRF(s *Stats) float64 { return OptimalA(s.PairNorm(), s.D) }

// FitSDERF returns the symmetric dense-exponential parameters (DERF paper
// Theorem 4.3, derived here in the package documentation): the
// eigendecomposition M₃ = QΛQᵀ of the pair moment M₃ = PairMoment(), the
// per-direction parameters a_l = OptimalA(λ_l, 1) and the basis Qᵀ (d×d,
// orthogonal) in which they act: f(ω, x) = D·exp(Σ_l a_l ω_l² +
// Σ_l √(1−4a_l)·ω_l(Qᵀx)_l − ‖x‖²/2).
func FitSDERF(s *Stats) (a []float64, basis *mat.Dense, err error) {
	if err := s.check(); err != nil {
		return nil, nil, err
	}
	var es mat.EigenSym
	if !es.Factorize(s.PairMoment(), true) {
		return nil, nil, errors.New("prf: the eigendecomposition of the pair moment did not converge")
	}
	lam := es.Values(nil)
	var q mat.Dense
	es.VectorsTo(&q)
	a = make([]float64, s.D)
	for l, v := range lam {
		a[l] = OptimalA(math.Max(v, 0), 1)
	}
	basis = mat.NewDense(s.D, s.D, nil)
	basis.CloneFrom(q.T())
	return a, basis, nil
}

// ridgeRel is the relative ridge added to the second moments before the
// asymmetric fit inverts them: M + ε·(tr M/d)·I with ε = 1e-6 (plus an
// absolute 1e-300 for all-zero data), so that rank-deficient statistics
// (fewer rows than dimensions, a constant coordinate) still give a finite,
// invertible transform.
const ridgeRel = 1e-6

// FitADERF returns the asymmetric dense-exponential parameters (DERF paper
// Theorem 4.2, derived in the package documentation): the transform P
// (d×d) under which queries enter as Px and keys as P⁻ᵀy, its inverse
// transpose, and the scalar parameter a of the GERF applied to them. With
// M_x = R_xR_xᵀ, M_y = R_yR_yᵀ (R = QΛ^{1/2} from the eigendecompositions)
// and the SVD R_xᵀR_y = UΣVᵀ, P = Σ^{1/2}UᵀR_x⁻¹ and P⁻ᵀ = Σ^{1/2}VᵀR_y⁻¹
// minimise the mean ‖Px + P⁻ᵀy‖² to 2·tr Σ + 2μ_xᵀμ_y, and a =
// OptimalA(that, d). The moments are ridged (ridgeRel) first.
func FitADERF(s *Stats) (p, pinvT *mat.Dense, a float64, err error) {
	if err := s.check(); err != nil {
		return nil, nil, 0, err
	}
	rx, rxInv, err := sqrtFactor(s.MomentX)
	if err != nil {
		return nil, nil, 0, err
	}
	ry, ryInv, err := sqrtFactor(s.MomentY)
	if err != nil {
		return nil, nil, 0, err
	}
	var k mat.Dense
	k.Mul(rx.T(), ry)
	var svd mat.SVD
	if !svd.Factorize(&k, mat.SVDFull) {
		return nil, nil, 0, errors.New("prf: the SVD of the moment cross factor did not converge")
	}
	sig := svd.Values(nil)
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	d := s.D
	p, pinvT = mat.NewDense(d, d, nil), mat.NewDense(d, d, nil)
	p.Mul(u.T(), rxInv)
	pinvT.Mul(v.T(), ryInv)
	var tr float64
	for i, sv := range sig {
		f := math.Sqrt(sv)
		if !(f > 0) {
			return nil, nil, 0, errors.New("prf: the query and key moments are degenerate (a zero singular value)")
		}
		tr += sv
		for j := 0; j < d; j++ {
			p.Set(i, j, p.At(i, j)*f)
			pinvT.Set(i, j, pinvT.At(i, j)*f)
		}
	}
	sum := 2 * tr
	for i := 0; i < d; i++ {
		sum += 2 * s.MeanX[i] * s.MeanY[i]
	}
	for _, m := range []*mat.Dense{p, pinvT} {
		for _, v := range m.RawMatrix().Data {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, nil, 0, fmt.Errorf("prf: the asymmetric transform overflows float64 (moments of very different scales): %w", features.ErrOverflow)
			}
		}
	}
	if math.IsInf(sum, 0) || math.IsNaN(sum) {
		return nil, nil, 0, fmt.Errorf("prf: the fitted mean ‖Px + P⁻ᵀy‖² overflows float64: %w", features.ErrOverflow)
	}
	return p, pinvT, OptimalA(math.Max(sum, 0), d), nil
}

// sqrtFactor returns R = QΛ^{1/2} and R⁻¹ = Λ^{−1/2}Qᵀ for the ridged
// moment M + ε(tr M/d)I = QΛQᵀ.
func sqrtFactor(m *mat.SymDense) (r, rInv *mat.Dense, err error) {
	d := m.SymmetricDim()
	var tr float64
	for i := 0; i < d; i++ {
		tr += m.At(i, i)
	}
	ridge := ridgeRel*tr/float64(d) + 1e-300
	mr := mat.NewSymDense(d, nil)
	mr.CopySym(m)
	for i := 0; i < d; i++ {
		mr.SetSym(i, i, mr.At(i, i)+ridge)
	}
	var es mat.EigenSym
	if !es.Factorize(mr, true) {
		return nil, nil, errors.New("prf: the eigendecomposition of a second moment did not converge")
	}
	lam := es.Values(nil)
	var q mat.Dense
	es.VectorsTo(&q)
	r, rInv = mat.NewDense(d, d, nil), mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for l := 0; l < d; l++ {
			v := math.Max(lam[l], ridge)
			r.Set(i, l, q.At(i, l)*math.Sqrt(v))
			rInv.Set(l, i, q.At(i, l)/math.Sqrt(v))
		}
	}
	return r, rInv, nil
}
