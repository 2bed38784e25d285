package hrf

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
)

// SoftmaxQuality compares, for each query q_i (row of q), the softmax
// distribution over classes p_ij ∝ exp(q_iᵀc_j) with the approximation
// p̂_ij ∝ SM̂(q_i, c_j) from the estimator p, as in HRF Sec. 4.2. Classes are
// ordered by index. It returns the mean over queries of the 1-D
// Wasserstein distance Σ_j |P_ij − P̂_ij| and of the Kolmogorov-Smirnov
// statistic max_j |P_ij − P̂_ij| between the cumulative distributions P and
// P̂, and the fraction of negative estimates p̂_ij.
//
// It returns an error if q and c are empty or their columns differ, if the
// estimator fails, or if an approximate normaliser Σ_j p̂_ij is zero or not
// finite; estimates or normalisers beyond float64 give an error wrapping
// features.ErrOverflow.
func SoftmaxQuality(p features.Pair, q, c *mat.Dense) (w1, ks, negFrac float64, err error) {
	nq, d := q.Dims()
	nc, dc := c.Dims()
	if d != dc || nq == 0 || nc == 0 {
		return 0, 0, 0, fmt.Errorf("hrf: queries %d×%d and classes %d×%d do not match", nq, d, nc, dc)
	}
	est, err := features.Matrix(p, q, c)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, v := range est.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, 0, &overflowError{"hrf: an estimate of exp(qᵀc) overflows float64"}
		}
	}
	var exact mat.Dense
	exact.Mul(q, c.T())
	neg := 0
	for i := 0; i < nq; i++ {
		e := exact.RawRowView(i)
		mx := math.Inf(-1)
		for _, v := range e {
			mx = math.Max(mx, v)
		}
		var z float64
		for j, v := range e {
			e[j] = math.Exp(v - mx)
			z += e[j]
		}
		a := est.RawRowView(i)
		var za float64
		for _, v := range a {
			za += v
			if v < 0 {
				neg++
			}
		}
		if math.IsInf(za, 0) {
			return 0, 0, 0, &overflowError{fmt.Sprintf("hrf: the approximate softmax normaliser of query %d overflows float64", i)}
		}
		if za == 0 || math.IsNaN(za) {
			return 0, 0, 0, errors.New("hrf: approximate softmax normaliser is zero or not finite")
		}
		var cp, ca, wi, ki float64
		for j := range e {
			cp += e[j] / z
			ca += a[j] / za
			diff := math.Abs(cp - ca)
			wi += diff
			ki = math.Max(ki, diff)
		}
		w1 += wi / float64(nq)
		ks += ki / float64(nq)
	}
	return w1, ks, float64(neg) / float64(nq*nc), nil
}
