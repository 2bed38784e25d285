package nn

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/toeplitz"
)

// mlpWeights redraws the weights of toeplitz.NewMLP(hidden, d, act, seed)
// in the graph layout (W in×out): the same seeded stream, weights N(0,
// 1/fan_in) row by row (out×in) then biases N(0, 0.1²), layer by layer.
// The tests check the redraw against toeplitz.MLP.Eval before using it.
func mlpWeights(hidden []int, d int, seed uint64) (ws, bs []arr) {
	dims := append(append([]int{1}, hidden...), d)
	r := rng.New(seed)
	for l := 0; l+1 < len(dims); l++ {
		in, out := dims[l], dims[l+1]
		s := 1 / math.Sqrt(float64(in))
		w := arr{data: make([]float64, in*out), dims: []int{in, out}}
		for o := 0; o < out; o++ {
			for i := 0; i < in; i++ {
				w.data[i*out+o] = s * r.NormFloat64()
			}
		}
		b := arr{data: make([]float64, out), dims: []int{out}}
		for i := range b.data {
			b.data[i] = 0.1 * r.NormFloat64()
		}
		ws, bs = append(ws, w), append(bs, b)
	}
	return ws, bs
}

// mlpFrom builds the graph MLP from nodes laid out as W0, B0, W1, B1, ….
func mlpFrom(nodes []*Node, act Activation) MLP {
	var m MLP
	for i := 0; i+1 < len(nodes); i += 2 {
		m.W = append(m.W, nodes[i])
		m.B = append(m.B, nodes[i+1])
	}
	m.Act = act
	return m
}

func interleave(ws, bs []arr) []arr {
	var out []arr
	for i := range ws {
		out = append(out, ws[i], bs[i])
	}
	return out
}

