package native

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/nn"
)

// refUnitRows is nn's unitRows (unexported there): r·x/√(‖x‖² + 1e-12)
// on the last axis.
func refUnitRows(x *Node, r float64) *Node {
	return MulScalar(Div(x, Sqrt(AddScalar(ReduceAndKeep(Square(x), ReduceSum, -1), 1e-12))), r)
}

// refMixer is nn's builder.attention as a graph of the exported nn
// functions, the parameters given by name.
func refMixer(cfg *arch.ModelConfig) mixRef {
	return func(x *Node, p map[string]*Node, mask *Node) *Node {
		q := nn.SplitHeads(nn.Affine(x, p["wq"], p["bq"]), cfg.Heads)
		k := nn.SplitHeads(nn.Affine(x, p["wk"], p["bk"]), cfg.Heads)
		v := nn.SplitHeads(nn.Affine(x, p["wv"], p["bv"]), cfg.Heads)
		if cfg.QKNorm > 0 {
			r := cfg.QKNorm * math.Pow(float64(cfg.Width/cfg.Heads), 0.25)
			q, k = refUnitRows(q, r), refUnitRows(k, r)
		}
		var o *Node
		switch cfg.Kind {
		case arch.KindPerformer:
			o = nn.FamilyAttention(q, k, v, p["omega"], cfg.FeatureMap, cfg.Causal, cfg.Chunk, mask)
		case arch.KindHRF:
			o = nn.HybridAttention(q, k, v, p["omega"], p["omega_trig"], p["tau"], cfg.Causal, cfg.Chunk, mask)
		default:
			o = nn.SoftmaxAttention(q, k, v, cfg.Causal, mask)
		}
		return nn.Affine(nn.MergeHeads(o), p["wo"], p["bo"])
	}
}

