package nn

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"

	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/sampler"
)

// Model kinds.
const (
	KindTNN         = "tnn"         // TNN: RPE MLP with decay bias, Toeplitz product
	KindSKITNN      = "ski-tnn"     // SKI-TNO: sparse convolution + SKI low rank
	KindFDTNN       = "fd-tnn"      // FD-TNO: RPE on the frequency response
	KindPerformer   = "performer"   // Transformer with FAVOR+ attention
	KindTransformer = "transformer" // Transformer with softmax attention
	KindHRF         = "hrf"         // Transformer with angular hybrid random feature attention
)

// Kinds lists the model kinds.
var Kinds = []string{KindTNN, KindSKITNN, KindFDTNN, KindPerformer, KindTransformer, KindHRF}

// Adapter kinds.
const (
	AdapterNone       = ""
	AdapterBottleneck = "bottleneck" // Houlsby bottleneck adapter
	AdapterSNNK       = "snnk"       // ReLU-SNNK adapter with gating vector
)

// ModelConfig describes a sequence classifier: token embedding (plus a
// learned position embedding for the attention kinds), Depth blocks of the
// given kind, mean pooling over the real (non-padding, token ≠ 0) positions
// and a linear classifier. TNN kinds use TNN blocks x += GTU(norm(x)), x +=
// GLU(norm(x)); attention kinds use pre-norm Transformer blocks x +=
// MHA(norm(x)), x += FFN(norm(x)). Adapters, if any, act on every
// sub-block's output before the residual sum (Houlsby placement).
type ModelConfig struct {
	Kind    string `json:"kind"`
	Vocab   int    `json:"vocab"`
	Classes int    `json:"classes"`
	Length  int    `json:"length"`
	Width   int    `json:"width"`
	Depth   int    `json:"depth"`
	// Heads is the number of attention heads (attention kinds).
	Heads int `json:"heads,omitempty"`
	// Expand is the GTU expansion ratio (TNN kinds; the token mixer acts
	// on Expand·Width channels).
	Expand int `json:"expand,omitempty"`
	// Hidden is the width of the GLU (TNN kinds) or FFN (attention kinds).
	Hidden int `json:"hidden,omitempty"`
	// RPEHidden and RPELayers shape the RPE MLP of tnn and fd-tnn: RPELayers
	// hidden layers of RPEHidden units; RPEAct its activation.
	RPEHidden int    `json:"rpe_hidden,omitempty"`
	RPELayers int    `json:"rpe_layers,omitempty"`
	RPEAct    string `json:"rpe_act,omitempty"`
	// Lambda is the decay bias λ of tnn and the time-warp λ of ski-tnn.
	Lambda float64 `json:"lambda,omitempty"`
	// SKIRank (inducing points r), SKIFilter (sparse filter width m) and
	// SKIGrid (grid points of the piecewise linear RPE) shape ski-tnn.
	SKIRank   int `json:"ski_rank,omitempty"`
	SKIFilter int `json:"ski_filter,omitempty"`
	SKIGrid   int `json:"ski_grid,omitempty"`
	// Features is the number of FAVOR+ random features per head.
	Features int `json:"features,omitempty"`
	// FeatureMap names the performer's feature family (FeatureMaps:
	// favor+, simrf, oprf, sderf; see FamilyAttention). Empty is favor+,
	// to which Defaults normalises it, so that configurations written
	// before the field existed read back unchanged; other kinds must leave
	// it empty (or favor+).
	FeatureMap string `json:"feature_map,omitempty"`
	// HRFM and HRFN shape the angular hybrid attention of hrf: HRFM
	// projections for each base estimator (positive and trigonometric) and
	// HRFN sgn projections for the angular λ, 4·HRFM·(1+HRFN) features per
	// head (see HybridFeatures). Other kinds keep them at zero.
	HRFM int `json:"hrf_m,omitempty"`
	HRFN int `json:"hrf_n,omitempty"`
	// QKNorm, if positive, L2-normalises every head's queries and keys
	// (attention kinds) to norm QKNorm·d_h^(1/4), so that the attention
	// logits qᵀk/√d_h are QKNorm²·cos θ: the query/key normalisation the HRF
	// paper applies (App. K) to keep the random-feature estimators in their
	// accurate range. Zero selects the kind's default (1 for hrf, none for
	// the others); negative: none.
	QKNorm float64 `json:"qk_norm,omitempty"`
	// Chunk is the block length of causal FAVOR+ attention.
	Chunk int `json:"chunk,omitempty"`
	// Causal selects causal token mixing (tnn, fd-tnn, attention kinds).
	Causal bool `json:"causal,omitempty"`
	// Adapter, AdapterSize (bottleneck width or SNNK random features) and
	// AdapterSeed configure adapters.
	Adapter     string `json:"adapter,omitempty"`
	AdapterSize int    `json:"adapter_size,omitempty"`
	AdapterSeed uint64 `json:"adapter_seed,omitempty"`
	// FreezeBackbone makes every variable but the adapters and the
	// classifier non-trainable (adapter fine-tuning).
	FreezeBackbone bool `json:"freeze_backbone,omitempty"`
	// FFT uses the FFT forms of the Toeplitz products (XLA backends).
	FFT bool `json:"-"`
}

