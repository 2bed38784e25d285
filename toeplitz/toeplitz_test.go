package toeplitz

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/sampler"
)

func randVec(n int, seed uint64) []float64 {
	g, _ := sampler.Gaussian{}.Sample(1, n, seed)
	return g.RawRowView(0)
}

func maxDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

func TestFFTMatchesDense(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 64, 100, 257} {
		tp, err := New(randVec(2*n-1, uint64(n)))
		if err != nil {
			t.Fatal(err)
		}
		x := randVec(n, 99)
		var want mat.VecDense
		want.MulVec(tp.Dense(), mat.NewVecDense(n, x))
		got, err := tp.Spectrum().MulVec(x)
		if err != nil {
			t.Fatal(err)
		}
		if e := maxDiff(got, want.RawVector().Data); e > 1e-11*math.Sqrt(float64(n)) {
			t.Errorf("n=%d: FFT product differs from dense by %g", n, e)
		}
		if e := maxDiff(tp.MulVecDirect(x), want.RawVector().Data); e > 1e-12*float64(n) {
			t.Errorf("n=%d: direct product differs by %g", n, e)
		}
	}
}

func TestOperatorChannels(t *testing.T) {
	const n, d = 50, 5
	var ts []*Toeplitz
	for l := 0; l < d; l++ {
		tp, _ := New(randVec(2*n-1, uint64(l+10)))
		ts = append(ts, tp)
	}
	op, err := NewOperator(ts)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := sampler.Gaussian{}.Sample(n, d, 3)
	y, err := op.Apply(x)
	if err != nil {
		t.Fatal(err)
	}
	for l := 0; l < d; l++ {
		want := ts[l].MulVecDirect(mat.Col(nil, l, x))
		if e := maxDiff(mat.Col(nil, l, y), want); e > 1e-11 {
			t.Errorf("channel %d differs by %g", l, e)
		}
	}
	if _, err := op.Apply(mat.NewDense(n, d+1, nil)); err == nil {
		t.Error("wrong channel count accepted")
	}
}

func TestInterpolationWeights(t *testing.T) {
	for _, c := range []struct{ n, r int }{{100, 7}, {64, 64}, {1000, 33}, {5, 2}} {
		w, err := InterpWeights(c.n, c.r, Linear)
		if err != nil {
			t.Fatal(err)
		}
		p := InducingPoints(c.n, c.r)
		for i := range w.Idx {
			var sum, first float64
			for k, v := range w.W[i] {
				if v < 0 {
					t.Fatalf("n=%d r=%d: negative linear weight %v", c.n, c.r, v)
				}
				sum += v
				first += v * p[w.Idx[i][k]]
			}
			if math.Abs(sum-1) > 1e-12 || math.Abs(first-float64(i)) > 1e-9 {
				t.Fatalf("row %d: weights sum to %v and interpolate %v (want 1 and %d)", i, sum, first, i)
			}
		}
		cw, err := InterpWeights(c.n, c.r, Cubic)
		if err != nil {
			t.Fatal(err)
		}
		for i := range cw.Idx {
			var sum, sq float64
			for k, v := range cw.W[i] {
				sum += v
				sq += v * p[cw.Idx[i][k]] * p[cw.Idx[i][k]]
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Fatalf("cubic row %d: weights sum to %v", i, sum)
			}
			// Keys' kernel reproduces quadratics away from the ends.
			h := p[1] - p[0]
			if c.r >= 4 && float64(i) > 2*h && float64(i) < p[c.r-1]-2*h && math.Abs(sq-float64(i*i)) > 1e-6*float64(i*i+1) {
				t.Fatalf("cubic row %d: Σ w p² = %v, want %d", i, sq, i*i)
			}
		}
	}
}

// TestSKIFullRankExact: with r = n, linear interpolation is the identity
// and the SKI operator equals the Toeplitz product of the smooth kernel.
func TestSKIFullRankExact(t *testing.T) {
	const n, d = 40, 3
	rpe, _ := RandomPiecewiseLinear(9, d, 1)
	var ks []func(float64) float64
	var ts []*Toeplitz
	for l := 0; l < d; l++ {
		k := rpe.Kernel(l, 0.9)
		ks = append(ks, k)
		tp, _ := FromKernel(n, func(t int) float64 { return k(float64(t)) })
		ts = append(ts, tp)
	}
	ski, err := NewSKI(n, n, Linear, ks, nil)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := sampler.Gaussian{}.Sample(n, d, 2)
	got, _ := ski.Apply(x)
	for l := 0; l < d; l++ {
		want := ts[l].MulVecDirect(mat.Col(nil, l, x))
		if e := maxDiff(mat.Col(nil, l, got), want); e > 1e-12 {
			t.Errorf("channel %d: SKI with r = n differs from the exact product by %g", l, e)
		}
	}
}