// mixConfig returns a validated tiny attention configuration.
func mixConfig(t testing.TB, kind string, causal bool, chunk int, qkNorm float64, frozen bool) *arch.ModelConfig {
	t.Helper()
	cfg := &arch.ModelConfig{Kind: kind, Vocab: 10, Classes: 2, Length: 8, Width: 8, Depth: 1, Heads: 2,
		Features: 8, HRFM: 3, HRFN: 2, Chunk: chunk, Causal: causal, QKNorm: qkNorm, FreezeBackbone: frozen}
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// setFixed gives the layer's fixed parameters the values nn draws for
// block 0 (FixedVariables), by scope and name.
func setFixed(t testing.TB, cfg *arch.ModelConfig, ps []*Param[float64]) {
	t.Helper()
	fv, err := cfg.FixedVariables(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fv {
		for _, p := range ps {
			if p.Scope == f.Scope && p.Name == f.Name {
				vals := f.Value
				if len(vals) != len(p.Value) {
					t.Fatalf("%s/%s: %d values for %d entries", f.Scope, f.Name, len(vals), len(p.Value))
				}
				for i, v := range vals {
					p.Value[i] = float64(v)
				}
			}
		}
	}
}

// Key masks of the tests (B = 2, L = 8): none, the second sequence padded
// at its end, and the second sequence padded at its start (its first
// queries see no real key under causal attention).
var mixMasks = map[string][]float64{
	"none":     nil,
	"trailing": {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0},
	"leading":  {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1},
	"holes":    {1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1, 0},
	// The second sequence is all padding: softmax attention gives its
	// queries uniform weights (FAVOR+ and HRF divide zero by zero).
	"empty": {1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
}

func TestAttentionMatchesGoMLX(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		causal bool
		chunk  int
		qkNorm float64
		frozen bool
		mask   string
	}{
		{arch.KindTransformer, false, 0, 0, false, "none"},
		{arch.KindTransformer, false, 0, 1, false, "trailing"},
		{arch.KindTransformer, true, 0, 0, false, "trailing"},
		{arch.KindTransformer, true, 0, 0, false, "leading"},
		{arch.KindTransformer, true, 0, 0, true, "none"},
		{arch.KindTransformer, false, 0, 0, false, "leading"},
		{arch.KindTransformer, false, 0, 0, false, "holes"},
		{arch.KindTransformer, true, 0, 0, false, "holes"},
		{arch.KindTransformer, false, 0, 0, false, "empty"},
		{arch.KindTransformer, true, 0, 0, false, "empty"},
		{arch.KindPerformer, true, 4, 0, false, "holes"},
		{arch.KindPerformer, false, 3, 0, false, "trailing"}, // chunk not dividing L: unused
		{arch.KindHRF, false, 3, 0, false, "trailing"},
		{arch.KindHRF, true, 4, 0, false, "holes"},
		{arch.KindPerformer, false, 0, 0, false, "none"},
		{arch.KindPerformer, false, 0, 0, false, "trailing"},
		{arch.KindPerformer, false, 0, 1, false, "leading"},
		{arch.KindPerformer, true, 8, 0, false, "none"},
		{arch.KindPerformer, true, 4, 0, false, "trailing"},
		{arch.KindPerformer, true, 2, 1, false, "trailing"},
		{arch.KindPerformer, true, 4, 0, true, "none"},
		{arch.KindHRF, false, 0, 0, false, "none"},
		{arch.KindHRF, false, 0, 0, false, "trailing"},
		{arch.KindHRF, false, 0, -1, false, "leading"},
		{arch.KindHRF, true, 8, 0, false, "none"},
		{arch.KindHRF, true, 4, 0, false, "trailing"},
		{arch.KindHRF, true, 2, 2, false, "none"},
		{arch.KindHRF, true, 2, 0, false, "trailing"}, // a chunk of padding only
		{arch.KindHRF, true, 4, 0, true, "trailing"},
	} {
		name := fmt.Sprintf("%s causal=%v chunk=%d qknorm=%v frozen=%v mask=%s", tc.kind, tc.causal, tc.chunk, tc.qkNorm, tc.frozen, tc.mask)
		t.Run(name, func(t *testing.T) {
			cfg := mixConfig(t, tc.kind, tc.causal, tc.chunk, tc.qkNorm, tc.frozen)
			a := NewAttention[float64](cfg, "/block_0/mix")
			mixCheckNames(t, cfg, "/block_0/mix", a.Params())
			mixFill(a.Params(), 11)
			setFixed(t, cfg, a.Params())
			mask := mixMasks[tc.mask]
			a.SetMask(mask)
			const B = 2
			c := mixCase{layer: a, ref: refMixer(cfg), B: B, L: cfg.Length, x: mixRand(5, 1, B*cfg.Length*cfg.Width), mask: mask}
			c.check(t, name)
			// A second pass on the same layer (reused buffers, gradients
			// accumulated from zero again) gives the same result.
			c.check(t, name+" (again)")
		})
	}
}

// TestAttentionLongRows runs the comparison on more rows than one
// parallel work item (mixRowChunk), several causal chunks and heads of
// width 16, so that the chunked parameter-gradient sums and the per-head
// work split are exercised.
func TestAttentionLongRows(t *testing.T) {
	for _, kind := range []string{arch.KindTransformer, arch.KindPerformer, arch.KindHRF} {
		t.Run(kind, func(t *testing.T) {
			cfg := &arch.ModelConfig{Kind: kind, Vocab: 10, Classes: 2, Length: 96, Width: 32, Depth: 1, Heads: 2,
				Features: 16, HRFM: 4, HRFN: 3, Chunk: 32, Causal: true}
			cfg.Defaults()
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			a := NewAttention[float64](cfg, "/block_0/mix")
			mixFill(a.Params(), 13)
			setFixed(t, cfg, a.Params())
			const B = 3
			// Sequences padded at the end by 0, 7 and 14 tokens; for
			// softmax attention the third is padded at its start by 70
			// instead (its first 70 queries see no real key: uniform
			// weights over all keys, across the causal row blocks).
			mask := make([]float64, B*cfg.Length)
			for i := range mask {
				b, l := i/cfg.Length, i%cfg.Length
				switch {
				case b == 2 && kind == arch.KindTransformer:
					if l >= 70 {
						mask[i] = 1
					}
				case l < cfg.Length-7*b:
					mask[i] = 1
				}
			}
			a.SetMask(mask)
			c := mixCase{layer: a, ref: refMixer(cfg), B: B, L: cfg.Length, x: mixRand(8, 1, B*cfg.Length*cfg.Width), mask: mask}
			c.check(t, kind)
		})
	}
}

// TestAttentionDeterministic checks that the outputs and gradients do not
// depend on the number of cores: the same bits with GOMAXPROCS 1 and 3.
func TestAttentionDeterministic(t *testing.T) {
	run := func(kind string, procs int) [][]float32 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		cfg := &arch.ModelConfig{Kind: kind, Vocab: 10, Classes: 2, Length: 64, Width: 16, Depth: 1, Heads: 2,
			Features: 8, HRFM: 3, HRFN: 2, Chunk: 16, Causal: kind != arch.KindTransformer}
		cfg.Defaults()
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		a := NewAttention[float32](cfg, "/block_0/mix")
		for i, p := range a.Params() {
			for j, v := range mixRand(uint64(40+i), 0.25, len(p.Value)) {
				p.Value[j] = float32(v)
			}
		}
		const B = 9
		x := make([]float32, B*cfg.Length*cfg.Width)
		for i, v := range mixRand(9, 1, len(x)) {
			x[i] = float32(v)
		}
		out := [][]float32{append([]float32(nil), a.Forward(x, B, cfg.Length)...)}
		out = append(out, append([]float32(nil), a.Backward(out[0])...))
		for _, p := range a.Params() {
			out = append(out, p.Grad)
		}
		return out
	}
	for _, kind := range []string{arch.KindTransformer, arch.KindPerformer, arch.KindHRF} {
		one, three := run(kind, 1), run(kind, 3)
		for i := range one {
			if !slices.Equal(one[i], three[i]) {
				t.Errorf("%s: result %d differs between 1 and 3 cores", kind, i)
			}
		}
	}
}

// TestFloat32MatchesFloat64 runs the layers in float32, the training type,
// whose exponentials (exp32) and GELU (gelu32) take float32-only paths,
// against the same layers in float64 (checked against GoMLX above). Each
// output or gradient entry is a sum of at most a few hundred float32
// terms, most of them with positive weights (softmax and FAVOR+
// normalisations), so its relative error is about that count times the
// unit roundoff 6·10⁻⁸, amplified by the cancellation of HRF's
// non-positive estimator: about 10⁻⁵ at these shapes. Gradients that
// vanish by symmetry (softmax's key bias) are compared relative to 10⁻³ of
// the layer's largest gradient, as in check, which scales their rounding
// noise by 10³: a few 10⁻⁵. 2·10⁻⁴ leaves a margin of several times.
func TestFloat32MatchesFloat64(t *testing.T) {
	const tol = 2e-4
	type pair struct {
		name   string
		l64    mixLayer
		l32    layer32
		ps64   []*Param[float64]
		ps32   []*Param[float32]
		mask   []float64
		B, L   int
		width  int
		setter func(m32 []float32)
	}
	var cases []pair
	for _, kind := range []string{arch.KindTransformer, arch.KindPerformer, arch.KindHRF} {
		for _, causal := range []bool{false, true} {
			cfg := mixConfig(t, kind, causal, 4, 0, false)
			a64, a32 := NewAttention[float64](cfg, "/block_0/mix"), NewAttention[float32](cfg, "/block_0/mix")
			mixFill(a64.Params(), 17)
			setFixed(t, cfg, a64.Params())
			mask := mixMasks["trailing"]
			a64.SetMask(mask)
			cases = append(cases, pair{name: fmt.Sprintf("%s causal=%v", kind, causal), l64: a64, l32: a32,
				ps64: a64.Params(), ps32: a32.Params(), mask: mask, B: 2, L: cfg.Length, width: cfg.Width,
				setter: a32.SetMask})
		}
	}
	cfg := mixConfig(t, arch.KindTransformer, false, 0, 0, false)
	f64, f32 := NewFFN[float64](cfg, "/block_0/ffn"), NewFFN[float32](cfg, "/block_0/ffn")
	mixFill(f64.Params(), 19)
	cases = append(cases, pair{name: "ffn", l64: f64, l32: f32, ps64: f64.Params(), ps32: f32.Params(), B: 3, L: 100, width: cfg.Width})
	for _, ad := range []string{arch.AdapterBottleneck, arch.AdapterSNNK} {
		c := *cfg
		c.Adapter, c.AdapterSize, c.AdapterSeed = ad, 8, 2
		a64, a32 := NewAdapter[float64](&c, "/block_0/adapter_mix"), NewAdapter[float32](&c, "/block_0/adapter_mix")
		mixFill(a64.Params(), 23)
		setFixed(t, &c, a64.Params())
		cases = append(cases, pair{name: ad, l64: a64, l32: a32, ps64: a64.Params(), ps32: a32.Params(), B: 3, L: 100, width: c.Width})
	}
	for _, c := range cases {
		for i, p := range c.ps64 {
			for j, v := range p.Value {
				c.ps32[i].Value[j] = float32(v)
			}
			p.ZeroGrad()
			c.ps32[i].ZeroGrad()
		}
		if c.setter != nil {
			m32 := make([]float32, len(c.mask))
			for i, v := range c.mask {
				m32[i] = float32(v)
			}
			c.setter(m32)
		}
		// Inputs and weights exactly representable in float32.
		x64 := mixRand(29, 1, c.B*c.L*c.width)
		x32 := make([]float32, len(x64))
		for i, v := range x64 {
			x32[i] = float32(v)
			x64[i] = float64(x32[i])
		}
		for _, p := range c.ps64 {
			for j, v := range p.Value {
				p.Value[j] = float64(float32(v))
			}
		}
		y64 := c.l64.Forward(x64, c.B, c.L)
		y32 := c.l32.Forward(x32, c.B, c.L)
		w := mixRand(31, 1, len(y64))
		w32 := make([]float32, len(w))
		for i, v := range w {
			w32[i] = float32(v)
			w[i] = float64(w32[i])
		}
		dx64, dx32 := c.l64.Backward(w), c.l32.Backward(w32)
		widen := func(v []float32) []float64 {
			out := make([]float64, len(v))
			for i, x := range v {
				out[i] = float64(x)
			}
			return out
		}
		if e := mixRelErr(widen(y32), y64, 0); !(e <= tol) {
			t.Errorf("%s: float32 output differs from float64 by %.3g (relative), tolerance %.0e", c.name, e, tol)
		}
		floor := 1e-3 * maxAbs(dx64)
		for _, p := range c.ps64 {
			floor = math.Max(floor, 1e-3*maxAbs(p.Grad))
		}
		worst := mixRelErr(widen(dx32), dx64, floor)
		for i, p := range c.ps64 {
			worst = math.Max(worst, mixRelErr(widen(c.ps32[i].Grad), p.Grad, floor))
		}
		t.Logf("%s: float32 against float64: output %.2g, worst gradient %.2g", c.name, mixRelErr(widen(y32), y64, 0), worst)
		if !(worst <= tol) {
			t.Errorf("%s: float32 gradients differ from float64 by %.3g (relative), tolerance %.0e", c.name, worst, tol)
		}
	}
}

// layer32 is a float32 layer.
type layer32 interface {
	Forward(x []float32, B, L int) []float32
	Backward(dy []float32) []float32
}
