package native

import (
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/internal/parallel"
)

// Adapter is an adapter acting on a sub-block's output (B·L×d) before the
// residual sum (nn's builder.adapter): BottleneckAdapter or SNNKAdapter.
// Forward's result and Backward's input gradient are buffers of the
// adapter, overwritten by the next call.
type Adapter[T Float] interface {
	// Forward returns the adapted rows for y (B·L×d).
	Forward(y []T, B, L int) []T
	// Backward takes the gradient of the last Forward's output, adds the
	// trainable parameters' gradients to their Grad and returns y's.
	Backward(dy []T) []T
	// Params returns the adapter's parameters in the order nn creates them.
	Params() []*Param[T]
}

// NewAdapter returns the configuration's adapter (after Defaults and
// Validate) with zeroed parameters under scope (e.g.
// "/block_0/adapter_mix"), or nil when it has none.
func NewAdapter[T Float](cfg *arch.ModelConfig, scope string) Adapter[T] {
	switch cfg.Adapter {
	case arch.AdapterBottleneck:
		return NewBottleneckAdapter[T](cfg, scope)
	case arch.AdapterSNNK:
		return NewSNNKAdapter[T](cfg, scope)
	}
	return nil
}

// BottleneckAdapter is the Houlsby adapter y + GELU(y·W_down +
// b_down)·W_up + b_up (nn.BottleneckAdapter) with bottleneck width k =
// AdapterSize; its parameters are always trainable.
type BottleneckAdapter[T Float] struct {
	// WDown (d×k), BDown, WUp (k×d) and BUp are "w_down", "b_down",
	// "w_up", "b_up".
	WDown, BDown, WUp, BUp *Param[T]

	mlp geluMLP[T]
}

// NewBottleneckAdapter returns a bottleneck adapter of the configuration's
// width and AdapterSize with zeroed parameters under scope.
func NewBottleneckAdapter[T Float](cfg *arch.ModelConfig, scope string) *BottleneckAdapter[T] {
	d, k := cfg.Width, cfg.AdapterSize
	a := &BottleneckAdapter[T]{
		WDown: newParam[T](scope, "w_down", true, d, k), BDown: newParam[T](scope, "b_down", true, k),
		WUp: newParam[T](scope, "w_up", true, k, d), BUp: newParam[T](scope, "b_up", true, d)}
	a.mlp = geluMLP[T]{name: "adapter", width: d, hidden: k, w1: a.WDown, b1: a.BDown, w2: a.WUp, b2: a.BUp}
	return a
}

// Params returns w_down, b_down, w_up, b_up.
func (a *BottleneckAdapter[T]) Params() []*Param[T] {
	return []*Param[T]{a.WDown, a.BDown, a.WUp, a.BUp}
}

// Forward returns y + GELU(y·W_down + b_down)·W_up + b_up for y (B·L×d);
// it panics on a slice of the wrong length.
func (a *BottleneckAdapter[T]) Forward(y []T, B, L int) []T {
	out := a.mlp.forward(y, B, L)
	for i, v := range a.mlp.x {
		out[i] += v
	}
	return out
}

// Backward takes the gradient of the last Forward's output, adds the
// parameters' gradients to their Grad and returns the input's.
func (a *BottleneckAdapter[T]) Backward(dy []T) []T { return a.mlp.backward(dy, true) }

// SNNKAdapter is the SNNK adapter y + v ⊙ (ReLU(y·Gᵀ)/√m · A)
// (nn.SNNKAdapter): a fixed random input tower G (m×d, "tower"), the
// trainable parameter tower A (m×d, "a") and gating vector v (d, "v"), m
// = AdapterSize.
type SNNKAdapter[T Float] struct {
	// Tower is G (fixed), A and V the trainable parts.
	Tower, A, V *Param[T]

	width, m     int
	rows         int
	x, phi, s, y []T // input copy, features ReLU(yGᵀ)/√m, SNNK layer output, output
	ds, dphi, dx []T
	gs           gradScratch[T]
	vparts       [][]T
}

// NewSNNKAdapter returns an SNNK adapter of the configuration's width and
// AdapterSize features with zeroed parameters under scope.
func NewSNNKAdapter[T Float](cfg *arch.ModelConfig, scope string) *SNNKAdapter[T] {
	d, m := cfg.Width, cfg.AdapterSize
	return &SNNKAdapter[T]{width: d, m: m,
		Tower: newParam[T](scope, "tower", false, m, d),
		A:     newParam[T](scope, "a", true, m, d),
		V:     newParam[T](scope, "v", true, d)}
}

