package hybrid

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
)

// Lambda is a linearised λ-coefficient estimator λ̂(x, y) = A + ρ₁(x)ᵀρ₂(y)
// (HRF Eq. 10). P may be nil for a constant coefficient.
type Lambda struct {
	A float64
	P features.Pair
}

// HRF is the general hybrid estimator of HRF Eq. 8 as a Pair (Lemma 2.3).
type HRF struct {
	bases   []features.Pair
	lambdas []Lambda
	d, dim  int
}

// New combines p+1 base estimators with p λ-coefficient estimators.
func New(bases []features.Pair, lambdas []Lambda) (*HRF, error) {
	if len(bases) < 1 || len(lambdas) != len(bases)-1 {
		return nil, fmt.Errorf("hybrid: need p+1 base estimators for p λ-coefficients, got %d and %d", len(bases), len(lambdas))
	}
	d := bases[0].InputDim()
	last := bases[len(bases)-1].Dim()
	dim := last
	for k, b := range bases {
		if b.InputDim() != d {
			return nil, errors.New("hybrid: base estimators have different input dimensions")
		}
		if k < len(lambdas) {
			l := lambdas[k]
			n := 0
			if l.P != nil {
				if l.P.InputDim() != d {
					return nil, errors.New("hybrid: λ estimator has a different input dimension")
				}
				n = l.P.Dim()
			}
			dim += b.Dim()*(1+n) + last*n
		}
	}
	return &HRF{bases: bases, lambdas: lambdas, d: d, dim: dim}, nil
}

// Dim returns the feature dimension Σ_k D_k(1+n_k) + D_{p+1}(1+Σ n_k).
func (h *HRF) Dim() int { return h.dim }

// InputDim returns d.
func (h *HRF) InputDim() int { return h.d }

// Query writes Φ₁(x).
func (h *HRF) Query(dst, x *mat.Dense) error { return h.side(dst, x, true) }

// Key writes Φ₂(y).
func (h *HRF) Key(dst, y *mat.Dense) error { return h.side(dst, y, false) }

func (h *HRF) side(dst, x *mat.Dense, query bool) error {
	n, d := x.Dims()
	if d != h.d {
		return fmt.Errorf("hybrid: input has %d columns, estimator expects %d", d, h.d)
	}
	if r, c := dst.Dims(); r != n || c != h.dim {
		return fmt.Errorf("hybrid: destination is %d×%d, want %d×%d", r, c, n, h.dim)
	}
	phis := make([]*mat.Dense, len(h.bases))
	for k, b := range h.bases {
		var err error
		if phis[k], err = side(b, x, query); err != nil {
			return err
		}
	}
	rhos := make([]*mat.Dense, len(h.lambdas))
	sumA := 0.0
	for k, l := range h.lambdas {
		sumA += l.A
		if l.P != nil {
			var err error
			if rhos[k], err = side(l.P, x, query); err != nil {
				return err
			}
		}
	}
	last := phis[len(phis)-1]
	for i := 0; i < n; i++ {
		out := dst.RawRowView(i)
		pos := 0
		put := func(coef float64, rho, phi []float64) {
			if rho == nil {
				for _, v := range phi {
					out[pos] = coef * v
					pos++
				}
				return
			}
			for _, r := range rho {
				for _, v := range phi {
					out[pos] = coef * r * v
					pos++
				}
			}
		}
		for k := range h.lambdas {
			phi := phis[k].RawRowView(i)
			c := 1.0
			if query {
				c = h.lambdas[k].A
			}
			put(c, nil, phi)
			if rhos[k] != nil {
				put(1, rhos[k].RawRowView(i), phi)
			}
		}
		phi := last.RawRowView(i)
		c := 1.0
		if query {
			c = 1 - sumA
		}
		put(c, nil, phi)
		for k := range h.lambdas {
			if rhos[k] != nil {
				s := 1.0
				if query {
					s = -1
				}
				put(s, rhos[k].RawRowView(i), phi)
			}
		}
	}
	return nil
}

// scaled multiplies a Pair's query side by qs and key side by ks.
type scaled struct {
	features.Pair
	qs, ks float64
}

func (s scaled) Query(dst, x *mat.Dense) error {
	if err := s.Pair.Query(dst, x); err != nil {
		return err
	}
	dst.Scale(s.qs, dst)
	return nil
}

func (s scaled) Key(dst, y *mat.Dense) error {
	if err := s.Pair.Key(dst, y); err != nil {
		return err
	}
	dst.Scale(s.ks, dst)
	return nil
}

