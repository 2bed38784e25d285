package toeplitz

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/sampler"
)

// causalOp is a causal operator on n×d sequences, with its name.
type causalOp struct {
	name  string
	apply func(x *mat.Dense) (*mat.Dense, error)
}

// causalOps returns the causal operators of the package for sequences of
// length n with d channels: causal Toeplitz matrices (t_k = 0 for k < 0)
// applied by FFT — one matrix alone (Spectrum.MulVec) and one per channel
// (Operator) — and FD-TNO made causal by the discrete Hilbert transform,
// with GeLU, SiLU and ReLU frequency-domain MLPs. SKI has no causal variant
// (see the package documentation).
func causalOps(t *testing.T, n, d int) []causalOp {
	t.Helper()
	var ts []*Toeplitz
	for l := 0; l < d; l++ {
		c := randVec(2*n-1, uint64(100+l))
		for k := 0; k < n-1; k++ { // lags −(n−1)…−1
			c[k] = 0
		}
		tp, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tp)
	}
	op, err := NewOperator(ts)
	if err != nil {
		t.Fatal(err)
	}
	spec := ts[0].Spectrum()
	ops := []causalOp{
		{"causal Toeplitz (Operator)", op.Apply},
		{"causal Toeplitz (Spectrum.MulVec)", func(x *mat.Dense) (*mat.Dense, error) {
			y := mat.NewDense(n, d, nil)
			for l := 0; l < d; l++ {
				col, err := spec.MulVec(mat.Col(nil, l, x))
				if err != nil {
					return nil, err
				}
				y.SetCol(l, col)
			}
			return y, nil
		}},
	}
	for _, act := range []string{"gelu", "silu", "relu"} {
		a, err := ActivationByName(act)
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewMLP([]int{16, 16}, d, a, 11)
		if err != nil {
			t.Fatal(err)
		}
		fd, err := NewCausalFD(n, MLPResponse(m))
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, causalOp{"FD-TNO causal " + act, fd.Apply})
	}
	return ops
}

// TestCausalityProperty: for every causal operator, output rows 0…t do not
// change when the input rows after t change — to zeros, or to new random
// rows of size 1 or 30 — beyond the roundoff of the FFT:
// |Δy_i| ≤ 1e-12·max_{j≤t}|y_j| for every row i ≤ t (the largest change
// seen is 2.8e-13 of it, for n = 257 and later rows of size 30). A kernel
// coefficient at a negative lag of relative size 1e-12 or more would fail
// it. Sequence lengths include non-powers of two, and t the first rows and
// the last but one.
func TestCausalityProperty(t *testing.T) {
	const d = 3
	for _, n := range []int{1, 2, 7, 64, 100, 257} {
		x, _ := sampler.Gaussian{}.Sample(n, d, uint64(n))
		for _, op := range causalOps(t, n, d) {
			y, err := op.apply(x)
			if err != nil {
				t.Fatal(err)
			}
			for _, t0 := range []int{0, n / 3, n / 2, n - 2} {
				if t0 < 0 {
					continue
				}
				for _, scale := range []float64{0, 1, 30} {
					x2 := mat.DenseCopyOf(x)
					late, _ := sampler.Gaussian{}.Sample(n, d, uint64(1000+t0))
					for i := t0 + 1; i < n; i++ {
						row := x2.RawRowView(i)
						copy(row, late.RawRowView(i))
						floats.Scale(scale, row)
					}
					y2, err := op.apply(x2)
					if err != nil {
						t.Fatal(err)
					}
					ref := mat.Norm(y.Slice(0, t0+1, 0, d), math.Inf(1))
					for i := 0; i <= t0; i++ {
						if e := floats.Distance(y.RawRowView(i), y2.RawRowView(i), math.Inf(1)); e > 1e-12*ref {
							t.Errorf("%s, n=%d, t=%d, later rows ×%g: row %d changed by %.3g (scale %.3g)", op.name, n, t0, scale, i, e, ref)
							break
						}
					}
				}
			}
		}
	}
}

// TestCausalFDKernel: the time-domain kernel of a causal FD-TNO channel is
// zero at negative lags (to roundoff, relative to its largest coefficient)
// and its FFT product equals the direct product with that kernel.
func TestCausalFDKernel(t *testing.T) {
	const d = 2
	for _, n := range []int{1, 5, 64, 129} {
		m, _ := NewMLP([]int{16}, d, GeLU, 13)
		fd, err := NewCausalFD(n, MLPResponse(m))
		if err != nil {
			t.Fatal(err)
		}
		x, _ := sampler.Gaussian{}.Sample(n, d, 14)
		y, err := fd.Apply(x)
		if err != nil {
			t.Fatal(err)
		}
		for l := 0; l < d; l++ {
			k := fd.Kernel(l)
			var big, neg float64
			for lag := -(n - 1); lag < n; lag++ {
				big = math.Max(big, math.Abs(k.Coef(lag)))
				if lag < 0 {
					neg = math.Max(neg, math.Abs(k.Coef(lag)))
				}
			}
			if neg > 1e-13*big {
				t.Errorf("n=%d, channel %d: kernel %.3g at a negative lag (largest coefficient %.3g)", n, l, neg, big)
			}
			want := k.MulVecDirect(mat.Col(nil, l, x))
			if e := maxDiff(mat.Col(nil, l, y), want); e > 1e-12*math.Max(1, floats.Norm(want, math.Inf(1))) {
				t.Errorf("n=%d, channel %d: FD product differs from its kernel's direct product by %.3g", n, l, e)
			}
		}
	}
}
