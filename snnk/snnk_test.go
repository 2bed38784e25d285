package snnk

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/sampler"
)

func vecs(d int) (x, w []float64) {
	x = make([]float64, d)
	w = make([]float64, d)
	for i := range x {
		x[i] = 0.3 * math.Sin(float64(i)+1)
		w[i] = 0.25 * math.Cos(2*float64(i)+0.5)
	}
	return
}

func estimate(t *testing.T, tw Towers, x, w []float64, b float64) float64 {
	t.Helper()
	phi := mat.NewDense(1, tw.Dim(), nil)
	psi := mat.NewDense(1, tw.Dim(), nil)
	if err := tw.Transform(phi, mat.NewDense(1, len(x), x)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Params(psi, mat.NewDense(1, len(w), w), []float64{b}); err != nil {
		t.Fatal(err)
	}
	return mat.Dot(phi.RowView(0), psi.RowView(0))
}

func draws(t *testing.T, n int, build func(seed uint64) (Towers, error), x, w []float64, b float64) []float64 {
	out := make([]float64, n)
	for s := range out {
		tw, err := build(uint64(s*7 + 3))
		if err != nil {
			t.Fatal(err)
		}
		out[s] = estimate(t, tw, x, w, b)
	}
	return out
}

// TestURFUnbiased: sin, cos (two atoms) and the sampled Gaussian bump are
// estimated without bias (within 4 standard errors of f(wᵀx + b)), and the
// variance of the two-atom estimators falls as 1/m (ratio of the variances
// at m and 4m within 4 standard errors of 4, from the delta method).
func TestURFUnbiased(t *testing.T) {
	const d, n, b = 6, 4000, 0.5
	x, w := vecs(d)
	z := 0.0
	for i := range x {
		z += x[i] * w[i]
	}
	for _, c := range []struct {
		name string
		f    ExpSum
		want float64
	}{{"cos", Cos, math.Cos(z + b)}, {"sin", Sin, math.Sin(z + b)}} {
		var vs []float64
		for _, m := range []int{4, 16} {
			est := draws(t, n, func(seed uint64) (Towers, error) { return NewURF(c.f, d, m, -0.1, nil, seed) }, x, w, b)
			mean, sd := stat.MeanStdDev(est, nil)
			se := sd / math.Sqrt(n)
			if math.Abs(mean-c.want) > 4*se {
				t.Errorf("%s m=%d: mean %.5f, f(wᵀx+b) = %.5f (%.1f standard errors)", c.name, m, mean, c.want, math.Abs(mean-c.want)/se)
			}
			vs = append(vs, sd*sd)
		}
		ratio := vs[0] / vs[1]
		// Each variance estimate has relative standard error about √(2/n)
		// (more for heavy tails; the features are bounded here).
		seRatio := ratio * math.Sqrt(4.0/n) * 2
		if math.Abs(ratio-4) > 4*seRatio {
			t.Errorf("%s: variance ratio between m=4 and m=16 is %.2f, want 4 (1/m)", c.name, ratio)
		}
	}
	est := draws(t, n, func(seed uint64) (Towers, error) { return NewSpectralURF(GaussianBump, d, 8, -0.1, seed) }, x, w, b)
	mean, sd := stat.MeanStdDev(est, nil)
	want := math.Exp(-(z + b) * (z + b) / 2)
	if math.Abs(mean-want) > 4*sd/math.Sqrt(n) {
		t.Errorf("Gaussian bump: mean %.5f, f = %.5f", mean, want)
	}
}

func TestReLUUnbiased(t *testing.T) {
	const d, n = 5, 4000
	x, w := vecs(d)
	est := draws(t, n, func(seed uint64) (Towers, error) { return NewReLU(d, 16, nil, seed) }, x, w, 0)
	mean, sd := stat.MeanStdDev(est, nil)
	want := ReLUTarget(x, w)
	if math.Abs(mean-want) > 4*sd/math.Sqrt(n) {
		t.Errorf("ReLU-SNNK: mean %.6f, ½K₁ = %.6f", mean, want)
	}
}

// TestBundleConverges: a two-layer cos network bundled into one matrix
// approaches the exact network as the number of features grows.
func TestBundleConverges(t *testing.T) {
	const d, h, o = 4, 6, 2
	w0, _ := sampler.Gaussian{}.Sample(h, d, 1)
	w0.Scale(0.3, w0)
	w1, _ := sampler.Gaussian{}.Sample(o, h, 2)
	w1.Scale(0.3, w1)
	layers := []Dense{{W: w0, B: []float64{0.1, -0.2, 0.3, 0, 0.2, -0.1}, F: Cos}, {W: w1, B: []float64{0.05, -0.05}, F: Sin}}
	x, _ := sampler.Gaussian{}.Sample(50, d, 3)
	x.Scale(0.3, x)
	exact, err := Exact(layers, x)
	if err != nil {
		t.Fatal(err)
	}
	errAt := func(m int) float64 {
		var tot float64
		for s := uint64(0); s < 4; s++ {
			t1, _ := NewURF(Cos, d, m, DefaultA(d), nil, 10+s)
			t2, _ := NewURF(Sin, t1.Dim(), m, DefaultA(t1.Dim()), nil, 20+s)
			bd, err := NewBundle(layers, []Towers{t1, t2})
			if err != nil {
				t.Fatal(err)
			}
			y, err := bd.Forward(x)
			if err != nil {
				t.Fatal(err)
			}
			var diff mat.Dense
			diff.Sub(y, exact)
			tot += mat.Norm(&diff, 2) / mat.Norm(exact, 2) / 4
		}
		return tot
	}
	e1, e2 := errAt(8), errAt(256)
	t.Logf("bundled network relative error: %.4f at m=8, %.4f at m=256", e1, e2)
	if !(e2 < e1/2.5) {
		t.Errorf("bundled error %.4f at m=8, %.4f at m=256: want a fall of 2.5x or more (√32 ≈ 5.7 expected)", e1, e2)
	}
}

// TestFitBundleEqualsLeastSquares: the closed-form W̄ equals a direct
// normal-equations solve on the bundled features.
func TestFitBundleEqualsLeastSquares(t *testing.T) {
	const d = 3
	tw, _ := NewURF(Cos, d, 5, -0.1, nil, 1)
	x, _ := sampler.Gaussian{}.Sample(80, d, 2)
	x.Scale(0.5, x)
	y, _ := sampler.Gaussian{}.Sample(80, 2, 3)
	m, err := FitBundle([]Towers{tw}, x, y, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	xb, _ := InputFeatures([]Towers{tw}, x)
	n, dim := xb.Dims()
	a := mat.NewDense(n, dim+1, nil)
	a.Slice(0, n, 0, dim).(*mat.Dense).Copy(xb)
	for i := 0; i < n; i++ {
		a.Set(i, dim, 1)
	}
	var ata, aty, theta mat.Dense
	ata.Mul(a.T(), a)
	for i := 0; i < dim; i++ {
		ata.Set(i, i, ata.At(i, i)+0.1)
	}
	aty.Mul(a.T(), y)
	if err := theta.Solve(&ata, &aty); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < dim; j++ {
		for c := 0; c < 2; c++ {
			if math.Abs(theta.At(j, c)-m.W.At(j, c)) > 1e-8 {
				t.Fatalf("W̄[%d][%d] = %v, direct %v", j, c, m.W.At(j, c), theta.At(j, c))
			}
		}
	}
}

func TestLayer(t *testing.T) {
	const d, l = 4, 3
	w, _ := sampler.Gaussian{}.Sample(l, d, 1)
	w.Scale(0.3, w)
	b := []float64{0.1, 0.2, 0.3}
	x, _ := sampler.Gaussian{}.Sample(10, d, 2)
	x.Scale(0.3, x)
	tw, _ := NewURF(Cos, d, 2000, -0.1, nil, 3)
	ly, err := NewLayer(tw, w, b)
	if err != nil {
		t.Fatal(err)
	}
	y, _ := ly.Forward(x)
	exact, _ := Exact([]Dense{{W: w, B: b, F: Cos}}, x)
	var diff mat.Dense
	diff.Sub(y, exact)
	if e := mat.Norm(&diff, 2) / mat.Norm(exact, 2); e > 0.05 {
		t.Errorf("SNNK layer initialised from (W, b) is %.3f away from cos(Wx+b)", e)
	}
	if ly.Params() != tw.Dim()*l {
		t.Errorf("parameter count %d", ly.Params())
	}
	// Gated adapter with v = 0 is the identity.
	sq, _ := NewRandomLayer(tw, d, 4)
	sq.Gated = true
	out, err := sq.Forward(x)
	if err != nil || !mat.Equal(out, x) {
		t.Errorf("gated adapter at v = 0 is not the identity: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		f    ExpSum
		d, m int
		a    float64
	}{{Cos, 0, 4, -0.1}, {Cos, 3, 0, -0.1}, {Cos, 3, 4, 0.3}, {nil, 3, 4, -0.1}} {
		if _, err := NewURF(c.f, c.d, c.m, c.a, nil, 1); err == nil {
			t.Errorf("NewURF(%v, %d, %d, %v) accepted", c.f, c.d, c.m, c.a)
		}
	}
	tw, _ := NewURF(Cos, 3, 4, -0.1, nil, 1)
	if err := tw.Transform(mat.NewDense(1, tw.Dim(), nil), mat.NewDense(1, 2, nil)); err == nil {
		t.Error("wrong input width accepted")
	}
	if _, err := NewBundle([]Dense{{W: mat.NewDense(2, 3, nil), F: Cos}}, []Towers{}); err == nil {
		t.Error("layer/tower mismatch accepted")
	}
	_ = fmt.Sprint()
}