// sgnPair is the sgn random feature map of Eq. 19: ρ(z) = (2n)^(−1/2)
// (sgn(τ_iᵀz))_i, with the query side negated so that ρ₁(x)ᵀρ₂(y) =
// −(1/2n)Σ sgn(τᵢᵀx)sgn(τᵢᵀy).
type sgnPair struct {
	tau  *mat.Dense // n×d
	proj features.Projector
}

func (s sgnPair) Dim() int      { r, _ := s.tau.Dims(); return r }
func (s sgnPair) InputDim() int { _, c := s.tau.Dims(); return c }
func (s sgnPair) side(dst, x *mat.Dense, sign float64) error {
	var p mat.Dense
	if s.proj != nil {
		r, _ := x.Dims()
		p.ReuseAs(r, s.Dim())
		if err := s.proj.ProjectFrom(&p, x, 0); err != nil {
			return err
		}
	} else {
		p.Mul(x, s.tau.T())
	}
	n, k := p.Dims()
	c := sign / math.Sqrt(2*float64(k))
	for i := 0; i < n; i++ {
		src, out := p.RawRowView(i), dst.RawRowView(i)
		for j, v := range src {
			switch {
			case v > 0:
				out[j] = c
			case v < 0:
				out[j] = -c
			default:
				out[j] = 0
			}
		}
	}
	return nil
}
func (s sgnPair) Query(dst, x *mat.Dense) error { return s.side(dst, x, -1) }
func (s sgnPair) Key(dst, y *mat.Dense) error   { return s.side(dst, y, 1) }

// Options configures the bipolar hybrids (angular and Gaussian).
type Options struct {
	// M is the number of projections of each base estimator: the positive
	// one has features [exp(ωᵀx), exp(−ωᵀx)] and the trigonometric one
	// [sin ωᵀx, cos ωᵀx], so each has 2M features.
	M int
	// N is the number of projections of the λ estimator.
	N int
	// Sampler draws every projection (nil: iid Gaussian).
	Sampler sampler.Sampler
	// Shared makes both base estimators use the same projections (Theorem
	// 3.1 variant II); otherwise they are independent (variant I).
	Shared bool
	Seed   uint64
}

func (o Options) check() error {
	if o.M <= 0 || o.N <= 0 {
		return fmt.Errorf("hybrid: numbers of projections must be positive, got M=%d, N=%d", o.M, o.N)
	}
	return nil
}

func (o Options) sampler() sampler.Sampler { return sampler.Or(o.Sampler) }

// bases returns the positive (hyperbolic) and trigonometric softmax maps.
func (o Options) bases(d int) (pos, trig features.Pair, err error) {
	s := o.sampler()
	w1, err := s.Sample(o.M, d, o.Seed)
	if err != nil {
		return nil, nil, err
	}
	w2 := w1
	if !o.Shared {
		if w2, err = s.Sample(o.M, d, o.Seed+1); err != nil {
			return nil, nil, err
		}
	}
	p, err := mapFromW("softmax", "hyperbolic", 0, w1, o.Seed, s)
	if err != nil {
		return nil, nil, err
	}
	t, err := mapFromW("softmax", "trig", 0, w2, o.Seed+1, s)
	if err != nil {
		return nil, nil, err
	}
	return features.Symmetric(p), features.Symmetric(t), nil
}

// mapFromW builds a features.Map on a given projection (rows N(0, I), the
// RBF bandwidth applied by features.FromProjection).
func mapFromW(kernelName, form string, gamma float64, w *mat.Dense, seed uint64, smp sampler.Sampler) (*features.Map, error) {
	m, _ := w.Dims()
	D := m
	if form == "hyperbolic" || form == "trig" || form == "sincos" {
		D = 2 * m
	}
	return features.FromProjection(features.Config{Kernel: kernelName, Form: form, Gamma: gamma, Features: D,
		Sampler: smp, Seed: seed}, w)
}

// side applies the query or key side of p.
func side(p features.Pair, x *mat.Dense, query bool) (*mat.Dense, error) {
	if query {
		return features.Queries(p, x)
	}
	return features.Keys(p, x)
}

