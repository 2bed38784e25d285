package features

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/kernel"
)

// This file holds the temperature of the softmax kernel, exp(xᵀy/τ). It is
// implemented once, for every map: a map of exp(xᵀy) applied to x/√τ
// estimates exp((x/√τ)ᵀ(y/√τ)) = exp(xᵀy/τ). Temper wraps a map so that
// it scales its inputs by 1/√τ before the map sees them; data-fitted maps
// (the OPRF and DERF maps of package prf, Nyström landmarks) are fitted on
// the scaled rows by Registry.Pair.

// TemperedSpecKind is the kind under which a tempered map's spec is stored
// (see Encoder): a TemperedSpec holding the temperature and the inner
// map's kind and spec. Every Registry decodes it.
const TemperedSpecKind = "tempered"

// TemperedSpec is the stored form of a tempered map.
type TemperedSpec struct {
	// Temperature is τ > 0, finite and not 1.
	Temperature float64 `json:"temperature"`
	// MapKind and Map are the kind and spec of the inner (unscaled) map.
	MapKind string          `json:"map_kind"`
	Map     json.RawMessage `json:"map"`
}

// CheckTemperature returns an error unless tau is a valid temperature:
// positive and finite (0 < τ < +Inf).
func CheckTemperature(tau float64) error {
	if !(tau > 0) || math.IsInf(tau, 0) {
		return fmt.Errorf("features: temperature must be positive and finite (0 < τ < +Inf), got %v", tau)
	}
	return nil
}

// AutoTemperature returns the default temperature for inputs of dimension
// d: τ = d/2. Then exp(xᵀy/τ) = exp(‖x‖²/d)·exp(−‖x−y‖²/d)·exp(‖y‖²/d):
// up to the rows' own factors it is the Gaussian kernel of bandwidth
// γ = 1/(2τ) = 1/d, the default of the rbf maps (and scikit-learn's
// gamma='scale' on standardised rows), so that on standardised rows
// (‖x‖² ≈ d) xᵀy/τ stays of order 1 whatever d. The Performer's d^(−1/4)
// scaling of each side (τ = √d) leaves xᵀy/τ of order √d. Measured on the
// letter data (d = 16, D = 512, three seeds; docs/estimators.md), d/2 gives
// the best mean accuracy of τ ∈ {1, 2, √d, d/2, 3d/4, d, 2d, 4d} over the
// positive, OPRF, simplex and trigonometric maps, within one point of rbf
// (τ = √d loses up to 12 points, τ = d up to 2); on a 64-column version of
// the data (four noisy copies of each column) d/2 and d are best and √d
// loses 7 to 50 points. d must be positive.
func AutoTemperature(d int) float64 {
	if d <= 0 {
		panic(fmt.Sprintf("features: AutoTemperature of dimension %d", d))
	}
	return float64(d) / 2
}

// tempered is the map x ↦ z(x/√τ) of Temper.
type tempered struct {
	t     Transformer
	tau   float64
	scale float64 // 1/√τ
}

// adaptiveTempered is a tempered map whose inner map is Adaptive.
type adaptiveTempered struct{ *tempered }

// Temper returns the map x ↦ z(x/√τ) of the map z = t: where t estimates a
// kernel k(x, y), the result estimates k(x/√τ, y/√τ), which for the
// softmax kernel exp(xᵀy) is the tempered kernel exp(xᵀy/τ). τ = 1 returns
// t itself; a tempered t is tempered once, at the product of the two
// temperatures. tau must be positive and finite (CheckTemperature).
//
// The result implements the contract as t does: Transform and
// Transform32 scale a copy of the rows (n×d values) and call t's; an input
// that overflows when scaled (τ < 1) is ErrOverflow. TransformScaled
// returns t's log-scales, or zeros (the features themselves) if t has
// none. Kernel returns TemperedKernel{t's kernel, τ} (nil if t has no
// exact kernel). WithProjectors runs t's projections on the projectors
// (ErrNoProjector if t has none). If t is Adaptive, so is the result: it
// fits t to the scaled queries and keys. EncodeSpec stores a
// TemperedSpec under TemperedSpecKind, which every Registry decodes. The
// device forms of package device do not know tempered maps. Untemper
// recovers t and τ.
func Temper(t Transformer, tau float64) (Transformer, error) {
	inner, t0 := Untemper(t)
	tau, err := composeTemperature(t0, tau)
	if err != nil {
		return nil, err
	}
	if t = inner; tau == 1 {
		return t, nil
	}
	tm := &tempered{t: t, tau: tau, scale: 1 / math.Sqrt(tau)}
	if _, ok := t.(Adaptive); ok {
		return adaptiveTempered{tm}, nil
	}
	return tm, nil
}

