package device

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/kernelkit/kernelkit/features"
)

// temperedForm returns the form of a tempered map (features.Temper, the
// softmax kernel exp(xᵀy/τ)): the inner map's form applied to the rows
// multiplied by 1/√τ, as the CPU map multiplies them. name describes the
// tempered map.
func temperedForm(inner features.Transformer, tau float64, name string) (*mapForm, error) {
	f, err := formOf(inner)
	if err != nil {
		return nil, err
	}
	s := 1 / math.Sqrt(tau)
	g := *f
	g.name = name
	if g.hasLower {
		g.lower = f.lower / s // the inner map's domain, x/√τ > lower
	}
	build := f.build
	g.build = func(x *graph.Node, p []*graph.Node, scaled bool) (z, ls *graph.Node) {
		return build(graph.MulScalar(x, s), p, scaled)
	}
	return &g, nil
}
