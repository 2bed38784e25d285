package features

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/internal/vmath"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/sampler"
)

// Config describes a random feature map.
type Config struct {
	// Kernel is the kernel to estimate: "rbf" (also "gaussian"), "softmax",
	// "arccos0", "arccos1" or "arccos2".
	Kernel string
	// Form selects among the maps for a kernel (see the package
	// documentation); empty selects the default: "cos" for rbf, "positive"
	// for softmax and the only form of the arc-cosine kernels.
	Form string
	// Gamma is the RBF bandwidth in exp(−γ‖x−y‖²); used by rbf only.
	Gamma float64
	// Temperature is τ of the softmax kernel exp(xᵀy/τ) (softmax only):
	// 0 means none (τ = 1, the kernel exp(xᵀy)); otherwise it must be
	// positive and finite. Draw returns the map of exp(xᵀy) applied to
	// x/√τ (Temper). New and FromProjection draw *Map, the unscaled map:
	// they refuse a temperature other than 0 and 1.
	Temperature float64
	// Features is the output dimension D. For the sincos, trig and
	// hyperbolic forms it must be even (m = D/2 projections).
	Features int
	// Sampler draws the projection; nil means sampler.Default().
	Sampler sampler.Sampler
	// Seed seeds the projection and the bias.
	Seed uint64
	// Float32 computes the projection in single precision (about twice the
	// GEMM throughput); the features are still float64 (Transform32 writes
	// them in single precision, as model.Options.Float32 fits do).
	Float32 bool
}

type kind int

const (
	kindCos kind = iota
	kindSinCos
	kindPositive
	kindHyperbolic
	kindHeaviside
	kindReLU
	kindReLU2
)

// Map is a random feature map z(x) = h(x)/√m [f₁(Wx+b), …]. A Map is safe
// for concurrent use by several goroutines.
type Map struct {
	spec Spec
	kind kind
	m, d int
	w    *mat.Dense // m×d, bandwidth scale included
	w32  []float32
	b    []float64 // nil unless the form has a bias
	// normCoef is c in h(x) ∝ exp(c‖x‖²), x unscaled.
	normCoef float64
	// logPre is log of the constant prefactor (√2, 1/√2, …) times 1/√m.
	logPre float64
	// proj, if set, computes the projection XWᵀ instead of GEMM (e.g. an
	// emulated analog accelerator); everything after it stays the same.
	proj Projector
}

// WithProjector returns a copy of the map whose projection is computed by
// p (which must hold this map's W) instead of a matrix product.
func (mp *Map) WithProjector(p Projector) *Map {
	c := *mp
	c.proj = p
	return &c
}

// WithProjectors returns a copy of the map whose projection is computed by
// the projector np makes for its W (the projector seam, see Projectable).
func (mp *Map) WithProjectors(np NewProjector) (Transformer, error) {
	p, err := np(mp.w)
	if err != nil {
		return nil, err
	}
	return mp.WithProjector(p), nil
}

// SpecKind is the kind under which a Map's Spec is stored in model files.
const SpecKind = "features"

// EncodeSpec returns the map's Spec as JSON, under SpecKind.
func (mp *Map) EncodeSpec() (string, json.RawMessage, error) {
	b, err := json.Marshal(mp.spec)
	return SpecKind, b, err
}

// DecodeSpec is the Decoder of SpecKind: it rebuilds a Map from its JSON
// Spec, validating every field.
func DecodeSpec(raw json.RawMessage) (Transformer, error) {
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("features: bad map spec: %w", err)
	}
	return FromSpec(s)
}

// Spec is the serialisable description of a Map: the configuration plus
// the drawn projection and bias. Model files store it.
type Spec struct {
	Kernel   string    `json:"kernel"`
	Form     string    `json:"form"`
	Gamma    float64   `json:"gamma,omitempty"`
	Features int       `json:"features"`
	Sampler  string    `json:"sampler"`
	Seed     uint64    `json:"seed"`
	Float32  bool      `json:"float32,omitempty"`
	InputDim int       `json:"input_dim"`
	M        int       `json:"m"`
	W        []float64 `json:"w"` // M×InputDim, row-major, bandwidth scale included
	B        []float64 `json:"b,omitempty"`
}

