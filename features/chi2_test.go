package features

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/kernel"
)

// The additive χ² features equal scikit-learn 1.2.1's AdditiveChi2Sampler
// to 1e-15 (relative). Reference produced by
//
//	/usr/bin/python3 -c 'import numpy as np
//	from sklearn.kernel_approximation import AdditiveChi2Sampler
//	X=np.array([[0.3,0.0,2.5],[1.7,0.2,0.05]])
//	for st in (1,2,3): print(AdditiveChi2Sampler(sample_steps=st).fit_transform(X).tolist())'
func TestAdditiveChi2MatchesScikitLearn(t *testing.T) {
	x := mat.NewDense(2, 3, []float64{0.3, 0.0, 2.5, 1.7, 0.2, 0.05})
	want := map[int][]float64{
		1: {0.4898979485566356, 0.0, 1.4142135623730951, 1.1661903789690602, 0.4, 0.2},
		2: {0.3872983346207417, 0.0, 1.118033988749895, 0.2849928629067364, 0.0, 0.8952324484945733, -0.19580631423357656, 0.0, 0.4414758221107672,
			0.9219544457292888, 0.31622776601683794, 0.15811388300841897, 0.7943110036686138, 0.19573976424596712, 0.010285881426180024, 0.21583006168329927, -0.2034534535480058, -0.14078722033695354},
		3: {0.34641016151377546, 0.0, 1.0, 0.31505989132329676, 0.0, 0.9580619010491752, -0.1646604909787688, 0.0, 0.3677623741514533, 0.11220707780109891, 0.0, 0.4216333947099266, -0.1613609704007772, 0.0, 0.3796360618319026,
			0.8246211251235321, 0.28284271247461906, 0.14142135623730953, 0.8272539511187972, 0.2321598136009817, 0.0528197147157609, 0.1782708725930861, -0.17421929444075732, -0.13517659982043898, 0.426332374435464, 0.04484823550568675, -0.0589808258831856, 0.19269541409478166, -0.15407951353199006, -0.05439878084750067},
	}
	for n, w := range want {
		m, err := NewAdditiveChi2(3, n, 0)
		if err != nil {
			t.Fatal(err)
		}
		z, err := Apply(m, x)
		if err != nil {
			t.Fatal(err)
		}
		got := z.RawMatrix().Data
		if len(got) != len(w) {
			t.Fatalf("steps %d: %d values, want %d", n, len(got), len(w))
		}
		for i, v := range w {
			if math.Abs(got[i]-v) > 1e-15*math.Max(1, math.Abs(v)) {
				t.Errorf("steps %d: feature %d = %.17g, scikit-learn %.17g", n, i, got[i], v)
			}
		}
	}
}

// chi2Terms returns, for one coordinate pair (x, y > 0), the aliasing sum
// Σ_{k≠0} sech((λ + 2πk/L)/2) (signed and absolute) and the truncation sum
// 2L·Σ_{j≥n} sech(πjL)·cos(jLλ) (signed) and its bound 2L·Σ_{j≥n} sech(πjL),
// with λ = log y − log x. The series are summed until their terms are
// below 1e-300.
func chi2Terms(x, y float64, n int, L float64) (alias, aliasAbs, trunc, truncAbs float64) {
	lam := math.Log(y) - math.Log(x)
	sech := func(v float64) float64 { return 1 / math.Cosh(v) }
	for k := 1; ; k++ {
		a, b := sech((lam+2*math.Pi*float64(k)/L)/2), sech((lam-2*math.Pi*float64(k)/L)/2)
		alias += a + b
		if a+b < 1e-300 {
			break
		}
	}
	aliasAbs = alias // every term is positive
	for j := n; ; j++ {
		s := sech(math.Pi * float64(j) * L)
		trunc += 2 * L * s * math.Cos(float64(j)*L*lam)
		truncAbs += 2 * L * s
		if s < 1e-300 {
			break
		}
	}
	return
}

