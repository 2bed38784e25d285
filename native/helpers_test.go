package native

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/nn"
)

// arr is a float64 array with its dimensions, an input of a reference
// graph.
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
	b, err := nn.Backend("")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// eval runs fn on the inputs (float64) with GoMLX's pure-Go backend (nn.DefaultBackend) and
// returns its flat outputs.
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

// relDiff returns the largest absolute difference between got and want
// relative to the largest |want| (the scale of the quantity compared).
func relDiff(got, want []float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var scale, m float64
	for i := range want {
		scale = math.Max(scale, math.Abs(want[i]))
		m = math.Max(m, math.Abs(got[i]-want[i]))
	}
	if scale == 0 {
		return m
	}
	return m / scale
}

func assertClose(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	d := relDiff(got, want)
	if testing.Verbose() {
		t.Logf("%s: relative difference %.3g over %d values", what, d, len(want))
	}
	if !(d <= tol) {
		t.Errorf("%s: max difference %.3g relative to max |want| exceeds %.1g", what, d, tol)
	}
}

// Tolerances: the engine and the GoMLX graph compute the same float64
// expressions with sums in different orders (BLAS blocking, FFT against
// dense Toeplitz products); on these tiny shapes (sums of ≤ a few hundred
// terms of size O(1)) the differences are a few hundred ulps of the
// largest term, far below 1e-10 of the result's scale.
const (
	fwdTol  = 1e-10
	gradTol = 1e-9
)

// identityMixer is a token mixer that passes its input and gradient
// through, so that a test or benchmark sees the GTU alone.
type identityMixer[T Float] struct{}

func (identityMixer[T]) Params() []*Param[T]         { return nil }
func (identityMixer[T]) Forward(x []T, _, _ int) []T { return x }
func (identityMixer[T]) Backward(dy []T) []T         { return dy }
