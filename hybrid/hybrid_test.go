package hybrid

import (
	"fmt"
	"math"
	"math/cmplx"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
)

func moments(v []float64) (mean, variance, m4 float64) {
	for _, e := range v {
		mean += e
	}
	mean /= float64(len(v))
	for _, e := range v {
		d := e - mean
		variance += d * d
		m4 += d * d * d * d
	}
	variance /= float64(len(v) - 1)
	m4 /= float64(len(v))
	return
}

func draws(t *testing.T, n int, build func(seed uint64) (features.Pair, error), x, y []float64) []float64 {
	t.Helper()
	out := make([]float64, n)
	for s := range out {
		p, err := build(uint64(7919*s + 1))
		if err != nil {
			t.Fatal(err)
		}
		if out[s], err = features.EstimatePair(p, x, y); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// checkUnbiased: mean within 4 standard errors; if mse ≥ 0, the sample
// variance within 4 standard errors (from the fourth moment) of it.
func checkUnbiased(t *testing.T, name string, est []float64, exact, mse float64) {
	t.Helper()
	mean, v, m4 := moments(est)
	n := float64(len(est))
	se := math.Sqrt(v / n)
	if math.Abs(mean-exact) > 4*se+1e-12*math.Abs(exact) {
		t.Errorf("%s: mean %.6g, exact %.6g (%.1f standard errors)", name, mean, exact, math.Abs(mean-exact)/se)
	}
	t.Logf("%s: mean %.6g (exact %.6g), variance %.6g (closed form %.6g)", name, mean, exact, v, mse)
	if mse >= 0 {
		seVar := math.Sqrt((m4 - v*v) / n)
		if math.Abs(v-mse) > 4*seVar+1e-12 {
			t.Errorf("%s: variance %.6g, closed form %.6g (%.1f standard errors)", name, v, mse, math.Abs(v-mse)/seVar)
		}
	}
}

func sm(x, y []float64) float64 { return math.Exp(floats.Dot(x, y)) }

func vecAt(d int, r, theta float64) (x, y []float64) {
	// Two vectors of norm r at angle theta in the first two coordinates,
	// with a little mass elsewhere to avoid special structure.
	x = make([]float64, d)
	y = make([]float64, d)
	x[0] = r
	y[0], y[1] = r*math.Cos(theta), r*math.Sin(theta)
	return
}

func TestComplexExpUnbiased(t *testing.T) {
	const d = 3
	a := []complex128{1 + 0.5i, 0.2, -0.3i, 0.1i, 0.8 - 0.2i, 0.3, 0.2, -0.1 + 0.1i, 1.1}
	x := []float64{0.3, -0.2, 0.5}
	y := []float64{-0.4, 0.1, 0.2}
	est := draws(t, 4000, func(seed uint64) (features.Pair, error) {
		w, _ := sampler.Gaussian{}.Sample(4, d, seed)
		return NewComplexExp(a, w)
	}, x, y)
	checkUnbiased(t, "complex exponential", est, sm(x, y), -1)
}

// TestComplexExpSpecialCases: A = I is FAVOR+ and A = iI the trigonometric
// estimator, feature for feature.
func TestComplexExpSpecialCases(t *testing.T) {
	const d, m = 4, 8
	w, _ := sampler.Gaussian{}.Sample(m, d, 3)
	x := mat.NewDense(2, d, []float64{0.1, 0.2, -0.3, 0.4, 0.5, -0.1, 0, 0.2})
	id := make([]complex128, d*d)
	iid := make([]complex128, d*d)
	for i := 0; i < d; i++ {
		id[i*d+i] = 1
		iid[i*d+i] = 1i
	}
	ceI, _ := NewComplexExp(id, w)
	pos, _ := mapFromW("softmax", "positive", 0, w, 0, sampler.Gaussian{})
	trig, _ := mapFromW("softmax", "trig", 0, w, 0, sampler.Gaussian{})
	zq, _ := features.Queries(ceI, x)
	zp, _ := features.Apply(pos, x)
	for i := 0; i < 2; i++ {
		for j := 0; j < m; j++ {
			if math.Abs(zq.At(i, j)-zp.At(i, j)) > 1e-14 || zq.At(i, m+j) != 0 {
				t.Fatalf("A=I: feature %d,%d is %v%+vi, FAVOR+ %v", i, j, zq.At(i, j), zq.At(i, m+j), zp.At(i, j))
			}
		}
	}
	ceT, _ := NewComplexExp(iid, w)
	est, _ := features.Matrix(ceT, x, x)
	zt, _ := features.Apply(trig, x)
	var want mat.Dense
	want.Mul(zt, zt.T())
	if !mat.EqualApprox(est, &want, 1e-13) {
		t.Errorf("A = iI: estimates %v, trigonometric %v", mat.Formatted(est), mat.Formatted(&want))
	}
}

// TestZeroVariance: for x = −A⁻¹(Aᵀ)⁻¹y (Eq. 17) every draw is exact.
func TestZeroVariance(t *testing.T) {
	const d = 3
	a := []complex128{1 + 0.5i, 0.2, -0.3i, 0.1i, 0.8 - 0.2i, 0.3, 0.2, -0.1 + 0.1i, 1.1}
	y := []float64{0.4, -0.2, 0.3}
	w, _ := sampler.Gaussian{}.Sample(5, d, 1)
	if _, err := NewComplexExp(a, w); err != nil {
		t.Fatal(err)
	}
	// x = −A⁻¹ B y with B = (Aᵀ)⁻¹; it must be real for the test, so use
	// the real part of a real-valued construction: pick A real instead.
	ar := []complex128{1.2, 0.3, 0, -0.2, 0.9, 0.1, 0.4, 0, 1.5}
	ce, err := NewComplexExp(ar, w)
	if err != nil {
		t.Fatal(err)
	}
	ainv, err := invert(ar, d)
	if err != nil {
		t.Fatal(err)
	}
	bx := make([]complex128, d)
	for k := 0; k < d; k++ {
		for j := 0; j < d; j++ {
			bx[k] += ce.b[k*d+j] * complex(y[j], 0)
		}
	}
	x := make([]float64, d)
	for k := 0; k < d; k++ {
		var s complex128
		for j := 0; j < d; j++ {
			s += ainv[k*d+j] * bx[j]
		}
		x[k] = -real(s)
	}
	for seed := uint64(0); seed < 20; seed++ {
		w, _ := sampler.Gaussian{}.Sample(5, d, seed)
		ce, _ := NewComplexExp(ar, w)
		e, _ := features.EstimatePair(ce, x, y)
		if math.Abs(e-sm(x, y)) > 1e-12*sm(x, y) {
			t.Fatalf("seed %d: estimate %v, exact %v: variance is not zero", seed, e, sm(x, y))
		}
	}
	// Complex diagonal A of Eq. 85 at the cluster centres: zero variance.
	rq := []float64{0.5, -0.3, 0.2}
	rk := []float64{0.4, 0.6, -0.1}
	ad := ComplexDiag(rq, rk)
	for seed := uint64(0); seed < 20; seed++ {
		w, _ := sampler.Gaussian{}.Sample(5, d, seed)
		ce, _ := NewComplexExpDiag(ad, w)
		e, _ := features.EstimatePair(ce, rq, rk)
		if math.Abs(e-sm(rq, rk)) > 1e-12 {
			t.Fatalf("Eq. 85 A at the centres: estimate %v, exact %v", e, sm(rq, rk))
		}
	}
	_ = cmplx.Abs
}

func TestSingularA(t *testing.T) {
	w, _ := sampler.Gaussian{}.Sample(2, 2, 1)
	if _, err := NewComplexExp([]complex128{1, 2, 2, 4}, w); err == nil {
		t.Error("singular A accepted")
	}
	if _, err := NewComplexExpDiag([]complex128{1, 0}, w); err == nil {
		t.Error("singular diagonal A accepted")
	}
	if _, err := NewComplexExp([]complex128{1, 2}, w); err == nil {
		t.Error("A of the wrong size accepted")
	}
}

// TestAngularMSE checks the angular hybrid against Theorem D.1, for
// independent (variant I) and shared (variant II) base projections, at
// inputs of different lengths (where the variants differ).
func TestAngularMSE(t *testing.T) {
	const d, m, n = 4, 6, 3
	x := []float64{0.5, 0.3, -0.2, 0.1}
	y := []float64{-0.1, 0.6, 0.3, -0.4}
	for _, shared := range []bool{false, true} {
		est := draws(t, 6000, func(seed uint64) (features.Pair, error) {
			return Angular(d, Options{M: m, N: n, Shared: shared, Seed: seed})
		}, x, y)
		checkUnbiased(t, fmt.Sprintf("angular shared=%v", shared), est, sm(x, y), AngularMSE(x, y, m, n, shared))
	}
}

// TestAngularVanishes: for same-length inputs the angular hybrid is exact
// at θ = 0 and θ = π (every draw), and Theorem D.1 gives zero there.
func TestAngularVanishes(t *testing.T) {
	const d = 5
	for _, theta := range []float64{0, math.Pi} {
		x, y := vecAt(d, 1.3, theta)
		if mse := AngularMSE(x, y, 8, 4, false); mse > 1e-20 {
			t.Errorf("θ=%v: Theorem D.1 gives %g", theta, mse)
		}
		for seed := uint64(0); seed < 10; seed++ {
			h, _ := Angular(d, Options{M: 8, N: 4, Seed: seed})
			e, _ := features.EstimatePair(h, x, y)
			if math.Abs(e-sm(x, y)) > 1e-12*sm(x, y) {
				t.Fatalf("θ=%v seed %d: estimate %v, exact %v", theta, seed, e, sm(x, y))
			}
		}
	}
}

func TestGaussianBipolarMSE(t *testing.T) {
	const d, m, n, sigma, r = 4, 6, 3, 0.8, 0.9
	x, y := vecAt(d, r, 2.0)
	for _, shared := range []bool{false, true} {
		est := draws(t, 6000, func(seed uint64) (features.Pair, error) {
			return GaussianBipolar(d, sigma, r, Options{M: m, N: n, Shared: shared, Seed: seed})
		}, x, y)
		checkUnbiased(t, fmt.Sprintf("Gaussian bipolar shared=%v", shared), est, sm(x, y), GaussianBipolarMSE(x, y, sigma, r, m, n, shared))
	}
}

func TestGaussianHybridUnbiased(t *testing.T) {
	const d = 4
	x := []float64{0.5, 0.3, -0.2, 0.1}
	y := []float64{-0.4, -0.1, 0.3, -0.2}
	est := draws(t, 4000, func(seed uint64) (features.Pair, error) {
		return Gaussian(d, 0.5, Options{M: 6, N: 4, Sampler: sampler.Orthogonal{}, Seed: seed})
	}, x, y)
	checkUnbiased(t, "Gaussian hybrid", est, sm(x, y), -1)
	// The general constructor with M ≠ I.
	mm := mat.NewDense(d, d, []float64{0.5, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0.3, 0, 0, 0, 1})
	est = draws(t, 4000, func(seed uint64) (features.Pair, error) {
		o := Options{M: 6, N: 4, Seed: seed}
		pos, trig, err := o.bases(d)
		if err != nil {
			return nil, err
		}
		l, err := GaussianLambda(d, mm, 0.7, 4, nil, seed+5)
		if err != nil {
			return nil, err
		}
		return New([]features.Pair{pos, trig}, []Lambda{{A: 0.1, P: l}})
	}, x, y)
	checkUnbiased(t, "Gaussian hybrid, general M", est, sm(x, y), -1)
}

func TestClusteredUnbiased(t *testing.T) {
	const d = 3
	qc := mat.NewDense(2, d, []float64{0.5, -0.3, 0.2, -0.4, 0.4, 0.1})
	kc := mat.NewDense(2, d, []float64{0.4, 0.6, -0.1, 0.3, -0.5, 0.2})
	x := []float64{0.45, -0.25, 0.25} // near query centre 0
	y := []float64{0.3, -0.4, 0.1}    // near key centre 1
	for _, o := range []ClusterOptions{
		{M: 4, Complex: false},
		{M: 4, Complex: true},
		{M: 4, Lambda: "gaussian", N: 3, Tau: 1},
	} {
		est := draws(t, 4000, func(seed uint64) (features.Pair, error) {
			o.Seed = seed
			return NewClustered(qc, kc, o)
		}, x, y)
		checkUnbiased(t, fmt.Sprintf("clustered %+v", o), est, sm(x, y), -1)
	}
}

func TestBadParameters(t *testing.T) {
	if _, err := Angular(3, Options{M: 0, N: 2}); err == nil {
		t.Error("zero features accepted")
	}
	if _, err := GaussianBipolar(3, -1, 1, Options{M: 2, N: 2}); err == nil {
		t.Error("negative sigma accepted")
	}
	if _, err := Gaussian(3, 0, Options{M: 2, N: 2}); err == nil {
		t.Error("zero width accepted")
	}
	qc := mat.NewDense(1, 2, []float64{1, 1})
	if _, err := NewClustered(qc, qc, ClusterOptions{M: 2, Lambda: "other"}); err == nil {
		t.Error("unknown λ accepted")
	}
	if _, err := New([]features.Pair{}, nil); err == nil {
		t.Error("no bases accepted")
	}
}

func TestDimensions(t *testing.T) {
	h, _ := Angular(8, Options{M: 16, N: 4})
	// Two bases of 32 features, λ with 4: 32(1+4) + 32(1+4).
	if h.Dim() != 320 {
		t.Errorf("angular dimension %d, want 320", h.Dim())
	}
}

func mustSample(m, d int, seed uint64) *mat.Dense {
	w, _ := sampler.Gaussian{}.Sample(m, d, seed)
	return w
}

func TestMatchFLOPs(t *testing.T) {
	o := MatchFLOPs(64, 128)
	cost := 2*64*(o.M+o.N) + 8*o.M*o.N
	if o.N != 4 || cost > 128*64 || 2*64*(o.M+1+o.N)+8*(o.M+1)*o.N <= 128*64 {
		t.Errorf("MatchFLOPs(64, 128) = %+v, cost %d against budget %d", o, cost, 128*64)
	}
}
