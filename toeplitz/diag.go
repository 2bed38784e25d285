package toeplitz

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mat"
)

// SKIErrorReport compares the SKI approximation W A Wᵀ of a Toeplitz
// Gram matrix with the bound of Theorem 1 (linear interpolation, N = 1).
type SKIErrorReport struct {
	N, R int
	// Measured is ‖W A Wᵀ − T_r,opt‖₂ and Nystrom ‖F A⁻¹ B − T_r,opt‖₂,
	// with T_r,opt the best rank-r approximation of T (truncated SVD).
	Measured, Nystrom float64
	// Bound is √(nr)·(h²/8)·L·(2√n + min(σ₁(F), σ₁(B))/σ_r(A)) + ‖E_nyst‖₂.
	Bound float64
	// ToExact is ‖W A Wᵀ − T‖₂ / ‖T‖₂ for reference.
	ToExact float64
}

// SKIError measures the SKI error for an n×n Toeplitz matrix of a smooth
// kernel k with |k”| ≤ d2max, on r evenly spaced inducing points. It uses
// dense SVDs: O(n³).
func SKIError(k func(t float64) float64, d2max float64, n, r int) (*SKIErrorReport, error) {
	if !(d2max >= 0) {
		return nil, fmt.Errorf("toeplitz: second-derivative bound must be non-negative, got %v", d2max)
	}
	w, err := InterpWeights(n, r, Linear)
	if err != nil {
		return nil, err
	}
	p := InducingPoints(n, r)
	h := float64(n-1) / float64(r-1)
	t := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			t.Set(i, j, k(float64(i-j)))
		}
	}
	a := mat.NewDense(r, r, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < r; j++ {
			a.Set(i, j, k(p[i]-p[j]))
		}
	}
	f := mat.NewDense(n, r, nil)
	b := mat.NewDense(r, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < r; j++ {
			f.Set(i, j, k(float64(i)-p[j]))
			b.Set(j, i, k(p[j]-float64(i)))
		}
	}
	wd := w.Dense()
	var ski mat.Dense
	ski.Product(wd, a, wd.T())
	// Best rank-r approximation of T.
	var svd mat.SVD
	if !svd.Factorize(t, mat.SVDThin) {
		return nil, errors.New("toeplitz: SVD of T failed")
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	s := svd.Values(nil)
	sr := mat.NewDiagDense(r, s[:r])
	var topt mat.Dense
	topt.Product(u.Slice(0, n, 0, r), sr, v.Slice(0, n, 0, r).T())
	var ainvB mat.Dense
	if err := ainvB.Solve(a, b); err != nil {
		return nil, fmt.Errorf("toeplitz: A is singular (Theorem 1 assumes it is not): %w", err)
	}
	var nyst mat.Dense
	nyst.Mul(f, &ainvB)
	// The spectral norm ‖·‖₂ = σ₁ of Theorem 1 (gonum's mat.Norm(·, 2) is
	// the Frobenius norm, which the theorem does not bound).
	var svdErr error
	norm2 := func(m mat.Matrix) float64 {
		var sv mat.SVD
		if !sv.Factorize(m, mat.SVDNone) {
			svdErr = errors.New("toeplitz: SVD for a spectral norm did not converge")
			return math.NaN()
		}
		return sv.Values(nil)[0]
	}
	var e1, e2, e3 mat.Dense
	e1.Sub(&ski, &topt)
	e2.Sub(&nyst, &topt)
	e3.Sub(&ski, t)
	sa := mat.SVD{}
	sa.Factorize(a, mat.SVDNone)
	av := sa.Values(nil)
	sigmaR := av[r-1]
	sf := math.Min(norm2(f), norm2(b))
	rep := &SKIErrorReport{N: n, R: r, Measured: norm2(&e1), Nystrom: norm2(&e2), ToExact: norm2(&e3) / norm2(t)}
	rep.Bound = math.Sqrt(float64(n*r))*h*h/8*d2max*(2*math.Sqrt(float64(n))+sf/sigmaR) + rep.Nystrom
	if svdErr != nil {
		return nil, svdErr
	}
	return rep, nil
}

// Decay is the impulse response of a frequency-domain MLP.
type Decay struct {
	Activation string
	// K holds |k[t]|/|k[0]| for t = 0…n.
	K []float64
}

// ImpulseResponse samples the response of a random MLP of cos ω (hidden
// widths, given activation) at ω = mπ/n and returns the normalised
// magnitude of its time-domain kernel k = irFFT(k̂) at lags 0…n.
func ImpulseResponse(name string, hidden []int, n int, seed uint64) (*Decay, error) {
	act, err := ActivationByName(name)
	if err != nil {
		return nil, err
	}
	m, err := NewMLP(hidden, 1, act, seed)
	if err != nil {
		return nil, err
	}
	resp := MLPResponse(m)
	c := make([]complex128, n+1)
	for i, w := range Frequencies(n) {
		c[i] = complex(resp(w)[0], 0)
	}
	h := fourier.NewFFT(2*n).Sequence(nil, c)
	out := &Decay{Activation: name, K: make([]float64, n+1)}
	k0 := math.Abs(h[0])
	if k0 == 0 {
		k0 = 1
	}
	for t := 0; t <= n; t++ {
		out.K[t] = math.Abs(h[t]) / k0
	}
	return out, nil
}

// Matern52 returns the Matérn 5/2 kernel (1 + √5ρ + 5ρ²/3)·exp(−√5ρ),
// ρ = |t|/ℓ: twice continuously differentiable with max |k”| = 5/(3ℓ²),
// the smooth test kernel of the SKI error study.
func Matern52(ell float64) func(t float64) float64 {
	return func(t float64) float64 {
		r := math.Abs(t) / ell
		return (1 + math.Sqrt(5)*r + 5*r*r/3) * math.Exp(-math.Sqrt(5)*r)
	}
}
