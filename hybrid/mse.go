package hybrid

import (
	"gonum.org/v1/gonum/floats"

	"github.com/kernelkit/kernelkit/kernel"
	"math"

	"github.com/kernelkit/kernelkit/features"
)

// Angle returns the angle between x and y in [0, π] (kernel.Angle, stable
// for nearly parallel and antiparallel inputs).
func Angle(x, y []float64) float64 { return kernel.Angle(x, y) }

// AngularLambdaMoments returns E[λ̂] = θ/π and E[λ̂²] =
// (θ/π)(θ/π − θ/(nπ) + 1/n) of the angular λ estimator with n projections
// (HRF Lemma 3.2).
func AngularLambdaMoments(theta float64, n int) (m1, m2 float64) {
	t := theta / math.Pi
	fn := float64(n)
	return t, t * (t - t/fn + 1/fn)
}

// GaussianLambdaMoments returns E[λ̂] and E[λ̂²] of the normalised bipolar
// Gaussian λ estimator with n trigonometric projections (HRF Eq. 72):
// with g = exp(−σ²‖Δ‖²/2), E[λ̂] = (1−g)/ρ and
// E[λ̂²] = ((1−g)² + (1−g²)²/(2n))/ρ².
func GaussianLambdaMoments(x, y []float64, sigma, r float64, n int) (m1, m2 float64) {
	var d2 float64
	for i := range x {
		e := x[i] - y[i]
		d2 += e * e
	}
	rho := -math.Expm1(-2 * sigma * sigma * r * r)
	g := math.Exp(-sigma * sigma * d2 / 2)
	return (1 - g) / rho, ((1-g)*(1-g) + (1-g*g)*(1-g*g)/(2*float64(n))) / (rho * rho)
}

// BipolarMSE returns the MSE of the bipolar hybrid λ̂·SM̂⁺⁺ + (1−λ̂)·SM̂ᵗʳⁱᵍ
// with m projections per base estimator, given the moments of λ̂ (HRF
// Theorem 3.1): E[λ̂²]·MSE⁺⁺ + E[(1−λ̂)²]·MSEᵗʳⁱᵍ, minus
// (2/m)·SM²·(1 − cos(‖x‖²−‖y‖²))·E[λ̂(1−λ̂)] when the base estimators share
// their projections (variant II).
func BipolarMSE(x, y []float64, m int, lambda1, lambda2 float64, shared bool) float64 {
	mse := lambda2*features.HyperbolicMSE(x, y, m) + (1-2*lambda1+lambda2)*features.TrigMSE(x, y, m)
	if shared {
		sm := math.Exp(floats.Dot(x, y))
		mse -= 2 / float64(m) * sm * sm * (1 - math.Cos(floats.Dot(x, x)-floats.Dot(y, y))) * (lambda1 - lambda2)
	}
	return mse
}

// AngularMSE returns the MSE of the angular hybrid estimator with m
// projections per base estimator and n for λ (HRF Theorem D.1).
func AngularMSE(x, y []float64, m, n int, shared bool) float64 {
	l1, l2 := AngularLambdaMoments(Angle(x, y), n)
	return BipolarMSE(x, y, m, l1, l2, shared)
}

// GaussianBipolarMSE returns the MSE of the normalised bipolar Gaussian
// hybrid (HRF Theorem F.1).
func GaussianBipolarMSE(x, y []float64, sigma, r float64, m, n int, shared bool) float64 {
	l1, l2 := GaussianLambdaMoments(x, y, sigma, r, n)
	return BipolarMSE(x, y, m, l1, l2, shared)
}