// The sampled additive χ² map is deterministic, so instead of unbiasedness
// its error is checked exactly: by the Poisson summation formula its
// kernel is k̂ = Σ_i √(x_iy_i)·[sech(λ_i/2) + aliasing_i − truncation_i]
// (see AdditiveChi2), which the features reproduce to 1e-13; hence
// |k̂ − k| ≤ Σ_i √(x_iy_i)·(aliasing_i + 2L·Σ_{j≥n} sech(πjL)), the bound
// of Vedaldi & Zisserman (2012, Sec. 4.1), and the worst relative error
// on histogram pairs falls as the number of steps grows.
func TestAdditiveChi2ErrorBound(t *testing.T) {
	x := []float64{0.3, 0.05, 2.5, 0, 1.1, 0.7}
	ys := [][]float64{
		{0.3, 0.05, 2.5, 0, 1.1, 0.7}, // x itself: λ = 0
		{0.25, 0.1, 2.0, 0.4, 1.3, 0.6},
		{3.0, 0.001, 0.2, 0, 1.1, 9.0},
	}
	k := kernel.Chi2{}
	prevWorst := math.Inf(1)
	for _, n := range []int{1, 2, 3, 5, 8} {
		m, err := NewAdditiveChi2(len(x), n, 0)
		if err != nil {
			t.Fatal(err)
		}
		L := m.Spec().Interval
		worst := 0.0
		for yi, y := range ys {
			est, err := EstimatePair(Symmetric(m), x, y)
			if err != nil {
				t.Fatal(err)
			}
			var identity, bound float64
			for i := range x {
				if x[i] == 0 || y[i] == 0 {
					continue
				}
				alias, aliasAbs, trunc, truncAbs := chi2Terms(x[i], y[i], n, L)
				r := math.Sqrt(x[i] * y[i])
				identity += r * (1/math.Cosh((math.Log(y[i])-math.Log(x[i]))/2) + alias - trunc)
				bound += r * (aliasAbs + truncAbs)
			}
			exact := k.Eval(x, y)
			if math.Abs(est-identity) > 1e-13*exact {
				t.Errorf("n=%d pair %d: estimate %.15g, Poisson identity %.15g", n, yi, est, identity)
			}
			if math.Abs(est-exact) > bound*(1+1e-12) {
				t.Errorf("n=%d pair %d: error %.3g above the bound %.3g", n, yi, math.Abs(est-exact), bound)
			}
			worst = math.Max(worst, math.Abs(est-exact)/exact)
		}
		t.Logf("steps %d, L = %.3f: worst relative error %.3g", n, L, worst)
		if worst >= prevWorst {
			t.Errorf("steps %d: worst relative error %.3g did not fall below %.3g", n, worst, prevWorst)
		}
		prevWorst = worst
	}
	if prevWorst > 5e-3 {
		t.Errorf("8 steps: worst relative error %.3g, want below 5e-3", prevWorst)
	}
}

