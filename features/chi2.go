package features

import (
	"encoding/json"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/kernel"
)

// AdditiveChi2SpecKind and SkewedChi2SpecKind are the kinds under which the
// χ² maps are stored in model files.
const (
	AdditiveChi2SpecKind = "additive-chi2"
	SkewedChi2SpecKind   = "skewed-chi2"
)

// AdditiveChi2Spec describes the sampled additive χ² map of Vedaldi &
// Zisserman (IEEE PAMI 34(3), 2012, Sec. 4): Steps n ≥ 1 samples of the
// kernel's spectrum at spacing Interval L > 0 for each of InputDim
// non-negative inputs.
type AdditiveChi2Spec struct {
	InputDim int     `json:"input_dim"`
	Steps    int     `json:"steps"`
	Interval float64 `json:"interval"`
}

// DefaultChi2Interval returns the sample spacing L used for n steps:
// scikit-learn's 0.8, 0.5 and 0.4 for n = 1, 2, 3 (AdditiveChi2Sampler),
// and 0.8/√n beyond. Larger L shortens the period 2π/L of the sampled
// kernel (aliasing), smaller L leaves more of the spectrum beyond nL
// (truncation); 0.8/√n keeps the worst relative error over the pairs with
// |log(y/x)| ≤ 5 within a factor of about 2 of its minimum over L (found
// numerically: about 0.05, 0.005 and 0.0007 for n = 5, 8 and 12).
func DefaultChi2Interval(n int) float64 {
	switch n {
	case 1:
		return 0.8
	case 2:
		return 0.5
	case 3:
		return 0.4
	}
	return 0.8 / math.Sqrt(float64(n))
}

// AdditiveChi2 is the deterministic additive χ² feature map (scikit-learn's
// AdditiveChi2Sampler). The χ² kernel of one coordinate,
// 2xy/(x+y) = √(xy)·sech(λ/2) with λ = log y − log x, has the spectrum
// κ(ω) = sech(πω); sampling it at ω = jL, |j| < n, gives the features
//
//	√(xL),  √(2xL·sech(πjL))·cos(jL·log x),  √(2xL·sech(πjL))·sin(jL·log x),
//
// for j = 1…n−1, laid out as scikit-learn does: the d square roots, then
// for each j the d cosines and the d sines (D = d(2n−1)). By the Poisson
// summation formula the map's kernel is exactly
//
//	k̂(x, y) = √(xy)·[Σ_k sech((λ + 2πk/L)/2) − 2L·Σ_{j≥n} sech(πjL)·cos(jLλ)]
//
// per coordinate: the k = 0 term is the χ² kernel, the k ≠ 0 terms are
// the aliasing error and the second sum the truncation error. Zero inputs
// give zero features (the kernel vanishes there); negative inputs are
// errors. The map has no random draw and no projector seam.
type AdditiveChi2 struct {
	spec AdditiveChi2Spec
	// coef[j] = √(2L·sech(πjL)) for j ≥ 1, coef[0] = √L.
	coef []float64
}

// NewAdditiveChi2 returns the additive χ² map of inputs of dimension d with
// n steps and spacing l (0 selects DefaultChi2Interval(n)).
func NewAdditiveChi2(d, n int, l float64) (*AdditiveChi2, error) {
	if l == 0 {
		l = DefaultChi2Interval(n)
	}
	return AdditiveChi2FromSpec(AdditiveChi2Spec{InputDim: d, Steps: n, Interval: l})
}

// AdditiveChi2FromSpec builds the map of a spec, validating every field.
func AdditiveChi2FromSpec(s AdditiveChi2Spec) (*AdditiveChi2, error) {
	if err := limits.Dim("features: additive chi2 input dimension", s.InputDim); err != nil {
		return nil, err
	}
	if s.Steps < 1 || s.Steps > 1000 {
		return nil, fmt.Errorf("features: additive chi2 needs 1 to 1000 steps, got %d", s.Steps)
	}
	if !(s.Interval > 0) || math.IsInf(s.Interval, 0) {
		return nil, fmt.Errorf("features: additive chi2 sample interval must be positive and finite, got %v", s.Interval)
	}
	if err := limits.Dim("features: additive chi2 number of features", s.InputDim*(2*s.Steps-1)); err != nil {
		return nil, err
	}
	c := make([]float64, s.Steps)
	c[0] = math.Sqrt(s.Interval)
	for j := 1; j < s.Steps; j++ {
		c[j] = math.Sqrt(2 * s.Interval / math.Cosh(math.Pi*float64(j)*s.Interval))
	}
	return &AdditiveChi2{spec: s, coef: c}, nil
}

// Spec returns the map's description.
func (a *AdditiveChi2) Spec() AdditiveChi2Spec { return a.spec }

