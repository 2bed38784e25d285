package kkbeam

import (
	"context"
	"math"
	"testing"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
)

// TestFitCalibrate: kernelkit-beam's calibration (a third pipeline of
// out-of-fold scores, model.Plan.Score, on the stratified folds the
// driver places with each file's class counts) is model.Fit's: the same
// λ (chosen by 5-fold cross-validation on the stratified folds), weights
// within weightBound, the same predicted class for every row, and the
// calibrated probabilities within probBound of model.Fit's for the
// weights' difference.
func TestFitCalibrate(t *testing.T) {
	dir := t.TempDir()
	ds := letterRows(testRows)
	glob := writeShards(t, dir, ds, 8)
	opt := model.Options{Task: model.Classification, Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 256, Seed: 7},
		Select: "kfold", Folds: 5, Standardize: true, Calibrate: true}
	ctx := context.Background()
	res, err := Fit(ctx, FitOptions{Input: glob, Model: opt, Run: RunOptions{Runner: *runner, Chunk: 700}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := model.Fit(ctx, opt, ds)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Model
	tol := weightBound(t, want, ds)
	dw := compareModels(t, "calibrated", got, want, ds.X, tol)
	if got.Calibration == nil || got.Calibration.Classes != want.Calibration.Classes {
		t.Fatalf("calibration %+v, want %+v", got.Calibration, want.Calibration)
	}
	gp, err := got.Probabilities(ds.X)
	if err != nil {
		t.Fatal(err)
	}
	wp, err := want.Probabilities(ds.X)
	if err != nil {
		t.Fatal(err)
	}
	// The worst-case weightBound compounded through the sigmoid fits is
	// vacuous here (above 1): the probabilities' bound propagates the
	// weights' measured difference instead, in the spectral norm
	// (‖ΔW‖₂/‖W‖₂ ≤ √(D·K)·max|ΔW|/max|W|).
	_, dim := want.Linear.W.Dims()
	bound := probBound(t, want, ds, math.Sqrt(float64(dim*want.Classes))*math.Max(dw, 0x1p-53))
	var dp float64
	for i, v := range gp.RawMatrix().Data {
		dp = math.Max(dp, math.Abs(v-wp.RawMatrix().Data[i]))
	}
	if dp > bound {
		t.Errorf("calibrated probabilities differ by %.3g, bound %.3g", dp, bound)
	}
	t.Logf("λ=%g: weights differ by %.2g relative (bound %.2g), probabilities by %.2g (bound %.2g); pass 3 %.2f s",
		got.Linear.Lambda, dw, tol, dp, bound, res.Pass3.Seconds())
}

// probBound bounds the calibrated probabilities' difference between two
// fits whose ridge weights differ by at most eps2 relative in the
// spectral norm, to first order. A row's out-of-fold score s = Wᵀz + b,
// b = ȳ − Wᵀz̄, moves by at most δs_i = eps2·‖W‖₂·(‖z_i‖₂ + ‖z̄‖₂) (want's
// weights standing for the fold models'); the sigmoid fit (A, B) minimises F(A, B; s), whose
// gradient moves by at most Σ_i ‖∂∇F/∂s_i‖·δs_i, so (A, B) moves by at
// most ‖H⁻¹‖₂ times that, H the Hessian of F (at want's sigmoid and
// want's scores on the training rows, standing for the out-of-fold
// ones), plus twice the Newton method's stopping step (10⁻¹²·(1+|θ|));
// a probability 1/(1 + exp(z)) moves by at most |Δz|/4 for K = 2, and
// the normalised probabilities of K > 2 classes by at most twice the
// largest |Δz| of the row's classes, Δz = |ΔA||s| + |A|δs + |ΔB|.
func probBound(t *testing.T, want *model.Model, ds *data.Dataset, eps2 float64) float64 {
	t.Helper()
	s, err := want.Predict(ds.X)
	if err != nil {
		t.Fatal(err)
	}
	z, err := want.Features(ds.X)
	if err != nil {
		t.Fatal(err)
	}
	n, k := s.Dims()
	w2 := normTwo(want.Linear.W)
	_, dim := z.Dims()
	zbar := make([]float64, dim)
	for i := range n {
		for j, v := range z.RawRowView(i) {
			zbar[j] += v / float64(n)
		}
	}
	nbar := math.Sqrt(dot(zbar, zbar))
	ds1 := make([]float64, n)
	for i := range n {
		zi := z.RawRowView(i)
		ds1[i] = eps2 * w2 * (math.Sqrt(dot(zi, zi)) + nbar)
	}
	cal := want.Calibration
	cols := []int{1}
	if k > 2 {
		cols = make([]int, k)
		for c := range cols {
			cols[c] = c
		}
	}
	dz := make([][]float64, len(cols))
	for c, col := range cols {
		g := cal.Sigmoids[c]
		var h11, h12, h22, dg float64
		for i := range n {
			si := s.At(i, col)
			p := g.Prob(si)
			pq := p * (1 - p)
			h11 += si * si * pq
			h12 += si * pq
			h22 += pq
			// |t − p| ≤ 1 for Platt's targets.
			d1 := 1 + math.Abs(si*g.A)*pq
			d2 := math.Abs(g.A) * pq
			dg += math.Hypot(d1, d2) * ds1[i]
		}
		// ‖H⁻¹‖₂ = 1/λ_min(H) for the 2×2 symmetric positive H.
		tr, det := h11+h22, h11*h22-h12*h12
		lmin := tr/2 - math.Sqrt(math.Max(tr*tr/4-det, 0))
		if !(lmin > 0) {
			t.Fatalf("sigmoid %d: singular Hessian", c)
		}
		stop := 2e-12 * (1 + math.Hypot(g.A, g.B))
		dtheta := dg/lmin + stop
		dz[c] = make([]float64, n)
		for i := range n {
			dz[c][i] = dtheta*(1+math.Abs(s.At(i, col))) + math.Abs(g.A)*ds1[i]
		}
	}
	var bound float64
	for i := range n {
		if k == 2 {
			bound = math.Max(bound, dz[0][i]/4)
			continue
		}
		var top float64
		for c := range cols {
			top = math.Max(top, dz[c][i])
		}
		bound = math.Max(bound, 2*top)
	}
	return bound
}

// dot returns aᵀb.
func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}
