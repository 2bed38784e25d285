package nn

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"

	"github.com/kernelkit/kernelkit/arch"
)

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

// Logits builds the logits (B×Classes) of c's classifier for the token
// ids (B×Length, int32, 0 = padding) in ctx; the configuration must have
// been validated. Random features (FAVOR+ projections, SNNK towers) are
// non-trainable variables named "omega" and "tower", set by the caller
// before training (see arch.ModelConfig.FixedVariables and FixedTensor).
func Logits(c *ModelConfig, ctx *context.Context, tokens *Node) *Node {
	return LogitsDType(c, ctx, tokens, dtypes.Float32)
}

// LogitsDType is Logits with the model's variables and computation in
// dtype (Logits is float32): the float64 reference against which the
// native engine (package native) checks its forward and backward passes.
func LogitsDType(c *ModelConfig, ctx *context.Context, tokens *Node, dtype dtypes.DType) *Node {
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
// have been given its value (arch.ModelConfig.FixedVariables) before
// the graph runs.
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
		plan, err := arch.NewSKIPlan(n, c.SKIRank, c.SKIGrid, c.Lambda)
		if err != nil {
			panic(err) // validated
		}
		vals := b.variable(ctx, "rpe", initializers.RandomNormalFn(ctx, 0.1), true, c.SKIGrid, e)
		filt := b.variable(ctx, "filter", initializers.RandomNormalFn(ctx, 1/float64(c.SKIFilter)), true, c.SKIFilter, e)
		return skiShifted(plan, v, vals, filt)
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
// their Toeplitz products by block DFT on backends without an FFT op
// (arch.SpectralMinLength; a variable so that tests can move it).
var spectralMinLength = arch.SpectralMinLength

// causalMask zeroes the coefficients of negative lags.
func causalMask(n int) []float64 {
	m := make([]float64, 2*n-1)
	for k := 0; k < n; k++ {
		m[k+n-1] = 1
	}
	return m
}

// FixedTensor returns the value of a random-feature variable
// (arch.ModelConfig.FixedVariables) as a float32 tensor.
func FixedTensor(f arch.FixedVariable) *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(append([]float32(nil), f.Value...), f.Dims...)
}

// unitRows scales every row of x (last axis) to norm r: r·x/√(‖x‖² +
// 1e-12).
func unitRows(x *Node, r float64) *Node {
	return MulScalar(Div(x, Sqrt(AddScalar(ReduceAndKeep(Square(x), ReduceSum, -1), 1e-12))), r)
}
