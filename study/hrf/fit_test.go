package hrf

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/prf"
	"github.com/kernelkit/kernelkit/sampler"
)

// anisotropicRows returns n rows in R^d concentrated along one direction:
// x_i = z_i·(1, …, 1) + 0.2·ε_i with z_i, ε_i standard normal, so that
// after standardisation the columns are correlated about 0.96 and the
// rows' second moment has one dominant eigenvalue.
func anisotropicRows(t *testing.T, n, d int) *mat.Dense {
	t.Helper()
	z, err := sampler.Gaussian{}.Sample(n, 1, 11)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := sampler.Gaussian{}.Sample(n, d, 12)
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, z.At(i, 0)+0.2*eps.At(i, j))
		}
	}
	return x
}

// TestDataFitsToPairs checks that the data study fits OPRF, SDERF and
// ADERF to the pairs it draws (DERF paper Sec. 4: the statistics of the
// queries and of the keys), not to isotropic statistics, under which
// SDERF and ADERF are OPRF and their rows were OPRF's to the last digit.
//
// On anisotropic rows, with iid projections, each estimator is unbiased,
// so its expected MSE over the pairs is the mean of its closed-form
// variance (CRT Thm 3.2, DERF Thm 4.1) for the parameters fitted to
// prf.NewStats(queries, keys). The test checks, for each family:
//   - the measured MSE agrees with that closed form to 5 Monte Carlo
//     standard errors (the standard deviation over draws/√draws): the
//     study used exactly that fit;
//   - SDERF's and ADERF's rows differ from OPRF's;
//   - where the closed forms say a family's MSE is below OPRF's (SDERF
//     here, by a wide margin), its measured MSE is at most OPRF's plus 4
//     standard errors of the difference (independent draws).
func TestDataFitsToPairs(t *testing.T) {
	const d, n, pairs, draws, m, r = 6, 200, 60, 400, 16, 1.5
	x := anisotropicRows(t, n, d)
	cfg := DataConfig{X: x, Estimators: []string{"oprf", "sderf", "aderf"}, Sampler: sampler.Gaussian{},
		Features: m, Draws: draws, Pairs: pairs, Norms: []float64{r}, Seed: 5}
	res, err := Data(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The pairs exactly as the study draws them.
	z, err := standardise(x, r)
	if err != nil {
		t.Fatal(err)
	}
	ia, ib := cfg.pairIndices()
	xa, xb := pairRows(z, ia, ib)
	st, err := prf.NewStats(xa, xb)
	if err != nil {
		t.Fatal(err)
	}
	theory := map[string]float64{}
	for _, fam := range []string{prf.OPRF, prf.SDERF, prf.ADERF} {
		var v func(x, y []float64) float64
		pc := prf.Config{Family: fam, Features: m, Sampler: sampler.Gaussian{}}
		if fam == prf.ADERF {
			p, err := prf.NewPair(pc, st)
			if err != nil {
				t.Fatal(err)
			}
			v = p.Variance
		} else {
			mp, err := prf.New(pc, st)
			if err != nil {
				t.Fatal(err)
			}
			v = mp.Variance
		}
		for i := 0; i < pairs; i++ {
			theory[fam] += v(xa.RawRowView(i), xb.RawRowView(i)) / pairs
		}
	}
	got := map[string]DataRow{}
	for _, row := range res.Rows {
		got[row.Estimator] = row
	}
	se := func(fam string) float64 { return got[fam].MSEStd / math.Sqrt(draws) }
	for fam, th := range theory {
		if math.Abs(got[fam].MSE-th) > 5*se(fam) {
			t.Errorf("%s: measured MSE %.4g, closed form of the fit to the pairs %.4g (standard error %.2g)", fam, got[fam].MSE, th, se(fam))
		}
	}
	for _, fam := range []string{prf.SDERF, prf.ADERF} {
		if got[fam].MSE == got[prf.OPRF].MSE {
			t.Errorf("%s's MSE equals OPRF's (%v): not fitted to the pairs", fam, got[fam].MSE)
		}
		if theory[fam] < theory[prf.OPRF] {
			if tol := 4 * math.Hypot(se(fam), se(prf.OPRF)); got[fam].MSE > got[prf.OPRF].MSE+tol {
				t.Errorf("%s: MSE %.4g above OPRF's %.4g by more than %.2g, though its closed form %.4g is below OPRF's %.4g",
					fam, got[fam].MSE, got[prf.OPRF].MSE, tol, theory[fam], theory[prf.OPRF])
			}
		}
	}
	if !(theory[prf.SDERF] < theory[prf.OPRF]/2) {
		t.Errorf("closed forms on these anisotropic pairs: SDERF %.4g, OPRF %.4g; the test expects SDERF well below", theory[prf.SDERF], theory[prf.OPRF])
	}
	t.Logf("MSE (closed form): oprf %.4g (%.4g), sderf %.4g (%.4g), aderf %.4g (%.4g)", got["oprf"].MSE, theory["oprf"],
		got["sderf"].MSE, theory["sderf"], got["aderf"].MSE, theory["aderf"])
}
