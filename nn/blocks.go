package nn

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
)

// Affine returns x·W + b on the last axis of x (…×in), W in×out, b out
// entries (nil: no bias).
func Affine(x, w, b *Node) *Node {
	in := x.Shape().Dim(-1)
	if w.Shape().Dim(0) != in {
		panic(fmt.Sprintf("nn: weights %s for inputs %s", w.Shape(), x.Shape()))
	}
	dims := append([]int(nil), x.Shape().Dimensions...)
	out := w.Shape().Dim(1)
	dims[len(dims)-1] = out
	y := matMul(Reshape(x, x.Shape().Size()/in, in), w)
	if b != nil {
		y = Add(y, InsertAxes(b, 0))
	}
	return Reshape(y, dims...)
}

// RMSNorm returns x/√(mean(x²) + 1e-6) on the last axis, without gain: the
// "simple RMS norm" of the TNN blocks, used by every block here.
func RMSNorm(x *Node) *Node {
	ms := ReduceAndKeep(Square(x), ReduceMean, -1)
	return Div(x, Sqrt(AddScalar(ms, 1e-6)))
}

// GTUParams are the weights of a gated Toeplitz unit: U and V map the
// width d to the expanded width e, O maps e back to d.
type GTUParams struct {
	WU, BU, WV, BV, WO, BO *Node
}

// GTU is TNN's gated Toeplitz unit (token and channel mixing): u =
// SiLU(xW_u + b_u), v = SiLU(xW_v + b_v), output (u ⊙ TNO(v))W_o + b_o,
// with the token mixer tno acting on B×n×e.
func GTU(x *Node, p GTUParams, tno func(*Node) *Node) *Node {
	u := silu(Affine(x, p.WU, p.BU))
	v := silu(Affine(x, p.WV, p.BV))
	return Affine(Mul(u, tno(v)), p.WO, p.BO)
}

// GLUParams are the weights of a gated linear unit: W1 and W2 map d to
// the hidden width, W3 maps it back.
type GLUParams struct {
	W1, B1, W2, B2, W3, B3 *Node
}

// GLU is the gated linear unit of the TNN block (channel mixing, Shazeer
// 2020): (SiLU(xW₁ + b₁) ⊙ (xW₂ + b₂))W₃ + b₃.
func GLU(x *Node, p GLUParams) *Node {
	return Affine(Mul(silu(Affine(x, p.W1, p.B1)), Affine(x, p.W2, p.B2)), p.W3, p.B3)
}

// FFN is a Transformer's feed-forward block: GELU(xW₁ + b₁)W₂ + b₂.
func FFN(x, w1, b1, w2, b2 *Node) *Node {
	return Affine(activations.Gelu(Affine(x, w1, b1)), w2, b2)
}

// SNNKFeatures returns the ReLU-SNNK input tower Φ(x) = ReLU(Gx)/√m of the
// rows of x (…×d) with the fixed projection g (m×d), the graph form of
// snnk.ReLU's Transform.
func SNNKFeatures(x, g *Node) *Node {
	m := g.Shape().Dim(0)
	return MulScalar(activations.Relu(einsum("md,pd->pm", g, Reshape(x, x.Shape().Size()/g.Shape().Dim(1), g.Shape().Dim(1)))), 1/math.Sqrt(float64(m)))
}

// SNNKLayer is the SNNK layer y = Φ(x)ᵀA (SNNK paper Eq. 4 with the
// parameter tower A = Ψ(W, b) learned directly, App. C): a fixed random
// input tower g (m×d) and trainable A (m×l); x is …×d, y …×l.
func SNNKLayer(x, g, a *Node) *Node {
	dims := append([]int(nil), x.Shape().Dimensions...)
	dims[len(dims)-1] = a.Shape().Dim(1)
	return Reshape(matMul(SNNKFeatures(x, g), a), dims...)
}

// SNNKAdapter is the SNNK adapter Y = v ⊙ SNNK(X) + X of the SNNK paper
// (App. D, Eq. 22): an SNNK layer from the width d back to d, scaled by the
// gating vector v (d entries, initialised at zero so that the block starts
// as the identity) and added to its input. Its trainable parameters are A
// (m×d) and v: (m+1)·d.
func SNNKAdapter(x, g, a, v *Node) *Node {
	y := SNNKLayer(x, g, a)
	return Add(x, Mul(y, ExpandLeftToRank(v, y.Rank())))
}

// BottleneckAdapter is the Houlsby adapter x + f(xW_down + b_down)W_up +
// b_up with f = GELU, the baseline of the SNNK adapter experiments; with
// W_up and b_up initialised at zero it starts as the identity. Its
// trainable parameters are 2·k·d + k + d for bottleneck width k.
func BottleneckAdapter(x, wd, bd, wu, bu *Node) *Node {
	return Add(x, Affine(activations.Gelu(Affine(x, wd, bd)), wu, bu))
}

// SplitHeads reshapes B×L×(H·dh) to B×H×L×dh.
func SplitHeads(x *Node, heads int) *Node {
	b, l, w := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	if w%heads != 0 {
		panic(fmt.Sprintf("nn: width %d is not a multiple of %d heads", w, heads))
	}
	return Transpose(Reshape(x, b, l, heads, w/heads), 1, 2)
}

// MergeHeads is the inverse of SplitHeads.
func MergeHeads(x *Node) *Node {
	b, h, l, dh := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2), x.Shape().Dim(3)
	return Reshape(Transpose(x, 1, 2), b, l, h*dh)
}
