package nn

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/arch"
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
	op := toeplitzOp(t, coef)
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
	plan, err := arch.NewSKIPlan(n, r, grid, lambda)
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
	fn := func(in []*Node) *Node { return SKI(plan, in[0], in[1], in[2]) }
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

// checkFFTForms checks, on backend b, the circulant (FFT-form) operators
// with the transform pair f against the dense forms, at lengths 1, 2, 7
// and 8.
func checkFFTForms(t *testing.T, b backends.Backend, f realDFT, tol float64) {
	t.Helper()
	for _, n := range []int{1, 2, 7, 8} {
		const bs, d = 2, 3
		x := randArr(1, 1, bs, n, d)
		coef := randArr(2, 1, 2*n-1, d)
		k := randArr(3, 1, n+1, d)
		k2 := randArr(4, 1, n+1, d)
		name := func(s string) string { return fmt.Sprintf("%s n=%d (%T on %s)", s, n, f, b.Name()) }
		assertClose(t, name("ToeplitzFFT"),
			evalOn(t, b, func(in []*Node) *Node { return toeplitzCirculant(f, in[0], in[1]) }, x, coef),
			evalOn(t, b, func(in []*Node) *Node { return ToeplitzDense(in[0], in[1]) }, x, coef), tol)
		assertClose(t, name("FDCausalFFT"),
			evalOn(t, b, func(in []*Node) *Node { return fdCausalCirculant(f, in[0], in[1]) }, x, k),
			evalOn(t, b, func(in []*Node) *Node { return ToeplitzDense(in[0], FDCausalCoefficients(in[1])) }, x, k), tol)
		assertClose(t, name("FDBidirectionalFFT"),
			evalOn(t, b, func(in []*Node) *Node { return fdBidirectionalCirculant(f, in[0], in[1], in[2]) }, x, k, k2),
			evalOn(t, b, func(in []*Node) *Node { return ToeplitzDense(in[0], FDBidirectionalCoefficients(in[1], in[2])) }, x, k, k2), tol)
	}
}

// evalOn runs a one-output function on backend b (float64 inputs) and
// returns its flat output.
func evalOn(t testing.TB, b backends.Backend, fn func([]*Node) *Node, in ...arr) []float64 {
	t.Helper()
	exec, err := NewExec(b, fn)
	if err != nil {
		t.Fatal(err)
	}
	args := make([]any, len(in))
	for i, a := range in {
		args[i] = a.tensor()
	}
	out, err := exec.Exec(args...)
	if err != nil {
		t.Fatal(err)
	}
	return tensors.MustCopyFlatData[float64](out[0])
}

// fftBackend returns a linked backend with the FFT op — the GoMLX
// configuration in KERNELKIT_TEST_DEVICE ("cuda" for xla:cuda), else
// xla:cuda, else xla:cpu — or nil when none opens (the default build has
// no XLA).
func fftBackend(t testing.TB) backends.Backend {
	for _, c := range []string{os.Getenv("KERNELKIT_TEST_DEVICE"), "xla:cuda", "xla:cpu"} {
		if c == "cuda" {
			c = "xla:cuda"
		}
		if c == "" {
			continue
		}
		b, err := Backend(c)
		if err != nil {
			t.Logf("backend %s: %v", c, err)
			continue
		}
		if HasFFT(b) {
			return b
		}
	}
	return nil
}

// TestFFTFormsMatchDense checks the FFT forms with the FFT op on a backend
// that has it (XLA) against the dense forms, and the FFT op against the
// DFT-matrix substitute; it skips where no such backend is linked and
// starts (the default build).
func TestFFTFormsMatchDense(t *testing.T) {
	b := fftBackend(t)
	if b == nil {
		t.Skip("no backend with the FFT op (XLA) here: the FFT forms with the FFT op are checked only where one runs; TestFFTFormsDFTMatchDense checks the same algorithm with the DFT-matrix substitute")
	}
	checkFFTForms(t, b, fftOp{}, 1e-10)
	for _, n := range []int{1, 2, 5, 8, 33} {
		x := randArr(uint64(n), 1, 3, n)
		for i := 0; i < 2; i++ {
			part := func(f realDFT) func([]*Node) *Node {
				return func(in []*Node) *Node {
					re, im := f.Forward(in[0])
					return []*Node{re, im}[i]
				}
			}
			assertClose(t, fmt.Sprintf("FFT op forward n=%d part %d", n, i), evalOn(t, b, part(fftOp{}), x), evalOn(t, b, part(dftMatrix{}), x), 1e-12)
		}
		nb := n/2 + 1
		re, im := randArr(7, 1, 3, nb), randArr(8, 1, 3, nb)
		assertClose(t, fmt.Sprintf("FFT op inverse n=%d", n),
			evalOn(t, b, func(in []*Node) *Node { return fftOp{}.Inverse(in[0], in[1], n) }, re, im),
			evalOn(t, b, func(in []*Node) *Node { return dftMatrix{}.Inverse(in[0], in[1], n) }, re, im), 1e-12)
	}
}