func resolve(cfg Config) (kernelName, form string, k kind, err error) {
	kernelName = strings.ToLower(cfg.Kernel)
	form = strings.ToLower(cfg.Form)
	switch kernelName {
	case "rbf", "gaussian":
		kernelName = "rbf"
		switch form {
		case "", "cos":
			return kernelName, "cos", kindCos, nil
		case "sincos", "trig":
			return kernelName, "sincos", kindSinCos, nil
		case "positive":
			return kernelName, form, kindPositive, nil
		case "hyperbolic":
			return kernelName, form, kindHyperbolic, nil
		}
	case "softmax":
		switch form {
		case "", "positive", "favor+":
			return kernelName, "positive", kindPositive, nil
		case "trig", "sincos":
			return kernelName, "trig", kindSinCos, nil
		case "hyperbolic":
			return kernelName, form, kindHyperbolic, nil
		}
	case "arccos0":
		if form == "" || form == "heaviside" {
			return kernelName, "heaviside", kindHeaviside, nil
		}
	case "arccos1":
		if form == "" || form == "relu" {
			return kernelName, "relu", kindReLU, nil
		}
	case "arccos2":
		if form == "" || form == "relu2" {
			return kernelName, "relu2", kindReLU2, nil
		}
	default:
		return "", "", 0, fmt.Errorf("features: unknown kernel %q (want rbf, softmax, arccos0, arccos1 or arccos2)", cfg.Kernel)
	}
	return "", "", 0, fmt.Errorf("features: unknown form %q for kernel %s", cfg.Form, kernelName)
}

// checkTemperature returns an error if cfg.Temperature is set for a
// kernel other than softmax or is not a valid temperature; with unscaled
// set (New, FromProjection), also if it is other than 0 and 1.
func checkTemperature(cfg Config, kname string, unscaled bool) error {
	tau := cfg.Temperature
	if tau == 0 {
		return nil
	}
	if kname != "softmax" {
		return fmt.Errorf("features: the temperature is a parameter of the softmax kernel exp(xᵀy/τ); the %s kernel has none", kname)
	}
	if err := CheckTemperature(tau); err != nil {
		return err
	}
	if unscaled && tau != 1 {
		return fmt.Errorf("features: New draws the map of exp(xᵀy) (*Map); temperature %v needs Draw (or Temper)", tau)
	}
	return nil
}

// Draw draws the feature map of cfg for inputs of dimension d: New's
// *Map, tempered (Temper) when cfg.Temperature is set and not 1.
func Draw(cfg Config, d int) (Transformer, error) {
	kname, _, _, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	if err := checkTemperature(cfg, kname, false); err != nil {
		return nil, err
	}
	tau := cfg.Temperature
	cfg.Temperature = 0
	mp, err := New(cfg, d)
	if err != nil {
		return nil, err
	}
	if tau == 0 || tau == 1 {
		return mp, nil
	}
	return Temper(mp, tau)
}

// New draws a feature map for inputs of dimension d. It is the map of the
// unscaled kernel: a Config.Temperature other than 0 and 1 is an error
// (Draw tempers the map).
func New(cfg Config, d int) (*Map, error) {
	kname, form, k, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	if err := checkTemperature(cfg, kname, true); err != nil {
		return nil, err
	}
	if cfg.Features <= 0 {
		return nil, fmt.Errorf("features: number of features must be positive, got %d", cfg.Features)
	}
	if d <= 0 {
		return nil, fmt.Errorf("features: input dimension must be positive, got %d", d)
	}
	m := cfg.Features
	if k == kindSinCos || k == kindHyperbolic {
		if m%2 != 0 {
			return nil, fmt.Errorf("features: the %s form needs an even number of features, got %d", form, m)
		}
		m /= 2
	}
	if kname == "rbf" {
		if !(cfg.Gamma > 0) || math.IsInf(cfg.Gamma, 0) {
			return nil, fmt.Errorf("features: rbf gamma must be positive and finite, got %v", cfg.Gamma)
		}
	}
	s := sampler.Or(cfg.Sampler)
	w, err := s.Sample(m, d, cfg.Seed)
	if err != nil {
		return nil, err
	}
	if kname == "rbf" {
		w.Scale(math.Sqrt(2*cfg.Gamma), w)
	}
	return fromW(cfg, kname, form, k, w, s.Name())
}

