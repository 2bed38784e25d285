package native

import (
	"fmt"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/nn"
)

// checkLayer compares a layer's forward pass and gradients (input and
// parameters, for the loss L = Σ R ⊙ y with a fixed random R) with the
// GoMLX graph ref of the same layer (float64, pure-Go backend) and its
// automatic differentiation. The parameters are set to random values
// first; ref receives x (B×L×width) and the parameters in the order of
// layer.Params().
func checkLayer(t *testing.T, name string, layer Layer[float64], B, L, width int, ref func(x *Node, ps []*Node) *Node) {
	t.Helper()
	ps := layer.Params()
	ins := []arr{randArr(1, 1, B, L, width)}
	for i, p := range ps {
		a := randArr(uint64(10+i), 0.5, p.Dims...)
		copy(p.Value, a.data)
		ins = append(ins, a)
		p.ZeroGrad()
	}
	y := append([]float64(nil), layer.Forward(ins[0].data, B, L)...)
	r := randArr(2, 1, len(y))
	dx := append([]float64(nil), layer.Backward(r.data)...)
	want := eval(t, func(x []*Node) []*Node {
		out := ref(x[0], x[1:])
		flat := Reshape(out, out.Shape().Size())
		loss := ReduceAllSum(Mul(flat, Const(flat.Graph(), r.data)))
		return append([]*Node{flat}, Gradient(loss, x...)...)
	}, ins...)
	assertClose(t, name+": forward", y, want[0], fwdTol)
	assertClose(t, name+": ∂x", dx, want[1], gradTol)
	for i, p := range ps {
		if p.Trainable {
			assertClose(t, fmt.Sprintf("%s: ∂%s/%s", name, p.Scope, p.Name), p.Grad, want[2+i], gradTol)
		}
	}
}

// linearLayer wraps linear as a Layer for the tests.
type linearLayer struct{ l *linear[float64] }

func (w linearLayer) Forward(x []float64, B, L int) []float64 { return w.l.forward(x, B*L) }
func (w linearLayer) Backward(dy []float64) []float64         { return w.l.backward(dy) }
func (w linearLayer) Params() []*Param[float64]               { return w.l.params() }

// normLayer wraps rmsNorm as a Layer for the tests.
type normLayer struct {
	n     *rmsNorm[float64]
	width int
}

func (w normLayer) Forward(x []float64, B, L int) []float64 { return w.n.forward(x, B*L, w.width) }
func (w normLayer) Backward(dy []float64) []float64         { return w.n.backward(dy) }
func (w normLayer) Params() []*Param[float64]               { return nil }

func TestLinearAndNormMatchGoMLX(t *testing.T) {
	checkLayer(t, "affine", linearLayer{newLinear[float64]("/s", "w", "b", 6, 5, true)}, 3, 7, 6,
		func(x *Node, ps []*Node) *Node { return nn.Affine(x, ps[0], ps[1]) })
	checkLayer(t, "rms norm", normLayer{&rmsNorm[float64]{}, 6}, 3, 7, 6,
		func(x *Node, _ []*Node) *Node { return nn.RMSNorm(x) })
}

// rpeMLP is the nn.MLP of parameters ps (w0, b0, w1, b1, …).
func rpeMLP(t *testing.T, act string, ps []*Node) nn.MLP {
	a, err := nn.ActivationByName(act)
	if err != nil {
		t.Fatal(err)
	}
	m := nn.MLP{Act: a}
	for i := 0; i+1 < len(ps); i += 2 {
		m.W = append(m.W, ps[i])
		m.B = append(m.B, ps[i+1])
	}
	return m
}

// tnoCase is one token mixer configuration.
type tnoCase struct {
	name string
	cfg  arch.ModelConfig
}

