package prf

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/sampler"
)

// Family names.
const (
	// OPRF is the optimal positive random feature map (CRT paper; FAVOR++
	// in attention): one scalar parameter A fitted by FitOPRF.
	OPRF = "oprf"
	// SDERF is the symmetric dense-exponential map (DERF paper; FAVOR# in
	// attention): per-direction parameters in the eigenbasis of the pair
	// moment, fitted by FitSDERF.
	SDERF = "sderf"
	// ADERF is the asymmetric dense-exponential pair (DERF paper): queries
	// and keys transformed by P and P⁻ᵀ, fitted by FitADERF.
	ADERF = "aderf"
)

// Config describes a map of the package.
type Config struct {
	// Family is OPRF or SDERF for New, ADERF for NewPair.
	Family string
	// Features is the number of features m (one per projection).
	Features int
	// Sampler draws the projection ω_1 … ω_m; nil means
	// sampler.Default(). Every sampler of package sampler and Simplex give
	// rows that are marginally N(0, I), as the estimators require.
	Sampler sampler.Sampler
	// Seed seeds the projection.
	Seed uint64
}

// draw validates the sizes and draws the projection.
func (c Config) draw(d int) (*mat.Dense, string, error) {
	if err := limits.Dim("prf: input dimension", d); err != nil {
		return nil, "", err
	}
	if err := limits.Dim("prf: number of features", c.Features); err != nil {
		return nil, "", err
	}
	s := sampler.Or(c.Sampler)
	w, err := s.Sample(c.Features, d, c.Seed)
	return w, s.Name(), err
}

// SpecKind is the kind under which a Map's Spec is stored in model files.
const SpecKind = "prf"

// Spec is the serialisable description of a Map: the family, the drawn
// projection and the fitted parameters. Model files store it.
type Spec struct {
	Family   string    `json:"family"`
	InputDim int       `json:"input_dim"`
	M        int       `json:"m"`
	Sampler  string    `json:"sampler"`
	Seed     uint64    `json:"seed"`
	W        []float64 `json:"w"` // M×InputDim, the draw ω, row-major
	// A holds the parameters a_l (InputDim values, all equal for OPRF).
	A []float64 `json:"a"`
	// Basis is the orthogonal InputDim×InputDim matrix T of SDERF (u = Tx,
	// row-major); empty for OPRF.
	Basis []float64 `json:"basis,omitempty"`
}

// Map is a symmetric positive random feature map of the softmax kernel
// exp(xᵀy): an OPRF or an SDERF. z(x)ᵀz(y) is an unbiased estimate for
// every value of the fitted parameters; the fit only lowers its variance.
// A Map is safe for concurrent use.
type Map struct {
	spec  Spec
	w     *mat.Dense
	basis *mat.Dense
	sd    side
}

// New draws a symmetric map (cfg.Family OPRF or SDERF) for inputs of
// dimension d = st.D and fits its parameters to the statistics st.
func New(cfg Config, st *Stats) (*Map, error) {
	fam := strings.ToLower(cfg.Family)
	if fam != OPRF && fam != SDERF {
		return nil, fmt.Errorf("prf: unknown symmetric family %q (want %s or %s)", cfg.Family, OPRF, SDERF)
	}
	if err := st.check(); err != nil {
		return nil, err
	}
	w, name, err := cfg.draw(st.D)
	if err != nil {
		return nil, err
	}
	mp := &Map{spec: Spec{Family: fam, InputDim: st.D, M: cfg.Features, Sampler: name, Seed: cfg.Seed, W: w.RawMatrix().Data}, w: w}
	return mp.Fit(st)
}