// refApply applies a kernelkit column operator to every sequence of x
// (b×n×d) and returns the flat outputs.
func refApply(t *testing.T, x arr, apply func(*mat.Dense) (*mat.Dense, error)) []float64 {
	t.Helper()
	b, n, d := x.dims[0], x.dims[1], x.dims[2]
	var out []float64
	for i := 0; i < b; i++ {
		y, err := apply(mat.NewDense(n, d, append([]float64(nil), x.data[i*n*d:(i+1)*n*d]...)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, y.RawMatrix().Data...)
	}
	return out
}

func TestMLPMatchesToeplitzMLP(t *testing.T) {
	hidden, d := []int{5, 4}, 3
	ref, err := toeplitz.NewMLP(hidden, d, toeplitz.GeLU, 11)
	if err != nil {
		t.Fatal(err)
	}
	ws, bs := mlpWeights(hidden, d, 11)
	pts := []float64{-1, -0.3, 0, 0.25, 0.9}
	got := eval1(t, func(x []*Node) *Node {
		return mlpFrom(x[1:], activationOrDie(t, "gelu")).Apply(x[0])
	}, append([]arr{{data: pts, dims: []int{len(pts), 1}}}, interleave(ws, bs)...)...)
	var want []float64
	for _, p := range pts {
		want = append(want, ref.Eval(p)...)
	}
	assertClose(t, "MLP", got, want, 1e-12)
}

func activationOrDie(t testing.TB, name string) Activation {
	a, err := ActivationByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestToeplitzDenseMatchesOperator(t *testing.T) {
	const b, n, d = 2, 7, 3
	x := randArr(1, 1, b, n, d)
	coef := randArr(2, 1, 2*n-1, d)
	got := eval1(t, func(in []*Node) *Node { return ToeplitzDense(in[0], in[1]) }, x, coef)
	ts := make([]*toeplitz.Toeplitz, d)
	for l := range ts {
		c := make([]float64, 2*n-1)
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
	assertClose(t, "dense Toeplitz", got, refApply(t, x, op.Apply), 1e-12)
	checkGradient(t, "ToeplitzDense", func(in []*Node) *Node { return ToeplitzDense(in[0], in[1]) }, x, coef)
}

// TestTNNMatchesTNNKernels checks the TNN token mixer — RPE MLP of k/n,
// decay λ^|k|, Toeplitz product — against toeplitz.TNNKernels and
// toeplitz.Operator.
func TestTNNMatchesTNNKernels(t *testing.T) {
	const b, n, d, lambda = 2, 9, 3, 0.9
	hidden := []int{6}
	for _, act := range []string{"relu", "gelu", "silu"} {
		fn, _ := toeplitz.ActivationByName(act)
		rpe, err := toeplitz.NewMLP(hidden, d, fn, 5)
		if err != nil {
			t.Fatal(err)
		}
		ks, err := toeplitz.TNNKernels(rpe, n, lambda)
		if err != nil {
			t.Fatal(err)
		}
		op, err := toeplitz.NewOperator(ks)
		if err != nil {
			t.Fatal(err)
		}
		ws, bs := mlpWeights(hidden, d, 5)
		x := randArr(3, 1, b, n, d)
		tnn := func(in []*Node) *Node {
			m := mlpFrom(in[1:], activationOrDie(t, act))
			return ToeplitzDense(in[0], TNNCoefficients(in[0].Graph(), m, n, lambda))
		}
		args := append([]arr{x}, interleave(ws, bs)...)
		assertClose(t, "TNN "+act, eval1(t, tnn, args...), refApply(t, x, op.Apply), 1e-12)
		if act != "relu" { // ReLU's kink makes central differences unreliable
			checkGradient(t, "TNN "+act, tnn, args...)
		}
	}
}

func TestSKIMatchesToeplitzSKI(t *testing.T) {
	const b, n, d, r, grid, m, lambda = 2, 23, 3, 6, 7, 4, 0.8
	plan, err := NewSKIPlan(n, r, grid, lambda)
	if err != nil {
		t.Fatal(err)
	}
	vals := randArr(4, 1, grid, d)
	filt := randArr(5, 1, m, d)
	x := randArr(6, 1, b, n, d)
	pl, err := toeplitz.NewPiecewiseLinear(grid, d, vals.data)
	if err != nil {
		t.Fatal(err)
	}
	kernels := make([]func(float64) float64, d)
	filters := make([][]float64, d)
	for l := range kernels {
		kernels[l] = pl.Kernel(l, lambda)
		for j := 0; j < m; j++ {
			filters[l] = append(filters[l], filt.data[j*d+l])
		}
	}
	ski, err := toeplitz.NewSKI(n, r, toeplitz.Linear, kernels, filters)
	if err != nil {
		t.Fatal(err)
	}
	fn := func(in []*Node) *Node { return plan.SKI(in[0], in[1], in[2]) }
	assertClose(t, "SKI", eval1(t, fn, x, vals, filt), refApply(t, x, ski.Apply), 1e-12)
	// The piecewise linear RPE has kinks at grid points, but the warped
	// offsets are fixed, so the output is linear in values and filter (and
	// x): central differences are exact up to rounding.
	checkGradient(t, "SKI", fn, x, vals, filt)
}

func TestSparseConvOffsets(t *testing.T) {
	// Width-2 filter: taps at offsets 0 and 1 (one more lag than lead).
	x := arr{data: []float64{1, 2, 3, 4}, dims: []int{1, 4, 1}}
	f := arr{data: []float64{10, 1}, dims: []int{2, 1}}
	got := eval1(t, func(in []*Node) *Node { return SparseConv(in[0], in[1]) }, x, f)
	want := []float64{10, 21, 32, 43} // y_i = 10 x_i + x_{i−1}
	assertClose(t, "SparseConv", got, want, 0)
}

func TestFDMatchesToeplitzFD(t *testing.T) {
	const b, n, d = 2, 8, 3
	hidden := []int{5}
	x := randArr(7, 1, b, n, d)
	t.Run("causal", func(t *testing.T) {
		rpe, err := toeplitz.NewMLP(hidden, d, toeplitz.SiLU, 8)
		if err != nil {
			t.Fatal(err)
		}
		fd, err := toeplitz.NewCausalFD(n, toeplitz.MLPResponse(rpe))
		if err != nil {
			t.Fatal(err)
		}
		ws, bs := mlpWeights(hidden, d, 8)
		fn := func(in []*Node) *Node {
			m := mlpFrom(in[1:], silu)
			khat := m.Apply(FDInput(in[0].Graph(), in[0].DType(), n))
			return ToeplitzDense(in[0], FDCausalCoefficients(khat))
		}
		args := append([]arr{x}, interleave(ws, bs)...)
		got := eval1(t, fn, args...)
		assertClose(t, "causal FD", got, refApply(t, x, fd.Apply), 1e-12)
		// Causality: output i does not depend on inputs after i.
		x2 := arr{data: append([]float64(nil), x.data...), dims: x.dims}
		for i := 5 * d; i < n*d; i++ {
			x2.data[i] += 3
		}
		got2 := eval1(t, fn, append([]arr{x2}, interleave(ws, bs)...)...)
		assertClose(t, "causal FD prefix", got2[:5*d], got[:5*d], 1e-12)
		checkGradient(t, "causal FD", fn, args...)
	})
	t.Run("bidirectional", func(t *testing.T) {
		rpe, err := toeplitz.NewMLP(hidden, 2*d, toeplitz.SiLU, 9)
		if err != nil {
			t.Fatal(err)
		}
		fd, err := toeplitz.NewBidirectionalFD(n, toeplitz.MLPResponse(rpe))
		if err != nil {
			t.Fatal(err)
		}
		ws, bs := mlpWeights(hidden, 2*d, 9)
		fn := func(in []*Node) *Node {
			m := mlpFrom(in[1:], silu)
			k := m.Apply(FDInput(in[0].Graph(), in[0].DType(), n))
			re := SelectColumns(k, 0, d)
			im := SelectColumns(k, d, 2*d)
			return ToeplitzDense(in[0], FDBidirectionalCoefficients(re, im))
		}
		args := append([]arr{x}, interleave(ws, bs)...)
		assertClose(t, "bidirectional FD", eval1(t, fn, args...), refApply(t, x, fd.Apply), 1e-12)
		checkGradient(t, "bidirectional FD", fn, args...)
	})
}

// TestFFTFormsMatchDense checks the FFT forms (for XLA) against the dense
// forms; it needs a backend with the FFT op.
func TestFFTFormsMatchDense(t *testing.T) {
	if !HasFFT(testBackend(t)) {
		t.Skipf("backend %s has no FFT op: the FFT forms of ToeplitzFFT, FDCausalFFT and FDBidirectionalFFT are checked only where it has one (XLA)", testBackend(t).Name())
	}
	const b, n, d = 2, 8, 3
	x := randArr(1, 1, b, n, d)
	coef := randArr(2, 1, 2*n-1, d)
	k := randArr(3, 1, n+1, d)
	k2 := randArr(4, 1, n+1, d)
	assertClose(t, "ToeplitzFFT",
		eval1(t, func(in []*Node) *Node { return ToeplitzFFT(in[0], in[1]) }, x, coef),
		eval1(t, func(in []*Node) *Node { return ToeplitzDense(in[0], in[1]) }, x, coef), 1e-10)
	assertClose(t, "FDCausalFFT",
		eval1(t, func(in []*Node) *Node { return FDCausalFFT(in[0], in[1]) }, x, k),
		eval1(t, func(in []*Node) *Node { return ToeplitzDense(in[0], FDCausalCoefficients(in[1])) }, x, k), 1e-10)
	assertClose(t, "FDBidirectionalFFT",
		eval1(t, func(in []*Node) *Node { return FDBidirectionalFFT(in[0], in[1], in[2]) }, x, k, k2),
		eval1(t, func(in []*Node) *Node { return ToeplitzDense(in[0], FDBidirectionalCoefficients(in[1], in[2])) }, x, k, k2), 1e-10)
}