// composeTemperature returns the temperature t0·τ of a map already at t0
// tempered again by τ, checking τ and the product (CheckTemperature).
func composeTemperature(t0, tau float64) (float64, error) {
	if err := CheckTemperature(tau); err != nil {
		return 0, err
	}
	if t0 == 1 {
		return tau, nil
	}
	if err := CheckTemperature(t0 * tau); err != nil {
		return 0, err
	}
	return t0 * tau, nil
}

// Untemper returns the inner map and the temperature of a map made by
// Temper, and t itself with τ = 1 for any other map.
func Untemper(t Transformer) (Transformer, float64) {
	switch tm := t.(type) {
	case *tempered:
		return tm.t, tm.tau
	case adaptiveTempered:
		return tm.t, tm.tau
	}
	return t, 1
}

// scaleRows returns s·x in a new matrix (x itself for s = 1 or no rows),
// or ErrOverflow if a finite value overflows.
func scaleRows(x *mat.Dense, s float64) (*mat.Dense, error) {
	n, d := x.Dims()
	if s == 1 || n == 0 || d == 0 {
		return x, nil
	}
	out := mat.NewDense(n, d, nil)
	or := out.RawMatrix()
	xr := x.RawMatrix()
	for i := 0; i < n; i++ {
		dst := or.Data[i*or.Stride : i*or.Stride+d]
		for j, v := range xr.Data[i*xr.Stride : i*xr.Stride+d] {
			dst[j] = v * s
			if math.IsInf(dst[j], 0) && !math.IsInf(v, 0) {
				return nil, ErrOverflow
			}
		}
	}
	return out, nil
}

func (tm *tempered) Dim() int      { return tm.t.Dim() }
func (tm *tempered) InputDim() int { return tm.t.InputDim() }

// Transform writes z(x_i/√τ) into row i of dst.
func (tm *tempered) Transform(dst, x *mat.Dense) error {
	xs, err := scaleRows(x, tm.scale)
	if err != nil {
		return err
	}
	return tm.t.Transform(dst, xs)
}

// TransformScaled is the inner map's TransformScaled of x/√τ, or its
// Transform with log-scales 0.
func (tm *tempered) TransformScaled(dst, x *mat.Dense) ([]float64, error) {
	xs, err := scaleRows(x, tm.scale)
	if err != nil {
		return nil, err
	}
	if st, ok := tm.t.(ScaledTransformer); ok {
		return st.TransformScaled(dst, xs)
	}
	n, _ := x.Dims()
	return make([]float64, n), tm.t.Transform(dst, xs)
}

// transform32 is the single-precision transform of maps such as *Map.
type transform32 interface {
	Transform32(dst blas32.General, x *mat.Dense) error
}

// Transform32 is the inner map's Transform32 of x/√τ, or its Transform
// rounded to float32.
func (tm *tempered) Transform32(dst blas32.General, x *mat.Dense) error {
	xs, err := scaleRows(x, tm.scale)
	if err != nil {
		return err
	}
	if t32, ok := tm.t.(transform32); ok {
		return t32.Transform32(dst, xs)
	}
	n, _ := x.Dims()
	D := tm.t.Dim()
	if dst.Rows != n || dst.Cols != D || dst.Stride < dst.Cols || (n > 0 && len(dst.Data) < (n-1)*dst.Stride+dst.Cols) {
		return fmt.Errorf("features: destination is %d×%d (stride %d, %d values), want %d×%d", dst.Rows, dst.Cols, dst.Stride, len(dst.Data), n, D)
	}
	if n == 0 {
		return nil
	}
	z := mat.NewDense(n, D, nil)
	if err := tm.t.Transform(z, xs); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		out := dst.Data[i*dst.Stride : i*dst.Stride+D]
		for j, v := range z.RawRowView(i) {
			out[j] = float32(v)
		}
	}
	return nil
}

// Kernel returns TemperedKernel of the inner map's kernel, or nil if the
// inner map has no exact kernel.
func (tm *tempered) Kernel() kernel.Kernel {
	ke, ok := tm.t.(KernelEstimator)
	if !ok {
		return nil
	}
	return TemperedKernel{Kernel: ke.Kernel(), Temperature: tm.tau}
}

