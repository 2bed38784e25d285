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

	width, hidden int
	rows          int
	x, h, g, y    []T // input copy, pre-activation, activation, output
	gd            []T // activation derivative
	dg, dx        []T
	gs            gradScratch[T]
}

// NewFFN returns the FFN of the configuration (after Defaults and
// Validate) with zeroed parameters under scope (e.g. "/block_0/ffn").
func NewFFN[T Float](cfg *arch.ModelConfig, scope string) *FFN[T] {
	d, h := cfg.Width, cfg.Hidden
	train := !cfg.FreezeBackbone
	return &FFN[T]{width: d, hidden: h,
		W1: newParam[T](scope, "w1", train, d, h), B1: newParam[T](scope, "b1", train, h),
		W2: newParam[T](scope, "w2", train, h, d), B2: newParam[T](scope, "b2", train, d)}
}

// Params returns w1, b1, w2, b2.
func (f *FFN[T]) Params() []*Param[T] { return []*Param[T]{f.W1, f.B1, f.W2, f.B2} }

// Forward returns the block's output (B·L×d) for x (B·L×d); it panics on a
// slice of the wrong length.
func (f *FFN[T]) Forward(x []T, B, L int) []T {
	d, hd, n := f.width, f.hidden, B*L
	if len(x) != n*d {
		panic(fmt.Sprintf("native: FFN input has %d elements, want %d·%d·%d", len(x), B, L, d))
	}
	f.rows = n
	f.x = growSlice(f.x, n*d)
	copy(f.x, x)
	f.h, f.g, f.y = growSlice(f.h, n*hd), growSlice(f.g, n*hd), growSlice(f.y, n*d)
	rowAffineForward(f.h, f.x, f.W1.Value, f.B1.Value, n, d, hd)
	f.gd = growSlice(f.gd, len(f.h))
	rowGELUForward(f.g, f.gd, f.h, n, hd)
	rowAffineForward(f.y, f.g, f.W2.Value, f.B2.Value, n, hd, d)
	return f.y
}

// Backward takes the gradient of the last Forward's output, adds the
// trainable parameters' gradients to their Grad and returns the input's.
func (f *FFN[T]) Backward(dy []T) []T {
	d, hd, n := f.width, f.hidden, f.rows
	if len(dy) != n*d || n == 0 {
		panic(fmt.Sprintf("native: FFN output gradient has %d elements, want %d (after Forward)", len(dy), n*d))
	}
	f.dg, f.dx = growSlice(f.dg, n*hd), growSlice(f.dx, n*d)
	rowAffineBackward(&f.gs, f.dg, false, dy, f.g, f.W2, f.B2, n, hd, d)
	rowMul(f.dg, f.dg, f.gd, n, hd)
	rowAffineBackward(&f.gs, f.dx, false, f.dg, f.x, f.W1, f.B1, n, d, hd)
	return f.dx
}
