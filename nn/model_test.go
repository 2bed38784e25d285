package nn

import (
	"fmt"
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/internal/rng"
)

func modelLogits(t *testing.T, ctx *context.Context, c *ModelConfig, tokens *tensors.Tensor) []float32 {
	t.Helper()
	exec, err := context.NewExec(testBackend(t), ctx, func(ctx *context.Context, tok *Node) *Node { return Logits(c, ctx, tok) })
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
	for _, kind := range arch.Kinds {
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
			ctx.InAbsPath(f.Scope).VariableWithValue(f.Name, FixedTensor(f)).SetTrainable(false)
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
				ctx.InAbsPath(f.Scope).Checked(false).VariableWithValue(f.Name, FixedTensor(f)).SetTrainable(false)
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
	for _, kind := range []string{KindTransformer, KindPerformer, KindHRF} {
		c := ModelConfig{Kind: kind, Vocab: 20, Classes: 3, Length: 8, Width: 8, Depth: 1, Heads: 2, Features: 16}
		c.Defaults()
		ctx := context.New()
		fixed, err := c.FixedVariables(2, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fixed {
			ctx.InAbsPath(f.Scope).VariableWithValue(f.Name, FixedTensor(f)).SetTrainable(false)
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

// TestHRFDefaults checks the hrf feature counts: FLOP-matched to the
// FAVOR+ features (hybrid.MatchFLOPs: M = 6, N = 4 for heads of width 16
// and 32 features), given counts kept, and both cleared for other kinds so
// that their configurations compare equal whatever the flags.
func TestHRFDefaults(t *testing.T) {
	for _, tc := range []struct {
		kind         string
		m, n         int
		wantM, wantN int
	}{
		{KindHRF, 0, 0, 6, 4}, {KindHRF, 3, 0, 3, 4}, {KindHRF, 5, 2, 5, 2}, {KindTransformer, 5, 2, 0, 0}, {KindTNN, 0, 0, 0, 0},
	} {
		c := ModelConfig{Kind: tc.kind, Vocab: 20, Classes: 3, Length: 8, Width: 32, Depth: 1, Heads: 2, Features: 32, HRFM: tc.m, HRFN: tc.n}
		c.Defaults()
		if c.HRFM != tc.wantM || c.HRFN != tc.wantN {
			t.Errorf("%s with m=%d, n=%d: defaults %d, %d, want %d, %d", tc.kind, tc.m, tc.n, c.HRFM, c.HRFN, tc.wantM, tc.wantN)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", tc.kind, err)
		}
	}
	c := ModelConfig{Kind: KindHRF, Vocab: 20, Classes: 3, Length: 8, Width: 32, Depth: 1, HRFM: -1}
	c.Defaults()
	if err := c.Validate(); err == nil {
		t.Error("hrf with M = −1 validated")
	}
}

// TestQKNorm checks the query/key normalisation: 1 by default for hrf,
// none for the other kinds, a given value kept, a non-finite one refused;
// and unitRows scales rows to the given norm.
func TestQKNorm(t *testing.T) {
	for kind, want := range map[string]float64{KindHRF: 1, KindPerformer: 0, KindTransformer: 0} {
		c := ModelConfig{Kind: kind, Vocab: 20, Classes: 3, Length: 8, Width: 8, Depth: 1}
		c.Defaults()
		if c.QKNorm != want {
			t.Errorf("%s: default query/key norm %v, want %v", kind, c.QKNorm, want)
		}
		c.QKNorm = -1
		c.Defaults()
		if c.QKNorm != -1 {
			t.Errorf("%s: query/key norm −1 (none) became %v", kind, c.QKNorm)
		}
		c.QKNorm = math.Inf(1)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: infinite query/key norm validated", kind)
		}
	}
	x := randArr(1, 3, 2, 3, 4)
	y := eval1(t, func(in []*Node) *Node { return unitRows(in[0], 2.5) }, x)
	for i := 0; i < len(y); i += 4 {
		var s float64
		for _, v := range y[i : i+4] {
			s += v * v
		}
		if math.Abs(math.Sqrt(s)-2.5) > 1e-12 {
			t.Fatalf("row %d has norm %v, want 2.5", i/4, math.Sqrt(s))
		}
	}
}

// TestModelSpectralMatchesDense builds the TNN kinds at length 260 (block
// DFT with padding to 272) and checks that their float32 logits equal
// those of the dense Toeplitz products on the same weights to 1e-5,
// bidirectional and causal.
func TestModelSpectralMatchesDense(t *testing.T) {
	r := rng.New(5)
	ids := make([]int32, 2*260)
	for i := range ids {
		if i%260 < 200 {
			ids[i] = int32(1 + r.IntN(19))
		}
	}
	tok := tensors.FromFlatDataAndDimensions(ids, 2, 260)
	for _, kind := range []string{KindTNN, KindFDTNN} {
		for _, causal := range []bool{false, true} {
			c := ModelConfig{Kind: kind, Vocab: 20, Classes: 3, Length: 260, Width: 4, Depth: 1, RPEHidden: 4, Causal: causal}
			c.Defaults()
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			ctx := context.New()
			ctx.SetParam(context.ParamInitialSeed, int64(7))
			spec := modelLogits(t, ctx, &c, tok)
			saved := spectralMinLength
			spectralMinLength = 1 << 30
			dense := modelLogits(t, ctx, &c, tok)
			spectralMinLength = saved
			got, want := make([]float64, len(spec)), make([]float64, len(dense))
			for i := range spec {
				got[i], want[i] = float64(spec[i]), float64(dense[i])
			}
			assertClose(t, fmt.Sprintf("%s causal=%v", kind, causal), got, want, 1e-5)
		}
	}
}
