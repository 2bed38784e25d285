package krr_test

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/krr"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/nystrom"
	"github.com/kernelkit/kernelkit/sampler"
)

// rmsGap returns the root mean squared difference of two n×1 predictions.
func rmsGap(a, b *mat.Dense) float64 {
	n, _ := a.Dims()
	var s float64
	for i := 0; i < n; i++ {
		d := a.At(i, 0) - b.At(i, 0)
		s += d * d
	}
	return math.Sqrt(s / float64(n))
}

// Models on random Fourier features and on Nyström features converge to
// exact kernel ridge regression (with intercept, the same λ) as their
// dimension grows: the RFF Gram error and prediction gap (means over 3
// seeds) fall at every step of D = 16 → 1024 and the gap ends below a
// quarter of where it started; the Nyström Gram error never rises with
// nested uniform landmarks, and with every training row a landmark the
// Nyström model is the exact model (gap below 1e-7).
func TestApproximationsConverge(t *testing.T) {
	const n, d, gamma, lambda = 300, 4, 0.25, 0.1
	x, _ := sampler.Gaussian{}.Sample(n, d, 1)
	test, _ := sampler.Gaussian{}.Sample(100, d, 2)
	y := make([]float64, n)
	for i := range y {
		r := x.RawRowView(i)
		y[i] = math.Sin(2*r[0]) + 0.5*r[1]*r[1] - r[2]
	}
	train := &data.Dataset{X: x, Y: y}
	k := kernel.RBF{Gamma: gamma}
	exact, err := krr.Fit(x, mat.NewDense(n, 1, y), krr.Config{Kernel: k, Lambda: lambda, Intercept: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := exact.Predict(test)
	if err != nil {
		t.Fatal(err)
	}
	gram := x.Slice(0, 100, 0, d).(*mat.Dense)
	fit := func(opt model.Options) (gap, ge float64) {
		t.Helper()
		opt.Task, opt.Lambda = model.Regression, lambda
		m, err := model.Fit(context.Background(), opt, train)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Predict(test)
		if err != nil {
			t.Fatal(err)
		}
		if ge, err = model.GramError(m.Map, gram); err != nil {
			t.Fatal(err)
		}
		return rmsGap(p, want), ge
	}
	prevGap, prevGE, firstGap := math.Inf(1), math.Inf(1), 0.0
	for _, D := range []int{16, 64, 256, 1024} {
		var gap, ge float64
		for s := uint64(0); s < 3; s++ {
			g, e := fit(model.Options{Features: features.Config{Kernel: "rbf", Gamma: gamma, Features: D, Seed: s}})
			gap, ge = gap+g/3, ge+e/3
		}
		t.Logf("RFF D=%4d: prediction gap %.4g, Gram error %.4g", D, gap, ge)
		if gap >= prevGap || ge >= prevGE {
			t.Errorf("RFF D=%d: gap %.4g or Gram error %.4g did not fall (from %.4g, %.4g)", D, gap, ge, prevGap, prevGE)
		}
		if D == 16 {
			firstGap = gap
		}
		prevGap, prevGE = gap, ge
	}
	if prevGap > firstGap/4 {
		t.Errorf("RFF gap %.4g at D = 1024 not below a quarter of %.4g at D = 16", prevGap, firstGap)
	}
	prevGE = math.Inf(1)
	for _, m := range []int{10, 40, 160, n} {
		mp, err := nystrom.Fit(x, nystrom.Config{Kernel: k, Components: m, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		gap, ge := fit(model.Options{Map: mp})
		t.Logf("Nyström m=%3d: prediction gap %.4g, Gram error %.4g", m, gap, ge)
		if ge > prevGE*(1+1e-9) {
			t.Errorf("Nyström m=%d: Gram error %.4g rose from %.4g", m, ge, prevGE)
		}
		prevGE = ge
		if m == n && gap > 1e-7 {
			t.Errorf("Nyström with every row a landmark: gap %.3g from the exact model", gap)
		}
	}
}