func tnoCases() []tnoCase {
	base := arch.ModelConfig{Vocab: 5, Classes: 3, Length: 9, Width: 4, Depth: 1, RPEHidden: 5, RPELayers: 2,
		SKIRank: 4, SKIFilter: 3, SKIGrid: 7, Lambda: 0.9}
	var out []tnoCase
	for _, c := range []struct {
		kind, act string
		causal    bool
		filter    int
	}{
		{arch.KindTNN, "gelu", false, 0}, {arch.KindTNN, "relu", true, 0},
		{arch.KindFDTNN, "silu", true, 0}, {arch.KindFDTNN, "gelu", false, 0},
		{arch.KindSKITNN, "", false, 3}, {arch.KindSKITNN, "", false, 4},
	} {
		cfg := base
		cfg.Kind, cfg.RPEAct, cfg.Causal = c.kind, c.act, c.causal
		if c.filter > 0 {
			cfg.SKIFilter = c.filter
		}
		cfg.Defaults()
		out = append(out, tnoCase{fmt.Sprintf("%s/causal=%v/%s/m=%d", c.kind, c.causal, c.act, cfg.SKIFilter), cfg})
	}
	return out
}

// newTNO builds the native token mixer of cfg on e channels.
func newTNO(t *testing.T, cfg *arch.ModelConfig, e int) Layer[float64] {
	t.Helper()
	var l Layer[float64]
	var err error
	switch cfg.Kind {
	case arch.KindTNN:
		l, err = newTNNTNO[float64](cfg, "/tno", e, true)
	case arch.KindFDTNN:
		l, err = newFDTNO[float64](cfg, "/tno", e, true)
	default:
		l, err = newSKITNO[float64](cfg, "/tno", e, true)
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// refTNO is the GoMLX token mixer of cfg (the forms arch.ModelConfig uses
// below its spectral length) for parameters ps in the native order.
func refTNO(t *testing.T, cfg *arch.ModelConfig, x *Node, ps []*Node) *Node {
	g := x.Graph()
	n, e := cfg.Length, x.Shape().Dim(2)
	switch cfg.Kind {
	case arch.KindTNN:
		coef := nn.TNNCoefficients(g, rpeMLP(t, cfg.RPEAct, ps), n, cfg.Lambda)
		if cfg.Causal {
			m := make([]float64, 2*n-1)
			for k := 0; k < n; k++ {
				m[k+n-1] = 1
			}
			coef = Mul(coef, Reshape(Const(g, m), 2*n-1, 1))
		}
		return nn.ToeplitzDense(x, coef)
	case arch.KindFDTNN:
		k := rpeMLP(t, cfg.RPEAct, ps).Apply(nn.FDInput(g, dtypes.Float64, n))
		if cfg.Causal {
			return nn.ToeplitzDense(x, nn.FDCausalCoefficients(k))
		}
		re, im := nn.SelectColumns(k, 0, e), nn.SelectColumns(k, e, 2*e)
		return nn.ToeplitzDense(x, nn.FDBidirectionalCoefficients(re, im))
	default:
		p, err := arch.NewSKIPlan(n, cfg.SKIRank, cfg.SKIGrid, cfg.Lambda)
		if err != nil {
			t.Fatal(err)
		}
		return nn.SKI(p, x, ps[0], ps[1])
	}
}

// withToeplitzForm runs fn with the Toeplitz products of layers built
// inside it in the dense-DFT form (dft) or by FFT.
func withToeplitzForm(dft bool, fn func()) {
	form := ""
	if dft {
		form = "dft"
	}
	withForm(form, fn)
}

// withForm runs fn with the Toeplitz products forced to form ("dft",
// "go", or "" for the default: FFTW where it loads).
func withForm(form string, fn func()) {
	saved := toeplitzForce
	defer func() { toeplitzForce = saved }()
	toeplitzForce = form
	fn()
}

func TestTokenMixersMatchGoMLX(t *testing.T) {
	for _, dft := range []bool{true, false} {
		for _, c := range tnoCases() {
			name := fmt.Sprintf("%s/dft=%v", c.name, dft)
			t.Run(name, func(t *testing.T) {
				cfg := c.cfg
				e := 3
				withToeplitzForm(dft, func() {
					checkLayer(t, name, newTNO(t, &cfg, e), 2, cfg.Length, e,
						func(x *Node, ps []*Node) *Node { return refTNO(t, &cfg, x, ps) })
				})
			})
		}
	}
}

func TestGTUAndGLUMatchGoMLX(t *testing.T) {
	for _, c := range tnoCases()[:3] {
		cfg := c.cfg
		d, e := 4, 6
		g := newGTU("/gtu", d, e, newTNO(t, &cfg, e), true)
		checkLayer(t, "gtu/"+c.name, g, 2, cfg.Length, d, func(x *Node, ps []*Node) *Node {
			p := nn.GTUParams{WU: ps[0], BU: ps[1], WV: ps[2], BV: ps[3], WO: ps[4], BO: ps[5]}
			return nn.GTU(x, p, func(v *Node) *Node { return refTNO(t, &cfg, v, ps[6:]) })
		})
	}
	// 3·722 rows around an identity mixer: three row chunks of the GTU's
	// fused passes, the last one short.
	g := newGTU("/gtu", 4, 6, Layer[float64](identityMixer[float64]{}), true)
	checkLayer(t, "gtu/chunks", g, 3, 2*gemmChunk/3+40, 4, func(x *Node, ps []*Node) *Node {
		p := nn.GTUParams{WU: ps[0], BU: ps[1], WV: ps[2], BV: ps[3], WO: ps[4], BO: ps[5]}
		return nn.GTU(x, p, func(v *Node) *Node { return v })
	})
	glu := func(x *Node, ps []*Node) *Node {
		return nn.GLU(x, nn.GLUParams{W1: ps[0], B1: ps[1], W2: ps[2], B2: ps[3], W3: ps[4], B3: ps[5]})
	}
	checkLayer(t, "glu", newGLU[float64]("/glu", 4, 7, true), 2, 5, 4, glu)
	// 3·211 rows: three row chunks of the GLU, the last one short.
	checkLayer(t, "glu/chunks", newGLU[float64]("/glu", 4, 7, true), 3, 2*gluChunk/3+40, 4, glu)
}

// TestToeplitzFormsAgree checks the three forms of the Toeplitz product
// (dense DFT with its even/odd split, every parity of n; gonum's FFT; the
// default FFT, FFTW where it loads) against each other, forward and
// backward, in float64: all are exact transforms whose roundings are a
// few ulps times log n or n of the largest term (here n ≤ 40, terms of
// order one: 1e-12 is over 100 times that).
func TestToeplitzFormsAgree(t *testing.T) {
	const B, e = 3, 5
	for n := 1; n <= 40; n++ {
		x := randArr(uint64(n), 1, B*n*e).data
		coef := randArr(uint64(100+n), 1, (2*n-1)*e).data
		dy := randArr(uint64(200+n), 1, B*n*e).data
		forms := []string{"dft", "go", ""}
		var ys, dxs, dcs [3][]float64
		for i, form := range forms {
			withForm(form, func() {
				tp := newToeplitzFFT[float64](n, e)
				ys[i] = append([]float64(nil), tp.forward(x, B, coef)...)
				dxs[i] = append([]float64(nil), tp.backward(dy)...)
				dcs[i] = append([]float64(nil), tp.dcoef...)
			})
		}
		for i := 1; i < 3; i++ {
			what := fmt.Sprintf("n=%d dft vs %q", n, forms[i])
			assertClose(t, what+": y", ys[0], ys[i], 1e-12)
			assertClose(t, what+": ∂x", dxs[0], dxs[i], 1e-12)
			assertClose(t, what+": ∂t", dcs[0], dcs[i], 1e-12)
		}
	}
}
