package nn

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"
)

// LogitsDType is Logits with the model's variables and computation in
// dtype (Logits itself is float32): the float64 reference against which
// the native engine (package native) checks its forward and backward
// passes. Its body is Logits' with the dtype as a parameter.
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
	m3 := InsertAxes(mask, -1)
	cnt := MaxScalar(ReduceSum(m3, 1), 1)
	pooled := RMSNorm(Div(ReduceSum(Mul(x, m3), 1), cnt)) // B×d
	h := ctx.In("head")
	w := b.variable(h, "w", initializers.RandomNormalFn(ctx, 1/math.Sqrt(float64(c.Width))), false, c.Width, c.Classes)
	bias := b.variable(h, "b", initializers.Zero, false, c.Classes)
	return Affine(pooled, w, bias)
}