// TestSparsePlusLowRank: the SKI operator equals the dense product of
// T_sparse + W A Wᵀ, for odd and even filter widths.
func TestSparsePlusLowRank(t *testing.T) {
	const n, r = 60, 9
	k := func(t float64) float64 { return math.Exp(-t * t / 400) }
	for _, m := range []int{1, 2, 5, 8} {
		f := randVec(m, uint64(m))
		ski, err := NewSKI(n, r, Linear, []func(float64) float64{k}, [][]float64{f})
		if err != nil {
			t.Fatal(err)
		}
		sp, err := SparseToeplitz(n, f)
		if err != nil {
			t.Fatal(err)
		}
		w, _ := InterpWeights(n, r, Linear)
		p := InducingPoints(n, r)
		a := mat.NewDense(r, r, nil)
		for i := 0; i < r; i++ {
			for j := 0; j < r; j++ {
				a.Set(i, j, k(p[i]-p[j]))
			}
		}
		var dense mat.Dense
		dense.Product(w.Dense(), a, w.Dense().T())
		dense.Add(&dense, sp.Dense())
		x := randVec(n, 5)
		var want mat.VecDense
		want.MulVec(&dense, mat.NewVecDense(n, x))
		got, _ := ski.Apply(mat.NewDense(n, 1, x))
		if e := maxDiff(mat.Col(nil, 0, got), want.RawVector().Data); e > 1e-11 {
			t.Errorf("m=%d: SKI operator differs from T_sparse + WAWᵀ by %g", m, e)
		}
	}
}

func TestWarp(t *testing.T) {
	for _, lam := range []float64{0.5, 0.99, 0.9999} {
		prev := -2.0
		for k := -5000; k <= 5000; k++ {
			x := Warp(float64(k), lam)
			if x < -1 || x > 1 || math.IsNaN(x) {
				t.Fatalf("λ=%v: offset %d maps to %v", lam, k, x)
			}
			if k != 0 && math.Signbit(x) != (k < 0) {
				t.Fatalf("λ=%v: offset %d maps to %v of the wrong sign", lam, k, x)
			}
			_ = prev
		}
		if Warp(0, lam) != 0 {
			t.Error("x(0) ≠ 0")
		}
	}
	rpe, _ := RandomPiecewiseLinear(5, 2, 1)
	if rpe.Eval(0, 0) != 0 || rpe.Eval(0, 1) != 0 {
		t.Error("RPE(0) ≠ 0")
	}
}

// TestCausalFD: for random GeLU, SiLU and ReLU frequency-domain MLPs the
// causal operator's response to an impulse at j is zero before j.
func TestCausalFD(t *testing.T) {
	const n, d = 128, 3
	for _, act := range []string{"gelu", "silu", "relu"} {
		a, _ := ActivationByName(act)
		m, _ := NewMLP([]int{16, 16}, d, a, 7)
		fd, err := NewCausalFD(n, MLPResponse(m))
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range []int{0, 1, 50, 127} {
			x := mat.NewDense(n, d, nil)
			for l := 0; l < d; l++ {
				x.Set(j, l, 1)
			}
			y, _ := fd.Apply(x)
			scale := mat.Norm(y, math.Inf(1))
			for i := 0; i < j; i++ {
				for l := 0; l < d; l++ {
					if math.Abs(y.At(i, l)) > 1e-12*math.Max(scale, 1) {
						t.Fatalf("%s: response %v at %d before the impulse at %d", act, y.At(i, l), i, j)
					}
				}
			}
		}
	}
	// The real part of the causal response is the modelled one.
	re := randVec(33, 4)
	s, _ := HilbertCausal(re)
	for m := range re {
		if math.Abs(real(s[m])-re[m]) > 1e-12 {
			t.Fatalf("Re k̂_causal[%d] = %v, want %v", m, real(s[m]), re[m])
		}
	}
}

