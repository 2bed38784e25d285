package features

import (
	"encoding/json"
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/kernel"
)

// TensorSketchConfig describes a TensorSketch map of the polynomial kernel
// (Gamma·xᵀy + Coef0)^Degree.
type TensorSketchConfig struct {
	// Degree p ≥ 1 of the polynomial kernel.
	Degree int
	// Gamma > 0 scales the inner product.
	Gamma float64
	// Coef0 ≥ 0 is the offset c; c > 0 appends the constant coordinate √c
	// to the scaled input √γ·x.
	Coef0 float64
	// Features is the sketch size D (any positive size; the FFT handles
	// every length, fastest for products of small primes).
	Features int
	// Seed seeds the hash functions.
	Seed uint64
}

// TensorSketchSpecKind is the kind under which a TensorSketch's spec is
// stored in model files.
const TensorSketchSpecKind = "tensorsketch"

// TensorSketchSpec is the serialisable description of a TensorSketch: the
// kernel, the sizes and the drawn hash functions (Degree rows of
// Width = InputDim, plus one for c > 0, bucket indices and signs).
type TensorSketchSpec struct {
	Degree   int       `json:"degree"`
	Gamma    float64   `json:"gamma"`
	Coef0    float64   `json:"coef0,omitempty"`
	Features int       `json:"features"`
	Seed     uint64    `json:"seed"`
	InputDim int       `json:"input_dim"`
	Index    []int     `json:"index"` // Degree×Width bucket indices in [0, Features)
	Sign     []float64 `json:"sign"`  // Degree×Width signs ±1
}

// TensorSketch is the TensorSketch random feature map of Pham & Pagh
// (KDD 2013, Sec. 3), scikit-learn's PolynomialCountSketch: Degree
// independent count sketches C_i u (u = [√γ·x, √c]) are convolved
// circularly, z(x) = FFT⁻¹(Π_i FFT(C_i u)), which is the count sketch of
// the tensor power u^⊗p with hash Σh_i mod D and sign Π s_i, so
// E[z(x)ᵀz(y)] = (uᵀv)^p = (γxᵀy + c)^p. A TensorSketch is safe for
// concurrent use.
type TensorSketch struct {
	spec  TensorSketchSpec
	width int
	// proj, if set, computes the count sketches of the inputs: one
	// projector per degree for the D×d matrix W_i with W_i[h_i(j), j] =
	// √γ·s_i(j) (see WithProjectors).
	proj []Projector
}

// NewTensorSketch draws a TensorSketch map for inputs of dimension d.
func NewTensorSketch(cfg TensorSketchConfig, d int) (*TensorSketch, error) {
	if err := limits.Dim("features: tensorsketch input dimension", d); err != nil {
		return nil, err
	}
	if cfg.Degree < 1 || cfg.Degree > 64 {
		return nil, fmt.Errorf("features: tensorsketch degree must be between 1 and 64, got %d", cfg.Degree)
	}
	if err := limits.Dim("features: tensorsketch number of features", cfg.Features); err != nil {
		return nil, err
	}
	width := d
	if cfg.Coef0 != 0 {
		width++
	}
	r := rng.New(cfg.Seed)
	idx := make([]int, cfg.Degree*width)
	sign := make([]float64, cfg.Degree*width)
	for i := range idx {
		idx[i] = r.IntN(cfg.Features)
		sign[i] = float64(2*r.IntN(2) - 1)
	}
	return TensorSketchFromSpec(TensorSketchSpec{Degree: cfg.Degree, Gamma: cfg.Gamma, Coef0: cfg.Coef0,
		Features: cfg.Features, Seed: cfg.Seed, InputDim: d, Index: idx, Sign: sign})
}

// TensorSketchFromSpec rebuilds a TensorSketch from its spec, validating
// every field.
func TensorSketchFromSpec(s TensorSketchSpec) (*TensorSketch, error) {
	if err := limits.Dim("features: tensorsketch spec input dimension", s.InputDim); err != nil {
		return nil, err
	}
	if err := limits.Dim("features: tensorsketch spec number of features", s.Features); err != nil {
		return nil, err
	}
	if err := kernel.Check(kernel.Polynomial{Gamma: s.Gamma, Coef0: s.Coef0, Degree: s.Degree}); err != nil {
		return nil, fmt.Errorf("features: tensorsketch spec: %w", err)
	}
	width := s.InputDim
	if s.Coef0 != 0 {
		width++
	}
	nh, err := limits.Matrix("features: tensorsketch spec hashes", s.Degree, width)
	if err != nil {
		return nil, err
	}
	if len(s.Index) != nh || len(s.Sign) != nh {
		return nil, fmt.Errorf("features: tensorsketch spec has %d indices and %d signs, want %d×%d", len(s.Index), len(s.Sign), s.Degree, width)
	}
	for i, h := range s.Index {
		if h < 0 || h >= s.Features {
			return nil, fmt.Errorf("features: tensorsketch spec index %d not in [0, %d)", h, s.Features)
		}
		if s.Sign[i] != 1 && s.Sign[i] != -1 {
			return nil, fmt.Errorf("features: tensorsketch spec sign %v is not ±1", s.Sign[i])
		}
	}
	return &TensorSketch{spec: s, width: width}, nil
}

// Spec returns the map's serialisable description. Its slices are shared
// with the map and must not be modified.
func (t *TensorSketch) Spec() TensorSketchSpec { return t.spec }

// EncodeSpec returns the map's spec as JSON, under TensorSketchSpecKind.
func (t *TensorSketch) EncodeSpec() (string, json.RawMessage, error) {
	b, err := json.Marshal(t.spec)
	return TensorSketchSpecKind, b, err
}