// FromProjection builds the map of cfg around a given projection w (m×d,
// rows as drawn for a unit bandwidth: the rbf bandwidth √(2γ) is applied
// here, as New does after sampling). cfg.Features must be m, or 2m for the
// sincos, trig and hyperbolic forms; cfg.Sampler is ignored (its name is
// recorded as "given"). The cos form draws its phases from cfg.Seed.
func FromProjection(cfg Config, w *mat.Dense) (*Map, error) {
	kname, form, k, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	if err := checkTemperature(cfg, kname, true); err != nil {
		return nil, err
	}
	m, _ := w.Dims()
	want := m
	if k == kindSinCos || k == kindHyperbolic {
		want = 2 * m
	}
	if cfg.Features != want {
		return nil, fmt.Errorf("features: %d features requested, form %s with %d projections gives %d", cfg.Features, form, m, want)
	}
	if kname == "rbf" {
		if !(cfg.Gamma > 0) || math.IsInf(cfg.Gamma, 0) {
			return nil, fmt.Errorf("features: rbf gamma must be positive and finite, got %v", cfg.Gamma)
		}
	}
	wc := mat.DenseCopyOf(w)
	if kname == "rbf" {
		wc.Scale(math.Sqrt(2*cfg.Gamma), wc)
	}
	name := "given"
	if cfg.Sampler != nil {
		name = cfg.Sampler.Name()
	}
	return fromW(cfg, kname, form, k, wc, name)
}

// fromW finishes New and FromProjection: w is m×d with the bandwidth
// included.
func fromW(cfg Config, kname, form string, k kind, w *mat.Dense, samplerName string) (*Map, error) {
	m, d := w.Dims()
	var b []float64
	if k == kindCos {
		rng := rng.NewStream(cfg.Seed, rng.Bias) // independent stream for the bias
		b = make([]float64, m)
		for i := range b {
			b[i] = 2 * math.Pi * rng.Float64()
		}
	}
	spec := Spec{
		Kernel: kname, Form: form, Features: cfg.Features, Sampler: samplerName, Seed: cfg.Seed,
		Float32: cfg.Float32, InputDim: d, M: m, W: w.RawMatrix().Data, B: b,
	}
	if kname == "rbf" {
		spec.Gamma = cfg.Gamma
	}
	return FromSpec(spec)
}

