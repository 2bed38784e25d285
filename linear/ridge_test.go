package linear

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
)

func randDense(r, c int, seed uint64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, rng.NormFloat64())
		}
	}
	return m
}

func statsOf(t *testing.T, z, y *mat.Dense) *Stats {
	_, d := z.Dims()
	_, k := y.Dims()
	s := NewStats(d, k)
	if err := s.Add(z, y); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFitEqualsNormalEquations compares with a direct dense solve of
// ([Z 1]ᵀ[Z 1] + diag(λ…λ, 0)) θ = [Z 1]ᵀY.
func TestFitEqualsNormalEquations(t *testing.T) {
	const n, d, k, lam = 50, 7, 3, 0.3
	z := randDense(n, d, 1)
	y := randDense(n, k, 2)
	for _, intercept := range []bool{false, true} {
		m, err := Fit(statsOf(t, z, y), lam, intercept)
		if err != nil {
			t.Fatal(err)
		}
		cols := d
		if intercept {
			cols++
		}
		x := mat.NewDense(n, cols, nil)
		x.Slice(0, n, 0, d).(*mat.Dense).Copy(z)
		if intercept {
			for i := 0; i < n; i++ {
				x.Set(i, d, 1)
			}
		}
		var a mat.Dense
		a.Mul(x.T(), x)
		for i := 0; i < d; i++ {
			a.Set(i, i, a.At(i, i)+lam)
		}
		var rhs, theta mat.Dense
		rhs.Mul(x.T(), y)
		if err := theta.Solve(&a, &rhs); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < d; j++ {
			for c := 0; c < k; c++ {
				if math.Abs(theta.At(j, c)-m.W.At(j, c)) > 1e-10 {
					t.Fatalf("intercept=%v: w[%d][%d] = %v, direct %v", intercept, j, c, m.W.At(j, c), theta.At(j, c))
				}
			}
		}
		if intercept {
			for c := 0; c < k; c++ {
				if math.Abs(theta.At(d, c)-m.B[c]) > 1e-10 {
					t.Fatalf("b[%d] = %v, direct %v", c, m.B[c], theta.At(d, c))
				}
			}
		}
	}
}

// TestChunkedMerge: statistics accumulated in chunks and merged equal those
// of one pass.
func TestChunkedMerge(t *testing.T) {
	z := randDense(100, 5, 3)
	y := randDense(100, 2, 4)
	whole := statsOf(t, z, y)
	a := NewStats(5, 2)
	b := NewStats(5, 2)
	for lo := 0; lo < 100; lo += 13 {
		hi := min(lo+13, 100)
		dst := a
		if (lo/13)%2 == 1 {
			dst = b
		}
		if err := dst.Add(z.Slice(lo, hi, 0, 5).(*mat.Dense), y.Slice(lo, hi, 0, 2).(*mat.Dense)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	m1, _ := Fit(whole, 0.1, true)
	m2, _ := Fit(a, 0.1, true)
	if !mat.EqualApprox(m1.W, m2.W, 1e-12) || a.N != 100 {
		t.Error("chunked and merged statistics give a different fit")
	}
}

// TestApproachesExactKRR: ridge on D random Fourier features converges to
// exact kernel ridge regression, α = (K + λI)⁻¹y, as D grows.
func TestApproachesExactKRR(t *testing.T) {
	const n, d, lam, gamma = 150, 3, 0.1, 0.5
	x := randDense(n, d, 5)
	xt := randDense(40, d, 6)
	y := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		y.Set(i, 0, math.Sin(x.At(i, 0))+0.5*x.At(i, 1))
	}
	k, _ := kernel.Gram(kernel.RBF{Gamma: gamma}, x, x)
	for i := 0; i < n; i++ {
		k.Set(i, i, k.At(i, i)+lam)
	}
	var alpha mat.Dense
	if err := alpha.Solve(k, y); err != nil {
		t.Fatal(err)
	}
	kt, _ := kernel.Gram(kernel.RBF{Gamma: gamma}, xt, x)
	var exact mat.Dense
	exact.Mul(kt, &alpha)
	errAt := func(D int) float64 {
		var tot float64
		for seed := uint64(0); seed < 3; seed++ {
			mp, _ := features.New(features.Config{Kernel: "rbf", Gamma: gamma, Features: D, Seed: seed}, d)
			z, _ := features.Apply(mp, x)
			zt, _ := features.Apply(mp, xt)
			m, err := Fit(statsOf(t, z, y), lam, false)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := m.Predict(zt)
			var diff mat.Dense
			diff.Sub(p, &exact)
			tot += mat.Norm(&diff, 2) / mat.Norm(&exact, 2)
		}
		return tot / 3
	}
	e1, e2 := errAt(64), errAt(1024)
	t.Logf("relative distance to exact KRR: D=64 %.4f, D=1024 %.4f", e1, e2)
	if !(e2 < e1/3) || e2 > 0.05 {
		t.Errorf("relative distance to exact KRR: %.4f at D=64, %.4f at D=1024; want a fall of 3x or more to under 0.05", e1, e2)
	}
}

// TestGCVMatchesDirect computes GCV from the hat matrix H = Zc(ZcᵀZc+λI)⁻¹Zcᵀ.
func TestGCVMatchesDirect(t *testing.T) {
	const n, d = 30, 6
	z := randDense(n, d, 7)
	y := randDense(n, 2, 8)
	grid := []float64{0.01, 0.1, 1, 10}
	got, err := GCV(statsOf(t, z, y), grid, false)
	if err != nil {
		t.Fatal(err)
	}
	for gi, lam := range grid {
		var a mat.Dense
		a.Mul(z.T(), z)
		for i := 0; i < d; i++ {
			a.Set(i, i, a.At(i, i)+lam)
		}
		var ai, h, r mat.Dense
		ai.Inverse(&a)
		h.Product(z, &ai, z.T())
		r.Mul(&h, y)
		r.Sub(y, &r)
		rss := mat.Norm(&r, 2)
		rss *= rss
		tr := mat.Trace(&h)
		want := n * rss / ((n - tr) * (n - tr))
		if math.Abs(got[gi]-want) > 1e-9*want {
			t.Errorf("GCV(%v) = %v, direct %v", lam, got[gi], want)
		}
	}
}

// TestKFoldMatchesRefit compares the statistics-only k-fold score with
// explicit refits and residuals.
func TestKFoldMatchesRefit(t *testing.T) {
	const n, d, k, folds = 40, 4, 2, 4
	z := randDense(n, d, 9)
	y := randDense(n, k, 10)
	fs := make([]*Stats, folds)
	for f := range fs {
		fs[f] = NewStats(d, k)
	}
	for i := 0; i < n; i++ {
		f := i % folds
		_ = fs[f].Add(z.Slice(i, i+1, 0, d).(*mat.Dense), y.Slice(i, i+1, 0, k).(*mat.Dense))
	}
	grid := []float64{0.1, 3}
	got, err := KFold(fs, grid, true)
	if err != nil {
		t.Fatal(err)
	}
	for gi, lam := range grid {
		var sse float64
		for f := 0; f < folds; f++ {
			train := NewStats(d, k)
			for i := 0; i < n; i++ {
				if i%folds != f {
					_ = train.Add(z.Slice(i, i+1, 0, d).(*mat.Dense), y.Slice(i, i+1, 0, k).(*mat.Dense))
				}
			}
			m, _ := Fit(train, lam, true)
			for i := f; i < n; i += folds {
				p, _ := m.Predict(z.Slice(i, i+1, 0, d).(*mat.Dense))
				for c := 0; c < k; c++ {
					e := y.At(i, c) - p.At(0, c)
					sse += e * e
				}
			}
		}
		want := sse / (n * k)
		if math.Abs(got[gi]-want) > 1e-9*want {
			t.Errorf("k-fold(%v) = %v, refits %v", lam, got[gi], want)
		}
	}
}

// TestSingularJitter: λ = 0 with duplicated columns is singular; the fit
// adds a small reported jitter instead of failing or returning NaN.
func TestSingularJitter(t *testing.T) {
	z := randDense(20, 3, 11)
	zz := mat.NewDense(20, 4, nil)
	zz.Slice(0, 20, 0, 3).(*mat.Dense).Copy(z)
	for i := 0; i < 20; i++ {
		zz.Set(i, 3, z.At(i, 0))
	}
	y := randDense(20, 1, 12)
	m, err := Fit(statsOf(t, zz, y), 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.Jitter <= 0 {
		t.Error("no jitter reported for a singular system")
	}
	for _, v := range m.W.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatal("non-finite weight")
		}
	}
}

func TestBadInput(t *testing.T) {
	s := statsOf(t, randDense(5, 2, 1), randDense(5, 1, 2))
	if _, err := Fit(s, -1, true); err == nil {
		t.Error("negative lambda accepted")
	}
	if _, err := Fit(NewStats(2, 1), 1, true); err == nil {
		t.Error("empty statistics accepted")
	}
	if err := s.Add(randDense(3, 3, 1), randDense(3, 1, 1)); err == nil {
		t.Error("wrong feature width accepted")
	}
	bad := mat.NewDense(1, 2, []float64{math.NaN(), 1})
	_ = s.Add(bad, mat.NewDense(1, 1, []float64{1}))
	if _, err := Fit(s, 1, true); err == nil {
		t.Error("NaN statistics accepted")
	}
	if _, err := OneHot([]int{0, 3}, 3); err == nil {
		t.Error("out-of-range label accepted")
	}
}
