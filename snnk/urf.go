package snnk

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/sampler"
)

// Atom is one term a·exp(i·s·z) of an activation written as a finite sum
// of complex exponentials.
type Atom struct {
	A complex128 // coefficient
	S float64    // angular frequency (2πξ)
}

// ExpSum is f(z) = Σ_k A_k exp(i S_k z), real for real z.
type ExpSum []Atom

// Cos is cos z = (e^{iz} + e^{−iz})/2.
var Cos = ExpSum{{A: 0.5, S: 1}, {A: 0.5, S: -1}}

// Sin is sin z = (e^{iz} − e^{−iz})/(2i).
var Sin = ExpSum{{A: -0.5i, S: 1}, {A: 0.5i, S: -1}}

// Eval returns f(z).
func (f ExpSum) Eval(z float64) float64 {
	var s complex128
	for _, a := range f {
		s += a.A * cmplx.Exp(complex(0, a.S*z))
	}
	return real(s)
}

// DefaultA returns A = −1/(8d), the value kernelkit recommends for inputs
// of dimension d. Any A < 0 bounds the features (Remark 3.1), but the
// estimator's second moment carries the factor (1 + 16A²/(1−8A))^(d/2),
// exponential in d for a fixed A (A = −0.1 gives e⁴³ at d = 1024, the
// width of a bundled layer's input); with A = −1/(8d) the factor is at
// most e^(1/(8d)).
func DefaultA(d int) float64 { return -1 / (8 * float64(d)) }

// URF is a universal random feature map for f(wᵀx + b): Φ(x)ᵀΨ(w, b) is an
// unbiased estimate. Its features are real: 2·K·M values for K atoms and M
// Gaussian vectors g (shared by the atoms).
type URF struct {
	f    ExpSum
	d, m int
	a    float64    // A in Λ_g
	g    *mat.Dense // m×d
	// paired: atom i uses only Gaussian vector i (one (ξ, g) sample per
	// feature, for sampled spectra); otherwise every atom uses every g.
	paired bool
	// proj, if set, computes the projection Gx of the input tower.
	proj features.Projector
}

// WithProjectors returns a copy whose input-tower projection Gx is computed
// by a projector made by np for G (the projector seam of package
// features); the parameter tower stays exact.
func (u *URF) WithProjectors(np features.NewProjector) (features.Transformer, error) {
	p, err := np(u.g)
	if err != nil {
		return nil, err
	}
	c := *u
	c.proj = p
	return &c, nil
}

// NewURF draws m Gaussian vectors for inputs of dimension d. A must be
// below 1/4; A < 0 keeps the features bounded (Remark 3.1). smp draws g
// (nil: iid Gaussian).
func NewURF(f ExpSum, d, m int, a float64, smp sampler.Sampler, seed uint64) (*URF, error) {
	if len(f) == 0 {
		return nil, errors.New("snnk: activation has no atoms")
	}
	if d <= 0 || m <= 0 {
		return nil, fmt.Errorf("snnk: dimension and features must be positive, got d=%d, m=%d", d, m)
	}
	if !(a < 0.25) || math.IsInf(a, 0) {
		return nil, fmt.Errorf("snnk: A must be finite and below 1/4, got %v", a)
	}
	g, err := sampler.Or(smp).Sample(m, d, seed)
	if err != nil {
		return nil, err
	}
	return &URF{f: f, d: d, m: m, a: a, g: g}, nil
}

// Dim returns the feature dimension 2·K·M (2·M when paired).
func (u *URF) Dim() int {
	if u.paired {
		return 2 * u.m
	}
	return 2 * len(u.f) * u.m
}

// InputDim returns d.
func (u *URF) InputDim() int { return u.d }

// lambda returns log Λ_g(z) for z = c·v (c complex, v real): log of
// (1−4A)^{d/4} exp(A‖g‖² + √(1−4A) c gᵀv − c²‖v‖²/2).
func (u *URF) logLambda(c complex128, gv, g2, v2 float64) complex128 {
	s := math.Sqrt(1 - 4*u.a)
	return complex(float64(u.d)/4*math.Log(1-4*u.a)+u.a*g2, 0) + c*complex(s*gv, 0) - c*c*complex(v2/2, 0)
}

// Transform writes the input tower Φ(x) for the rows of x (n×Dim).
func (u *URF) Transform(dst, x *mat.Dense) error {
	return u.side(dst, x, nil, true)
}