// WithProjectors tempers the inner map's WithProjectors.
func (tm *tempered) WithProjectors(np NewProjector) (Transformer, error) {
	p, err := WithProjectors(tm.t, np)
	if err != nil {
		return nil, err
	}
	return Temper(p, tm.tau)
}

// EncodeSpec stores the temperature and the inner map's kind and spec as
// a TemperedSpec.
func (tm *tempered) EncodeSpec() (string, json.RawMessage, error) {
	kind, spec, err := Encode(tm.t)
	if err != nil {
		return "", nil, err
	}
	b, err := json.Marshal(TemperedSpec{Temperature: tm.tau, MapKind: kind, Map: spec})
	return TemperedSpecKind, b, err
}

// String describes the map as the inner map's description and τ.
func (tm *tempered) String() string { return fmt.Sprintf("%v τ=%g", tm.t, tm.tau) }

// Adapt fits the inner map to the scaled queries and keys and tempers the
// fitted pair.
func (a adaptiveTempered) Adapt(x, y *mat.Dense) (Pair, error) {
	return adaptScaled(a.t.(Adaptive), x, y, a.scale, a.tau)
}

// adaptScaled fits inner to s·x and s·y (s = 1/√τ) and tempers the
// fitted pair by τ: the Adapt of the tempered maps and pairs.
func adaptScaled(inner Adaptive, x, y *mat.Dense, s, tau float64) (Pair, error) {
	xs, err := scaleRows(x, s)
	if err != nil {
		return nil, err
	}
	ys, err := scaleRows(y, s)
	if err != nil {
		return nil, err
	}
	p, err := inner.Adapt(xs, ys)
	if err != nil {
		return nil, err
	}
	return TemperPair(p, tau)
}

// temperedPair is the pair (x ↦ Φ₁(x/√τ), y ↦ Φ₂(y/√τ)) of TemperPair.
type temperedPair struct {
	p     Pair
	tau   float64
	scale float64
}

// adaptiveTemperedPair is a tempered pair whose inner pair is Adaptive.
type adaptiveTemperedPair struct{ *temperedPair }

// TemperPair is Temper for a Pair: the result's estimate is
// Φ₁(x/√τ)ᵀΦ₂(y/√τ). A symmetric pair (Symmetric) stays symmetric, around
// Temper of its map; τ = 1 returns p. The pair implements Kernel
// (TemperedKernel; nil if p has no exact kernel), WithProjectors and, if p
// is Adaptive, Adapt, as Temper's maps do. UntemperPair recovers p and τ.
func TemperPair(p Pair, tau float64) (Pair, error) {
	if t, ok := AsTransformer(p); ok {
		tt, err := Temper(t, tau)
		if err != nil {
			return nil, err
		}
		return Symmetric(tt), nil
	}
	inner, t0 := UntemperPair(p)
	tau, err := composeTemperature(t0, tau)
	if err != nil {
		return nil, err
	}
	if p = inner; tau == 1 {
		return p, nil
	}
	tp := &temperedPair{p: p, tau: tau, scale: 1 / math.Sqrt(tau)}
	if _, ok := p.(Adaptive); ok {
		return adaptiveTemperedPair{tp}, nil
	}
	return tp, nil
}

// UntemperPair returns the inner pair and the temperature of an
// asymmetric pair made by TemperPair, and p itself with τ = 1 for any
// other pair (a symmetric pair's map is untempered by Untemper).
func UntemperPair(p Pair) (Pair, float64) {
	switch tp := p.(type) {
	case *temperedPair:
		return tp.p, tp.tau
	case adaptiveTemperedPair:
		return tp.p, tp.tau
	}
	return p, 1
}

func (tp *temperedPair) Dim() int      { return tp.p.Dim() }
func (tp *temperedPair) InputDim() int { return tp.p.InputDim() }

// Query writes Φ₁(x_i/√τ) into row i of dst.
func (tp *temperedPair) Query(dst, x *mat.Dense) error {
	xs, err := scaleRows(x, tp.scale)
	if err != nil {
		return err
	}
	return tp.p.Query(dst, xs)
}

// Key writes Φ₂(y_i/√τ) into row i of dst.
func (tp *temperedPair) Key(dst, y *mat.Dense) error {
	ys, err := scaleRows(y, tp.scale)
	if err != nil {
		return err
	}
	return tp.p.Key(dst, ys)
}