func TestBidirectionalFD(t *testing.T) {
	const n, d = 50, 2
	m, _ := NewMLP([]int{8}, 2*d, SiLU, 3)
	fd, err := NewBidirectionalFD(n, MLPResponse(m))
	if err != nil {
		t.Fatal(err)
	}
	for l := 0; l < d; l++ {
		if imag(fd.specs[l][0]) != 0 || imag(fd.specs[l][n]) != 0 {
			t.Error("response not real at ω = 0 and π")
		}
	}
	x, _ := sampler.Gaussian{}.Sample(n, d, 5)
	y, _ := fd.Apply(x)
	for l := 0; l < d; l++ {
		want := fd.Kernel(l).MulVecDirect(mat.Col(nil, l, x))
		if e := maxDiff(mat.Col(nil, l, y), want); e > 1e-12 {
			t.Errorf("channel %d: FD product differs from its Toeplitz kernel by %g", l, e)
		}
	}
	if _, err := NewBidirectionalFD(n, func(float64) []float64 { return []float64{1, 2, 3} }); err == nil {
		t.Error("odd response width accepted")
	}
}

// TestSKIBound: the measured SKI error lies below Theorem 1's bound for a
// smooth kernel and falls as r grows.
func TestSKIBound(t *testing.T) {
	// Matérn 5/2 kernel: twice continuously differentiable, with
	// max |k''| = 5/(3ℓ²) (at 0), and better conditioned than a Gaussian.
	const ell = 20.0
	k := Matern52(ell)
	d2 := 5 / (3 * ell * ell)
	var prev float64 = math.Inf(1)
	for _, r := range []int{8, 16, 32} {
		rep, err := SKIError(k, d2, 200, r)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Measured > rep.Bound {
			t.Errorf("r=%d: measured %g above the bound %g", r, rep.Measured, rep.Bound)
		}
		if rep.ToExact > prev {
			t.Errorf("r=%d: relative error %g did not fall (previous %g)", r, rep.ToExact, prev)
		}
		prev = rep.ToExact
	}
}

// TestImpulseDecay: GeLU responses decay faster than ReLU ones (Theorems
// 2 and 4): at lag 100 the GeLU kernel is far below the ReLU kernel.
func TestImpulseDecay(t *testing.T) {
	g, _ := ImpulseResponse("gelu", []int{32, 32}, 1024, 1)
	r, _ := ImpulseResponse("relu", []int{32, 32}, 1024, 1)
	s, _ := ImpulseResponse("silu", []int{32, 32}, 1024, 1)
	tail := func(k []float64) float64 {
		m := 0.0
		for _, v := range k[100:] {
			m = math.Max(m, v)
		}
		return m
	}
	if !(tail(g.K) < 1e-6*tail(r.K)) || !(tail(s.K) < 1e-3*tail(r.K)) {
		t.Errorf("tails beyond lag 100: gelu %g, silu %g, relu %g", tail(g.K), tail(s.K), tail(r.K))
	}
}

func TestBadParameters(t *testing.T) {
	k := []func(float64) float64{func(float64) float64 { return 1 }}
	if _, err := NewSKI(10, 11, Linear, k, nil); err == nil {
		t.Error("r > n accepted")
	}
	if _, err := NewSKI(10, 1, Linear, k, nil); err == nil {
		t.Error("r = 1 accepted")
	}
	if _, err := NewSKI(10, 4, Linear, k, [][]float64{make([]float64, 20)}); err == nil {
		t.Error("filter wider than 2n−1 accepted")
	}
	if _, err := RandomPiecewiseLinear(4, 1, 1); err == nil {
		t.Error("even grid accepted")
	}
	m, _ := NewMLP([]int{4}, 2, ReLU, 1)
	for _, lam := range []float64{0, 1, -0.5, 1.5} {
		if _, err := TNNKernels(m, 10, lam); err == nil {
			t.Errorf("λ = %v accepted", lam)
		}
	}
	if _, err := New([]float64{1, 2}); err == nil {
		t.Error("even number of coefficients accepted")
	}
	if _, err := ActivationByName("tanh"); err == nil {
		t.Error("unknown activation accepted")
	}
	if _, err := NewCausalFD(0, nil); err == nil {
		t.Error("n = 0 accepted")
	}
}

// TestTNNKernels: the baseline's coefficients are λ^|k|·RPE_l(k/n).
func TestTNNKernels(t *testing.T) {
	m, _ := NewMLP([]int{8}, 3, ReLU, 5)
	ts, err := TNNKernels(m, 20, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	for l, tp := range ts {
		for _, k := range []int{-19, -3, 0, 7, 19} {
			want := math.Pow(0.9, math.Abs(float64(k))) * m.Eval(float64(k) / 20)[l]
			if math.Abs(tp.Coef(k)-want) > 1e-15 {
				t.Fatalf("channel %d, offset %d: %v, want %v", l, k, tp.Coef(k), want)
			}
		}
	}
}
