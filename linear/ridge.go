package linear

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// Model is a fitted linear model y ≈ Wᵀz + b with D features and K
// targets.
type Model struct {
	W      *mat.Dense // D×K
	B      []float64  // K intercepts (zero without intercept)
	Lambda float64
	// Jitter is always 0: Fit solves λ = 0 and singular systems by the
	// pseudo-inverse and adds no ridge of its own. The field remains
	// because model files written by earlier versions record the jitter
	// they added.
	Jitter float64
}

// Fit solves the ridge problem min Σ‖y_i − Wᵀz_i − b‖² + λ‖W‖²_F from the
// statistics s, with an unpenalised intercept b when intercept is true;
// for weighted statistics (Stats.AddWeighted) the problem is
// min Σ w_i‖y_i − Wᵀz_i − b‖² + λ‖W‖²_F, centred on the weighted means.
// With λ = 0 it returns the minimum-norm least-squares solution, as
// numpy's lstsq and scikit-learn's Ridge(alpha=0) do, also when there are
// more features than rows; see the package documentation for the cutoff
// below which directions count as singular.
func Fit(s *Stats, lambda float64, intercept bool) (*Model, error) {
	if !(lambda >= 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("linear: lambda must be non-negative and finite, got %v", lambda)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	zbar, ybar := s.means(intercept)
	w, err := solve(s, zbar, ybar, lambda)
	if err != nil {
		return nil, err
	}
	b := make([]float64, s.K)
	if intercept {
		for k := range b {
			b[k] = ybar[k]
			for j := range zbar {
				b[k] -= zbar[j] * w.At(j, k)
			}
		}
	}
	return &Model{W: w, B: b, Lambda: lambda}, nil
}

// maxCholeskyCond is the largest condition number estimate of C for which
// the λ = 0 solve uses the Cholesky factorisation: below it C is far from
// singular, the pseudo-inverse is the inverse and Cholesky computes it to
// about cond·ε, as accurately as the eigendecomposition would, at a small
// fraction of the cost.
const maxCholeskyCond = 1e8

// solve returns the minimum-norm solution w of (C + λI) w = c for the
// centred statistics C, c of s (means zbar, ybar; C is symmetric positive
// semi-definite): by Cholesky factorisation when λ > 0, or when λ = 0 and
// C is well conditioned; otherwise, or if the Cholesky factorisation
// fails or reports a near-singular system, by the pseudo-inverse from the
// eigendecomposition of C.
//
// The factorisation is the blocked one of cholesky, on all cores, of
// C + λI written straight from the statistics; the condition number is
// LAPACK's 1-norm estimate (lapack64.Pocon), as gonum's mat.Cholesky
// computes it, with the same thresholds: mat.ConditionTolerance for
// λ > 0, maxCholeskyCond for λ = 0.
func solve(s *Stats, zbar, ybar []float64, lambda float64) (*mat.Dense, error) {
	d := s.D
	u, anorm := s.centredUpper(zbar, lambda)
	if cholesky(u, d) {
		rcond := lapack64.Pocon(blas64.Symmetric{N: d, Stride: d, Uplo: blas.Upper, Data: u}, anorm, make([]float64, 3*d), make([]int, d))
		limit := mat.ConditionTolerance
		if lambda == 0 {
			limit = maxCholeskyCond
		}
		if 1/rcond <= limit {
			w := s.centredZtY(zbar, ybar)
			cholSolve(u, d, w.RawMatrix())
			return w, nil
		}
	}
	return pinvSolve(s.centredSym(zbar), s.centredZtY(zbar, ybar), lambda)
}

// pinvSolve returns w = (c + λI)⁺ cy from the eigendecomposition c = V S Vᵀ:
// w = Σ v_i (v_iᵀ cy)/(s_i + λ) over the eigenvalues with s_i + λ >
// ε·max(D, 16)·max_j (s_j + λ), ε the float64 machine epsilon (the
// eigensolver's rounding level; the floor: package doc); the other directions,
// which the computed statistics cannot tell from the null space of C, get
// zero weight.
func pinvSolve(c *mat.SymDense, cy *mat.Dense, lambda float64) (*mat.Dense, error) {
	d := c.SymmetricDim()
	var eig mat.EigenSym
	if !eig.Factorize(c, true) {
		return nil, errors.New("linear: eigendecomposition of the normal equations failed")
	}
	vals := eig.Values(nil)
	var v mat.Dense
	eig.VectorsTo(&v)
	top := 0.0
	for _, s := range vals {
		top = math.Max(top, s+lambda)
	}
	cut := epsilon * float64(max(d, 16)) * top
	var ct mat.Dense
	ct.Mul(v.T(), cy) // D×K
	for i, s := range vals {
		row := ct.RawRowView(i)
		if s+lambda <= cut {
			clear(row)
			continue
		}
		for k := range row {
			row[k] /= s + lambda
		}
	}
	var w mat.Dense
	w.Mul(&v, &ct)
	return &w, nil
}

// epsilon is the float64 machine epsilon, 2⁻⁵².
const epsilon = 0x1p-52

// Predict returns the n×K predictions for the feature rows z.
func (m *Model) Predict(z *mat.Dense) (*mat.Dense, error) {
	if err := m.check(z); err != nil {
		return nil, err
	}
	n, _ := z.Dims()
	_, k := m.W.Dims()
	if n == 0 {
		return &mat.Dense{}, nil
	}
	out := mat.NewDense(n, k, nil)
	if err := m.PredictTo(out, z); err != nil {
		return nil, err
	}
	return out, nil
}

// PredictTo writes the predictions for the feature rows z into dst (n×K),
// without allocating.
func (m *Model) PredictTo(dst, z *mat.Dense) error {
	if err := m.check(z); err != nil {
		return err
	}
	n, _ := z.Dims()
	_, k := m.W.Dims()
	if r, c := dst.Dims(); r != n || c != k {
		return fmt.Errorf("linear: PredictTo: destination is %dx%d, want %dx%d", r, c, n, k)
	}
	or := dst.RawMatrix()
	for i := 0; i < n; i++ {
		copy(or.Data[i*or.Stride:i*or.Stride+k], m.B)
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, z.RawMatrix(), m.W.RawMatrix(), 1, or)
	return nil
}

// check returns an error unless z has the model's number of features.
func (m *Model) check(z *mat.Dense) error {
	_, d := z.Dims()
	if dw, _ := m.W.Dims(); d != dw {
		return fmt.Errorf("linear: Predict: features have %d columns, model has %d", d, dw)
	}
	return nil
}

// OneHot returns the n×K indicator matrix of integer class labels in
// [0, K).
func OneHot(labels []int, k int) (*mat.Dense, error) {
	y := mat.NewDense(len(labels), k, nil)
	for i, l := range labels {
		if l < 0 || l >= k {
			return nil, fmt.Errorf("linear: label %d of row %d not in [0, %d)", l, i, k)
		}
		y.Set(i, l, 1)
	}
	return y, nil
}

// Argmax returns, for each row of scores, the index of its largest entry.
func Argmax(scores *mat.Dense) []int {
	n, _ := scores.Dims()
	out := make([]int, n)
	for i := range out {
		row := scores.RawRowView(i)
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		out[i] = best
	}
	return out
}

// GCV returns, for each λ in grid, the generalised cross-validation score
// n·RSS(λ)/(n − dof(λ))² summed over targets, with dof(λ) = Σ s_i/(s_i+λ)
// (plus one for the intercept) from the eigenvalues s_i of the centred ZᵀZ.
//
// For weighted statistics (Stats.AddWeighted) RSS is the weighted
// Σw_i‖y_i − ŷ_i‖² and n the number of rows of positive weight (weighted
// GCV as in Wood's mgcv): scaling every weight by c scales the score of
// λ·c by c, so the λ chosen does not depend on the weights' scale (with
// n = Σw it would: weights summing to 1 make n < dof and every score
// infinite). Integer weights are therefore not the same as repeated rows
// here, unlike the fit itself and KFold.
func GCV(s *Stats, grid []float64, intercept bool) ([]float64, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(grid) == 0 {
		return nil, errors.New("linear: empty lambda grid")
	}
	c, cy, yy, _, _ := s.centred(intercept)
	var eig mat.EigenSym
	if !eig.Factorize(c, true) {
		return nil, errors.New("linear: GCV: eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var v mat.Dense
	eig.VectorsTo(&v)
	var ct mat.Dense
	ct.Mul(v.T(), cy) // D×K
	n := float64(s.N)
	var yyTot float64
	for _, e := range yy {
		yyTot += e
	}
	out := make([]float64, len(grid))
	for gi, lam := range grid {
		if !(lam > 0) {
			return nil, fmt.Errorf("linear: GCV needs positive lambdas, got %v", lam)
		}
		rss := yyTot
		dof := 0.0
		if intercept {
			dof = 1
		}
		for i, si := range vals {
			si = math.Max(si, 0)
			den := si + lam
			f := 2/den - si/(den*den)
			row := ct.RawRowView(i)
			for _, e := range row {
				rss -= e * e * f
			}
			dof += si / den
		}
		if n-dof <= 0 {
			out[gi] = math.Inf(1)
			continue
		}
		out[gi] = n * math.Max(rss, 0) / ((n - dof) * (n - dof))
	}
	return out, nil
}

// KFold returns, for each λ in grid, the mean squared validation error of
// k-fold cross-validation, where folds[f] holds the statistics of the rows
// of fold f. Each fold's model is fitted on the merged statistics of the
// other folds and scored from fold f's statistics alone.
//
// With weighted statistics the score is the weighted mean
// Σ_f Σ_{i∈f} w_i‖y_i − ŷ_i‖² / (K·Σw_i), each fold's model fitted with
// the weights of the other folds. Unlike GCV it does not equal the score
// of repeated rows for integer weights: a weighted row is in one fold,
// its copies would be spread over several.
func KFold(folds []*Stats, grid []float64, intercept bool) ([]float64, error) {
	if len(folds) < 2 {
		return nil, fmt.Errorf("linear: k-fold needs at least 2 folds, got %d", len(folds))
	}
	if len(grid) == 0 {
		return nil, errors.New("linear: empty lambda grid")
	}
	total := NewStats(folds[0].D, folds[0].K)
	for _, f := range folds {
		if f.N == 0 {
			return nil, errors.New("linear: k-fold: a fold has no rows of positive weight (more folds than rows?)")
		}
		if err := total.Merge(f); err != nil {
			return nil, err
		}
	}
	out := make([]float64, len(grid))
	for gi, lam := range grid {
		var sse float64
		for _, f := range folds {
			train := total.Clone()
			if err := train.axpy(-1, f); err != nil {
				return nil, err
			}
			m, err := Fit(train, lam, intercept)
			if err != nil {
				return nil, err
			}
			sse += m.sse(f)
		}
		out[gi] = sse / (total.Weight() * float64(total.K))
	}
	return out, nil
}

// sse returns Σ_i w_i‖y_i − Wᵀz_i − b‖² over the rows summarised by s
// (w_i = 1 without weights).
func (m *Model) sse(s *Stats) float64 {
	d, k := s.D, s.K
	var tot float64
	n := s.Weight()
	for t := 0; t < k; t++ {
		wt := make([]float64, d)
		for j := range wt {
			wt[j] = m.W.At(j, t)
		}
		b := m.B[t]
		e := s.SumY2[t] + n*b*b - 2*b*s.SumY[t]
		for j := 0; j < d; j++ {
			e -= 2 * wt[j] * s.ZtY[j*k+t]
			e += 2 * b * wt[j] * s.SumZ[j]
			// wᵀ ZᵀZ w with the upper triangle.
			row := s.ZtZ[j*d : (j+1)*d]
			acc := row[j] * wt[j]
			for l := j + 1; l < d; l++ {
				acc += 2 * row[l] * wt[l]
			}
			e += wt[j] * acc
		}
		tot += e
	}
	return tot
}

// Best returns the grid value with the smallest score.
func Best(grid, scores []float64) float64 {
	bi := 0
	for i, v := range scores {
		if v < scores[bi] {
			bi = i
		}
	}
	return grid[bi]
}
