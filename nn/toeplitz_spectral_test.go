package nn

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/toeplitz"
)

// toeplitzOp returns kernelkit's toeplitz.Operator of the coefficients
// coef ((2n−1)×d, row k+n−1 holding t_k of every channel).
func toeplitzOp(t *testing.T, coef arr) *toeplitz.Operator {
	t.Helper()
	n2, d := coef.dims[0], coef.dims[1]
	ts := make([]*toeplitz.Toeplitz, d)
	for l := range ts {
		c := make([]float64, n2)
		for k := range c {
			c[k] = coef.data[k*d+l]
		}
		var err error
		if ts[l], err = toeplitz.New(c); err != nil {
			t.Fatal(err)
		}
	}
	op, err := toeplitz.NewOperator(ts)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// toeplitzRef applies kernelkit's toeplitz.Operator (one Toeplitz matrix
// per channel, coefficients coef ((2n−1)×d)) to every sequence of x
// (B×n×d).
func toeplitzRef(t *testing.T, x, coef arr) []float64 {
	t.Helper()
	b, n, d := x.dims[0], x.dims[1], x.dims[2]
	op := toeplitzOp(t, coef)
	var out []float64
	for i := 0; i < b; i++ {
		y, err := op.Apply(mat.NewDense(n, d, append([]float64(nil), x.data[i*n*d:(i+1)*n*d]...)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, y.RawMatrix().Data...)
	}
	return out
}

// TestToeplitzSpectralMatchesOperator checks the block-DFT Toeplitz
// product against toeplitz.Operator to 1e-12 for lengths that are and are
// not multiples of the block (zero padding), blocks of 2 up to the whole
// length, and the default block; and its gradient with respect to the
// inputs and the coefficients against central differences.
func TestToeplitzSpectralMatchesOperator(t *testing.T) {
	for _, tc := range []struct{ b, n, d, block int }{
		{2, 1, 2, 0}, {2, 2, 3, 2}, {1, 5, 2, 2}, {2, 7, 3, 3}, {2, 8, 3, 4}, {3, 9, 2, 4},
		{2, 12, 3, 0}, {1, 16, 2, 5}, {2, 16, 2, 16}, {1, 70, 2, 0},
	} {
		name := fmt.Sprintf("B=%d n=%d d=%d block=%d", tc.b, tc.n, tc.d, tc.block)
		x := randArr(1, 1, tc.b, tc.n, tc.d)
		coef := randArr(2, 1, 2*tc.n-1, tc.d)
		want := toeplitzRef(t, x, coef)
		fn := func(in []*Node) *Node { return ToeplitzSpectral(in[0], in[1], tc.block) }
		assertClose(t, name, eval1(t, fn, x, coef), want, 1e-12)
		if tc.n <= 16 {
			checkGradient(t, name, fn, x, coef)
		}
	}
}

// TestToeplitzSpectralFloat32 checks the block-DFT product in float32, as
// training runs it, at a length of 300 (blocks of 32, padded to 320):
// within 2e-6 (relative to the largest output; 2.2e-7 observed) of
// kernelkit's float64 operator, the accuracy of float32 sums of that
// length.
func TestToeplitzSpectralFloat32(t *testing.T) {
	x, coef := randArr(4, 1, 2, 300, 2), randArr(5, 1, 599, 2)
	got := eval1(t, func(in []*Node) *Node {
		return ConvertDType(ToeplitzSpectral(ConvertDType(in[0], dtypes.Float32), ConvertDType(in[1], dtypes.Float32), 0), dtypes.Float64)
	}, x, coef)
	assertClose(t, "float32", got, toeplitzRef(t, x, coef), 2e-6)
}

// TestFDBidirectionalSpectralMatchesFD checks the block-spectrum FD-TNO
// against toeplitz.NewBidirectionalFD on the same response table (whose
// imaginary parts at ω = 0 and π are ignored) to 1e-12, for lengths with
// blocks dividing them (default and given), a block that does not divide
// the length and a prime length (both through the time-domain
// coefficients), and its gradient with respect to the inputs and both
// parts of the response against central differences.
func TestFDBidirectionalSpectralMatchesFD(t *testing.T) {
	for _, tc := range []struct{ b, n, d, block int }{
		{2, 8, 3, 0}, {2, 8, 2, 2}, {1, 12, 2, 0}, {2, 12, 2, 6}, {1, 9, 2, 3}, {2, 10, 2, 4}, {1, 7, 2, 0}, {2, 2, 2, 0}, {1, 64, 2, 0},
	} {
		name := fmt.Sprintf("B=%d n=%d d=%d block=%d", tc.b, tc.n, tc.d, tc.block)
		x := randArr(1, 1, tc.b, tc.n, tc.d)
		re, im := randArr(2, 1, tc.n+1, tc.d), randArr(3, 1, tc.n+1, tc.d)
		fd, err := toeplitz.NewBidirectionalFD(tc.n, func(w float64) []float64 {
			m := int(math.Round(w * float64(tc.n) / math.Pi))
			return append(append([]float64(nil), re.data[m*tc.d:(m+1)*tc.d]...), im.data[m*tc.d:(m+1)*tc.d]...)
		})
		if err != nil {
			t.Fatal(err)
		}
		var want []float64
		for i := 0; i < tc.b; i++ {
			y, err := fd.Apply(mat.NewDense(tc.n, tc.d, append([]float64(nil), x.data[i*tc.n*tc.d:(i+1)*tc.n*tc.d]...)))
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, y.RawMatrix().Data...)
		}
		fn := func(in []*Node) *Node { return FDBidirectionalSpectral(in[0], in[1], in[2], tc.block) }
		assertClose(t, name, eval1(t, fn, x, re, im), want, 1e-12)
		if tc.n <= 12 {
			checkGradient(t, name, fn, x, re, im)
		}
	}
}

// TestSliceAxesGradient checks the Pad-free backward pass of sliceAxes
// (slices inside, at the start and at the end of axes) against central
// differences.
func TestSliceAxesGradient(t *testing.T) {
	x := randArr(3, 1, 4, 5, 3)
	for _, b := range []struct{ starts, limits []int }{
		{[]int{1, 0, 0}, []int{3, 5, 3}}, {[]int{0, 2, 1}, []int{4, 5, 2}}, {[]int{0, 0, 0}, []int{4, 5, 3}}, {[]int{3, 1, 0}, []int{4, 4, 3}},
	} {
		fn := func(in []*Node) *Node {
			return Mul(sliceAxes(in[0], b.starts, b.limits), sliceAxes(in[0], b.starts, b.limits))
		}
		checkGradient(t, fmt.Sprintf("slice %v:%v", b.starts, b.limits), fn, x)
	}
}

// BenchmarkToeplitzTrain times the Toeplitz product of a TNN training
// step at length 512 (B = 8, d = 32): forward and gradients with respect to
// the inputs and the coefficients, dense and by block DFT (blocks of 8, 16,
// 32; the default for n = 512 is 32); and the bidirectional FD-TNO from its
// response, through the time-domain coefficients and by block spectrum.
func BenchmarkToeplitzTrain(b *testing.B) {
	x, coef := f32(8, 512, 32), f32(1023, 32)
	step := func(op func(x, c *Node) *Node) func([]*Node) *Node {
		return func(in []*Node) *Node {
			y := op(in[0], in[1])
			g := Gradient(ReduceAllSum(Mul(y, y)), in[0], in[1])
			return Add(ReduceAllSum(g[0]), ReduceAllSum(g[1]))
		}
	}
	b.Run("dense", func(b *testing.B) { benchGraph(b, step(ToeplitzDense), x, coef) })
	for _, blk := range []int{8, 16, 32} {
		b.Run(fmt.Sprintf("spectral-%d", blk), func(b *testing.B) {
			benchGraph(b, step(func(x, c *Node) *Node { return ToeplitzSpectral(x, c, blk) }), x, coef)
		})
	}
	// FD-TNO from a response (n+1)×d, re and im: the first 513 rows of coef
	// stand for both.
	fd := func(f func(x, re, im *Node) *Node) func([]*Node) *Node {
		return func(in []*Node) *Node {
			re := Slice(in[1], AxisRange(0, 513))
			im := Slice(in[1], AxisRange(1, 514))
			y := f(in[0], re, im)
			g := Gradient(ReduceAllSum(Mul(y, y)), in[0], re, im)
			return Add(Add(ReduceAllSum(g[0]), ReduceAllSum(g[1])), ReduceAllSum(g[2]))
		}
	}
	b.Run("fd-coefficients", func(b *testing.B) {
		benchGraph(b, fd(func(x, re, im *Node) *Node { return ToeplitzSpectral(x, FDBidirectionalCoefficients(re, im), 0) }), x, coef)
	})
	b.Run("fd-spectral", func(b *testing.B) {
		benchGraph(b, fd(func(x, re, im *Node) *Node { return FDBidirectionalSpectral(x, re, im, 0) }), x, coef)
	})
}
