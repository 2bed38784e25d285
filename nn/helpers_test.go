package nn

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/kernelkit/kernelkit/internal/rng"
)

// arr is a float64 array with its dimensions, an input of a test graph.
type arr struct {
	data []float64
	dims []int
}

func randArr(seed uint64, scale float64, dims ...int) arr {
	n := 1
	for _, d := range dims {
		n *= d
	}
	r := rng.New(seed)
	a := arr{data: make([]float64, n), dims: dims}
	for i := range a.data {
		a.data[i] = scale * r.NormFloat64()
	}
	return a
}

func (a arr) tensor() *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(append([]float64(nil), a.data...), a.dims...)
}

func testBackend(t testing.TB) backends.Backend {
	t.Helper()
	b, err := Backend("")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// eval runs fn on the inputs (float64) and returns its flat outputs.
func eval(t testing.TB, fn func([]*Node) []*Node, in ...arr) [][]float64 {
	t.Helper()
	exec, err := NewExec(testBackend(t), fn)
	if err != nil {
		t.Fatal(err)
	}
	args := make([]any, len(in))
	for i, a := range in {
		args[i] = a.tensor()
	}
	outs, err := exec.Exec(args...)
	if err != nil {
		t.Fatal(err)
	}
	res := make([][]float64, len(outs))
	for i, o := range outs {
		res[i] = tensors.MustCopyFlatData[float64](o)
	}
	return res
}

// eval1 runs a one-output function.
func eval1(t testing.TB, fn func([]*Node) *Node, in ...arr) []float64 {
	t.Helper()
	return eval(t, func(x []*Node) []*Node { return []*Node{fn(x)} }, in...)[0]
}

// close reports the largest absolute difference between a and b relative
// to max(1, max|b|).
func maxRelDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	scale := 1.0
	for _, v := range b {
		scale = math.Max(scale, math.Abs(v))
	}
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m / scale
}

func assertClose(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	if d := maxRelDiff(got, want); !(d <= tol) {
		t.Errorf("%s: max difference %.3g (relative to max(1, |want|)) exceeds %.1g", what, d, tol)
	}
}

// checkGradient compares GoMLX's gradient of L = Σ w ⊙ fn(inputs), w a
// fixed random weighting, with central differences (step h, float64) at up
// to maxPer entries of each input. Central differences have truncation
// error O(h²·f”') and rounding error O(ε/h); with h = 1e-5 both are below
// 1e-8 relative for the smooth functions tested.
func checkGradient(t *testing.T, name string, fn func([]*Node) *Node, in ...arr) {
	t.Helper()
	const h, tol, maxPer = 1e-5, 1e-6, 24
	outLen := len(eval1(t, fn, in...))
	w := randArr(99, 1, outLen)
	loss := func(x []*Node) *Node {
		y := fn(x)
		return ReduceAllSum(Mul(Reshape(y, outLen), Const(y.Graph(), w.data)))
	}
	grads := eval(t, func(x []*Node) []*Node { return Gradient(loss(x), x...) }, in...)
	exec, err := NewExec(testBackend(t), func(x []*Node) *Node { return loss(x) })
	if err != nil {
		t.Fatal(err)
	}
	at := func(args []arr) float64 {
		a := make([]any, len(args))
		for i, v := range args {
			a[i] = v.tensor()
		}
		out, err := exec.Exec(a...)
		if err != nil {
			t.Fatal(err)
		}
		return tensors.ToScalar[float64](out[0])
	}
	r := rng.New(7)
	for i := range in {
		idx := r.Perm(len(in[i].data))
		if len(idx) > maxPer {
			idx = idx[:maxPer]
		}
		var worst float64
		for _, e := range idx {
			args := append([]arr(nil), in...)
			orig := in[i].data
			pert := append([]float64(nil), orig...)
			args[i] = arr{data: pert, dims: in[i].dims}
			pert[e] = orig[e] + h
			fp := at(args)
			pert[e] = orig[e] - h
			fm := at(args)
			fd := (fp - fm) / (2 * h)
			g := grads[i][e]
			worst = math.Max(worst, math.Abs(fd-g)/math.Max(1, math.Abs(fd)))
		}
		if !(worst <= tol) {
			t.Errorf("%s: input %d: gradient differs from central differences by %.3g (relative), tolerance %.1g", name, i, worst, tol)
		}
	}
}