// Defaults fills unset fields with the defaults: Heads 2, Expand 1,
// Hidden = 2·Width, RPE 1 hidden layer of 32 ReLU units, λ = 0.99, SKI r
// = 32 (at most Length), m = 16, 33 grid points, 32 FAVOR+ features, chunk
// 64, 16 adapter features or bottleneck units; for hrf, HRFM and HRFN
// FLOP-matched to Features per head by hybrid.MatchFLOPs (as catalog's
// "angular": 6 and 4 for heads of width 16 and 32 features; other kinds:
// both set to zero, so that configurations compare equal whatever the
// flags) and query/key normalisation to norm 1 (QKNorm).
func (c *ModelConfig) Defaults() {
	set := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	set(&c.Heads, 2)
	set(&c.Expand, 1)
	set(&c.Hidden, 2*c.Width)
	set(&c.RPEHidden, 32)
	set(&c.RPELayers, 1)
	if c.RPEAct == "" {
		c.RPEAct = "relu"
	}
	if c.Lambda == 0 {
		c.Lambda = 0.99
	}
	set(&c.SKIRank, min(32, c.Length))
	set(&c.SKIFilter, 16)
	set(&c.SKIGrid, 33)
	set(&c.Features, 32)
	set(&c.Chunk, 64)
	set(&c.AdapterSize, 16)
	if fam, err := FeatureFamily(c.FeatureMap); err == nil && fam == FeatureFavor {
		c.FeatureMap = "" // favor+, as before the field existed
	} else if err == nil {
		c.FeatureMap = fam
	}
	if c.Kind == KindHRF && c.QKNorm == 0 {
		c.QKNorm = 1
	}
	if c.Kind == KindHRF {
		if c.HRFM == 0 || c.HRFN == 0 {
			o := hybrid.MatchFLOPs(c.Width/max(c.Heads, 1), c.Features)
			set(&c.HRFM, o.M)
			set(&c.HRFN, o.N)
		}
	} else {
		c.HRFM, c.HRFN = 0, 0
	}
}

// MaxRPELayers is the largest number of hidden layers of a TNO's RPE MLP
// that Validate accepts: the TNN papers use 1 to 6, and the model's
// variables are listed layer by layer before anything is allocated.
const MaxRPELayers = 1024

// MaxDepth is the largest number of blocks Validate accepts: the papers'
// models have 2 to 12, and the variables are listed block by block before
// anything is allocated.
const MaxDepth = 1024

// checkListed checks the counts by which the variables are listed, one
// by one: RPELayers against [0, MaxRPELayers] and Depth against
// [0, MaxDepth] (Validate requires a positive depth).
func (c *ModelConfig) checkListed() error {
	if c.RPELayers < 0 || c.RPELayers > MaxRPELayers {
		return fmt.Errorf("nn: RPE layers must lie in [0, %d], got %d", MaxRPELayers, c.RPELayers)
	}
	if c.Depth < 0 || c.Depth > MaxDepth {
		return fmt.Errorf("nn: depth must lie in [1, %d], got %d", MaxDepth, c.Depth)
	}
	return nil
}

