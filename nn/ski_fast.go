package nn

import (
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// sparseConvShifted is SparseConv (y_i = Σ_j f_j x_{i−o_j}, o_j = j −
// ⌊(m−1)/2⌋, zero outside the sequence) computed from m shifted slices of
// the zero-padded input, each weighted by its tap: element-wise work of
// O(m·n·d) per sequence like SparseConv's gather, but with slices (whose
// backward pass concatenates zeros, see sliceAxes) instead of a gather and
// a scatter, which the pure-Go backend runs element by element (15 % of a
// SKI-TNN step at n = 512). It panics on mismatched shapes.
func sparseConvShifted(x, filter *Node) *Node {
	g := x.Graph()
	b, n, d := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	m := filter.Shape().Dim(0)
	if filter.Rank() != 2 || filter.Shape().Dim(1) != d {
		panic(fmt.Sprintf("nn: filter %s for inputs %s", filter.Shape(), x.Shape()))
	}
	c := (m - 1) / 2
	// xp[i'] = x[i' − (m−1−c)]: x_{i−o_j} = xp[i + m−1−j].
	parts := []*Node{}
	if m-1-c > 0 {
		parts = append(parts, Zeros(g, shapes.Make(x.DType(), b, m-1-c, d)))
	}
	parts = append(parts, x)
	if c > 0 {
		parts = append(parts, Zeros(g, shapes.Make(x.DType(), b, c, d)))
	}
	xp := x
	if len(parts) > 1 {
		xp = Concatenate(parts, 1)
	}
	var y *Node
	for j := 0; j < m; j++ {
		s := m - 1 - j
		sh := xp
		if m > 1 {
			sh = sliceAxes(xp, []int{0, s, 0}, []int{b, s + n, d})
		}
		term := Mul(sh, Reshape(sliceAxes(filter, []int{j, 0}, []int{j + 1, d}), 1, 1, d))
		if y == nil {
			y = term
		} else {
			y = Add(y, term)
		}
	}
	return y
}

// skiShifted is SKI with the sparse convolution computed by
// sparseConvShifted (no gather or scatter); equal to SKI to rounding.
func skiShifted(p *SKIPlan, x, values, filter *Node) *Node {
	return ski(p, x, values, filter, sparseConvShifted)
}
