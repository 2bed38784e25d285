package features

import "math"

func sq(v []float64) float64 {
	var s float64
	for _, e := range v {
		s += e * e
	}
	return s
}

func sumDiff(x, y []float64, sign float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] + sign*y[i]
	}
	return out
}

// TrigMSE returns the mean squared error of the trigonometric estimator of
// SM(x, y) = exp(xᵀy) with m iid projections (HRF Lemma 2.2):
// exp(‖z‖²)·SM⁻²(x, y)·(1 − exp(−‖Δ‖²))²/(2m), z = x+y, Δ = x−y.
func TrigMSE(x, y []float64, m int) float64 {
	z2 := sq(sumDiff(x, y, 1))
	d2 := sq(sumDiff(x, y, -1))
	var ip float64
	for i := range x {
		ip += x[i] * y[i]
	}
	f3 := -math.Expm1(-d2)
	return math.Exp(z2-2*ip) * f3 * f3 / (2 * float64(m))
}

// HyperbolicMSE returns the mean squared error of the positive estimator of
// SM(x, y) with features [exp(ωᵀx), exp(−ωᵀx)] and m iid projections (HRF
// Lemma 2.2): exp(‖z‖²)·SM²(x, y)·(1 − exp(−‖z‖²))²/(2m).
func HyperbolicMSE(x, y []float64, m int) float64 {
	z2 := sq(sumDiff(x, y, 1))
	var ip float64
	for i := range x {
		ip += x[i] * y[i]
	}
	f3 := -math.Expm1(-z2)
	return math.Exp(z2+2*ip) * f3 * f3 / (2 * float64(m))
}

// PositiveMSE returns the mean squared error of the FAVOR+ estimator of
// SM(x, y) with features exp(ωᵀx − ‖x‖²/2)/√m and m iid projections:
// SM²(x, y)·(exp(‖z‖²) − 1)/m.
func PositiveMSE(x, y []float64, m int) float64 {
	z2 := sq(sumDiff(x, y, 1))
	var ip float64
	for i := range x {
		ip += x[i] * y[i]
	}
	return math.Exp(2*ip) * math.Expm1(z2) / float64(m)
}

// RFFCosMSE returns the mean squared error of the random Fourier feature
// estimator 2/m·Σcos(ωᵀx+b)cos(ωᵀy+b) of k = exp(−γ‖x−y‖²) with m iid
// projections and uniform phases b: (1 + k(2x, 2y)/2 − k²)/m, where
// k(2x, 2y) = exp(−4γ‖x−y‖²).
func RFFCosMSE(x, y []float64, gamma float64, m int) float64 {
	d2 := sq(sumDiff(x, y, -1))
	k := math.Exp(-gamma * d2)
	k2 := math.Exp(-4 * gamma * d2)
	return (1 + 0.5*k2 - k*k) / float64(m)
}

// RFFSinCosMSE returns the mean squared error of the [sin, cos] random
// Fourier feature estimator of k = exp(−γ‖x−y‖²) with m iid projections:
// (1 − k²)²/(2m) (the trigonometric case of HRF Lemma 2.2 at γ = 1/2).
func RFFSinCosMSE(x, y []float64, gamma float64, m int) float64 {
	d2 := sq(sumDiff(x, y, -1))
	k2 := math.Exp(-2 * gamma * d2)
	return (1 - k2) * (1 - k2) / (2 * float64(m))
}

// ArcCos0MSE returns the mean squared error of the Heaviside estimator of
// the order-0 arc-cosine kernel k₀ = 1 − θ/π with m iid projections: each
// term 2Θ(ωᵀx)Θ(ωᵀy) is 0 or 2 with mean k₀, so the MSE is (2k₀ − k₀²)/m.
func ArcCos0MSE(k0 float64, m int) float64 {
	return (2*k0 - k0*k0) / float64(m)
}