// Validate checks the configuration (after Defaults).
func (c *ModelConfig) Validate() error {
	known := false
	for _, k := range Kinds {
		known = known || c.Kind == k
	}
	if !known {
		return fmt.Errorf("nn: unknown model kind %q (want %s)", c.Kind, strings.Join(Kinds, ", "))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"vocabulary", c.Vocab}, {"classes", c.Classes}, {"length", c.Length}, {"width", c.Width}, {"depth", c.Depth},
		{"heads", c.Heads}, {"expand", c.Expand}, {"hidden", c.Hidden}, {"RPE hidden", c.RPEHidden},
		{"SKI rank", c.SKIRank}, {"SKI filter", c.SKIFilter}, {"SKI grid", c.SKIGrid}, {"features", c.Features},
		{"chunk", c.Chunk}, {"adapter size", c.AdapterSize}} {
		if f.v <= 0 {
			return fmt.Errorf("nn: %s must be positive, got %d", f.name, f.v)
		}
		if err := limits.Dim("nn: "+f.name, f.v); err != nil {
			return err
		}
	}
	if fam, err := FeatureFamily(c.FeatureMap); err != nil {
		return err
	} else if fam != FeatureFavor && c.Kind != KindPerformer {
		return fmt.Errorf("nn: feature map %s applies to the performer only, not %s", fam, c.Kind)
	}
	if c.Classes < 2 {
		return fmt.Errorf("nn: need at least 2 classes, got %d", c.Classes)
	}
	if err := c.checkListed(); err != nil {
		return err
	}
	if _, err := ActivationByName(c.RPEAct); err != nil {
		return err
	}
	if math.IsNaN(c.QKNorm) || math.IsInf(c.QKNorm, 0) {
		return fmt.Errorf("nn: query/key norm must be finite, got %v", c.QKNorm)
	}
	if !(c.Lambda > 0 && c.Lambda < 1) {
		return fmt.Errorf("nn: λ must lie in (0, 1), got %v", c.Lambda)
	}
	if c.IsAttention() && c.Width%c.Heads != 0 {
		return fmt.Errorf("nn: width %d is not a multiple of %d heads", c.Width, c.Heads)
	}
	switch c.Kind {
	case KindSKITNN:
		if c.Causal {
			return errors.New("nn: ski-tnn is bidirectional only (the SKI paper's App. B: causal masking negates SKI's benefits); use fd-tnn")
		}
		if c.SKIRank < 2 || c.SKIRank > c.Length {
			return fmt.Errorf("nn: SKI rank must lie in [2, length %d], got %d", c.Length, c.SKIRank)
		}
		if c.SKIGrid < 3 || c.SKIGrid%2 == 0 {
			return fmt.Errorf("nn: SKI grid must be odd and ≥ 3, got %d", c.SKIGrid)
		}
	case KindPerformer, KindHRF:
		if c.Causal && c.Length%min(c.Chunk, c.Length) != 0 {
			return fmt.Errorf("nn: causal chunk %d must divide the length %d", c.Chunk, c.Length)
		}
	}
	if c.Kind == KindHRF {
		for _, f := range []struct {
			name string
			v    int
		}{{"HRF projections M", c.HRFM}, {"HRF sgn projections N", c.HRFN}} {
			if f.v <= 0 {
				return fmt.Errorf("nn: %s must be positive, got %d", f.name, f.v)
			}
			if err := limits.Dim("nn: "+f.name, f.v); err != nil {
				return err
			}
		}
		if _, err := limits.Matrix("nn: HRF features", HybridFeatureDim(c.HRFM, c.HRFN), c.Length); err != nil {
			return err
		}
	}
	if !c.IsAttention() { // the attention kinds have no Toeplitz matrices
		if _, err := limits.Matrix("nn: Toeplitz matrices", c.Length*c.Length, c.Width*c.Expand); err != nil {
			return err
		}
	}
	switch c.Adapter {
	case AdapterNone, AdapterBottleneck, AdapterSNNK:
	default:
		return fmt.Errorf("nn: unknown adapter %q (want bottleneck or snnk)", c.Adapter)
	}
	return nil
}