// EncodeSpec returns the map's spec as JSON, under AdditiveChi2SpecKind.
func (a *AdditiveChi2) EncodeSpec() (string, json.RawMessage, error) {
	b, err := json.Marshal(a.spec)
	return AdditiveChi2SpecKind, b, err
}

// DecodeAdditiveChi2 is the Decoder of AdditiveChi2SpecKind.
func DecodeAdditiveChi2(raw json.RawMessage) (Transformer, error) {
	var s AdditiveChi2Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("features: bad additive chi2 spec: %w", err)
	}
	return AdditiveChi2FromSpec(s)
}

// Dim returns d(2n−1).
func (a *AdditiveChi2) Dim() int { return a.spec.InputDim * (2*a.spec.Steps - 1) }

// InputDim returns d.
func (a *AdditiveChi2) InputDim() int { return a.spec.InputDim }

// Kernel returns the additive χ² kernel the map approximates.
func (a *AdditiveChi2) Kernel() kernel.Kernel { return kernel.Chi2{} }

// String describes the map.
func (a *AdditiveChi2) String() string {
	return fmt.Sprintf("additive-chi2 n=%d L=%g D=%d", a.spec.Steps, a.spec.Interval, a.Dim())
}

// Transform writes the features of the rows of x (non-negative entries)
// into dst (n×d(2n−1)).
func (a *AdditiveChi2) Transform(dst, x *mat.Dense) error {
	d := a.spec.InputDim
	if err := checkRows(dst, x, d, a.Dim()); err != nil {
		return err
	}
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		for _, v := range x.RawRowView(i) {
			if v < 0 {
				return fmt.Errorf("features: additive chi2 input row %d has a negative value %v", i, v)
			}
		}
	}
	L := a.spec.Interval
	parallel.Chunks(n, 256, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			out := dst.RawRowView(r)
			clear(out)
			for k, v := range x.RawRowView(r) {
				if v == 0 {
					continue
				}
				sv := math.Sqrt(v)
				out[k] = a.coef[0] * sv
				lg := L * math.Log(v)
				for j := 1; j < a.spec.Steps; j++ {
					s, c := math.Sincos(float64(j) * lg)
					f := a.coef[j] * sv
					out[(2*j-1)*d+k] = f * c
					out[2*j*d+k] = f * s
				}
			}
		}
	})
	return nil
}

// SkewedChi2Config describes a skewed χ² random feature map.
type SkewedChi2Config struct {
	// C > 0 is the skewness c: inputs must exceed −c.
	C float64
	// Features is the number of features D.
	Features int
	// Seed seeds the projection and the phases.
	Seed uint64
}

// SkewedChi2Spec is the serialisable description of a SkewedChi2 map: the
// skewness, the sizes and the drawn projection and phases.
type SkewedChi2Spec struct {
	C        float64   `json:"c"`
	Features int       `json:"features"`
	Seed     uint64    `json:"seed"`
	InputDim int       `json:"input_dim"`
	W        []float64 `json:"w"` // Features×InputDim, row-major
	B        []float64 `json:"b"` // Features phases
}

// SkewedChi2 is the random Fourier map of the skewed χ² kernel of Li,
// Ionescu & Sminchisescu (DAGM 2010, Sec. 3), scikit-learn's
// SkewedChi2Sampler: in the coordinates u = log(x + c) the kernel is
// Π_i sech((u_i − v_i)/2), a shift-invariant kernel whose spectrum is the
// hyperbolic secant density sech(πω), so with rows ω of W drawn from it
// (ω = (1/π)·log tan(πU/2), U uniform) and phases b ~ U[0, 2π)
//
//	z(x) = √(2/D)·cos(W·log(x + c) + b),   E[z(x)ᵀz(y)] = k(x, y).
//
// Its inputs enter through the projection of log(x + c), so the projector
// seam applies to those transformed rows.
type SkewedChi2 struct {
	spec SkewedChi2Spec
	w    *mat.Dense
	proj Projector
}

// NewSkewedChi2 draws a skewed χ² map for inputs of dimension d.
func NewSkewedChi2(cfg SkewedChi2Config, d int) (*SkewedChi2, error) {
	if err := limits.Dim("features: skewed chi2 input dimension", d); err != nil {
		return nil, err
	}
	if err := limits.Dim("features: skewed chi2 number of features", cfg.Features); err != nil {
		return nil, err
	}
	nw, err := limits.Matrix("features: skewed chi2 projection", cfg.Features, d)
	if err != nil {
		return nil, err
	}
	r := rng.New(cfg.Seed)
	w := make([]float64, nw)
	for i := range w {
		u := r.Float64()
		for u == 0 {
			u = r.Float64()
		}
		w[i] = math.Log(math.Tan(math.Pi/2*u)) / math.Pi
	}
	rb := rng.NewStream(cfg.Seed, rng.Bias)
	b := make([]float64, cfg.Features)
	for i := range b {
		b[i] = 2 * math.Pi * rb.Float64()
	}
	return SkewedChi2FromSpec(SkewedChi2Spec{C: cfg.C, Features: cfg.Features, Seed: cfg.Seed, InputDim: d, W: w, B: b})
}