// Params returns tower, a, v.
func (a *SNNKAdapter[T]) Params() []*Param[T] { return []*Param[T]{a.Tower, a.A, a.V} }

// Forward returns y + v ⊙ (ReLU(y·Gᵀ)/√m · A) for y (B·L×d); it panics
// on a slice of the wrong length.
func (a *SNNKAdapter[T]) Forward(y []T, B, L int) []T {
	d, m, n := a.width, a.m, B*L
	if len(y) != n*d {
		panic(fmt.Sprintf("native: adapter input has %d elements, want %d·%d·%d", len(y), B, L, d))
	}
	a.rows = n
	a.x = growSlice(a.x, n*d)
	copy(a.x, y)
	a.phi, a.s, a.y = growSlice(a.phi, n*m), growSlice(a.s, n*d), growSlice(a.y, n*d)
	sc := T(1 / math.Sqrt(float64(m)))
	v := a.V.Value
	parallel.Chunks(n, mixRowChunk, func(_, lo, hi int) {
		phi := a.phi[lo*m : hi*m]
		gemm(false, true, hi-lo, m, d, sc, a.x[lo*d:hi*d], d, a.Tower.Value, d, 0, phi, m)
		for i, p := range phi {
			if p < 0 {
				phi[i] = 0
			}
		}
		s := a.s[lo*d : hi*d]
		gemm(false, false, hi-lo, d, m, 1, phi, m, a.A.Value, d, 0, s, d)
		for r := 0; r < hi-lo; r++ {
			for j := 0; j < d; j++ {
				i := (lo+r)*d + j
				a.y[i] = a.x[i] + s[r*d+j]*v[j]
			}
		}
	})
	return a.y
}

// Backward takes the gradient of the last Forward's output, adds the
// gradients of A and v to their Grad (partials over fixed row chunks,
// merged in chunk order) and returns the input's.
func (a *SNNKAdapter[T]) Backward(dy []T) []T {
	d, m, n := a.width, a.m, a.rows
	if len(dy) != n*d || n == 0 {
		panic(fmt.Sprintf("native: adapter output gradient has %d elements, want %d (after Forward)", len(dy), n*d))
	}
	a.ds, a.dphi, a.dx = growSlice(a.ds, n*d), growSlice(a.dphi, n*m), growSlice(a.dx, n*d)
	v := a.V.Value
	workers := parallel.Workers((n + mixRowChunk - 1) / mixRowChunk)
	for len(a.vparts) < workers {
		a.vparts = append(a.vparts, nil)
	}
	for k := 0; k < workers; k++ {
		a.vparts[k] = growSlice(a.vparts[k], d)
	}
	// ds = dy ⊙ v; dv = Σ dy ⊙ s over the rows.
	parallel.Ordered(n, mixRowChunk, func(worker, lo, hi int) {
		pv := a.vparts[worker]
		clear(pv)
		for r := lo; r < hi; r++ {
			for j := 0; j < d; j++ {
				g := dy[r*d+j]
				a.ds[r*d+j] = g * v[j]
				pv[j] += g * a.s[r*d+j]
			}
		}
	}, func(worker, _, _ int) {
		if a.V.Trainable {
			for j, x := range a.vparts[worker] {
				a.V.Grad[j] += x
			}
		}
	})
	// dA = φᵀ·ds; dφ = ds·Aᵀ masked by the ReLU; dx = dy + (dφ/√m)·G.
	rowAffineBackward(&a.gs, a.dphi, false, a.ds, a.phi, a.A, nil, n, m, d)
	sc := T(1 / math.Sqrt(float64(m)))
	copy(a.dx, dy)
	parallel.Chunks(n, mixRowChunk, func(_, lo, hi int) {
		dphi := a.dphi[lo*m : hi*m]
		for i, p := range a.phi[lo*m : hi*m] {
			if !(p > 0) {
				dphi[i] = 0
			}
		}
		gemm(false, false, hi-lo, d, m, sc, dphi, m, a.Tower.Value, d, 1, a.dx[lo*d:hi*d], d)
	})
	return a.dx
}