// Fit returns the map with the same projection and sampler and its
// parameters fitted to st (FitOPRF or FitSDERF).
func (mp *Map) Fit(st *Stats) (*Map, error) {
	if st == nil || st.D != mp.spec.InputDim {
		return nil, errors.New("prf: statistics of another dimension")
	}
	if err := st.check(); err != nil {
		return nil, err
	}
	s := mp.spec
	s.Basis = nil
	switch s.Family {
	case OPRF:
		a := FitOPRF(st)
		s.A = make([]float64, s.InputDim)
		for i := range s.A {
			s.A[i] = a
		}
	case SDERF:
		a, basis, err := FitSDERF(st)
		if err != nil {
			return nil, err
		}
		s.A, s.Basis = a, basis.RawMatrix().Data
	}
	return FromSpec(s)
}

// Adapt returns the map fitted to the queries x and keys y (features.Adaptive:
// linear attention calls it on each batch, FAVOR++ and FAVOR#).
func (mp *Map) Adapt(x, y *mat.Dense) (features.Pair, error) {
	st, err := NewStats(x, y)
	if err != nil {
		return nil, err
	}
	f, err := mp.Fit(st)
	if err != nil {
		return nil, err
	}
	return features.Symmetric(f), nil
}

// FromSpec rebuilds a Map from its Spec, validating every field: the sizes
// against their limits, finite values, a_l < 1/8 (finite variance) and an
// orthogonal basis (‖TTᵀ − I‖_max ≤ 1e-9·d).
func FromSpec(s Spec) (*Map, error) {
	s.Family = strings.ToLower(s.Family)
	if s.Family != OPRF && s.Family != SDERF {
		return nil, fmt.Errorf("prf: spec family %q is not %s or %s", s.Family, OPRF, SDERF)
	}
	if err := limits.Dim("prf: spec input dimension", s.InputDim); err != nil {
		return nil, err
	}
	if err := limits.Dim("prf: spec number of features", s.M); err != nil {
		return nil, err
	}
	nw, err := limits.Matrix("prf: spec projection", s.M, s.InputDim)
	if err != nil {
		return nil, err
	}
	if len(s.W) != nw {
		return nil, fmt.Errorf("prf: spec projection has %d values, want %d×%d", len(s.W), s.M, s.InputDim)
	}
	if err := finite("projection", s.W); err != nil {
		return nil, err
	}
	if len(s.A) != s.InputDim {
		return nil, fmt.Errorf("prf: spec has %d parameters a, want %d", len(s.A), s.InputDim)
	}
	for _, a := range s.A {
		if !(a < 0.125) || math.IsInf(a, 0) {
			return nil, fmt.Errorf("prf: spec parameter a = %v, want a finite value below 1/8", a)
		}
	}
	mp := &Map{spec: s, w: mat.NewDense(s.M, s.InputDim, s.W)}
	if len(s.Basis) > 0 {
		nb, err := limits.Matrix("prf: spec basis", s.InputDim, s.InputDim)
		if err != nil {
			return nil, err
		}
		if len(s.Basis) != nb {
			return nil, fmt.Errorf("prf: spec basis has %d values, want %d×%d", len(s.Basis), s.InputDim, s.InputDim)
		}
		if err := finite("basis", s.Basis); err != nil {
			return nil, err
		}
		mp.basis = mat.NewDense(s.InputDim, s.InputDim, s.Basis)
		var g mat.Dense
		g.Mul(mp.basis, mp.basis.T())
		for i := 0; i < s.InputDim; i++ {
			for j := 0; j < s.InputDim; j++ {
				e := g.At(i, j)
				if i == j {
					e--
				}
				if math.Abs(e) > 1e-9*float64(s.InputDim) {
					return nil, errors.New("prf: spec basis is not orthogonal")
				}
			}
		}
	}
	mp.sd = newSide(mp.w, s.A, mp.basis, true)
	return mp, nil
}

func finite(what string, v []float64) error {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("prf: spec %s has a non-finite value", what)
		}
	}
	return nil
}

// DecodeSpec is the features.Decoder of SpecKind.
func DecodeSpec(raw json.RawMessage) (features.Transformer, error) {
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("prf: bad map spec: %w", err)
	}
	return FromSpec(s)
}

