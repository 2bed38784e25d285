package nn

import (
	"fmt"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL

	"github.com/kernelkit/kernelkit/arch"
)

// TestSparseConvShiftedMatchesSparseConv checks the slice form of the
// sparse convolution against SparseConv (the gather form, itself tested
// against toeplitz.SKI's filters) for odd and even filter widths, a width
// of one and a filter longer than the sequence, to 1e-12, and its gradient
// against central differences; and SKI with it against SKIPlan.SKI.
func TestSparseConvShiftedMatchesSparseConv(t *testing.T) {
	for _, tc := range []struct{ b, n, d, m int }{{2, 7, 3, 3}, {1, 6, 2, 4}, {2, 5, 2, 1}, {1, 4, 2, 7}} {
		name := fmt.Sprintf("B=%d n=%d d=%d m=%d", tc.b, tc.n, tc.d, tc.m)
		x, f := randArr(1, 1, tc.b, tc.n, tc.d), randArr(2, 1, tc.m, tc.d)
		fn := func(in []*Node) *Node { return sparseConvShifted(in[0], in[1]) }
		assertClose(t, name, eval1(t, fn, x, f), eval1(t, func(in []*Node) *Node { return SparseConv(in[0], in[1]) }, x, f), 1e-12)
		checkGradient(t, name, fn, x, f)
	}
	const b, n, d, r, grid, m = 2, 11, 2, 4, 7, 3
	plan, err := arch.NewSKIPlan(n, r, grid, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	x, vals, f := randArr(3, 1, b, n, d), randArr(4, 1, grid, d), randArr(5, 1, m, d)
	fn := func(in []*Node) *Node { return skiShifted(plan, in[0], in[1], in[2]) }
	assertClose(t, "SKI", eval1(t, fn, x, vals, f), eval1(t, func(in []*Node) *Node { return SKI(plan, in[0], in[1], in[2]) }, x, vals, f), 1e-12)
	checkGradient(t, "SKI", fn, x, vals, f)
}