// Params writes Ψ(w_j, b_j) for the rows w_j of w and biases b (nil: 0).
func (u *URF) Params(dst, w *mat.Dense, b []float64) error {
	return u.side(dst, w, b, false)
}

func (u *URF) side(dst, x *mat.Dense, b []float64, input bool) error {
	n, d := x.Dims()
	if d != u.d {
		return fmt.Errorf("snnk: rows have %d columns, URF expects %d", d, u.d)
	}
	if r, c := dst.Dims(); r != n || c != u.Dim() {
		return fmt.Errorf("snnk: destination is %d×%d, want %d×%d", r, c, n, u.Dim())
	}
	if b != nil && len(b) != n {
		return fmt.Errorf("snnk: %d biases for %d rows", len(b), n)
	}
	var gx mat.Dense
	if input && u.proj != nil {
		gx.ReuseAs(n, u.m)
		if err := u.proj.ProjectFrom(&gx, x, 0); err != nil {
			return err
		}
	} else {
		gx.Mul(x, u.g.T()) // n×m
	}
	g2 := make([]float64, u.m)
	for i := range g2 {
		r := u.g.RawRowView(i)
		for _, v := range r {
			g2[i] += v * v
		}
	}
	half := u.Dim() / 2
	inv := 1 / math.Sqrt(float64(u.m))
	if u.paired {
		inv = 1 // the atoms' coefficients carry the 1/m of the average
	}
	for r := 0; r < n; r++ {
		row := x.RawRowView(r)
		var v2 float64
		for _, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("snnk: row %d has a non-finite value", r)
			}
			v2 += v * v
		}
		out := dst.RawRowView(r)
		for a, at := range u.f {
			c := complex(1, 0)
			var coef complex128 = 1
			if input {
				c = complex(0, at.S) // ρ = i·s
			} else {
				coef = at.A
				if b != nil {
					coef *= cmplx.Exp(complex(0, at.S*b[r]))
				}
			}
			lo, hi, pos := 0, u.m, a*u.m
			if u.paired {
				lo, hi, pos = a, a+1, a
			}
			for i := lo; i < hi; i++ {
				z := coef * cmplx.Exp(u.logLambda(c, gx.At(r, i), g2[i], v2)) * complex(inv, 0)
				if cmplx.IsInf(z) || cmplx.IsNaN(z) {
					return errors.New("snnk: URF feature overflows float64 (input norm too large for this A)")
				}
				out[pos+i-lo] = real(z)
				if input {
					out[half+pos+i-lo] = imag(z)
				} else {
					out[half+pos+i-lo] = -imag(z)
				}
			}
		}
	}
	return nil
}

// Spectral is an activation given by samples of its spectrum: f(z) =
// E_{s~p̄}[c(s)·exp(i s z)] with importance-weighted coefficients c(s)
// (Eq. 6-7 with ω = 2πξ). Draw returns one frequency and its weight.
type Spectral struct {
	Draw func(rng interface {
		NormFloat64() float64
		Float64() float64
	}) (s float64, c complex128)
}

// atoms draws m frequencies and returns them as an ExpSum whose
// coefficients carry the 1/m of the Monte Carlo average.
func (sp Spectral) atoms(m int, seed uint64) ExpSum {
	rng := rng.New(seed)
	out := make(ExpSum, m)
	for i := range out {
		s, c := sp.Draw(rng)
		out[i] = Atom{A: c / complex(float64(m), 0), S: s}
	}
	return out
}

// GaussianBump is f(z) = exp(−z²/2), whose spectrum in ω is N(0, 1) with
// coefficient 1: exp(−z²/2) = E_{s~N(0,1)}[exp(isz)].
var GaussianBump = Spectral{Draw: func(rng interface {
	NormFloat64() float64
	Float64() float64
}) (float64, complex128) {
	return rng.NormFloat64(), 1
}}

// NewSpectralURF draws m frequencies s_i and m Gaussian vectors g_i and
// pairs them: Φ(x)ᵀΨ(w, b) = Σ_i c_i/m · e^{i s_i b} Λ_{g_i}(i s_i x) Λ_{g_i}(w),
// unbiased for f(wᵀx + b); 2m features.
func NewSpectralURF(sp Spectral, d, m int, a float64, seed uint64) (*URF, error) {
	if d <= 0 || m <= 0 {
		return nil, fmt.Errorf("snnk: dimension and features must be positive, got d=%d, m=%d", d, m)
	}
	u, err := NewURF(sp.atoms(m, seed), d, m, a, nil, seed+1)
	if err != nil {
		return nil, err
	}
	u.paired = true
	return u, nil
}
