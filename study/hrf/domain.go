package hrf

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
)

// This file holds what keeps the studies' results finite: the range of
// input norms they accept, the checks that turn an overflowing estimate
// into an error wrapping features.ErrOverflow, moments that do not
// overflow on the way, and the fit of the data-fitted estimators (OPRF,
// SDERF, ADERF) to the queries and keys of each experiment.

// MaxNorm returns the largest input norm r the estimation studies accept,
// 18.82: √((ln MaxFloat64 − ln 4)/2) = 18.820… rounded down to two
// decimals. Inputs of norm r have |xᵀy| ≤ r², so the kernel values lie in
// [exp(−r²), exp(r²)]; the trigonometric estimate is bounded by exp(r²) in
// magnitude, so its squared error (the data study's MSE) is at most
// 4·exp(2r²) and its error relative to exp(−r²) (the angle study at θ = π)
// at most about exp(2r²). Both are representable in float64 exactly when
// 2r² + ln 4 ≤ ln MaxFloat64 ≈ 709.78. Beyond MaxNorm the studies'
// results are not representable whatever the estimator (exp(xᵀy) itself
// overflows beyond √709.78 ≈ 26.64); within it an estimator whose own
// estimates or errors overflow (FAVOR+'s grow like exp(2‖x‖·‖ω‖)) makes
// the study return an error wrapping features.ErrOverflow that names it.
func MaxNorm() float64 {
	return math.Floor(100*math.Sqrt((math.Log(math.MaxFloat64)-math.Log(4))/2)) / 100
}

// overflowError is an error whose message is its own and which wraps
// features.ErrOverflow (errors.Is finds it), so that callers can tell an
// overflow from other failures without the map-level advice of
// ErrOverflow's own message.
type overflowError struct{ msg string }

func (e *overflowError) Error() string { return e.msg }

func (e *overflowError) Unwrap() error { return features.ErrOverflow }

// checkNorms checks a list of input norms: each positive, finite and at
// most MaxNorm (an error wrapping features.ErrOverflow beyond it).
func checkNorms(norms []float64) error {
	if len(norms) == 0 {
		return errors.New("hrf: no norms given")
	}
	for _, r := range norms {
		if !(r > 0) || math.IsInf(r, 0) {
			return fmt.Errorf("hrf: norms must be positive and finite, got %v", r)
		}
		if r > MaxNorm() {
			return &overflowError{fmt.Sprintf("hrf: norm %v is beyond %v, the largest at which the studies' errors are representable in float64 (2r² + ln 4 ≤ ln MaxFloat64)",
				r, MaxNorm())}
		}
	}
	return nil
}

// overflowErr returns the error of an estimator whose estimates or
// errors are not finite at norm r (what says which).
func overflowErr(label string, r float64, what string) error {
	return &overflowError{fmt.Sprintf("hrf: %s at norm %v: %s overflows float64 (use smaller norms or another estimator)", label, r, what)}
}

// estimates returns the estimates Φ₁(x_i)ᵀΦ₂(y_i) of p, or an error
// naming the estimator and the norm if a feature or an estimate is not
// finite.
func estimates(p features.Pair, x, y *mat.Dense, label string, r float64) ([]float64, error) {
	e, err := features.PairEstimates(p, x, y)
	if errors.Is(err, features.ErrOverflow) {
		return nil, overflowErr(label, r, "a feature")
	}
	if err != nil {
		return nil, fmt.Errorf("hrf: %s at norm %v: %w", label, r, err)
	}
	for _, v := range e {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, overflowErr(label, r, "an estimate of exp(xᵀy)")
		}
	}
	return e, nil
}

// fitted returns p fitted to the queries x and keys y when its parameters
// are fitted to data (features.Adaptive: oprf, sderf and aderf, whose
// fits use the means and second moments of the two sets — the FAVOR++
// and FAVOR# practice), and p itself otherwise. The projection is kept.
func fitted(p features.Pair, x, y *mat.Dense) (features.Pair, error) {
	var a features.Adaptive
	if t, ok := features.AsTransformer(p); ok {
		a, _ = t.(features.Adaptive)
	} else {
		a, _ = p.(features.Adaptive)
	}
	if a == nil {
		return p, nil
	}
	return a.Adapt(x, y)
}

// rms returns √(mean of v_i²) without overflowing on the way: the values
// are scaled by their largest magnitude first. It is +Inf only when the
// result itself is beyond float64.
func rms(v []float64) float64 {
	var mx float64
	for _, x := range v {
		mx = math.Max(mx, math.Abs(x))
	}
	if mx == 0 || math.IsInf(mx, 0) || math.IsNaN(mx) {
		return mx
	}
	var s float64
	for _, x := range v {
		s += (x / mx) * (x / mx)
	}
	return mx * math.Sqrt(s/float64(len(v)))
}

// meanStd returns the mean and the sample standard deviation of v (as
// stat.MeanStdDev) computed on the values scaled by their largest
// magnitude, so that values up to MaxFloat64 do not overflow in the
// squares.
func meanStd(v []float64) (mean, std float64) {
	var mx float64
	for _, x := range v {
		mx = math.Max(mx, math.Abs(x))
	}
	if mx == 0 || math.IsInf(mx, 0) || math.IsNaN(mx) {
		return mx, mx
	}
	var m float64
	for _, x := range v {
		m += x / mx
	}
	m /= float64(len(v))
	if len(v) < 2 {
		return m * mx, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x/mx - m) * (x/mx - m)
	}
	return m * mx, mx * math.Sqrt(ss/float64(len(v)-1))
}
