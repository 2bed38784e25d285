package hybrid

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
// statistic max_j |P_ij − P̂_ij| between the cumulative distributions, and
// the fraction of negative estimates p̂_ij.
func SoftmaxQuality(p features.Pair, q, c *mat.Dense) (w1, ks, negFrac float64, err error) {
	nq, d := q.Dims()
	nc, dc := c.Dims()
	if d != dc || nq == 0 || nc == 0 {
		return 0, 0, 0, fmt.Errorf("hybrid: queries %d×%d and classes %d×%d do not match", nq, d, nc, dc)
	}
	est, err := features.Matrix(p, q, c)
	if err != nil {
		return 0, 0, 0, err
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
		if za == 0 || math.IsNaN(za) || math.IsInf(za, 0) {
			return 0, 0, 0, errors.New("hybrid: approximate softmax normaliser is zero or not finite")
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

// MatchFLOPs returns Options for an angular or Gaussian hybrid whose
// feature-map construction costs about as much as a plain map with D
// features from D/2 projections (the trigonometric map), for inputs of
// dimension d, following the FLOP matching of HRF Sec. 4.1: with shared
// base projections (M of them) and N λ projections the cost is
// 2d(M + N) + 8MN (projections, then two outer products of 2M by N).
// N is 4 unless that leaves no room, M the largest that fits.
func MatchFLOPs(d, D int) Options {
	budget := float64(D) * float64(d)
	n := 4
	for n > 1 && 2*float64(d)*float64(n+1)+8*float64(n) > budget {
		n--
	}
	m := int((budget - 2*float64(d)*float64(n)) / (2*float64(d) + 8*float64(n)))
	return Options{M: max(m, 1), N: n, Shared: true}
}