// IsAttention reports whether the kind is an attention model.
func (c *ModelConfig) IsAttention() bool {
	return c.Kind == KindPerformer || c.Kind == KindTransformer || c.Kind == KindHRF
}

// builder creates the model's variables in a context.
type builder struct {
	cfg   *ModelConfig
	g     *Graph
	dtype dtypes.DType
}

// variable returns the variable name in ctx (created by init), frozen when
// the backbone is frozen and frozen is set.
func (b *builder) variable(ctx *context.Context, name string, init initializers.VariableInitializer, frozen bool, dims ...int) *Node {
	v := ctx.Checked(false).WithInitializer(init).VariableWithShape(name, shapes.Make(b.dtype, dims...))
	if frozen && b.cfg.FreezeBackbone {
		v.SetTrainable(false)
	}
	return v.ValueGraph(b.g)
}

// weight is a backbone weight matrix with N(0, 1/fan_in) entries.
func (b *builder) weight(ctx *context.Context, name string, in, out int) *Node {
	return b.variable(ctx, name, initializers.RandomNormalFn(ctx, 1/math.Sqrt(float64(in))), true, in, out)
}

// bias is a backbone bias initialised at zero.
func (b *builder) bias(ctx *context.Context, name string, n int) *Node {
	return b.variable(ctx, name, initializers.Zero, true, n)
}

// Logits builds the classifier's logits (B×Classes) for the token ids
// (B×Length, int32, 0 = padding) in ctx; the configuration must have been
// validated. Random features (FAVOR+ projections, SNNK towers) are
// non-trainable variables named "omega" and "tower", set by the caller
// before training (see FixedVariables).
func (c *ModelConfig) Logits(ctx *context.Context, tokens *Node) *Node {
	return c.LogitsDType(ctx, tokens, dtypes.Float32)
}

// LogitsDType is Logits with the model's variables and computation in
// dtype (Logits is float32): the float64 reference against which the
// native engine (package native) checks its forward and backward passes.
func (c *ModelConfig) LogitsDType(ctx *context.Context, tokens *Node, dtype dtypes.DType) *Node {
	b := &builder{cfg: c, g: tokens.Graph(), dtype: dtype}
	mask := ConvertDType(NotEqual(tokens, ZerosLike(tokens)), b.dtype) // B×L
	emb := b.variable(ctx.In("embed"), "tokens", initializers.RandomNormalFn(ctx, 1), true, c.Vocab, c.Width)
	x := Gather(emb, InsertAxes(tokens, -1)) // B×L×d
	if c.IsAttention() {
		pos := b.variable(ctx.In("embed"), "positions", initializers.RandomNormalFn(ctx, 0.1), true, c.Length, c.Width)
		x = Add(x, InsertAxes(pos, 0))
	}
	for i := 0; i < c.Depth; i++ {
		bctx := ctx.Inf("block_%d", i)
		if c.IsAttention() {
			x = Add(x, b.adapter(bctx.In("adapter_mix"), b.attention(bctx.In("mix"), RMSNorm(x), mask, i)))
			h := RMSNorm(x)
			f := bctx.In("ffn")
			y := FFN(h, b.weight(f, "w1", c.Width, c.Hidden), b.bias(f, "b1", c.Hidden), b.weight(f, "w2", c.Hidden, c.Width), b.bias(f, "b2", c.Width))
			x = Add(x, b.adapter(bctx.In("adapter_ffn"), y))
		} else {
			x = Add(x, b.adapter(bctx.In("adapter_mix"), b.gtu(bctx.In("gtu"), RMSNorm(x))))
			x = Add(x, b.adapter(bctx.In("adapter_ffn"), b.glu(bctx.In("glu"), RMSNorm(x))))
		}
	}
	// Mean over the real positions.
	m3 := InsertAxes(mask, -1)
	cnt := MaxScalar(ReduceSum(m3, 1), 1)
	pooled := RMSNorm(Div(ReduceSum(Mul(x, m3), 1), cnt)) // B×d
	h := ctx.In("head")
	w := b.variable(h, "w", initializers.RandomNormalFn(ctx, 1/math.Sqrt(float64(c.Width))), false, c.Width, c.Classes)
	bias := b.variable(h, "b", initializers.Zero, false, c.Classes)
	return Affine(pooled, w, bias)
}

