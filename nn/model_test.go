package nn

import (
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

func modelLogits(t *testing.T, ctx *context.Context, c *ModelConfig, tokens *tensors.Tensor) []float32 {
	t.Helper()
	exec, err := context.NewExec(testBackend(t), ctx, func(ctx *context.Context, tok *Node) *Node { return c.Logits(ctx, tok) })
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Exec(tokens)
	if err != nil {
		t.Fatal(err)
	}
	return tensors.MustCopyFlatData[float32](out[0])
}

// TestAdaptersStartAsIdentity builds every model kind, checks the logits'
// shape, and checks that adding SNNK adapters (gate v = 0) or bottleneck
// adapters (W_up = 0) to the same weights leaves the logits unchanged: the
// adapted model starts as the pre-trained one.
func TestAdaptersStartAsIdentity(t *testing.T) {
	tok := tensors.FromValue([][]int32{{3, 11, 4, 5, 15, 0, 0, 0}, {12, 1, 2, 15, 7, 8, 9, 0}})
	for _, kind := range Kinds {
		base := ModelConfig{Kind: kind, Vocab: 20, Classes: 4, Length: 8, Width: 8, Depth: 2, Heads: 2, SKIRank: 4, SKIFilter: 3, SKIGrid: 5, Features: 8, Chunk: 4}
		base.Defaults()
		if err := base.Validate(); err != nil {
			t.Fatal(err)
		}
		ctx := context.New()
		ctx.SetParam(context.ParamInitialSeed, int64(3))
		fixed, err := base.FixedVariables(1, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fixed {
			ctx.InAbsPath(f.Scope).VariableWithValue(f.Name, f.Value).SetTrainable(false)
		}
		want := modelLogits(t, ctx, &base, tok)
		if len(want) != 2*4 {
			t.Fatalf("%s: %d logits, want 2×4", kind, len(want))
		}
		for _, ad := range []string{AdapterSNNK, AdapterBottleneck} {
			c := base
			c.Adapter, c.AdapterSize = ad, 4
			fixed, err := c.FixedVariables(1, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fixed {
				ctx.InAbsPath(f.Scope).Checked(false).VariableWithValue(f.Name, f.Value).SetTrainable(false)
			}
			got := modelLogits(t, ctx, &c, tok)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s with %s adapters: logit %d is %v, %v without: the adapters do not start as the identity", kind, ad, i, got[i], want[i])
				}
			}
		}
	}
}

// TestPaddingIsIgnored checks that the attention models' logits do not
// depend on the padding: changing the padding token's embedding leaves
// them unchanged, since padded keys are masked and padded positions are not
// pooled. (The TNN kinds mix padding into the real positions, as the
// original TNN does, and are not tested here.)
func TestPaddingIsIgnored(t *testing.T) {
	for _, kind := range []string{KindTransformer, KindPerformer} {
		c := ModelConfig{Kind: kind, Vocab: 20, Classes: 3, Length: 8, Width: 8, Depth: 1, Heads: 2, Features: 16}
		c.Defaults()
		ctx := context.New()
		fixed, err := c.FixedVariables(2, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fixed {
			ctx.InAbsPath(f.Scope).VariableWithValue(f.Name, f.Value).SetTrainable(false)
		}
		a := modelLogits(t, ctx, &c, tensors.FromValue([][]int32{{3, 4, 5, 0, 0, 0, 0, 0}}))
		// Same real tokens; the padding embedding row changed in value does
		// not matter because padded keys are masked and not pooled.
		v := ctx.GetVariableByScopeAndName("/embed", "tokens")
		emb := tensors.MustCopyFlatData[float32](v.MustValue())
		for j := 0; j < c.Width; j++ {
			emb[j] += 5 // row 0 = padding
		}
		if err := v.SetValue(tensors.FromFlatDataAndDimensions(emb, c.Vocab, c.Width)); err != nil {
			t.Fatal(err)
		}
		b := modelLogits(t, ctx, &c, tensors.FromValue([][]int32{{3, 4, 5, 0, 0, 0, 0, 0}}))
		for i := range a {
			if d := a[i] - b[i]; d > 1e-5 || d < -1e-5 {
				t.Errorf("%s: logit %d moved by %v when the padding embedding changed", kind, i, d)
			}
		}
	}
}
