package arch

import (
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/toeplitz"
)

// SKIPlan holds the constants of a SKI-TNO for sequences of length N: the
// linear interpolation matrix W (N×R) of the observations on R evenly
// spaced inducing points on [0, N−1], and the matrix M ((2R−1)×Grid) that
// reads the piecewise linear RPE (Grid points on [−1, 1]) at the warped
// offsets x(k·h) = sign(k)·λ^|k·h| between inducing points, h =
// (N−1)/(R−1) (Sec. 3.2.2).
type SKIPlan struct {
	N, R, Grid int
	Lambda     float64
	W          []float64 // N×R
	M          []float64 // (2R−1)×Grid
}

// NewSKIPlan computes the constants; see toeplitz.InterpWeights and
// toeplitz.PiecewiseLinear for the conventions it follows.
func NewSKIPlan(n, r, grid int, lambda float64) (*SKIPlan, error) {
	if grid < 3 || grid%2 == 0 {
		return nil, fmt.Errorf("nn: the SKI RPE needs an odd number ≥ 3 of grid points, got %d", grid)
	}
	if !(lambda > 0 && lambda < 1) {
		return nil, fmt.Errorf("nn: decay λ must lie in (0, 1), got %v", lambda)
	}
	wt, err := toeplitz.InterpWeights(n, r, toeplitz.Linear)
	if err != nil {
		return nil, err
	}
	p := &SKIPlan{N: n, R: r, Grid: grid, Lambda: lambda, W: wt.Dense().RawMatrix().Data, M: make([]float64, (2*r-1)*grid)}
	h := float64(n-1) / float64(r-1)
	for k := -(r - 1); k < r; k++ {
		x := math.Max(-1, math.Min(1, toeplitz.Warp(float64(k)*h, lambda)))
		u := (x + 1) / 2 * float64(grid-1)
		i := int(math.Floor(u))
		if i >= grid-1 {
			i = grid - 2
		}
		f := u - float64(i)
		row := p.M[(k+r-1)*grid:]
		row[i] += 1 - f
		row[i+1] += f
	}
	return p, nil
}

// FDMatrices returns the inverse real DFT as matrices: the kernel of a
// spectrum k̂ = a + i·b on ω_m = mπ/n (m = 0…n; b_0 and b_n ignored) is
// h[t] = (1/2n)[a_0 + (−1)^t a_n + 2 Σ_{m=1}^{n−1}(a_m cos(πmt/n) − b_m
// sin(πmt/n))]. The rows are the Toeplitz offsets k = −(n−1)…n−1 (row
// k+n−1, lag t = k mod 2n); causal zeroes the negative lags and applies
// the Hilbert window (1, 2, …, 2) of toeplitz.HilbertCausal to the others.
// Package native shares them.
func FDMatrices(n int, causal bool) (re, im []float64) {
	re = make([]float64, (2*n-1)*(n+1))
	im = make([]float64, (2*n-1)*(n+1))
	inv := 1 / float64(2*n)
	for k := -(n - 1); k < n; k++ {
		t := (k + 2*n) % (2 * n)
		w := 1.0
		if causal {
			switch {
			case k < 0:
				continue
			case k > 0:
				w = 2
			}
		}
		rr := re[(k+n-1)*(n+1):]
		ri := im[(k+n-1)*(n+1):]
		for m := 0; m <= n; m++ {
			th := math.Pi * float64(m*t) / float64(n)
			switch m {
			case 0:
				rr[m] = w * inv
			case n:
				rr[m] = w * inv * math.Cos(th)
			default:
				rr[m] = w * 2 * inv * math.Cos(th)
				ri[m] = -w * 2 * inv * math.Sin(th)
			}
		}
	}
	return re, im
}
