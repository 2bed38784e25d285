package native

import (
	"fmt"

	"github.com/kernelkit/kernelkit/arch"
)

// FFN is the feed-forward block of the attention kinds (nn.FFN):
// GELU(x·W₁ + b₁)·W₂ + b₂ with the exact (erf) GELU, from the width d to
// Hidden and back, on rows (B·L×d). Forward's result and Backward's input
// gradient are buffers of the layer, overwritten by the next call.
type FFN[T Float] struct {
	// W1 (d×Hidden), B1, W2 (Hidden×d) and B2 are "w1", "b1", "w2", "b2"
	// (trainable unless the backbone is frozen).
	W1, B1, W2, B2 *Param[T]

	mlp geluMLP[T]
}

// NewFFN returns the FFN of the configuration (after Defaults and
// Validate) with zeroed parameters under scope (e.g. "/block_0/ffn").
func NewFFN[T Float](cfg *arch.ModelConfig, scope string) *FFN[T] {
	d, h := cfg.Width, cfg.Hidden
	train := !cfg.FreezeBackbone
	f := &FFN[T]{
		W1: newParam[T](scope, "w1", train, d, h), B1: newParam[T](scope, "b1", train, h),
		W2: newParam[T](scope, "w2", train, h, d), B2: newParam[T](scope, "b2", train, d)}
	f.mlp = geluMLP[T]{name: "FFN", width: d, hidden: h, w1: f.W1, b1: f.B1, w2: f.W2, b2: f.B2}
	return f
}

// Params returns w1, b1, w2, b2.
func (f *FFN[T]) Params() []*Param[T] { return []*Param[T]{f.W1, f.B1, f.W2, f.B2} }

// Forward returns the block's output (B·L×d) for x (B·L×d); it panics on a
// slice of the wrong length.
func (f *FFN[T]) Forward(x []T, B, L int) []T { return f.mlp.forward(x, B, L) }

// Backward takes the gradient of the last Forward's output, adds the
// trainable parameters' gradients to their Grad and returns the input's.
func (f *FFN[T]) Backward(dy []T) []T { return f.mlp.backward(dy, false) }

// geluMLP is the two-layer map GELU(x·W₁ + b₁)·W₂ + b₂ (exact GELU) from
// width to hidden and back, on rows: the FFN, and the bottleneck adapter
// with its residual. Its buffers are reused across calls.
type geluMLP[T Float] struct {
	name           string // for the panics
	width, hidden  int
	w1, b1, w2, b2 *Param[T]
	rows           int
	x, h, g, y     []T // input copy, pre-activation, activation, output
	gd             []T // activation derivative
	dg, dx         []T
	gs             gradScratch[T]
}

// forward returns the map of x (B·L×width); it panics on a slice of the
// wrong length.
func (m *geluMLP[T]) forward(x []T, B, L int) []T {
	d, hd, n := m.width, m.hidden, B*L
	if len(x) != n*d {
		panic(fmt.Sprintf("native: %s input has %d elements, want %d·%d·%d", m.name, len(x), B, L, d))
	}
	m.rows = n
	m.x = growSlice(m.x, n*d)
	copy(m.x, x)
	m.h, m.g, m.y = growSlice(m.h, n*hd), growSlice(m.g, n*hd), growSlice(m.y, n*d)
	rowAffineForward(m.h, m.x, m.w1.Value, m.b1.Value, n, d, hd)
	m.gd = growSlice(m.gd, len(m.h))
	rowGELUForward(m.g, m.gd, m.h, n, hd)
	rowAffineForward(m.y, m.g, m.w2.Value, m.b2.Value, n, hd, d)
	return m.y
}

// backward takes the gradient of the last forward's output, adds the
// trainable parameters' gradients to their Grad and returns the input's;
// with residual, that of x + map(x) (dy added first).
func (m *geluMLP[T]) backward(dy []T, residual bool) []T {
	d, hd, n := m.width, m.hidden, m.rows
	if len(dy) != n*d || n == 0 {
		panic(fmt.Sprintf("native: %s output gradient has %d elements, want %d (after Forward)", m.name, len(dy), n*d))
	}
	m.dg, m.dx = growSlice(m.dg, n*hd), growSlice(m.dx, n*d)
	rowAffineBackward(&m.gs, m.dg, false, dy, m.g, m.w2, m.b2, n, hd, d)
	rowMul(m.dg, m.dg, m.gd, n, hd)
	if residual {
		copy(m.dx, dy)
	}
	rowAffineBackward(&m.gs, m.dx, residual, m.dg, m.x, m.w1, m.b1, n, d, hd)
	return m.dx
}