// FromSpec rebuilds a Map from its Spec, as stored in a model file. It
// validates every field.
func FromSpec(s Spec) (*Map, error) {
	kname, form, k, err := resolve(Config{Kernel: s.Kernel, Form: s.Form})
	if err != nil {
		return nil, err
	}
	// Every size is checked against its limit, and the product m·d for
	// overflow, before it is compared with the stored slices or used.
	if err := limits.Dim("features: spec input dimension", s.InputDim); err != nil {
		return nil, err
	}
	if err := limits.Dim("features: spec number of projections m", s.M); err != nil {
		return nil, err
	}
	if err := limits.Dim("features: spec number of features", s.Features); err != nil {
		return nil, err
	}
	want := s.M
	if k == kindSinCos || k == kindHyperbolic {
		want = 2 * s.M // s.M ≤ limits.MaxDim: no overflow
	}
	if s.Features != want {
		return nil, fmt.Errorf("features: spec has %d features, form %s with %d projections needs %d", s.Features, form, s.M, want)
	}
	nw, err := limits.Matrix("features: spec projection", s.M, s.InputDim)
	if err != nil {
		return nil, err
	}
	if len(s.W) != nw {
		return nil, fmt.Errorf("features: spec projection has %d values, want %d×%d", len(s.W), s.M, s.InputDim)
	}
	for _, v := range s.W {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("features: spec projection has a non-finite value")
		}
	}
	if k == kindCos && len(s.B) != s.M {
		return nil, fmt.Errorf("features: spec bias has %d values, want %d", len(s.B), s.M)
	}
	for _, v := range s.B {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("features: spec bias has a non-finite value")
		}
	}
	if kname == "rbf" && (!(s.Gamma > 0) || math.IsInf(s.Gamma, 0)) {
		return nil, fmt.Errorf("features: spec rbf gamma must be positive and finite, got %v", s.Gamma)
	}
	s.Kernel, s.Form = kname, form
	mp := &Map{spec: s, kind: k, m: s.M, d: s.InputDim, w: mat.NewDense(s.M, s.InputDim, s.W)}
	if k == kindCos {
		mp.b = s.B
	}
	lm := 0.5 * math.Log(float64(s.M))
	switch k {
	case kindCos, kindHeaviside, kindReLU, kindReLU2:
		mp.logPre = 0.5*math.Ln2 - lm
	case kindSinCos, kindPositive:
		mp.logPre = -lm
	case kindHyperbolic:
		mp.logPre = -0.5*math.Ln2 - lm
	}
	switch {
	case kname == "softmax" && k == kindSinCos:
		mp.normCoef = 0.5
	case kname == "softmax":
		mp.normCoef = -0.5
	case kname == "rbf" && (k == kindPositive || k == kindHyperbolic):
		mp.normCoef = -2 * s.Gamma // −‖x'‖² with x' = √(2γ)x
	}
	if s.Float32 {
		mp.w32 = make([]float32, len(s.W))
		for i, v := range s.W {
			mp.w32[i] = float32(v)
		}
	}
	return mp, nil
}

// Spec returns the map's serialisable description. The returned slices are
// shared with the map and must not be modified.
func (mp *Map) Spec() Spec { return mp.spec }

// Dim returns the output dimension D.
func (mp *Map) Dim() int { return mp.spec.Features }

// InputDim returns the input dimension d.
func (mp *Map) InputDim() int { return mp.d }

// Projections returns m, the number of random projections.
func (mp *Map) Projections() int { return mp.m }

// W returns the m×d projection matrix (bandwidth included). It is shared
// with the map and must not be modified.
func (mp *Map) W() *mat.Dense { return mp.w }

// Kernel returns the exact kernel the map estimates.
func (mp *Map) Kernel() kernel.Kernel {
	switch mp.spec.Kernel {
	case "rbf":
		return kernel.RBF{Gamma: mp.spec.Gamma}
	case "softmax":
		return kernel.Softmax{}
	case "arccos0":
		return kernel.ArcCos{Order: 0}
	case "arccos1":
		return kernel.ArcCos{Order: 1}
	}
	return kernel.ArcCos{Order: 2}
}

// String describes the map, e.g. "rbf/cos D=512 (orf)".
func (mp *Map) String() string {
	return fmt.Sprintf("%s/%s D=%d (%s)", mp.spec.Kernel, mp.spec.Form, mp.spec.Features, mp.spec.Sampler)
}

// ErrOverflow is returned by Transform when a feature exceeds the float64
// range; TransformScaled handles such inputs.
var ErrOverflow = errors.New("features: feature value overflows float64 (input norm too large for this map; use TransformScaled or scale the inputs)")

// chunkRows is the number of rows projected by one GEMM call; the projected
// block (chunkRows×m) stays in cache while the element-wise functions run.
const chunkRows = 64

