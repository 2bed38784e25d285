package linear

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
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

// pinvReference returns the minimum-norm least-squares solution of
// min ‖y − Zw − 1bᵀ‖ (b = 0 without intercept) the way numpy's lstsq and
// scikit-learn's Ridge(alpha=0) compute it: from the SVD of the (centred)
// feature matrix itself, w = V Σ⁺ Uᵀ y with singular values below
// ε·max(n, D)·σ_max dropped, and b = ȳ − z̄ᵀw.
func pinvReference(t *testing.T, z, y *mat.Dense, intercept bool) (*mat.Dense, []float64) {
	n, d := z.Dims()
	_, k := y.Dims()
	zc := mat.DenseCopyOf(z)
	yc := mat.DenseCopyOf(y)
	zbar := make([]float64, d)
	ybar := make([]float64, k)
	if intercept {
		for j := range zbar {
			zbar[j] = floats.Sum(mat.Col(nil, j, z)) / float64(n)
			for i := 0; i < n; i++ {
				zc.Set(i, j, z.At(i, j)-zbar[j])
			}
		}
		for j := range ybar {
			ybar[j] = floats.Sum(mat.Col(nil, j, y)) / float64(n)
			for i := 0; i < n; i++ {
				yc.Set(i, j, y.At(i, j)-ybar[j])
			}
		}
	}
	var svd mat.SVD
	if !svd.Factorize(zc, mat.SVDThin) {
		t.Fatal("SVD failed")
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	sv := svd.Values(nil)
	var uty mat.Dense
	uty.Mul(u.T(), yc)
	cut := 0x1p-52 * float64(max(n, d)) * sv[0]
	for i, s := range sv {
		row := uty.RawRowView(i)
		for c := range row {
			if s > cut {
				row[c] /= s
			} else {
				row[c] = 0
			}
		}
	}
	var w mat.Dense
	w.Mul(&v, &uty)
	b := make([]float64, k)
	for c := range b {
		b[c] = ybar[c] - floats.Dot(zbar, mat.Col(nil, c, &w))
	}
	return &w, b
}

// TestMinNormLeastSquares: with λ = 0, Fit returns the minimum-norm
// least-squares solution of lstsq / Ridge(alpha=0) to 1e-9 relative,
// for more features than rows (the jittered Cholesky of earlier versions
// was 5e-3 off), duplicated and constant columns, and full-rank systems.
func TestMinNormLeastSquares(t *testing.T) {
	dup := randDense(20, 4, 11)
	for i := 0; i < 20; i++ {
		dup.Set(i, 3, dup.At(i, 0))
	}
	constant := randDense(30, 5, 13)
	for i := 0; i < 30; i++ {
		constant.Set(i, 2, 1.5)
	}
	for _, c := range []struct {
		name string
		z    *mat.Dense
		k    int
	}{
		{"D>n", randDense(20, 50, 21), 2},
		{"D>>n", randDense(8, 200, 22), 1},
		{"duplicated column", dup, 1},
		{"constant column", constant, 3},
		{"full rank", randDense(60, 7, 23), 2},
	} {
		n, _ := c.z.Dims()
		y := randDense(n, c.k, 31)
		for _, intercept := range []bool{false, true} {
			m, err := Fit(statsOf(t, c.z, y), 0, intercept)
			if err != nil {
				t.Fatalf("%s, intercept=%v: %v", c.name, intercept, err)
			}
			w, b := pinvReference(t, c.z, y, intercept)
			var diff mat.Dense
			diff.Sub(m.W, w)
			rel := mat.Norm(&diff, 2) / mat.Norm(w, 2)
			if rel > 1e-9 {
				t.Errorf("%s, intercept=%v: ‖w − w⁺‖/‖w⁺‖ = %.3g, want ≤ 1e-9", c.name, intercept, rel)
			}
			for j := range b {
				if math.Abs(m.B[j]-b[j]) > 1e-9*math.Max(1, math.Abs(b[j])) {
					t.Errorf("%s, intercept=%v: b[%d] = %v, want %v", c.name, intercept, j, m.B[j], b[j])
				}
			}
			if m.Jitter != 0 {
				t.Errorf("%s: jitter %v reported", c.name, m.Jitter)
			}
		}
	}
}

// TestRidgeSmallLambdaSingular: λ > 0 small against the scale of a
// singular ZᵀZ (n < D) gives the ridge solution, compared with the dual
// form Zᵀ(ZZᵀ + λI)⁻¹y to 1e-9 (the normal equations have condition
// number ~10⁶ here); λ so small that C + λI is numerically singular gives
// the minimum-norm solution, the ridge solution's limit as λ → 0.
func TestRidgeSmallLambdaSingular(t *testing.T) {
	z := randDense(10, 30, 41)
	y := randDense(10, 1, 42)
	for _, lam := range []float64{1e-4, 1e-20} {
		m, err := Fit(statsOf(t, z, y), lam, false)
		if err != nil {
			t.Fatal(err)
		}
		var g mat.Dense
		g.Mul(z, z.T())
		for i := 0; i < 10; i++ {
			g.Set(i, i, g.At(i, i)+lam)
		}
		var a, w mat.Dense
		if err := a.Solve(&g, y); err != nil {
			t.Fatal(err)
		}
		w.Mul(z.T(), &a)
		var diff mat.Dense
		diff.Sub(m.W, &w)
		if rel := mat.Norm(&diff, 2) / mat.Norm(&w, 2); rel > 1e-9 {
			t.Errorf("λ=%g: relative error %.3g against the dual solution", lam, rel)
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

// TestPinvCutoffAtRoundingLevel: an eigenvalue of C at 8ε·s_max, within
// the eigensolver's rounding of zero (package doc), gets zero weight, so
// the solution is C⁺c over the three resolved directions (eigenvalues 1,
// ½, ¼: condition 4, so 1e-12 is far above the solution's rounding). A
// cutoff of ε·D·s_max (D = 4) would keep that direction and give it a
// weight of order 10¹⁴.
func TestPinvCutoffAtRoundingLevel(t *testing.T) {
	const d = 4
	var qr mat.QR
	qr.Factorize(randDense(d, d, 51))
	var v mat.Dense
	qr.QTo(&v)
	s := []float64{1, 0.5, 0.25, 8 * epsilon}
	var vs mat.Dense
	vs.Apply(func(_, j int, x float64) float64 { return x * s[j] }, &v)
	var cd mat.Dense
	cd.Mul(&vs, v.T())
	c := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			c.SetSym(i, j, (cd.At(i, j)+cd.At(j, i))/2)
		}
	}
	b := []float64{1, -2, 3, 1}
	cy := mat.NewDense(d, 1, nil)
	cy.Mul(&v, mat.NewDense(d, 1, b))
	want := mat.NewDense(d, 1, nil)
	for i := 0; i < 3; i++ {
		for r := 0; r < d; r++ {
			want.Set(r, 0, want.At(r, 0)+v.At(r, i)*b[i]/s[i])
		}
	}
	w, err := pinvSolve(c, cy, 0)
	if err != nil {
		t.Fatal(err)
	}
	var diff mat.Dense
	diff.Sub(w, want)
	if rel := mat.Norm(&diff, 2) / mat.Norm(want, 2); rel > 1e-12 {
		t.Errorf("‖w − C⁺c‖/‖C⁺c‖ = %.3g, want ≤ 1e-12 (the direction at 8ε·s_max kept?)", rel)
	}
}