// WithProjectors returns a copy of the estimator whose base and λ
// estimators compute every projection with projectors made by np (the
// projector seam of package features).
func (h *HRF) WithProjectors(np features.NewProjector) (features.Pair, error) {
	c := &HRF{d: h.d, dim: h.dim, bases: make([]features.Pair, len(h.bases)), lambdas: make([]Lambda, len(h.lambdas))}
	for k, b := range h.bases {
		var err error
		if c.bases[k], err = features.PairWithProjectors(b, np); err != nil {
			return nil, err
		}
	}
	for k, l := range h.lambdas {
		c.lambdas[k] = l
		if l.P != nil {
			var err error
			if c.lambdas[k].P, err = features.PairWithProjectors(l.P, np); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// WithProjectors runs the inner pair on projectors made by np.
func (s scaled) WithProjectors(np features.NewProjector) (features.Pair, error) {
	p, err := features.PairWithProjectors(s.Pair, np)
	if err != nil {
		return nil, err
	}
	return scaled{p, s.qs, s.ks}, nil
}

// WithProjectors computes the sgn projections τx with a projector made by
// np for τ.
func (s sgnPair) WithProjectors(np features.NewProjector) (features.Pair, error) {
	p, err := np(s.tau)
	if err != nil {
		return nil, err
	}
	return sgnPair{tau: s.tau, proj: p}, nil
}

// Angular returns the angular hybrid estimator (HRF Eq. 19): λ̂·SM̂⁺⁺ +
// (1−λ̂)·SM̂ᵗʳⁱᵍ with λ̂ = 1/2 − (1/2n)Σ sgn(τᵢᵀx)sgn(τᵢᵀy), E[λ̂] = θ/π. Its
// dimension is 2M(1+N) + 2M(1+N) = 4M(1+N).
func Angular(d int, o Options) (*HRF, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	pos, trig, err := o.bases(d)
	if err != nil {
		return nil, err
	}
	tau, err := o.sampler().Sample(o.N, d, o.Seed+2)
	if err != nil {
		return nil, err
	}
	return New([]features.Pair{pos, trig}, []Lambda{{A: 0.5, P: sgnPair{tau: tau}}})
}

// GaussianBipolar returns the normalised bipolar Gaussian hybrid of HRF
// App. F: λ = (1 − exp(−σ²‖x−y‖²/2))/ρ with ρ = 1 − exp(−2σ²r²), estimated
// with N trigonometric projections, so that for inputs of norm r the
// coefficient is 0 at θ = 0 and 1 at θ = π.
func GaussianBipolar(d int, sigma, r float64, o Options) (*HRF, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if !(sigma > 0) || !(r > 0) || math.IsInf(sigma*r, 0) {
		return nil, fmt.Errorf("hybrid: sigma and r must be positive, got %v and %v", sigma, r)
	}
	rho := -math.Expm1(-2 * sigma * sigma * r * r)
	pos, trig, err := o.bases(d)
	if err != nil {
		return nil, err
	}
	tau, err := o.sampler().Sample(o.N, d, o.Seed+2)
	if err != nil {
		return nil, err
	}
	g, err := mapFromW("rbf", "sincos", sigma*sigma/2, tau, o.Seed+2, o.sampler())
	if err != nil {
		return nil, err
	}
	s := 1 / math.Sqrt(rho)
	return New([]features.Pair{pos, trig}, []Lambda{{A: 1 / rho, P: scaled{features.Symmetric(g), -s, s}}})
}

// GaussianLambda returns the Gaussian λ-coefficient estimator of HRF Eq. 20,
// λ(x, y) = exp(−‖x + My‖²/(2c)), through N positive random features of
// x/√c and −My/√c (M = nil means the identity).
func GaussianLambda(d int, mtx *mat.Dense, c float64, n int, smp sampler.Sampler, seed uint64) (features.Pair, error) {
	if !(c > 0) || math.IsInf(c, 0) {
		return nil, fmt.Errorf("hybrid: Gaussian λ width c must be positive, got %v", c)
	}
	smp = sampler.Or(smp)
	w, err := smp.Sample(n, d, seed)
	if err != nil {
		return nil, err
	}
	// exp(−‖x+My‖²/(2c)) is the RBF kernel with γ = 1/(2c) between x and −My.
	g, err := mapFromW("rbf", "positive", 1/(2*c), w, seed, smp)
	if err != nil {
		return nil, err
	}
	neg := mat.NewDense(d, d, nil)
	if mtx == nil {
		for i := 0; i < d; i++ {
			neg.Set(i, i, -1)
		}
	} else {
		if r, cc := mtx.Dims(); r != d || cc != d {
			return nil, fmt.Errorf("hybrid: M is %d×%d, want %d×%d", r, cc, d, d)
		}
		neg.Scale(-1, mtx)
	}
	return transformed{features.Symmetric(g), nil, neg}, nil
}

// Gaussian returns the bipolar Gaussian hybrid of HRF Eq. 20 with M = I:
// λ(x, y) = exp(−‖x+y‖²/(2c)) weights the positive estimator (accurate near
// x = −y) and 1 − λ the trigonometric one.
func Gaussian(d int, c float64, o Options) (*HRF, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	pos, trig, err := o.bases(d)
	if err != nil {
		return nil, err
	}
	l, err := GaussianLambda(d, nil, c, o.N, o.sampler(), o.Seed+2)
	if err != nil {
		return nil, err
	}
	return New([]features.Pair{pos, trig}, []Lambda{{A: 0, P: l}})
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