// Transform writes z(x_i) into row i of dst. It returns ErrOverflow if a
// feature is not representable and an error for mismatched shapes or
// non-finite inputs.
func (mp *Map) Transform(dst, x *mat.Dense) error {
	return mp.transform(dst, x, nil)
}

// TransformScaled writes ẑ(x_i) = exp(−s_i)·z(x_i) into row i of dst and
// returns the s_i, chosen so that the largest feature magnitude of each row
// is at most 1 for the exponential forms (s_i = 0 for the bounded forms).
// Thus z(x)ᵀz(y) = exp(s_x + s_y)·ẑ(x)ᵀẑ(y) exactly, and ẑ never overflows.
func (mp *Map) TransformScaled(dst, x *mat.Dense) ([]float64, error) {
	n, _ := x.Dims()
	s := make([]float64, n)
	return s, mp.transform(dst, x, s)
}

type scratch struct {
	a   []float64
	a32 []float32
	x32 []float32
	z   []float64 // one block of float64 features (Transform32 of the forms without a float32 kernel)
}

// scratchPool keeps the per-worker projection buffers between Transform
// calls, which package model makes for every block of a chunk.
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Transform32 writes the features z(x_i) into row i of dst in single
// precision: the form-specific function is evaluated in double precision
// from the projection (single precision if the map's Config.Float32 is
// set) and rounded once to float32. It returns ErrOverflow if a feature
// overflows float64 and an error for mismatched shapes or non-finite
// inputs; a feature beyond the float32 range becomes ±Inf.
func (mp *Map) Transform32(dst blas32.General, x *mat.Dense) error {
	n, _ := x.Dims()
	if dst.Rows != n || dst.Cols != mp.spec.Features || dst.Stride < dst.Cols || (n > 0 && len(dst.Data) < (n-1)*dst.Stride+dst.Cols) {
		return fmt.Errorf("features: destination is %d×%d (stride %d, %d values), want %d×%d", dst.Rows, dst.Cols, dst.Stride, len(dst.Data), n, mp.spec.Features)
	}
	return mp.run(x, nil, func(sc *scratch, lo, hi int, projected *mat.Dense) bool {
		return mp.chunk32(sc, dst, x, lo, hi, projected)
	})
}

// chunk32 is chunk for single-precision output.
func (mp *Map) chunk32(sc *scratch, dst blas32.General, x *mat.Dense, lo, hi int, projected *mat.Dense) bool {
	D := mp.spec.Features
	if mp.kind == kindCos {
		m := mp.m
		a := mp.projection(sc, x, lo, hi, projected)
		c := math.Exp(mp.logPre)
		for i := 0; i < hi-lo; i++ {
			cosRow32(dst.Data[(lo+i)*dst.Stride:(lo+i)*dst.Stride+D], a[i*m:(i+1)*m], mp.b, c)
		}
		return true
	}
	rows := hi - lo
	if cap(sc.z) < rows*D {
		sc.z = make([]float64, chunkRows*D)
	}
	z := mat.NewDense(rows, D, sc.z[:rows*D])
	var p *mat.Dense
	if projected != nil {
		p = projected.Slice(lo, hi, 0, mp.m).(*mat.Dense)
	}
	ok := mp.chunk(sc, z, x.Slice(lo, hi, 0, mp.d).(*mat.Dense), 0, rows, nil, p)
	for i := 0; i < rows; i++ {
		out := dst.Data[(lo+i)*dst.Stride : (lo+i)*dst.Stride+D]
		for j, v := range z.RawRowView(i) {
			out[j] = float32(v)
		}
	}
	return ok
}

func (mp *Map) transform(dst, x *mat.Dense, logScale []float64) error {
	n, _ := x.Dims()
	dn, dd := dst.Dims()
	if dn != n || dd != mp.spec.Features {
		return fmt.Errorf("features: destination is %d×%d, want %d×%d", dn, dd, n, mp.spec.Features)
	}
	return mp.run(x, logScale, func(sc *scratch, lo, hi int, projected *mat.Dense) bool {
		return mp.chunk(sc, dst, x, lo, hi, logScale, projected)
	})
}