// Negative inputs, bad specs and wrong shapes are errors; a spec
// round-trips.
func TestAdditiveChi2Errors(t *testing.T) {
	m, err := NewAdditiveChi2(2, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Transform(mat.NewDense(1, 6, nil), mat.NewDense(1, 2, []float64{1, -1e-9})); err == nil {
		t.Error("negative input accepted")
	}
	for _, s := range []AdditiveChi2Spec{{InputDim: 0, Steps: 1, Interval: 1}, {InputDim: 1, Steps: 0, Interval: 1},
		{InputDim: 1, Steps: 1, Interval: math.Inf(1)}, {InputDim: 1, Steps: 1, Interval: -1}} {
		if _, err := AdditiveChi2FromSpec(s); err == nil {
			t.Errorf("spec %+v accepted", s)
		}
	}
	kind, raw, err := Encode(m)
	if err != nil || kind != AdditiveChi2SpecKind {
		t.Fatal(kind, err)
	}
	back, err := DecodeAdditiveChi2(raw)
	if err != nil || back.Dim() != 6 {
		t.Fatalf("decoded %v, %v", back, err)
	}
	if _, err := WithProjectors(m, exactProjectors); err == nil {
		t.Error("additive chi2 has no projection, but WithProjectors succeeded")
	}
}

// The skewed χ² map is an unbiased estimator of Π 2√(x+c)√(y+c)/(x+y+2c):
// over 2000 seeds the mean is within 5 standard errors of the kernel.
func TestSkewedChi2Unbiased(t *testing.T) {
	x := []float64{0.3, 0.05, 2.5, 0, 1.1}
	y := []float64{0.25, 0.4, 1.0, 0.3, 1.3}
	const draws = 2000
	for _, c := range []float64{0.5, 1, 3} {
		t.Run(fmt.Sprint("c", c), func(t *testing.T) {
			k := kernel.SkewedChi2{C: c}
			for _, pair := range [][2][]float64{{x, y}, {x, x}, {y, []float64{-0.4 * c, 0, 0, 0, 0}}} {
				est := make([]float64, draws)
				for s := range est {
					m, err := NewSkewedChi2(SkewedChi2Config{C: c, Features: 16, Seed: uint64(s)}, len(x))
					if err != nil {
						t.Fatal(err)
					}
					if est[s], err = EstimatePair(Symmetric(m), pair[0], pair[1]); err != nil {
						t.Fatal(err)
					}
				}
				mean, se := meanSE(est)
				want := k.Eval(pair[0], pair[1])
				if math.Abs(mean-want) > 5*se+1e-12 {
					t.Errorf("mean %.6f ± %.2g, exact %.6f", mean, se, want)
				}
			}
		})
	}
}

// A skewed χ² map round-trips through its decoder, runs on an exact
// projector unchanged to rounding, and rejects inputs at or below −c.
func TestSkewedChi2SpecSeamErrors(t *testing.T) {
	m, err := NewSkewedChi2(SkewedChi2Config{C: 1, Features: 24, Seed: 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(4, 3, []float64{0, 1, 2, 0.5, 0.5, 0.5, 3, -0.5, 0.1, 10, 0, 0})
	a, err := Apply(m, x)
	if err != nil {
		t.Fatal(err)
	}
	kind, raw, err := Encode(m)
	if err != nil || kind != SkewedChi2SpecKind {
		t.Fatal(kind, err)
	}
	back, err := DecodeSkewedChi2(raw)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := Apply(back, x); err != nil || !mat.Equal(a, b) {
		t.Errorf("decoded map differs (%v)", err)
	}
	hw, err := WithProjectors(m, exactProjectors)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := Apply(hw, x); err != nil || !mat.EqualApprox(a, c, 1e-13) {
		t.Errorf("projector seam differs (%v)", err)
	}
	if err := m.Transform(mat.NewDense(1, 24, nil), mat.NewDense(1, 3, []float64{0, -1, 0})); err == nil {
		t.Error("input at −c accepted")
	}
	if _, err := SkewedChi2FromSpec(SkewedChi2Spec{C: 0, Features: 1, InputDim: 1, W: []float64{1}, B: []float64{0}}); err == nil {
		t.Error("c = 0 accepted")
	}
	if _, err := SkewedChi2FromSpec(SkewedChi2Spec{C: 1, Features: 2, InputDim: 1, W: []float64{1}, B: []float64{0, 0}}); err == nil {
		t.Error("short projection accepted")
	}
}

// The additive χ² map of two similar histograms with scikit-learn's
// default of 2 steps, and with 8: the error falls from about 10% (mostly
// the truncation of the spectrum, 2L·Σ_{j≥2} sech(πjL) ≈ 0.11 relative at
// x = y) to 0.1%.
func ExampleNewAdditiveChi2() {
	x := []float64{0.2, 0.5, 0.3}
	y := []float64{0.25, 0.35, 0.4}
	for _, n := range []int{2, 8} {
		m, err := NewAdditiveChi2(3, n, 0)
		if err != nil {
			panic(err)
		}
		est, err := EstimatePair(Symmetric(m), x, y)
		if err != nil {
			panic(err)
		}
		fmt.Printf("steps %d (D = %d): exact %.5f, map %.5f\n", n, m.Dim(), m.Kernel().Eval(x, y), est)
	}
	// Output:
	// steps 2 (D = 9): exact 0.97684, map 0.88344
	// steps 8 (D = 45): exact 0.97684, map 0.97577
}
