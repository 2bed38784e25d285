package nn

import (
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
)

// TestFastDotGradientMatchesGoMLX compares the fast DotGeneral backward
// pass with GoMLX's own (graph.Einsum builds DotGenerals this package did
// not record, so they keep GoMLX's VJP) on products with batch, contracted,
// free and summed-out axes in various positions.
func TestFastDotGradientMatchesGoMLX(t *testing.T) {
	for _, tc := range []struct {
		eq     string
		ld, rd []int
	}{
		{"ij,jk->ik", []int{3, 4}, []int{4, 5}},
		{"bld,bsd->bls", []int{2, 3, 4}, []int{2, 5, 4}},
		{"bhld,bhsd->bhls", []int{2, 2, 3, 4}, []int{2, 2, 5, 4}},
		{"dij,bjd->bid", []int{3, 4, 4}, []int{2, 4, 3}},
		{"bnd,nr->brd", []int{2, 5, 3}, []int{5, 4}},
		{"jnbd,jd->bnd", []int{3, 4, 2, 5}, []int{3, 5}},
		{"zniv,an->zaiv", []int{2, 3, 4, 5}, []int{3, 3}},
		{"md,pd->pm", []int{4, 3}, []int{6, 3}},
		{"ij,jk->ki", []int{3, 4}, []int{4, 5}},
	} {
		l, r := randArr(1, 1, tc.ld...), randArr(2, 1, tc.rd...)
		grads := func(f func(eq string, a, b *Node) *Node) [][]float64 {
			return eval(t, func(x []*Node) []*Node {
				y := f(tc.eq, x[0], x[1])
				w := Const(y.Graph(), randArr(3, 1, y.Shape().Dimensions...).tensor())
				return append([]*Node{y}, Gradient(ReduceAllSum(Mul(y, w)), x[0], x[1])...)
			}, l, r)
		}
		fast, ref := grads(einsum), grads(Einsum)
		for i, what := range []string{"value", "∂lhs", "∂rhs"} {
			assertClose(t, tc.eq+" "+what, fast[i], ref[i], 1e-12)
		}
	}
}