// EncodeSpec returns the map's Spec as JSON, under SpecKind.
func (mp *Map) EncodeSpec() (string, json.RawMessage, error) {
	b, err := json.Marshal(mp.spec)
	return SpecKind, b, err
}

// Spec returns the map's description; its slices are shared with the map
// and must not be modified.
func (mp *Map) Spec() Spec { return mp.spec }

// Dim returns the number of features m.
func (mp *Map) Dim() int { return mp.spec.M }

// InputDim returns d.
func (mp *Map) InputDim() int { return mp.spec.InputDim }

// Kernel returns the softmax kernel exp(xᵀy), which the map estimates.
func (mp *Map) Kernel() kernel.Kernel { return kernel.Softmax{} }

// String describes the map, e.g. "softmax/oprf m=64 (orf)".
func (mp *Map) String() string {
	return fmt.Sprintf("softmax/%s m=%d (%s)", mp.spec.Family, mp.spec.M, mp.spec.Sampler)
}

// Transform writes z(x_i) into row i of dst (n×m). It returns
// features.ErrOverflow if a feature is beyond float64 (TransformScaled
// handles such inputs) and an error for mismatched shapes or non-finite
// inputs.
func (mp *Map) Transform(dst, x *mat.Dense) error { return mp.sd.transform(dst, x, nil) }

// TransformScaled writes exp(−s_i)·z(x_i) into row i of dst and returns
// the s_i, chosen so that the largest feature of each row is 1: z(x)ᵀz(y)
// = exp(s_x + s_y)·ẑ(x)ᵀẑ(y) exactly, and nothing overflows.
func (mp *Map) TransformScaled(dst, x *mat.Dense) ([]float64, error) {
	n, _ := x.Dims()
	s := make([]float64, n)
	return s, mp.sd.transform(dst, x, s)
}

// Projection returns the effective m×d projection W_eff = W·diag(√(1−4a))·T
// whose product with the inputs the features exponentiate, the offsets
// off_j and the log prefactor included in them (see the package
// documentation); the device forms use them. The slices are shared.
func (mp *Map) Projection() (w *mat.Dense, off []float64) { return mp.sd.weff, mp.sd.off }

// WithProjectors returns a copy of the map whose projection XW_effᵀ is
// computed by a projector made by np (the projector seam).
func (mp *Map) WithProjectors(np features.NewProjector) (features.Transformer, error) {
	sd, err := mp.sd.withProjector(np)
	if err != nil {
		return nil, err
	}
	c := *mp
	c.sd = sd
	return &c, nil
}

// Variance returns the variance of the estimate z(x)ᵀz(y) of exp(xᵀy)
// over draws of m iid N(0, I) rows (CRT Theorem 3.2 for OPRF, DERF
// Theorem 4.1 for SDERF):
//
//	(Π_l (1−4a_l)(1−8a_l)^{−1/2}·exp(Σ_l 2(1−4a_l)(u_l+v_l)²/(1−8a_l) − ‖u‖² − ‖v‖²) − exp(2xᵀy))/m
//
// with u = Tx, v = Ty. Orthogonal and simplex rows have a lower variance
// (CRT Theorem 3.4 for OPRF).
func (mp *Map) Variance(x, y []float64) float64 {
	u, v := apply(mp.basis, x), apply(mp.basis, y)
	return iidVariance(logSecondMoment(mp.spec.A, u, v), dot(x, y), mp.spec.M)
}

// RelativeVariance returns Variance(x, y)/exp(2xᵀy), computed as
// expm1(log E[f²f'²] − 2xᵀy)/m without forming either factor, so that it
// is finite wherever the ratio is (Variance overflows once exp(2xᵀy)
// does, beyond xᵀy ≈ 355).
func (mp *Map) RelativeVariance(x, y []float64) float64 {
	u, v := apply(mp.basis, x), apply(mp.basis, y)
	return math.Expm1(logSecondMoment(mp.spec.A, u, v)-2*dot(x, y)) / float64(mp.spec.M)
}

