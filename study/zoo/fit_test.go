package zoo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/study/hrf"
)

// TestPointsFitToPairs checks that the pointwise study fits OPRF, SDERF
// and ADERF to the x's and y's of each norm (before, to isotropic
// statistics, under which SDERF and ADERF are OPRF: their rows were
// OPRF's to the last digit). With iid projections each estimator is
// unbiased, so its expected relative MSE at a pair is the closed form of
// the map fitted to those inputs (PointRow.Theory): the measured value
// must agree to 5 Monte Carlo standard errors at every angle. SDERF's
// rows must differ from OPRF's, and where its closed form is below OPRF's
// (at every angle here) its measured relative MSE must be at most OPRF's
// plus 4 standard errors of the difference.
func TestPointsFitToPairs(t *testing.T) {
	iid := sampler.Gaussian{}
	cfg := Config{Estimators: []Estimator{{"oprf", iid}, {"sderf", iid}, {"aderf", iid}}, Dim: 6, Features: 6,
		Norms: []float64{1.5}, Draws: 2000, TimingRows: 8, Seed: 9}
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]PointRow{}
	for _, p := range res.Points {
		rows[p.Estimator] = append(rows[p.Estimator], p)
	}
	for name, rs := range rows {
		for _, p := range rs {
			if !(p.Theory > 0) || math.Abs(p.RelMSE-p.Theory) > 5*p.RelMSESE {
				t.Errorf("%s at θ = %.2fπ: relative MSE %.4g ± %.2g, closed form of the fit %.4g", name, p.Theta/math.Pi, p.RelMSE, p.RelMSESE, p.Theory)
			}
		}
	}
	o, s := rows["oprf/iid"], rows["sderf/iid"]
	for i := range o {
		if s[i].RelMSE == o[i].RelMSE || s[i].Theory == o[i].Theory {
			t.Errorf("θ = %.2fπ: SDERF's row equals OPRF's (%v, %v)", o[i].Theta/math.Pi, s[i].RelMSE, s[i].Theory)
		}
		if !(s[i].Theory < o[i].Theory) {
			t.Errorf("θ = %.2fπ: closed forms SDERF %.4g, OPRF %.4g; the test expects SDERF below", o[i].Theta/math.Pi, s[i].Theory, o[i].Theory)
			continue
		}
		if tol := 4 * math.Hypot(s[i].RelMSESE, o[i].RelMSESE); s[i].RelMSE > o[i].RelMSE+tol {
			t.Errorf("θ = %.2fπ: SDERF relative MSE %.4g above OPRF's %.4g by more than %.2g", o[i].Theta/math.Pi, s[i].RelMSE, o[i].RelMSE, tol)
		}
	}
}

// TestZooOverflow checks the norms beyond hrf.MaxNorm (30, 1e200, the
// largest float64, the float just above the bound): refused with an error
// wrapping features.ErrOverflow that states the bound. At the bound every
// default estimator either returns finite rows that encode as JSON or an
// error wrapping features.ErrOverflow; a closed form beyond float64 (FAVOR+
// at r = 13, e^{4r²}-sized) is reported as TheoryOverflow and printed as
// "overflow", not as +Inf or NaN.
func TestZooOverflow(t *testing.T) {
	ctx := context.Background()
	for _, r := range []float64{30, 1e200, math.MaxFloat64, math.Nextafter(hrf.MaxNorm(), math.Inf(1))} {
		_, err := Run(ctx, Config{Dim: 4, Norms: []float64{r}, Draws: 2, TimingRows: 4}, nil)
		if !errors.Is(err, features.ErrOverflow) || !strings.Contains(err.Error(), "18.82") {
			t.Errorf("norm %v: %v, want ErrOverflow naming 18.82", r, err)
		}
	}
	for _, e := range DefaultEstimators() {
		res, err := Run(ctx, Config{Estimators: []Estimator{e}, Dim: 4, Norms: []float64{hrf.MaxNorm()}, Draws: 3, TimingRows: 4}, nil)
		t.Logf("%s at the bound: %v", e.Label(), err)
		if err != nil {
			if !errors.Is(err, features.ErrOverflow) {
				t.Errorf("%s at the bound: %v, want success or ErrOverflow", e.Label(), err)
			}
			continue
		}
		for _, p := range res.Points {
			for _, v := range []float64{p.RelMSE, p.RelMSESE, p.Theory, p.True} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("%s at the bound: row %+v", e.Label(), p)
				}
			}
		}
		if _, err := json.Marshal(res); err != nil {
			t.Errorf("%s at the bound: JSON: %v", e.Label(), err)
		}
	}
	res, err := Run(ctx, Config{Estimators: []Estimator{{"positive", sampler.Gaussian{}}}, Dim: 4, Norms: []float64{13},
		Draws: 3, TimingRows: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	over := false
	for _, p := range res.Points {
		over = over || p.TheoryOverflow
	}
	var b bytes.Buffer
	if err := res.NormTable().Render(&b); err != nil {
		t.Fatal(err)
	}
	if !over || !strings.Contains(b.String(), "overflow") || strings.Contains(b.String(), "Inf") || strings.Contains(b.String(), "NaN") {
		t.Errorf("FAVOR+ closed form at r = 13: overflow flag %v, table\n%s", over, b.String())
	}
}
