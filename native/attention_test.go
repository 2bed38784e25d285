package native

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/kernelkit/kernelkit/nn"
)

// refUnitRows is nn's unitRows (unexported there): r·x/√(‖x‖² + 1e-12)
// on the last axis.
func refUnitRows(x *Node, r float64) *Node {
	return MulScalar(Div(x, Sqrt(AddScalar(ReduceAndKeep(Square(x), ReduceSum, -1), 1e-12))), r)
}

// refMixer is nn's builder.attention as a graph of the exported nn
// functions, the parameters given by name.
func refMixer(cfg *nn.ModelConfig) mixRef {
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
		case nn.KindPerformer:
			o = nn.LinearAttention(q, k, v, p["omega"], cfg.Causal, cfg.Chunk, mask)
		case nn.KindHRF:
			o = nn.HybridAttention(q, k, v, p["omega"], p["omega_trig"], p["tau"], cfg.Causal, cfg.Chunk, mask)
		default:
			o = nn.SoftmaxAttention(q, k, v, cfg.Causal, mask)
		}
		return nn.Affine(nn.MergeHeads(o), p["wo"], p["bo"])
	}
}

// mixConfig returns a validated tiny attention configuration.
func mixConfig(t testing.TB, kind string, causal bool, chunk int, qkNorm float64, frozen bool) *nn.ModelConfig {
	t.Helper()
	cfg := &nn.ModelConfig{Kind: kind, Vocab: 10, Classes: 2, Length: 8, Width: 8, Depth: 1, Heads: 2,
		Features: 8, HRFM: 3, HRFN: 2, Chunk: chunk, Causal: causal, QKNorm: qkNorm, FreezeBackbone: frozen}
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// setFixed gives the layer's fixed parameters the values nn draws for
// block 0 (FixedVariables), by scope and name.
func setFixed(t testing.TB, cfg *nn.ModelConfig, ps []*Param[float64]) {
	t.Helper()
	fv, err := cfg.FixedVariables(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fv {
		for _, p := range ps {
			if p.Scope == f.Scope && p.Name == f.Name {
				vals := tensors.MustCopyFlatData[float32](f.Value)
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
		{nn.KindTransformer, false, 0, 0, false, "none"},
		{nn.KindTransformer, false, 0, 1, false, "trailing"},
		{nn.KindTransformer, true, 0, 0, false, "trailing"},
		{nn.KindTransformer, true, 0, 0, false, "leading"},
		{nn.KindTransformer, true, 0, 0, true, "none"},
		{nn.KindPerformer, false, 0, 0, false, "none"},
		{nn.KindPerformer, false, 0, 0, false, "trailing"},
		{nn.KindPerformer, false, 0, 1, false, "leading"},
		{nn.KindPerformer, true, 8, 0, false, "none"},
		{nn.KindPerformer, true, 4, 0, false, "trailing"},
		{nn.KindPerformer, true, 2, 1, false, "trailing"},
		{nn.KindPerformer, true, 4, 0, true, "none"},
		{nn.KindHRF, false, 0, 0, false, "none"},
		{nn.KindHRF, false, 0, 0, false, "trailing"},
		{nn.KindHRF, false, 0, -1, false, "leading"},
		{nn.KindHRF, true, 8, 0, false, "none"},
		{nn.KindHRF, true, 4, 0, false, "trailing"},
		{nn.KindHRF, true, 2, 2, false, "none"},
		{nn.KindHRF, true, 4, 0, true, "trailing"},
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
	for _, kind := range []string{nn.KindTransformer, nn.KindPerformer, nn.KindHRF} {
		t.Run(kind, func(t *testing.T) {
			cfg := &nn.ModelConfig{Kind: kind, Vocab: 10, Classes: 2, Length: 96, Width: 32, Depth: 1, Heads: 2,
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
				case b == 2 && kind == nn.KindTransformer:
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
		cfg := &nn.ModelConfig{Kind: kind, Vocab: 10, Classes: 2, Length: 64, Width: 16, Depth: 1, Heads: 2,
			Features: 8, HRFM: 3, HRFN: 2, Chunk: 16, Causal: kind != nn.KindTransformer}
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
	for _, kind := range []string{nn.KindTransformer, nn.KindPerformer, nn.KindHRF} {
		one, three := run(kind, 1), run(kind, 3)
		for i := range one {
			if !slices.Equal(one[i], three[i]) {
				t.Errorf("%s: result %d differs between 1 and 3 cores", kind, i)
			}
		}
	}
}