// Bound returns the supremum over ω of every feature of x,
// m^(−1/2)·D·exp(Σ_l (1−4a_l)u_l²/(−4a_l) − ‖u‖²/2) with u = Tx: the
// features are bounded when every a_l < 0 (the fitted OPRF and SDERF
// parameters for non-degenerate statistics), and +Inf is returned when
// some a_l ≥ 0 meets u_l ≠ 0 (FAVOR+, a = 0, is unbounded in ω).
func (mp *Map) Bound(x []float64) float64 {
	u := apply(mp.basis, x)
	e := -0.5 * math.Log(float64(mp.spec.M))
	for l, al := range mp.spec.A {
		e += 0.25*math.Log1p(-4*al) - 0.5*u[l]*u[l]
		if u[l] == 0 {
			continue
		}
		if al >= 0 {
			return math.Inf(1)
		}
		e += (1 - 4*al) * u[l] * u[l] / (-4 * al)
	}
	return math.Exp(e)
}

// Pair is an asymmetric dense-exponential random feature pair (ADERF):
// Query(x) is the GERF of Px, Key(y) the GERF of P⁻ᵀy, both with the
// scalar parameter a and the same projection, so Query(x)ᵀKey(y) is an
// unbiased estimate of exp((Px)ᵀ(P⁻ᵀy)) = exp(xᵀy). It is safe for
// concurrent use. It implements features.Pair; being asymmetric, it cannot
// be used where one map is needed (a ridge fit, a model file).
type Pair struct {
	cfg      Config
	sampler  string
	w        *mat.Dense
	a        float64
	p, pinvT *mat.Dense
	q, k     side
}

// NewPair draws an ADERF pair (cfg.Family ADERF or empty) for inputs of
// dimension st.D and fits it to st (FitADERF).
func NewPair(cfg Config, st *Stats) (*Pair, error) {
	if f := strings.ToLower(cfg.Family); f != "" && f != ADERF {
		return nil, fmt.Errorf("prf: NewPair builds %s, not %q", ADERF, cfg.Family)
	}
	if err := st.check(); err != nil {
		return nil, err
	}
	w, name, err := cfg.draw(st.D)
	if err != nil {
		return nil, err
	}
	return (&Pair{cfg: cfg, sampler: name, w: w}).Fit(st)
}

// Fit returns the pair with the same projection fitted to st.
func (pr *Pair) Fit(st *Stats) (*Pair, error) {
	if st == nil || st.D != pr.InputDim() {
		return nil, errors.New("prf: statistics of another dimension")
	}
	if err := st.check(); err != nil {
		return nil, err
	}
	p, pinvT, a, err := FitADERF(st)
	if err != nil {
		return nil, err
	}
	d := st.D
	as := make([]float64, d)
	for i := range as {
		as[i] = a
	}
	c := &Pair{cfg: pr.cfg, sampler: pr.sampler, w: pr.w, a: a, p: p, pinvT: pinvT}
	c.q = newSide(pr.w, as, p, false)
	c.k = newSide(pr.w, as, pinvT, false)
	return c, nil
}

// Adapt returns the pair fitted to queries x and keys y
// (features.Adaptive).
func (pr *Pair) Adapt(x, y *mat.Dense) (features.Pair, error) {
	st, err := NewStats(x, y)
	if err != nil {
		return nil, err
	}
	return pr.Fit(st)
}

// Dim returns m.
func (pr *Pair) Dim() int { m, _ := pr.w.Dims(); return m }

// InputDim returns d.
func (pr *Pair) InputDim() int { _, d := pr.w.Dims(); return d }

// Query writes the query features of the rows of x into dst.
func (pr *Pair) Query(dst, x *mat.Dense) error { return pr.q.transform(dst, x, nil) }