// Kernel returns TemperedKernel of the inner pair's kernel, or nil.
func (tp *temperedPair) Kernel() kernel.Kernel {
	ke, ok := tp.p.(KernelEstimator)
	if !ok {
		return nil
	}
	return TemperedKernel{Kernel: ke.Kernel(), Temperature: tp.tau}
}

// WithProjectors tempers the inner pair's WithProjectors.
func (tp *temperedPair) WithProjectors(np NewProjector) (Pair, error) {
	p, err := PairWithProjectors(tp.p, np)
	if err != nil {
		return nil, err
	}
	return TemperPair(p, tp.tau)
}

// String describes the pair as the inner pair's description and τ.
func (tp *temperedPair) String() string { return fmt.Sprintf("%v τ=%g", tp.p, tp.tau) }

// Adapt fits the inner pair to the scaled queries and keys.
func (a adaptiveTemperedPair) Adapt(x, y *mat.Dense) (Pair, error) {
	return adaptScaled(a.p.(Adaptive), x, y, a.scale, a.tau)
}

// TemperedKernel is the kernel k(x/√τ, y/√τ) that a tempered map
// estimates; for k = kernel.Softmax it is exp(xᵀy/τ). The inputs are
// scaled by 1/√τ, rounded as Temper's maps scale them.
type TemperedKernel struct {
	Kernel      kernel.Kernel
	Temperature float64
}

// Eval returns k(x/√τ, y/√τ).
func (k TemperedKernel) Eval(x, y []float64) float64 {
	s := 1 / math.Sqrt(k.Temperature)
	xs := make([]float64, len(x))
	ys := make([]float64, len(y))
	for i, v := range x {
		xs[i] = v * s
	}
	for i, v := range y {
		ys[i] = v * s
	}
	return k.Kernel.Eval(xs, ys)
}

// Gram returns the n×p matrix of k(x_i/√τ, y_j/√τ): kernel.Gram of the
// inner kernel on the scaled rows (one GEMM for the softmax kernel).
func (k TemperedKernel) Gram(x, y *mat.Dense) (*mat.Dense, error) {
	if err := CheckTemperature(k.Temperature); err != nil {
		return nil, err
	}
	if k.Kernel == nil {
		return nil, errors.New("features: tempered kernel without a kernel")
	}
	s := 1 / math.Sqrt(k.Temperature)
	xs, err := scaleRows(x, s)
	if err != nil {
		return nil, err
	}
	ys, err := scaleRows(y, s)
	if err != nil {
		return nil, err
	}
	return kernel.Gram(k.Kernel, xs, ys)
}

// decodeTempered rebuilds a tempered map from its TemperedSpec, decoding
// the inner map with r.
func (r *Registry) decodeTempered(raw json.RawMessage) (Transformer, error) {
	var s TemperedSpec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("features: bad tempered map spec: %w", err)
	}
	if err := CheckTemperature(s.Temperature); err != nil {
		return nil, err
	}
	if s.Temperature == 1 {
		return nil, errors.New("features: tempered map spec with temperature 1 (an untempered map is stored as itself)")
	}
	if s.MapKind == TemperedSpecKind {
		return nil, errors.New("features: tempered map spec holds another tempered map (a map is tempered once)")
	}
	inner, err := r.Decode(s.MapKind, s.Map)
	if err != nil {
		return nil, err
	}
	return Temper(inner, s.Temperature)
}

// temperOptions returns the options of a softmax-kernel map of the
// unscaled kernel for Registry.Pair with o.Temperature = τ: the sample
// rows, cluster centres and typical norm scaled by 1/√τ.
func temperOptions(o Options) (Options, error) {
	tau := o.Temperature
	if err := CheckTemperature(tau); err != nil {
		return Options{}, err
	}
	o.Temperature = 0
	s := 1 / math.Sqrt(tau)
	var err error
	for _, m := range []**mat.Dense{&o.Data, &o.QueryCentres, &o.KeyCentres} {
		if *m != nil {
			if *m, err = scaleRows(*m, s); err != nil {
				return Options{}, fmt.Errorf("features: sample rows or centres scaled by the temperature: %w", err)
			}
		}
	}
	norm := o.Norm
	if norm == 0 {
		norm = 1
	}
	if o.Norm = norm * s; o.Norm == 0 || math.IsInf(o.Norm, 0) {
		return Options{}, fmt.Errorf("features: typical norm %v scaled by 1/√τ (τ = %v) is not a positive finite number", norm, tau)
	}
	return o, nil
}