// SkewedChi2FromSpec rebuilds a SkewedChi2 map from its spec, validating
// every field.
func SkewedChi2FromSpec(s SkewedChi2Spec) (*SkewedChi2, error) {
	if err := kernel.Check(kernel.SkewedChi2{C: s.C}); err != nil {
		return nil, fmt.Errorf("features: skewed chi2 spec: %w", err)
	}
	if err := limits.Dim("features: skewed chi2 spec input dimension", s.InputDim); err != nil {
		return nil, err
	}
	if err := limits.Dim("features: skewed chi2 spec number of features", s.Features); err != nil {
		return nil, err
	}
	nw, err := limits.Matrix("features: skewed chi2 spec projection", s.Features, s.InputDim)
	if err != nil {
		return nil, err
	}
	if len(s.W) != nw || len(s.B) != s.Features {
		return nil, fmt.Errorf("features: skewed chi2 spec has %d projection values and %d phases, want %d×%d and %d",
			len(s.W), len(s.B), s.Features, s.InputDim, s.Features)
	}
	for _, v := range append(append([]float64(nil), s.W...), s.B...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("features: skewed chi2 spec has a non-finite value")
		}
	}
	return &SkewedChi2{spec: s, w: mat.NewDense(s.Features, s.InputDim, s.W)}, nil
}

// Spec returns the map's serialisable description. Its slices are shared
// with the map and must not be modified.
func (m *SkewedChi2) Spec() SkewedChi2Spec { return m.spec }

// EncodeSpec returns the map's spec as JSON, under SkewedChi2SpecKind.
func (m *SkewedChi2) EncodeSpec() (string, json.RawMessage, error) {
	b, err := json.Marshal(m.spec)
	return SkewedChi2SpecKind, b, err
}

// DecodeSkewedChi2 is the Decoder of SkewedChi2SpecKind.
func DecodeSkewedChi2(raw json.RawMessage) (Transformer, error) {
	var s SkewedChi2Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("features: bad skewed chi2 spec: %w", err)
	}
	return SkewedChi2FromSpec(s)
}

// Dim returns D.
func (m *SkewedChi2) Dim() int { return m.spec.Features }

// InputDim returns d.
func (m *SkewedChi2) InputDim() int { return m.spec.InputDim }

// Kernel returns the skewed χ² kernel the map estimates.
func (m *SkewedChi2) Kernel() kernel.Kernel { return kernel.SkewedChi2{C: m.spec.C} }

// String describes the map.
func (m *SkewedChi2) String() string {
	return fmt.Sprintf("skewed-chi2 c=%g D=%d", m.spec.C, m.spec.Features)
}

// W returns the D×d projection applied to log(x + c). It is shared with
// the map and must not be modified.
func (m *SkewedChi2) W() *mat.Dense { return m.w }

// WithProjectors returns a copy of the map whose projection of the rows
// log(x + c) is computed by the projector np makes for W.
func (m *SkewedChi2) WithProjectors(np NewProjector) (Transformer, error) {
	p, err := np(m.w)
	if err != nil {
		return nil, err
	}
	c := *m
	c.proj = p
	return &c, nil
}

// Transform writes √(2/D)·cos(W·log(x + c) + b) for the rows of x (entries
// above −c) into dst.
func (m *SkewedChi2) Transform(dst, x *mat.Dense) error {
	s := m.spec
	if err := checkRows(dst, x, s.InputDim, s.Features); err != nil {
		return err
	}
	n, d := x.Dims()
	u := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		ur := u.RawRowView(i)
		for j, v := range x.RawRowView(i) {
			if !(v+s.C > 0) {
				return fmt.Errorf("features: skewed chi2 input row %d has the value %v, not above −c = %v", i, v, -s.C)
			}
			ur[j] = math.Log(v + s.C)
		}
	}
	if m.proj != nil {
		if err := m.proj.ProjectFrom(dst, u, 0); err != nil {
			return err
		}
	}
	scale := math.Sqrt(2 / float64(s.Features))
	D := s.Features
	dr := dst.RawMatrix()
	ur := u.RawMatrix()
	parallel.Chunks(n, 64, func(_, lo, hi int) {
		ds := blas64.General{Rows: hi - lo, Cols: D, Stride: dr.Stride, Data: dr.Data[lo*dr.Stride:]}
		if m.proj == nil {
			us := blas64.General{Rows: hi - lo, Cols: d, Stride: ur.Stride, Data: ur.Data[lo*ur.Stride:]}
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, us, m.w.RawMatrix(), 0, ds)
		}
		for i := lo; i < hi; i++ {
			row := dst.RawRowView(i)
			for k, a := range row {
				row[k] = scale * math.Cos(a+s.B[k])
			}
		}
	})
	return nil
}
