package prf

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
)

// TestStatsOverflow checks the statistics and fits at norms whose squares
// are not representable (‖x‖ = 1e200, ‖x‖² = 1e400): every constructor
// returns an error wrapping features.ErrOverflow (before, OPRF failed
// with "spec parameter a = NaN" and ADERF with a non-converging SVD), and
// at norms just below (1e150, squares 1e300) the fits still give finite
// parameters or that same error, never NaN.
func TestStatsOverflow(t *testing.T) {
	const d = 4
	rows := func(scale float64) *mat.Dense {
		x, err := sampler.Gaussian{}.Sample(6, d, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 6; i++ {
			row := x.RawRowView(i)
			n := math.Sqrt(dot(row, row))
			for j := range row {
				row[j] *= scale / n
			}
		}
		return x
	}
	if _, err := IsotropicStats(d, 1e200); !errors.Is(err, features.ErrOverflow) {
		t.Errorf("IsotropicStats at norm 1e200: %v, want ErrOverflow", err)
	}
	if _, err := NewStats(rows(1e200), rows(1)); !errors.Is(err, features.ErrOverflow) {
		t.Errorf("NewStats of rows of norm 1e200: %v, want ErrOverflow", err)
	}
	inf := &Stats{D: d, MeanX: make([]float64, d), MeanY: make([]float64, d),
		MomentX: mat.NewSymDense(d, nil), MomentY: mat.NewSymDense(d, nil)}
	inf.MomentX.SetSym(0, 0, math.Inf(1))
	big := &Stats{D: d, MeanX: make([]float64, d), MeanY: make([]float64, d),
		MomentX: mat.NewSymDense(d, nil), MomentY: mat.NewSymDense(d, nil)}
	big.MomentX.SetSym(0, 0, math.MaxFloat64)
	big.MomentY.SetSym(0, 0, math.MaxFloat64) // finite moments, overflowing pair moment
	for _, st := range []*Stats{inf, big} {
		for _, fam := range []string{OPRF, SDERF} {
			if _, err := New(Config{Family: fam, Features: 8, Seed: 1}, st); !errors.Is(err, features.ErrOverflow) {
				t.Errorf("%s on overflowing statistics: %v, want ErrOverflow", fam, err)
			}
		}
		if _, err := NewPair(Config{Features: 8, Seed: 1}, st); !errors.Is(err, features.ErrOverflow) {
			t.Errorf("aderf on overflowing statistics: %v, want ErrOverflow", err)
		}
		if _, _, err := FitSDERF(st); !errors.Is(err, features.ErrOverflow) {
			t.Errorf("FitSDERF on overflowing statistics: %v", err)
		}
		if _, _, _, err := FitADERF(st); !errors.Is(err, features.ErrOverflow) {
			t.Errorf("FitADERF on overflowing statistics: %v", err)
		}
	}
	st, err := NewStats(rows(1e150), rows(1e150))
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range []string{OPRF, SDERF} {
		mp, err := New(Config{Family: fam, Features: 8, Seed: 1}, st)
		if err != nil {
			t.Errorf("%s at norm 1e150: %v", fam, err)
			continue
		}
		for _, a := range mp.Spec().A {
			if !(a < 0) || math.IsInf(a, 0) {
				t.Errorf("%s at norm 1e150: a = %v", fam, a)
			}
		}
	}
	if p, err := NewPair(Config{Features: 8, Seed: 1}, st); err != nil && !errors.Is(err, features.ErrOverflow) {
		t.Errorf("aderf at norm 1e150: %v, want success or ErrOverflow", err)
	} else if err == nil && !(p.a < 0) {
		t.Errorf("aderf at norm 1e150: a = %v", p.a)
	}
}

// TestOptimalALargePhi checks A* ≈ −φ/4 for φ far beyond 1e154, where the
// square root's argument (2φ+1)² overflowed and A* came out as −φ.
func TestOptimalALargePhi(t *testing.T) {
	for _, phi := range []float64{1e10, 1e160, 1e300} {
		a := OptimalA(phi, 1)
		// A* = −φ/(1 + (12φ+1)/(2φ + √((2φ+1)² + 8φ))) → −φ/4 with relative
		// error O(1/φ).
		if math.Abs(a/(-phi/4)-1) > 1e-9 {
			t.Errorf("φ = %g: A* = %g, want ≈ %g", phi, a, -phi/4)
		}
	}
}

// TestRelativeVariance checks RelativeVariance against Variance/exp(2xᵀy)
// where both are finite (to 1e-12 relative: the same expm1 with one
// exponential factored out), and that it stays finite at xᵀy = 400, where
// exp(2xᵀy) and so Variance overflow.
func TestRelativeVariance(t *testing.T) {
	const d = 3
	x := mat.NewDense(2, d, []float64{0.5, -0.2, 0.3, 0.1, 0.4, -0.6})
	y := mat.NewDense(2, d, []float64{0.2, 0.3, -0.1, -0.5, 0.2, 0.1})
	st, err := NewStats(x, y)
	if err != nil {
		t.Fatal(err)
	}
	mp, err := New(Config{Family: SDERF, Features: 8, Seed: 2}, st)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := NewPair(Config{Features: 8, Seed: 2}, st)
	if err != nil {
		t.Fatal(err)
	}
	xi, yi := x.RawRowView(0), y.RawRowView(1)
	e2 := math.Exp(2 * dot(xi, yi))
	for name, c := range map[string][2]float64{
		"sderf": {mp.RelativeVariance(xi, yi), mp.Variance(xi, yi) / e2},
		"aderf": {pr.RelativeVariance(xi, yi), pr.Variance(xi, yi) / e2},
	} {
		if math.Abs(c[0]-c[1]) > 1e-12*math.Abs(c[1]) {
			t.Errorf("%s: RelativeVariance %v, Variance/exp(2xᵀy) %v", name, c[0], c[1])
		}
	}
	// Fitted to inputs of norm 20 (xᵀy = 400), the relative variance is
	// moderate while exp(2xᵀy) = e^800 is not representable.
	big := mat.NewDense(1, d, []float64{20, 0, 0})
	bst, err := NewStats(big, big)
	if err != nil {
		t.Fatal(err)
	}
	bmp, err := New(Config{Family: SDERF, Features: 8, Seed: 2}, bst)
	if err != nil {
		t.Fatal(err)
	}
	b := big.RawRowView(0)
	if v := bmp.RelativeVariance(b, b); math.IsInf(v, 0) || math.IsNaN(v) || !math.IsInf(bmp.Variance(b, b), 1) {
		t.Errorf("at xᵀy = 400: RelativeVariance %v, Variance %v", v, bmp.Variance(b, b))
	}
}