// run checks x, computes the projection of a projector map, and calls
// chunk for the chunks of chunkRows rows on all cores; it returns
// ErrOverflow if a chunk reports an overflow.
func (mp *Map) run(x *mat.Dense, logScale []float64, chunk func(sc *scratch, lo, hi int, projected *mat.Dense) bool) error {
	n, d := x.Dims()
	if d != mp.d {
		return fmt.Errorf("features: input has %d columns, map expects %d", d, mp.d)
	}
	xr := x.RawMatrix()
	for i := 0; i < n; i++ {
		for _, v := range xr.Data[i*xr.Stride : i*xr.Stride+d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("features: input row %d has a non-finite value", i)
			}
		}
	}
	workers := parallel.Workers((n + chunkRows - 1) / chunkRows)
	bufs := make([]*scratch, workers)
	for i := range bufs {
		bufs[i] = scratchPool.Get().(*scratch)
	}
	defer func() {
		for _, b := range bufs {
			scratchPool.Put(b)
		}
	}()
	overflow := make([]bool, workers)
	var projected *mat.Dense
	if mp.proj != nil {
		projected = mat.NewDense(n, mp.m, nil)
		if err := mp.proj.ProjectFrom(projected, x, 0); err != nil {
			return err
		}
	}
	parallel.Chunks(n, chunkRows, func(wk, lo, hi int) {
		if !chunk(bufs[wk], lo, hi, projected) {
			overflow[wk] = true
		}
	})
	for _, o := range overflow {
		if o {
			return ErrOverflow
		}
	}
	return nil
}

// projection returns the projection of rows [lo, hi) (rows×m, stride m):
// from projected if it is not nil, else computed into sc.
func (mp *Map) projection(sc *scratch, x *mat.Dense, lo, hi int, projected *mat.Dense) []float64 {
	if projected != nil {
		return projected.RawMatrix().Data[lo*mp.m : hi*mp.m]
	}
	return mp.project(sc, x, lo, hi)
}

// project computes A = X[lo:hi] Wᵀ into sc.a (rows×m, stride m).
func (mp *Map) project(sc *scratch, x *mat.Dense, lo, hi int) []float64 {
	rows := hi - lo
	m, d := mp.m, mp.d
	if cap(sc.a) < rows*m {
		sc.a = make([]float64, chunkRows*m)
	}
	a := sc.a[:rows*m]
	xr := x.RawMatrix()
	if mp.w32 == nil {
		xs := blas64.General{Rows: rows, Cols: d, Stride: xr.Stride, Data: xr.Data[lo*xr.Stride:]}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, xs, mp.w.RawMatrix(), 0,
			blas64.General{Rows: rows, Cols: m, Stride: m, Data: a})
		return a
	}
	if cap(sc.x32) < rows*d {
		sc.x32 = make([]float32, chunkRows*d)
		sc.a32 = make([]float32, chunkRows*m)
	}
	x32 := sc.x32[:rows*d]
	a32 := sc.a32[:rows*m]
	for i := 0; i < rows; i++ {
		src := xr.Data[(lo+i)*xr.Stride : (lo+i)*xr.Stride+d]
		for j, v := range src {
			x32[i*d+j] = float32(v)
		}
	}
	blas32.Gemm(blas.NoTrans, blas.Trans, 1,
		blas32.General{Rows: rows, Cols: d, Stride: d, Data: x32},
		blas32.General{Rows: m, Cols: d, Stride: d, Data: mp.w32}, 0,
		blas32.General{Rows: rows, Cols: m, Stride: m, Data: a32})
	for i, v := range a32 {
		a[i] = float64(v)
	}
	return a
}

