package native

import (
	"errors"

	"github.com/kernelkit/kernelkit/arch"
)

// FeatureProjection computes dst (rows×m) = x·Ωᵀ for the rows of x
// (rows×d: a head's scaled queries or keys) and the FAVOR+ projection Ω
// (omega, m×d) of attention layer layer (0-based among the model's
// attention layers), in place of the exact product: the seam through which
// an emulated analog crossbar (package analog) computes the random-feature
// projections of a trained performer. It is called from several
// goroutines at once (one per head in flight), each with its own slices.
type FeatureProjection[T Float] func(layer int, omega, dst, x []T, rows, d, m int)

// SetFeatureProjection makes the model's FAVOR+ feature maps (performer
// with feature map favor+ or simrf) take their projections from p; nil
// restores the exact product. The backward pass is unchanged: it uses Ω,
// so training with p set is straight-through training (the gradient of
// the exact product for the emulated one). It returns an error when the
// model has no such layer.
func (t *Trainer[T]) SetFeatureProjection(p FeatureProjection[T]) error {
	var layers []*Attention[T]
	for _, s := range t.model.subs {
		if a, ok := s.layer.(*Attention[T]); ok && a.kind == arch.KindPerformer && !arch.FittedFamily(a.family) {
			layers = append(layers, a)
		}
	}
	if len(layers) == 0 {
		return errors.New("native: the model has no attention layer with a fixed feature projection (performer with favor+ or simrf)")
	}
	for i, a := range layers {
		if p == nil {
			a.project = nil
			continue
		}
		a.project = func(dst, x []T, rows, d, m int) { p(i, a.Omega.Value, dst, x, rows, d, m) }
	}
	return nil
}

// projectFeatures sets f (L×m) to x·Ωᵀ: the exact product, or the
// layer's FeatureProjection when one is set.
func (a *Attention[T]) projectFeatures(f, x []T, L, d, m int) {
	if a.project != nil {
		a.project(f[:L*m], x[:L*d], L, d, m)
		return
	}
	gemm(false, true, L, m, d, 1, x, d, a.Omega.Value, d, 0, f, m)
}