// Key writes the key features of the rows of y into dst.
func (pr *Pair) Key(dst, y *mat.Dense) error { return pr.k.transform(dst, y, nil) }

// QueryScaled and KeyScaled are Query and Key with row scaling, as
// Map.TransformScaled: Query(x)ᵀKey(y) = exp(s_x + s_y)·Q̂(x)ᵀK̂(y).
func (pr *Pair) QueryScaled(dst, x *mat.Dense) ([]float64, error) {
	n, _ := x.Dims()
	s := make([]float64, n)
	return s, pr.q.transform(dst, x, s)
}

// KeyScaled is the row-scaled Key (see QueryScaled).
func (pr *Pair) KeyScaled(dst, y *mat.Dense) ([]float64, error) {
	n, _ := y.Dims()
	s := make([]float64, n)
	return s, pr.k.transform(dst, y, s)
}

// Transforms returns P (queries enter as Px) and P⁻ᵀ (keys as P⁻ᵀy) and
// the parameter a; the matrices are shared with the pair.
func (pr *Pair) Transforms() (p, pinvT *mat.Dense, a float64) { return pr.p, pr.pinvT, pr.a }

// QueryProjection returns the evaluated query map z_j(x) = exp((W_eff
// x)_j + off_j − ½·xᵀGx): the effective m×d projection W_eff =
// √(1−4a)·W·P, the offsets off_j (the log prefactor included) and the
// d×d matrix G = PᵀP (see the package documentation); the device forms
// use them. The slices and matrices are shared with the pair and must
// not be modified.
func (pr *Pair) QueryProjection() (w *mat.Dense, off []float64, gram *mat.Dense) {
	return pr.q.weff, pr.q.off, pr.q.gram
}

// KeyProjection is QueryProjection for the key map, with P⁻ᵀ in place of
// P.
func (pr *Pair) KeyProjection() (w *mat.Dense, off []float64, gram *mat.Dense) {
	return pr.k.weff, pr.k.off, pr.k.gram
}

// Kernel returns the softmax kernel.
func (pr *Pair) Kernel() kernel.Kernel { return kernel.Softmax{} }

// String describes the pair.
func (pr *Pair) String() string {
	return fmt.Sprintf("softmax/%s m=%d (%s)", ADERF, pr.Dim(), pr.sampler)
}

// WithProjectors returns a copy of the pair whose two projections run on
// projectors made by np (features.ProjectablePair).
func (pr *Pair) WithProjectors(np features.NewProjector) (features.Pair, error) {
	q, err := pr.q.withProjector(np)
	if err != nil {
		return nil, err
	}
	k, err := pr.k.withProjector(np)
	if err != nil {
		return nil, err
	}
	c := *pr
	c.q, c.k = q, k
	return &c, nil
}

// Variance returns the variance of Query(x)ᵀKey(y) over draws of m iid
// rows (DERF Theorem 4.1 with A = aI, B⁽¹⁾ = √(1−4a)P, B⁽²⁾ = √(1−4a)P⁻ᵀ).
func (pr *Pair) Variance(x, y []float64) float64 {
	d := pr.InputDim()
	as := make([]float64, d)
	for i := range as {
		as[i] = pr.a
	}
	return iidVariance(logSecondMoment(as, apply(pr.p, x), apply(pr.pinvT, y)), dot(x, y), pr.Dim())
}

// RelativeVariance returns Variance(x, y)/exp(2xᵀy) without forming
// either factor (see Map.RelativeVariance).
func (pr *Pair) RelativeVariance(x, y []float64) float64 {
	d := pr.InputDim()
	as := make([]float64, d)
	for i := range as {
		as[i] = pr.a
	}
	return math.Expm1(logSecondMoment(as, apply(pr.p, x), apply(pr.pinvT, y))-2*dot(x, y)) / float64(pr.Dim())
}