// chunk transforms rows [lo, hi); it reports false on overflow. projected,
// if not nil, holds the whole batch's projection.
func (mp *Map) chunk(sc *scratch, dst, x *mat.Dense, lo, hi int, logScale []float64, projected *mat.Dense) bool {
	m := mp.m
	a := mp.projection(sc, x, lo, hi, projected)
	dr := dst.RawMatrix()
	ok := true
	for i := 0; i < hi-lo; i++ {
		ai := a[i*m : (i+1)*m]
		out := dr.Data[(lo+i)*dr.Stride : (lo+i)*dr.Stride+mp.spec.Features]
		// ‖x‖², for h(x) and as the overflow guard: finite inputs beyond
		// about 1e154 overflow it, and their projections may overflow to
		// ±Inf (NaN features after cos or exp), so such a row is an
		// overflow; below that, |wᵀx| ≤ ‖w‖‖x‖ stays finite.
		xi := x.RawRowView(lo + i)
		var s float64
		for _, v := range xi {
			s += v * v
		}
		if math.IsInf(s, 0) || math.IsNaN(s) {
			ok = false
			continue
		}
		if mp.w32 != nil && !finite(ai) { // float32 projections overflow sooner
			ok = false
			continue
		}
		var q float64 // log h(x) without the constant prefactor
		if mp.normCoef != 0 {
			q = mp.normCoef * s
		}
		switch mp.kind {
		case kindCos:
			cosRow(out, ai, mp.b, math.Exp(mp.logPre))
		case kindSinCos:
			lp := mp.logPre + q
			if logScale != nil {
				logScale[lo+i] = lp
				lp = 0
			}
			c := math.Exp(lp)
			if math.IsInf(c, 0) {
				ok = false
			}
			for j, v := range ai {
				s, co := vmath.Sincos(v)
				out[j] = c * s
				out[m+j] = c * co
			}
		case kindPositive, kindHyperbolic:
			off := mp.logPre + q
			if logScale != nil {
				mx := math.Inf(-1)
				for _, v := range ai {
					if mp.kind == kindHyperbolic {
						v = math.Abs(v)
					}
					if v > mx { // the projections are finite: inputs are checked
						mx = v
					}
				}
				logScale[lo+i] = off + mx
				off = -mx
			}
			for j, v := range ai {
				out[j] = v + off
			}
			if mp.kind == kindHyperbolic {
				for j, v := range ai {
					out[m+j] = -v + off
				}
			}
			e := out[:m]
			if mp.kind == kindHyperbolic {
				e = out[:2*m]
			}
			vmath.Exp(e, e)
			for _, v := range e {
				if math.IsInf(v, 0) {
					ok = false
				}
			}
		case kindHeaviside:
			c := math.Exp(mp.logPre)
			for j, v := range ai {
				if v > 0 {
					out[j] = c
				} else {
					out[j] = 0
				}
			}
		case kindReLU:
			c := math.Exp(mp.logPre)
			for j, v := range ai {
				out[j] = c * math.Max(v, 0)
			}
		case kindReLU2:
			c := math.Exp(mp.logPre)
			for j, v := range ai {
				v = math.Max(v, 0)
				out[j] = c * v * v
				if math.IsInf(out[j], 0) {
					ok = false
				}
			}
		}
	}
	return ok
}

// Estimate returns the kernel estimate z(x)ᵀz(y) for two single inputs.
func (mp *Map) Estimate(x, y []float64) (float64, error) {
	if len(x) != mp.d || len(y) != mp.d {
		return 0, fmt.Errorf("features: inputs have lengths %d and %d, map expects %d", len(x), len(y), mp.d)
	}
	in := mat.NewDense(2, mp.d, nil)
	in.SetRow(0, x)
	in.SetRow(1, y)
	z := mat.NewDense(2, mp.Dim(), nil)
	s, err := mp.TransformScaled(z, in)
	if err != nil {
		return 0, err
	}
	return math.Exp(s[0]+s[1]) * mat.Dot(z.RowView(0), z.RowView(1)), nil
}

// finite reports whether every value of v is finite.
func finite(v []float64) bool {
	for _, x := range v {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return false
		}
	}
	return true
}
