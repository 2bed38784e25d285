package nn

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/kernelkit/kernelkit/arch"
)

// TestVariablesMatchLogits builds the graph of every kind (causal,
// adapters, several RPE depths) and checks that Variables lists exactly the
// variables Logits creates, with their dimensions, and that ParamCount
// counts them.
func TestVariablesMatchLogits(t *testing.T) {
	tok := tensors.FromValue([][]int32{{3, 11, 4, 5, 15, 0, 0, 0}})
	type variant struct {
		name string
		mod  func(*ModelConfig)
	}
	variants := []variant{
		{"plain", func(*ModelConfig) {}},
		{"causal", func(c *ModelConfig) { c.Causal = c.Kind != KindSKITNN }},
		{"bottleneck", func(c *ModelConfig) { c.Adapter = AdapterBottleneck }},
		{"snnk", func(c *ModelConfig) { c.Adapter, c.RPELayers, c.Expand = AdapterSNNK, 2, 2 }},
		{"no rpe hidden", func(c *ModelConfig) { c.RPELayers = -1 }},
	}
	for _, kind := range arch.Kinds {
		for _, v := range variants {
			c := ModelConfig{Kind: kind, Vocab: 20, Classes: 4, Length: 8, Width: 8, Depth: 2, Heads: 2, SKIRank: 4, SKIFilter: 3, SKIGrid: 5, Features: 8, Chunk: 4}
			v.mod(&c)
			if c.RPELayers < 0 { // Defaults sets 0 to 1: ask for none after it
				c.Defaults()
				c.RPELayers = 0
			}
			c.Defaults()
			if err := c.Validate(); err != nil {
				t.Fatalf("%s %s: %v", kind, v.name, err)
			}
			ctx := context.New()
			modelLogits(t, ctx, &c, tok)
			got := map[string]bool{}
			var params, fixed int64
			for gv := range ctx.IterVariables() {
				if gv.Scope() == "/" { // the generator state, not the model's
					continue
				}
				key := fmt.Sprintf("%s/%s%v", gv.Scope(), gv.Name(), gv.Shape().Dimensions)
				got[key] = true
				if arch.IsFixedName(gv.Name()) {
					fixed += int64(gv.Shape().Size())
				} else {
					params += int64(gv.Shape().Size())
				}
			}
			want := map[string]bool{}
			for _, s := range c.Variables() {
				want[fmt.Sprintf("%s/%s%v", s.Scope, s.Name, s.Dims)] = true
				if s.Fixed != arch.IsFixedName(s.Name) {
					t.Errorf("%s %s: %s/%s fixed %v", kind, v.name, s.Scope, s.Name, s.Fixed)
				}
			}
			for k := range got {
				if !want[k] {
					t.Errorf("%s %s: Logits creates %s, Variables does not list it", kind, v.name, k)
				}
			}
			for k := range want {
				if !got[k] {
					t.Errorf("%s %s: Variables lists %s, Logits does not create it", kind, v.name, k)
				}
			}
			p, f, err := c.ParamCount()
			if err != nil || p != params || f != fixed {
				t.Errorf("%s %s: ParamCount %d, %d (%v), want %d, %d", kind, v.name, p, f, err, params, fixed)
			}
		}
	}
}

// TestEstimateMemory checks the estimate's dominant terms against their
// closed forms (attention scores B·H·L² float32, dense Toeplitz matrices
// e·n²), that it grows with batch, length and depth, that training counts
// twice a forward pass, and that sizes far beyond any memory give finite
// estimates or a clear error instead of overflowing.
func TestEstimateMemory(t *testing.T) {
	base := func(kind string) ModelConfig {
		c := ModelConfig{Kind: kind, Vocab: 46, Classes: 10, Length: 512, Width: 32, Depth: 2}
		c.Defaults()
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	tr := base(KindTransformer)
	tr.Length = 11264
	est, err := tr.EstimateMemory(16, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := 4.0 * 16 * 2 * 11264 * 11264; est.Largest != want || !strings.HasPrefix(est.LargestWhat, "attention scores 16×2×11264×11264") {
		t.Errorf("largest %v (%s), want the score block %v", est.Largest, est.LargestWhat, want)
	}
	// Seven score-sized tensors per block, two blocks, twice for training.
	if lo := 2 * 2 * 7 * est.Largest; est.Activations < lo {
		t.Errorf("activations %v below the score tensors %v", est.Activations, lo)
	}
	tnn := base(KindTNN)
	tnn.Length = 128
	est, err = tnn.EstimateMemory(1, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := 4.0 * 32 * 128 * 128; est.Largest != want {
		t.Errorf("dense TNN: largest %v (%s), want the Toeplitz matrices %v", est.Largest, est.LargestWhat, want)
	}
	for _, kind := range arch.Kinds {
		for _, causal := range []bool{false, true} {
			c := base(kind)
			if causal && kind == KindSKITNN {
				continue
			}
			c.Causal = causal
			e1, err1 := c.EstimateMemory(8, true)
			e0, err0 := c.EstimateMemory(8, false)
			e2, err2 := c.EstimateMemory(16, true)
			c.Depth *= 2
			e3, err3 := c.EstimateMemory(8, true)
			if err := errors.Join(err0, err1, err2, err3); err != nil {
				t.Fatal(err)
			}
			if !(e1.Activations > 0 && e1.Activations == 2*e0.Activations && e2.Activations > e1.Activations && e3.Activations > e1.Activations) {
				t.Errorf("%s causal %v: estimates %v (forward %v), batch 16 %v, depth 4 %v", kind, causal, e1.Activations, e0.Activations, e2.Activations, e3.Activations)
			}
			if e3.Params <= e1.Params {
				t.Errorf("%s: %d parameters at depth 4, %d at depth 2", kind, e3.Params, e1.Params)
			}
		}
	}
	huge := base(KindTNN)
	huge.Depth, huge.Width, huge.Hidden = 1<<24, 1<<24, 1<<24
	if _, _, err := huge.ParamCount(); err == nil {
		t.Error("ParamCount counted 2^72 parameters")
	}
	deep := base(KindTransformer)
	deep.Depth = 1 << 24 // beyond arch.MaxDepth: refused before the blocks are listed
	if _, _, err := deep.ParamCount(); err == nil {
		t.Error("ParamCount listed 2^24 blocks")
	}
	deep.Depth = arch.MaxDepth
	p, _, err := deep.ParamCount()
	if err != nil || p < arch.MaxDepth*4*(32*32) {
		t.Errorf("depth %d: %d parameters (%v)", arch.MaxDepth, p, err)
	}
	est, err = deep.EstimateMemory(1<<24, true)
	if err != nil || math.IsInf(est.Activations, 0) || est.Activations < float64(arch.MaxDepth)*(1<<24)*32 {
		t.Errorf("depth %d and batch 2^24: activations %v (%v)", arch.MaxDepth, est.Activations, err)
	}
}