// adapter applies the configured adapter to a sub-block output y.
func (b *builder) adapter(ctx *context.Context, y *Node) *Node {
	c := b.cfg
	switch c.Adapter {
	case AdapterBottleneck:
		k := c.AdapterSize
		wd := b.variable(ctx, "w_down", initializers.RandomNormalFn(ctx, 1/math.Sqrt(float64(c.Width))), false, c.Width, k)
		bd := b.variable(ctx, "b_down", initializers.Zero, false, k)
		wu := b.variable(ctx, "w_up", initializers.Zero, false, k, c.Width)
		bu := b.variable(ctx, "b_up", initializers.Zero, false, c.Width)
		return BottleneckAdapter(y, wd, bd, wu, bu)
	case AdapterSNNK:
		m := c.AdapterSize
		tower := b.fixed(ctx, "tower", m, c.Width)
		a := b.variable(ctx, "a", initializers.RandomNormalFn(ctx, 1/math.Sqrt(float64(m))), false, m, c.Width)
		v := b.variable(ctx, "v", initializers.Zero, false, c.Width)
		return SNNKAdapter(y, tower, a, v)
	}
	return y
}

// fixed returns a non-trainable variable holding random features; it must
// have been given its value (FixedVariables) before the graph runs.
func (b *builder) fixed(ctx *context.Context, name string, dims ...int) *Node {
	v := ctx.Checked(false).WithInitializer(initializers.Zero).VariableWithShape(name, shapes.Make(b.dtype, dims...))
	v.SetTrainable(false)
	return v.ValueGraph(b.g)
}

func (b *builder) attention(ctx *context.Context, x, mask *Node, _ int) *Node {
	c := b.cfg
	d := c.Width
	q := SplitHeads(Affine(x, b.weight(ctx, "wq", d, d), b.bias(ctx, "bq", d)), c.Heads)
	k := SplitHeads(Affine(x, b.weight(ctx, "wk", d, d), b.bias(ctx, "bk", d)), c.Heads)
	v := SplitHeads(Affine(x, b.weight(ctx, "wv", d, d), b.bias(ctx, "bv", d)), c.Heads)
	if c.QKNorm > 0 {
		r := c.QKNorm * math.Pow(float64(d/c.Heads), 0.25)
		q, k = unitRows(q, r), unitRows(k, r)
	}
	var o *Node
	switch c.Kind {
	case KindPerformer:
		omega := b.fixed(ctx, "omega", c.Features, d/c.Heads)
		o = FamilyAttention(q, k, v, omega, c.FeatureMap, c.Causal, c.Chunk, mask)
	case KindHRF:
		pos := b.fixed(ctx, "omega", c.HRFM, d/c.Heads)
		trig := b.fixed(ctx, "omega_trig", c.HRFM, d/c.Heads)
		tau := b.fixed(ctx, "tau", c.HRFN, d/c.Heads)
		o = HybridAttention(q, k, v, pos, trig, tau, c.Causal, c.Chunk, mask)
	default:
		o = SoftmaxAttention(q, k, v, c.Causal, mask)
	}
	return Affine(MergeHeads(o), b.weight(ctx, "wo", d, d), b.bias(ctx, "bo", d))
}

func (b *builder) gtu(ctx *context.Context, x *Node) *Node {
	c := b.cfg
	e := c.Expand * c.Width
	p := GTUParams{
		WU: b.weight(ctx, "wu", c.Width, e), BU: b.bias(ctx, "bu", e),
		WV: b.weight(ctx, "wv", c.Width, e), BV: b.bias(ctx, "bv", e),
		WO: b.weight(ctx, "wo", e, c.Width), BO: b.bias(ctx, "bo", c.Width),
	}
	return GTU(x, p, func(v *Node) *Node { return b.tno(ctx.In("tno"), v) })
}