// DecodeTensorSketch is the Decoder of TensorSketchSpecKind.
func DecodeTensorSketch(raw json.RawMessage) (Transformer, error) {
	var s TensorSketchSpec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("features: bad tensorsketch spec: %w", err)
	}
	return TensorSketchFromSpec(s)
}

// Dim returns the sketch size D.
func (t *TensorSketch) Dim() int { return t.spec.Features }

// InputDim returns the input dimension d.
func (t *TensorSketch) InputDim() int { return t.spec.InputDim }

// Kernel returns the polynomial kernel the map estimates.
func (t *TensorSketch) Kernel() kernel.Kernel {
	return kernel.Polynomial{Gamma: t.spec.Gamma, Coef0: t.spec.Coef0, Degree: t.spec.Degree}
}

// String describes the map, e.g. "tensorsketch (0.5xᵀy+1)^2 D=512".
func (t *TensorSketch) String() string {
	return fmt.Sprintf("tensorsketch (%gxᵀy+%g)^%d D=%d", t.spec.Gamma, t.spec.Coef0, t.spec.Degree, t.spec.Features)
}

// Projections returns the Degree count-sketch matrices W_i (D×d, entries
// √γ·s_i(j) at (h_i(j), j), zero elsewhere) whose products XW_iᵀ are the
// count sketches of the inputs without the constant coordinate. They are
// dense copies: a projector of a sparse sign matrix is what hardware
// would hold.
func (t *TensorSketch) Projections() []*mat.Dense {
	s := t.spec
	out := make([]*mat.Dense, s.Degree)
	sg := math.Sqrt(s.Gamma)
	for i := range out {
		w := mat.NewDense(s.Features, s.InputDim, nil)
		for j := 0; j < s.InputDim; j++ {
			w.Set(s.Index[i*t.width+j], j, sg*s.Sign[i*t.width+j])
		}
		out[i] = w
	}
	return out
}

// WithProjectors returns a copy of the map whose count sketches XW_iᵀ (see
// Projections) are computed by projectors made by np: the projector seam.
// The constant coordinate √c, the FFTs and their product stay digital;
// they are not element-wise, but depend on the projections only.
func (t *TensorSketch) WithProjectors(np NewProjector) (Transformer, error) {
	c := *t
	c.proj = nil
	for _, w := range t.Projections() {
		p, err := np(w)
		if err != nil {
			return nil, err
		}
		c.proj = append(c.proj, p)
	}
	return &c, nil
}

// sketchRows is the number of rows a worker sketches at a time.
const sketchRows = 64

// Transform writes the sketches of the rows of x into dst (n×D). It
// returns an error for mismatched shapes, non-finite inputs and features
// beyond float64.
func (t *TensorSketch) Transform(dst, x *mat.Dense) error {
	s := t.spec
	if err := checkRows(dst, x, s.InputDim, s.Features); err != nil {
		return err
	}
	n, _ := x.Dims()
	var sketches []*mat.Dense
	if t.proj != nil {
		sketches = make([]*mat.Dense, len(t.proj))
		for i, p := range t.proj {
			sketches[i] = mat.NewDense(n, s.Features, nil)
			if err := p.ProjectFrom(sketches[i], x, 0); err != nil {
				return err
			}
		}
	}
	D := s.Features
	nc := D/2 + 1
	sg := math.Sqrt(s.Gamma)
	sc := math.Sqrt(s.Coef0)
	bad := make([]bool, parallel.Workers((n+sketchRows-1)/sketchRows))
	parallel.Chunks(n, sketchRows, func(wk, lo, hi int) {
		fft := fourier.NewFFT(D)
		cs := make([]float64, D)
		coef := make([]complex128, nc)
		prod := make([]complex128, nc)
		for r := lo; r < hi; r++ {
			xr := x.RawRowView(r)
			for i := 0; i < s.Degree; i++ {
				idx := s.Index[i*t.width : (i+1)*t.width]
				sign := s.Sign[i*t.width : (i+1)*t.width]
				if sketches != nil {
					copy(cs, sketches[i].RawRowView(r))
				} else {
					clear(cs)
					for j, v := range xr {
						cs[idx[j]] += sign[j] * sg * v
					}
				}
				if t.width > s.InputDim {
					cs[idx[s.InputDim]] += sign[s.InputDim] * sc
				}
				if i == 0 {
					fft.Coefficients(prod, cs)
					continue
				}
				fft.Coefficients(coef, cs)
				for k := range prod {
					prod[k] *= coef[k]
				}
			}
			out := dst.RawRowView(r)
			fft.Sequence(out, prod)
			for k, v := range out {
				out[k] = v / float64(D)
				if math.IsInf(out[k], 0) || math.IsNaN(out[k]) {
					bad[wk] = true
				}
			}
		}
	})
	for _, b := range bad {
		if b {
			return ErrOverflow
		}
	}
	return nil
}

// checkRows checks that x is n×d with finite entries and dst is n×D.
func checkRows(dst, x *mat.Dense, d, D int) error {
	n, xd := x.Dims()
	if xd != d {
		return fmt.Errorf("features: input has %d columns, map expects %d", xd, d)
	}
	dn, dd := dst.Dims()
	if dn != n || dd != D {
		return fmt.Errorf("features: destination is %d×%d, want %d×%d", dn, dd, n, D)
	}
	for i := 0; i < n; i++ {
		for _, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("features: input row %d has a non-finite value", i)
			}
		}
	}
	return nil
}
