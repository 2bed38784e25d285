package snnk

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/sampler"
)

// Towers is a pair of input and parameter towers: Φ(x)ᵀΨ(w, b) estimates
// one layer output f(wᵀx + b). The input tower Φ is a feature map of the
// shared contract (features.Transformer: Transform writes Φ of rows), so an
// SNNK input tower can be used wherever a map is, a ridge fit or the analog
// projector included; Params writes the parameter tower Ψ. URF and ReLU
// implement it.
type Towers interface {
	features.Transformer
	// Params writes Ψ(w_j, b_j) for the rows w_j of w and biases b (nil: 0).
	Params(dst, w *mat.Dense, b []float64) error
}

// ReLU is the ReLU-SNNK tower pair of Sec. 3.2: Φ(x) = ReLU(Gx)/√m and
// Ψ(w) = ReLU(Gw)/√m (the bias is ignored), estimating ½K₁(x, w). Each
// tower is the arc-cosine order-1 random feature map of package features
// (√2·ReLU(Gx)/√m) scaled by 1/√2.
type ReLU struct {
	mp *features.Map // arccos1/relu on G
}

// NewReLU draws G (m×d) with smp (nil: sampler.Default()).
func NewReLU(d, m int, smp sampler.Sampler, seed uint64) (*ReLU, error) {
	if d <= 0 || m <= 0 {
		return nil, fmt.Errorf("snnk: dimension and features must be positive, got d=%d, m=%d", d, m)
	}
	mp, err := features.New(features.Config{Kernel: "arccos1", Features: m, Sampler: smp, Seed: seed}, d)
	if err != nil {
		return nil, err
	}
	return &ReLU{mp: mp}, nil
}

// Dim returns m.
func (r *ReLU) Dim() int { return r.mp.Dim() }

// InputDim returns d.
func (r *ReLU) InputDim() int { return r.mp.InputDim() }

// Transform writes Φ(x) = ReLU(Gx)/√m.
func (r *ReLU) Transform(dst, x *mat.Dense) error { return r.side(dst, x) }

// Params writes Ψ(w) = ReLU(Gw)/√m.
func (r *ReLU) Params(dst, w *mat.Dense, _ []float64) error { return r.side(dst, w) }

func (r *ReLU) side(dst, x *mat.Dense) error {
	if err := r.mp.Transform(dst, x); err != nil {
		return fmt.Errorf("snnk: %w", err)
	}
	dst.Scale(1/math.Sqrt2, dst)
	return nil
}

// WithProjectors returns towers whose projection Gx runs on a projector made
// by np (the projector seam of package features).
func (r *ReLU) WithProjectors(np features.NewProjector) (features.Transformer, error) {
	t, err := r.mp.WithProjectors(np)
	if err != nil {
		return nil, err
	}
	return &ReLU{mp: t.(*features.Map)}, nil
}

// ReLUSpecKind is the kind under which ReLU towers are stored in model
// files.
const ReLUSpecKind = "snnk-relu"

// EncodeSpec stores the towers as their arc-cosine map's spec.
func (r *ReLU) EncodeSpec() (string, json.RawMessage, error) {
	_, raw, err := r.mp.EncodeSpec()
	return ReLUSpecKind, raw, err
}

// DecodeReLU is the decoder of ReLUSpecKind.
func DecodeReLU(raw json.RawMessage) (features.Transformer, error) {
	t, err := features.DecodeSpec(raw)
	if err != nil {
		return nil, err
	}
	mp := t.(*features.Map)
	if sp := mp.Spec(); sp.Kernel != "arccos1" {
		return nil, fmt.Errorf("snnk: stored ReLU towers have kernel %q, want arccos1", sp.Kernel)
	}
	return &ReLU{mp: mp}, nil
}

// ReLUTarget returns the layer ReLU-SNNK estimates: ½K₁(x, w).
func ReLUTarget(x, w []float64) float64 { return 0.5 * kernel.ArcCos{Order: 1}.Eval(x, w) }

// Layer is an SNNK layer: y = Φ(x)ᵀA with a fixed random input tower and a
// learnable parameter tower A (Dim×l), m·l parameters instead of d·l. With
// Gated set it is the adapter y = v·(Φ(x)ᵀA) + x (App. D), v starting at 0.
type Layer struct {
	T     Towers
	A     *mat.Dense // Dim×l
	Gated bool
	V     float64
}

// NewLayer initialises A = Ψ(W, b)ᵀ from a dense layer's W (l×d) and b, so
// that the layer starts as an approximation of f(Wx + b).
func NewLayer(t Towers, w *mat.Dense, b []float64) (*Layer, error) {
	l, _ := w.Dims()
	p := mat.NewDense(l, t.Dim(), nil)
	if err := t.Params(p, w, b); err != nil {
		return nil, err
	}
	return &Layer{T: t, A: mat.DenseCopyOf(p.T())}, nil
}

// NewRandomLayer initialises A with N(0, 1/Dim) entries.
func NewRandomLayer(t Towers, l int, seed uint64) (*Layer, error) {
	if l <= 0 {
		return nil, fmt.Errorf("snnk: output width must be positive, got %d", l)
	}
	a, err := sampler.Gaussian{}.Sample(t.Dim(), l, seed)
	if err != nil {
		return nil, err
	}
	a.Scale(1/math.Sqrt(float64(t.Dim())), a)
	return &Layer{T: t, A: a}, nil
}