func (b *builder) glu(ctx *context.Context, x *Node) *Node {
	c := b.cfg
	p := GLUParams{
		W1: b.weight(ctx, "w1", c.Width, c.Hidden), B1: b.bias(ctx, "b1", c.Hidden),
		W2: b.weight(ctx, "w2", c.Width, c.Hidden), B2: b.bias(ctx, "b2", c.Hidden),
		W3: b.weight(ctx, "w3", c.Hidden, c.Width), B3: b.bias(ctx, "b3", c.Width),
	}
	return GLU(x, p)
}

// rpe builds the RPE MLP 1 → RPEHidden (× RPELayers) → out.
func (b *builder) rpe(ctx *context.Context, out int) MLP {
	c := b.cfg
	act, err := ActivationByName(c.RPEAct)
	if err != nil {
		panic(err) // validated
	}
	m := MLP{Act: act}
	in := 1
	for l := 0; l <= c.RPELayers; l++ {
		o := out
		if l < c.RPELayers {
			o = c.RPEHidden
		}
		m.W = append(m.W, b.weight(ctx, fmt.Sprintf("w%d", l), in, o))
		m.B = append(m.B, b.variable(ctx, fmt.Sprintf("b%d", l), initializers.RandomNormalFn(ctx, 0.1), true, o))
		in = o
	}
	return m
}

// tno applies the kind's token mixer to v (B×n×e).
func (b *builder) tno(ctx *context.Context, v *Node) *Node {
	c := b.cfg
	n, e := c.Length, v.Shape().Dim(2)
	// Backends without an FFT op (the pure-Go one) run the Toeplitz
	// products densely below spectralMinLength and by block DFT, O(n^1.5)
	// per channel, from there on (ToeplitzSpectral).
	spectral := n >= spectralMinLength
	toep := ToeplitzDense
	switch {
	case c.FFT:
		toep = ToeplitzFFT
	case spectral:
		toep = func(x, coef *Node) *Node { return ToeplitzSpectral(x, coef, 0) }
	}
	switch c.Kind {
	case KindTNN:
		coef := TNNCoefficients(b.g, b.rpe(ctx.In("rpe"), e), n, c.Lambda)
		if c.Causal {
			coef = Mul(coef, constant(b.g, b.dtype, causalMask(n), 2*n-1, 1))
		}
		return toep(v, coef)
	case KindSKITNN:
		plan, err := NewSKIPlan(n, c.SKIRank, c.SKIGrid, c.Lambda)
		if err != nil {
			panic(err) // validated
		}
		vals := b.variable(ctx, "rpe", initializers.RandomNormalFn(ctx, 0.1), true, c.SKIGrid, e)
		filt := b.variable(ctx, "filter", initializers.RandomNormalFn(ctx, 1/float64(c.SKIFilter)), true, c.SKIFilter, e)
		return plan.skiShifted(v, vals, filt)
	case KindFDTNN:
		in := FDInput(b.g, b.dtype, n)
		if c.Causal {
			khat := b.rpe(ctx.In("rpe"), e).Apply(in)
			if c.FFT {
				return FDCausalFFT(v, khat)
			}
			return toep(v, FDCausalCoefficients(khat))
		}
		k := b.rpe(ctx.In("rpe"), 2*e).Apply(in)
		re, im := SelectColumns(k, 0, e), SelectColumns(k, e, 2*e)
		if c.FFT {
			return FDBidirectionalFFT(v, re, im)
		}
		if spectral {
			return FDBidirectionalSpectral(v, re, im, 0)
		}
		return ToeplitzDense(v, FDBidirectionalCoefficients(re, im))
	}
	panic(fmt.Sprintf("nn: %q has no token mixer", c.Kind))
}

// spectralMinLength is the sequence length from which the TNN kinds run
// their Toeplitz products by block DFT on backends without an FFT op:
// measured on the pure-Go backend (width 32, depth 2, batch 16), the dense
// product is faster at n = 64 and 128 (7.5 and 3.0 steps/s against 6.3
// and 2.5) and the block DFT from n = 256 (1.7 against 1.1 steps/s; at
// n = 512, batch 8: 1.1 against 0.4).
var spectralMinLength = 256