// TestFFTFormsDFTMatchDense runs the FFT-form algorithm (circulant
// embedding, Hilbert transform) with the DFT-matrix substitute on this
// backend and checks it against the dense forms, and that the public FFT
// forms pick the substitute on a backend without the FFT op.
func TestFFTFormsDFTMatchDense(t *testing.T) {
	checkFFTForms(t, testBackend(t), dftMatrix{}, 1e-10)
	const b, n, d = 2, 9, 4
	x := randArr(11, 1, b, n, d)
	coef := randArr(12, 1, 2*n-1, d)
	k, k2 := randArr(13, 1, n+1, d), randArr(14, 1, n+1, d)
	assertClose(t, "ToeplitzFFT",
		eval1(t, func(in []*Node) *Node { return ToeplitzFFT(in[0], in[1]) }, x, coef),
		eval1(t, func(in []*Node) *Node { return ToeplitzDense(in[0], in[1]) }, x, coef), 1e-10)
	assertClose(t, "FDCausalFFT",
		eval1(t, func(in []*Node) *Node { return FDCausalFFT(in[0], in[1]) }, x, k),
		eval1(t, func(in []*Node) *Node { return ToeplitzDense(in[0], FDCausalCoefficients(in[1])) }, x, k), 1e-10)
	assertClose(t, "FDBidirectionalFFT",
		eval1(t, func(in []*Node) *Node { return FDBidirectionalFFT(in[0], in[1], in[2]) }, x, k, k2),
		eval1(t, func(in []*Node) *Node { return ToeplitzDense(in[0], FDBidirectionalCoefficients(in[1], in[2])) }, x, k, k2), 1e-10)
	// The causal FD kernel vanishes at negative lags: output i does not
	// depend on inputs after i.
	fd := func(in []*Node) *Node { return fdCausalCirculant(dftMatrix{}, in[0], in[1]) }
	got := eval1(t, fd, x, k)
	x2 := arr{data: append([]float64(nil), x.data...), dims: x.dims}
	for i := 6 * d; i < n*d; i++ {
		x2.data[i] -= 2
	}
	assertClose(t, "causal FD (DFT) prefix", eval1(t, fd, x2, k)[:6*d], got[:6*d], 1e-12)
}

// TestDFTMatrixMatchesGonum checks the DFT-matrix substitute against
// gonum's real FFT: the same n/2+1 bins, unnormalised forward transform,
// inverse normalised by 1/n, and the imaginary parts of bin 0 and (n even)
// bin n/2 ignored by the inverse, as InverseRealFFT ignores them.
func TestDFTMatrixMatchesGonum(t *testing.T) {
	const rows = 3
	for _, n := range []int{1, 2, 3, 4, 5, 8, 15, 16, 33} {
		nb := n/2 + 1
		fft := fourier.NewFFT(n)
		x := randArr(uint64(n), 1, rows, n)
		var wantRe, wantIm []float64
		for r := 0; r < rows; r++ {
			for _, c := range fft.Coefficients(nil, x.data[r*n:(r+1)*n]) {
				wantRe, wantIm = append(wantRe, real(c)), append(wantIm, imag(c))
			}
		}
		outs := eval(t, func(in []*Node) []*Node {
			re, im := dftMatrix{}.Forward(in[0])
			return []*Node{re, im}
		}, x)
		assertClose(t, fmt.Sprintf("forward n=%d re", n), outs[0], wantRe, 1e-13)
		assertClose(t, fmt.Sprintf("forward n=%d im", n), outs[1], wantIm, 1e-13)

		re, im := randArr(uint64(100+n), 1, rows, nb), randArr(uint64(200+n), 1, rows, nb)
		var want []float64
		coef := make([]complex128, nb)
		for r := 0; r < rows; r++ {
			for k := range coef {
				v := complex(re.data[r*nb+k], im.data[r*nb+k])
				if k == 0 || 2*k == n {
					v = complex(real(v), 0)
				}
				coef[k] = v
			}
			for _, v := range fft.Sequence(nil, coef) {
				want = append(want, v/float64(n))
			}
		}
		got := eval1(t, func(in []*Node) *Node { return dftMatrix{}.Inverse(in[0], in[1], n) }, re, im)
		assertClose(t, fmt.Sprintf("inverse n=%d", n), got, want, 1e-13)
		// Round trip: Inverse(Forward(x)) = x.
		back := eval1(t, func(in []*Node) *Node {
			re, im := dftMatrix{}.Forward(in[0])
			return dftMatrix{}.Inverse(re, im, n)
		}, x)
		assertClose(t, fmt.Sprintf("round trip n=%d", n), back, x.data, 1e-13)
	}
}