// Params returns the number of trainable parameters (A, and v if gated).
func (ly *Layer) Params() int {
	r, c := ly.A.Dims()
	if ly.Gated {
		return r*c + 1
	}
	return r * c
}

// Forward returns the layer outputs for the rows of x.
func (ly *Layer) Forward(x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	phi := mat.NewDense(n, ly.T.Dim(), nil)
	if err := ly.T.Transform(phi, x); err != nil {
		return nil, err
	}
	var y mat.Dense
	y.Mul(phi, ly.A)
	if ly.Gated {
		_, l := ly.A.Dims()
		if l != d {
			return nil, fmt.Errorf("snnk: gated adapter needs output width %d = input width %d", l, d)
		}
		y.Scale(ly.V, &y)
		y.Add(&y, x)
	}
	return &y, nil
}

// Dense is one feed-forward layer x ↦ f(Wx + b) of the network to bundle.
type Dense struct {
	W *mat.Dense // out×in
	B []float64
	F ExpSum
}

// Bundle is a fully bundled network (Eq. 14): y ≈ W̄·x̄ with x̄ =
// Φ_L(…Φ_1(x)) and W̄ = Ψ_L(W_{L−1} Ψ_{L−1}(…)), from towers chosen per
// layer (tower i takes inputs of the previous tower's dimension).
type Bundle struct {
	Towers []Towers
	WBar   *mat.Dense // d_L × Dim_L
}

// NewBundle bundles layers with the given towers: towers[i] must have
// input dimension equal to the dimension of towers[i−1] (or the network
// input for i = 0).
func NewBundle(layers []Dense, towers []Towers) (*Bundle, error) {
	if len(layers) == 0 || len(layers) != len(towers) {
		return nil, fmt.Errorf("snnk: %d layers and %d towers", len(layers), len(towers))
	}
	var cur *mat.Dense // W_i Ψ_i(…) so far, out×Dim_i
	for i, ly := range layers {
		out, in := ly.W.Dims()
		if len(ly.B) != 0 && len(ly.B) != out {
			return nil, fmt.Errorf("snnk: layer %d has %d biases for %d outputs", i, len(ly.B), out)
		}
		w := ly.W
		if i > 0 {
			if in != cur.RawMatrix().Rows {
				return nil, fmt.Errorf("snnk: layer %d takes %d inputs, previous layer gives %d", i, in, cur.RawMatrix().Rows)
			}
			var prod mat.Dense
			prod.Mul(ly.W, cur)
			w = &prod
		}
		if _, c := w.Dims(); c != towers[i].InputDim() {
			return nil, fmt.Errorf("snnk: tower %d expects inputs of dimension %d, got %d", i, towers[i].InputDim(), c)
		}
		next := mat.NewDense(out, towers[i].Dim(), nil)
		b := ly.B
		if len(b) == 0 {
			b = nil
		}
		if err := towers[i].Params(next, w, b); err != nil {
			return nil, err
		}
		cur = next
	}
	return &Bundle{Towers: towers, WBar: cur}, nil
}

// Features returns x̄ = Φ_L(…Φ_1(x)).
func (bd *Bundle) Features(x *mat.Dense) (*mat.Dense, error) {
	return InputFeatures(bd.Towers, x)
}

// InputFeatures applies the input towers in sequence.
func InputFeatures(towers []Towers, x *mat.Dense) (*mat.Dense, error) {
	cur := x
	for i, t := range towers {
		n, _ := cur.Dims()
		next := mat.NewDense(n, t.Dim(), nil)
		if err := t.Transform(next, cur); err != nil {
			return nil, fmt.Errorf("snnk: tower %d: %w", i, err)
		}
		cur = next
	}
	return cur, nil
}

// Forward returns W̄x̄ for the rows of x (n×d_L).
func (bd *Bundle) Forward(x *mat.Dense) (*mat.Dense, error) {
	xb, err := bd.Features(x)
	if err != nil {
		return nil, err
	}
	var y mat.Dense
	y.Mul(xb, bd.WBar.T())
	return &y, nil
}

// FitBundle fits W̄ in closed form on the bundled features x̄ of the rows
// of x against targets y (n×d_L) by ridge regression (with intercept): the
// fully bundled network needs no backpropagation (Sec. 3.3, App. J.3).
func FitBundle(towers []Towers, x, y *mat.Dense, lambda float64) (*linear.Model, error) {
	xb, err := InputFeatures(towers, x)
	if err != nil {
		return nil, err
	}
	_, dim := xb.Dims()
	_, k := y.Dims()
	st := linear.NewStats(dim, k)
	if err := st.Add(xb, y); err != nil {
		return nil, err
	}
	return linear.Fit(st, lambda, true)
}

// Exact returns the network of layers applied to x (the reference).
func Exact(layers []Dense, x *mat.Dense) (*mat.Dense, error) {
	cur := x
	for i, ly := range layers {
		_, in := ly.W.Dims()
		if _, c := cur.Dims(); c != in {
			return nil, fmt.Errorf("snnk: layer %d takes %d inputs, got %d", i, in, c)
		}
		var z mat.Dense
		z.Mul(cur, ly.W.T())
		r, c := z.Dims()
		for a := 0; a < r; a++ {
			for j := 0; j < c; j++ {
				v := z.At(a, j)
				if len(ly.B) > 0 {
					v += ly.B[j]
				}
				z.Set(a, j, ly.F.Eval(v))
			}
		}
		cur = &z
	}
	if cur == x {
		return nil, errors.New("snnk: no layers")
	}
	return cur, nil
}