// causalMask zeroes the coefficients of negative lags.
func causalMask(n int) []float64 {
	m := make([]float64, 2*n-1)
	for k := 0; k < n; k++ {
		m[k+n-1] = 1
	}
	return m
}

// FixedVariable is a non-trainable random-feature variable of a model:
// its scope and name, the seed-derived value it must hold, and whether a
// redraw policy replaces it (attention projections) or not (SNNK towers).
type FixedVariable struct {
	Scope, Name string
	Value       *tensors.Tensor
	Redrawn     bool
}

// fixedNames are the names of the random-feature variables.
var fixedNames = map[string]bool{"omega": true, "omega_trig": true, "tau": true, "tower": true}

// IsFixedName reports whether a variable name is that of a random-feature
// variable (FixedVariables), which parameter counts leave out.
func IsFixedName(name string) bool { return fixedNames[name] }

// FixedVariables returns the random features of the model for the given
// seed and redraw count: the projection of every performer layer (drawn
// from seed, layer and redraw by the feature family's sampler; see
// DrawFeatureProjection), the three
// projections of every hrf layer (DrawHybridProjections with orthogonal
// rows and independent base projections, hybrid.Angular's variant I) and
// the SNNK adapter towers (from AdapterSeed and the adapter's position;
// never redrawn). Scopes are those Logits creates under the root scope.
func (c *ModelConfig) FixedVariables(seed uint64, redraw int) ([]FixedVariable, error) {
	var out []FixedVariable
	for i := 0; i < c.Depth; i++ {
		block := fmt.Sprintf("/block_%d", i)
		switch c.Kind {
		case KindPerformer:
			om, err := DrawFeatureProjection(c.FeatureMap, c.Features, c.Width/c.Heads, mix(seed, uint64(i), uint64(redraw), 0x6661766f72))
			if err != nil {
				return nil, err
			}
			out = append(out, FixedVariable{block + "/mix", "omega", f32Tensor(om, c.Features, c.Width/c.Heads), true})
		case KindHRF:
			dh := c.Width / c.Heads
			p, err := DrawHybridProjections(dh, hybrid.Options{M: c.HRFM, N: c.HRFN, Sampler: sampler.Orthogonal{},
				Seed: mix(seed, uint64(i), uint64(redraw), 0x687266)})
			if err != nil {
				return nil, err
			}
			out = append(out,
				FixedVariable{block + "/mix", "omega", f32Tensor(p.Pos, c.HRFM, dh), true},
				FixedVariable{block + "/mix", "omega_trig", f32Tensor(p.Trig, c.HRFM, dh), true},
				FixedVariable{block + "/mix", "tau", f32Tensor(p.Tau, c.HRFN, dh), true})
		}
		if c.Adapter == AdapterSNNK {
			for j, sub := range []string{"/adapter_mix", "/adapter_ffn"} {
				g, err := SNNKTower(c.AdapterSize, c.Width, mix(c.AdapterSeed, uint64(i), uint64(j), 0x736e6e6b))
				if err != nil {
					return nil, err
				}
				out = append(out, FixedVariable{block + sub, "tower", f32Tensor(g, c.AdapterSize, c.Width), false})
			}
		}
	}
	return out, nil
}

// mix derives a seed from several values (splitmix64 steps).
func mix(vs ...uint64) uint64 {
	var h uint64 = 0x9e3779b97f4a7c15
	for _, v := range vs {
		h ^= v + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

func f32Tensor(v []float64, dims ...int) *tensors.Tensor {
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return tensors.FromFlatDataAndDimensions(f, dims...)
}

// unitRows scales every row of x (last axis) to norm r: r·x/√(‖x‖² +
// 1e-12).
func unitRows(x *Node, r float64) *Node {
	return MulScalar(Div(x, Sqrt(AddScalar(ReduceAndKeep(Square(x), ReduceSum, -1), 1e-12))), r)
}
