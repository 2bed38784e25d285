package prf

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
)

// This file tests the estimators against the theory of their papers:
// unbiasedness, the closed-form variances, SimRF against ORF, positivity
// and boundedness. Every statistical check is a z-test at 5 standard
// errors on fixed seeds: a sound estimator fails it with probability
// below 1e-6 per check whatever the BLAS backend's rounding, and a biased
// one (or a wrong variance formula) fails it by far (the bias of a
// wrong D or C is several standard errors at these sizes; see
// TestTheoryDetectsWrongFormulas).

// sampleMoments returns the mean, the unbiased variance and the fourth
// central moment of v.
func sampleMoments(v []float64) (mean, variance, m4 float64) {
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
	return mean, variance, m4
}

// anisotropic returns n rows of dimension d with coordinate scales
// spread over a factor of 8 and a mean offset, the kind of statistics
// (unequal eigenvalues, μ ≠ 0) that separates SDERF and ADERF from OPRF.
func anisotropic(n, d int, scale, shift float64, seed uint64) *mat.Dense {
	g, err := sampler.Gaussian{}.Sample(n, d, seed)
	if err != nil {
		panic(err)
	}
	for i := 0; i < n; i++ {
		row := g.RawRowView(i)
		for j := range row {
			s := scale * math.Pow(8, -float64(j)/float64(max(d-1, 1)))
			row[j] = s*row[j] + shift*math.Sin(float64(j+1))
		}
	}
	return g
}

// theoryPairs are the fixed query/key pairs of the theory tests: rows of
// the fitting sample, so that the fitted parameters suit them.
func theoryPairs(d int) (x, y *mat.Dense, st *Stats) {
	x = anisotropic(64, d, 0.9, 0.2, 11)
	y = anisotropic(64, d, 0.7, -0.1, 12)
	st, err := NewStats(x, y)
	if err != nil {
		panic(err)
	}
	return x.Slice(0, 4, 0, d).(*mat.Dense), y.Slice(0, 4, 0, d).(*mat.Dense), st
}

// estimator builds one draw of an estimator from a seed.
type estimator struct {
	name string
	make func(seed uint64) (features.Pair, error)
	// variance is the closed-form variance of the estimate at a pair, nil
	// where the paper gives none for this sampler.
	variance func(x, y []float64) float64
}

func theoryEstimators(t *testing.T, d, m int, st *Stats) []estimator {
	t.Helper()
	ref, err := New(Config{Family: OPRF, Features: m, Seed: 1}, st)
	if err != nil {
		t.Fatal(err)
	}
	refS, err := New(Config{Family: SDERF, Features: m, Seed: 1}, st)
	if err != nil {
		t.Fatal(err)
	}
	refA, err := NewPair(Config{Features: m, Seed: 1}, st)
	if err != nil {
		t.Fatal(err)
	}
	sym := func(fam string, smp sampler.Sampler) func(uint64) (features.Pair, error) {
		return func(seed uint64) (features.Pair, error) {
			mp, err := New(Config{Family: fam, Features: m, Sampler: smp, Seed: seed}, st)
			if err != nil {
				return nil, err
			}
			return features.Symmetric(mp), nil
		}
	}
	return []estimator{
		{"simrf", func(seed uint64) (features.Pair, error) {
			mp, err := features.New(features.Config{Kernel: "softmax", Form: "positive", Features: m, Sampler: Simplex{}, Seed: seed}, d)
			return features.Symmetric(mp), err
		}, nil},
		{"oprf/iid", sym(OPRF, sampler.Gaussian{}), ref.Variance},
		{"oprf/orf", sym(OPRF, sampler.Orthogonal{}), nil},
		{"sderf/iid", sym(SDERF, sampler.Gaussian{}), refS.Variance},
		{"sderf/simplex", sym(SDERF, Simplex{}), nil},
		{"aderf/iid", func(seed uint64) (features.Pair, error) {
			return NewPair(Config{Features: m, Seed: seed}, st)
		}, refA.Variance},
	}
}

// estimates returns n independent estimates (seeds 1000 … 1000+n−1) of
// exp(x_iᵀy_i) for every pair i.
func estimates(t *testing.T, e estimator, x, y *mat.Dense, n int) [][]float64 {
	t.Helper()
	pairs, _ := x.Dims()
	out := make([][]float64, pairs)
	for s := 0; s < n; s++ {
		p, err := e.make(uint64(1000 + s))
		if err != nil {
			t.Fatal(err)
		}
		v, err := features.PairEstimates(p, x, y)
		if err != nil {
			t.Fatal(err)
		}
		for i := range v {
			out[i] = append(out[i], v[i])
		}
	}
	return out
}

// TestTheoryUnbiasedAndVariance: over 4000 seeds every estimator's mean is
// within 5 standard errors of exp(xᵀy) on four fixed pairs, and the sample
// variance of the iid forms within 5 standard errors of the closed form
// (CRT Theorem 3.2, DERF Theorem 4.1); the standard error of a sample
// variance is √((μ₄ − σ⁴)/n) from the sample fourth moment.
func TestTheoryUnbiasedAndVariance(t *testing.T) {
	const d, m, n = 6, 6, 4000
	if testing.Short() {
		t.Skip("4000 draws of six estimators")
	}
	x, y, st := theoryPairs(d)
	for _, e := range theoryEstimators(t, d, m, st) {
		est := estimates(t, e, x, y, n)
		for i := range est {
			xi, yi := x.RawRowView(i), y.RawRowView(i)
			want := math.Exp(dot(xi, yi))
			mean, v, m4 := sampleMoments(est[i])
			se := math.Sqrt(v / n)
			if z := (mean - want) / se; math.Abs(z) > 5 {
				t.Errorf("%s pair %d: mean %.6g, exp(xᵀy) = %.6g: %.1f standard errors", e.name, i, mean, want, z)
			}
			if e.variance == nil {
				continue
			}
			th := e.variance(xi, yi)
			seV := math.Sqrt((m4 - v*v) / n)
			if z := (v - th) / seV; math.Abs(z) > 5 {
				t.Errorf("%s pair %d: sample variance %.5g, closed form %.5g: %.1f standard errors", e.name, i, v, th, z)
			}
		}
	}
}

// TestTheoryDetectsWrongFormulas checks that the tests above have power:
// the same z-tests reject the OPRF with the prefactor D² = (1−4A)^(d/2)
// in place of D = (1−4A)^(d/4) and the closed-form variance of FAVOR+
// (A = 0) in place of OPRF's.
func TestTheoryDetectsWrongFormulas(t *testing.T) {
	const d, m, n = 6, 6, 4000
	if testing.Short() {
		t.Skip("4000 draws")
	}
	x, y, st := theoryPairs(d)
	e := estimator{name: "oprf", make: func(seed uint64) (features.Pair, error) {
		mp, err := New(Config{Family: OPRF, Features: m, Seed: seed}, st)
		return features.Symmetric(mp), err
	}}
	est := estimates(t, e, x, y, n)
	ref, err := New(Config{Family: OPRF, Features: m, Seed: 1}, st)
	if err != nil {
		t.Fatal(err)
	}
	a := ref.spec.A[0]
	wrongD := math.Pow(1-4*a, float64(d)/4) // D² in place of D
	var maxZ, maxZV float64
	for i := range est {
		xi, yi := x.RawRowView(i), y.RawRowView(i)
		want := math.Exp(dot(xi, yi))
		mean, v, m4 := sampleMoments(est[i])
		maxZ = math.Max(maxZ, math.Abs((mean*wrongD-want)/(math.Sqrt(v/n)*wrongD)))
		favor := math.Exp(2*dot(xi, yi)) * math.Expm1(dot(xi, xi)+dot(yi, yi)+2*dot(xi, yi)) / m
		maxZV = math.Max(maxZV, math.Abs((v-favor)/math.Sqrt((m4-v*v)/n)))
	}
	if maxZ < 5 {
		t.Errorf("D² in place of D is only %.1f standard errors from the truth: the unbiasedness test has no power", maxZ)
	}
	if maxZV < 5 {
		t.Errorf("FAVOR+'s variance is only %.1f standard errors from OPRF's sample variance: the variance test has no power", maxZV)
	}
}

// anglePairs returns pairs of inputs of norm r in R^d at the angles ths
// (a fixed plane), the geometry of the SimRF paper's Fig. 3.
func anglePairs(d int, r float64, ths []float64) (x, y *mat.Dense) {
	x, y = mat.NewDense(len(ths), d, nil), mat.NewDense(len(ths), d, nil)
	for i, th := range ths {
		for j := 0; j < d; j++ {
			u, v := math.Sin(float64(j+1)*1.3), math.Cos(float64(j+1)*0.7)
			x.Set(i, j, u)
			y.Set(i, j, math.Cos(th)*u+math.Sin(th)*v)
		}
		for _, m := range []*mat.Dense{x, y} {
			row := m.RawRowView(i)
			n := math.Sqrt(dot(row, row))
			for j := range row {
				row[j] *= r / n
			}
		}
	}
	return x, y
}

// TestSimRFBeatsORF: at m = d = 8, over 3000 seeds each, the mean squared
// error of positive features with simplex directions is below that of
// orthogonal directions (SimRF Theorem 3.3) on pairs of norms 0.3 and 0.6
// at angles 0.3, 1.5 and 2.8, by more than 3 standard errors of the
// difference (measured: 5 to 41); orthogonal is below iid.
func TestSimRFBeatsORF(t *testing.T) {
	const d, n = 8, 3000
	if testing.Short() {
		t.Skip("3000 draws")
	}
	for _, r := range []float64{0.3, 0.6} {
		x, y := anglePairs(d, r, []float64{0.3, 1.5, 2.8})
		mse := func(smp sampler.Sampler) [][]float64 {
			e := estimator{name: smp.Name(), make: func(seed uint64) (features.Pair, error) {
				mp, err := features.New(features.Config{Kernel: "softmax", Form: "positive", Features: d, Sampler: smp, Seed: seed}, d)
				return features.Symmetric(mp), err
			}}
			est := estimates(t, e, x, y, n)
			for i := range est {
				want := math.Exp(dot(x.RawRowView(i), y.RawRowView(i)))
				for k, v := range est[i] {
					est[i][k] = (v - want) * (v - want)
				}
			}
			return est
		}
		sim, orf, iid := mse(Simplex{}), mse(sampler.Orthogonal{}), mse(sampler.Gaussian{})
		for i := range sim {
			ms, vs, _ := sampleMoments(sim[i])
			mo, vo, _ := sampleMoments(orf[i])
			mi, _, _ := sampleMoments(iid[i])
			z := (ms - mo) / math.Sqrt((vs+vo)/n)
			t.Logf("r %v pair %d: MSE simplex %.4g, orf %.4g, iid %.4g (z = %.1f)", r, i, ms, mo, mi, z)
			if z > -3 {
				t.Errorf("r %v pair %d: simplex MSE %.4g not below orthogonal %.4g (z = %.1f)", r, i, ms, mo, z)
			}
			if !(mo < mi) {
				t.Errorf("r %v pair %d: orthogonal MSE %.4g not below iid %.4g", r, i, mo, mi)
			}
		}
	}
}

// TestPositiveAndBounded: every feature of OPRF and SDERF, fitted to
// statistics of norms 0.1 … 30 and applied to such inputs, is exp of a
// finite exponent — positive; the row-scaled features lie in [0, 1] with
// a largest of 1 (to the last bit of the vectorised exponential; those far below the row's largest underflow to 0, as
// they must in float64) — and at most the map's bound sup_ω f(ω, x)
// (Map.Bound, CRT Sec. 3.3), with a relative rounding allowance of
// 1e-12·(1+|log bound|).
func TestPositiveAndBounded(t *testing.T) {
	const d, m = 5, 40
	for _, norm := range []float64{0.1, 1, 5, 30} {
		xs := anisotropic(32, d, norm, 0.1*norm, 21)
		ys := anisotropic(32, d, norm, -0.1*norm, 22)
		st, err := NewStats(xs, ys)
		if err != nil {
			t.Fatal(err)
		}
		for _, fam := range []string{OPRF, SDERF} {
			mp, err := New(Config{Family: fam, Features: m, Sampler: sampler.Orthogonal{}, Seed: 3}, st)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range mp.spec.A {
				if !(a < 0) {
					t.Fatalf("%s at norm %v: parameter a = %v, want a negative (bounded) one", fam, norm, a)
				}
			}
			z := mat.NewDense(32, m, nil)
			s, err := mp.TransformScaled(z, xs)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 32; i++ {
				b := math.Log(mp.Bound(xs.RawRowView(i)))
				var largest float64
				for _, v := range z.RawRowView(i) {
					if !(v >= 0 && v <= 1) {
						t.Fatalf("%s at norm %v: scaled feature %v outside [0, 1]", fam, norm, v)
					}
					largest = math.Max(largest, v)
					if lv := math.Log(v) + s[i]; lv > b+1e-12*(1+math.Abs(b)) {
						t.Fatalf("%s at norm %v: log feature %v above the log bound %v", fam, norm, lv, b)
					}
				}
				if math.Abs(largest-1) > 4e-16 || math.IsInf(s[i], 0) || math.IsNaN(s[i]) {
					t.Fatalf("%s at norm %v: row %d has largest scaled feature %v and log-scale %v", fam, norm, i, largest, s[i])
				}
			}
		}
	}
}

// TestStableForLargeNorms: for inputs of norm 30 at a small angle
// (exp(xᵀy) ≈ e^900, far beyond float64) the scaled features are finite and give exactly the
// same estimate, in the log domain, as a direct log-sum-exp of the
// exponents computed term by term; Transform reports features.ErrOverflow
// rather than Inf or NaN where the features overflow.
func TestStableForLargeNorms(t *testing.T) {
	const d, m = 4, 16
	x := anisotropic(2, d, 1, 0, 31)
	for j, v := range x.RawRowView(0) {
		x.Set(1, j, v+0.05*x.At(1, j))
	}
	for i := 0; i < 2; i++ {
		row := x.RawRowView(i)
		n := math.Sqrt(dot(row, row))
		for j := range row {
			row[j] *= 30 / n
		}
	}
	st, err := NewStats(x, x)
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range []string{OPRF, SDERF} {
		mp, err := New(Config{Family: fam, Features: m, Seed: 5}, st)
		if err != nil {
			t.Fatal(err)
		}
		z := mat.NewDense(2, m, nil)
		s, err := mp.TransformScaled(z, x)
		if err != nil {
			t.Fatal(err)
		}
		got := s[0] + s[1] + math.Log(dot(z.RawRowView(0), z.RawRowView(1)))
		// Direct: the exponent of feature j of row i from the definition.
		u := [2][]float64{apply(mp.basis, x.RawRowView(0)), apply(mp.basis, x.RawRowView(1))}
		mx := math.Inf(-1)
		terms := make([]float64, m)
		for j := 0; j < m; j++ {
			w := mp.w.RawRowView(j)
			var e float64
			for k := 0; k < 2; k++ {
				e += -0.5*math.Log(m) - 0.5*dot(u[k], u[k])
				for l, al := range mp.spec.A {
					e += 0.25*math.Log1p(-4*al) + al*w[l]*w[l] + math.Sqrt(1-4*al)*w[l]*u[k][l]
				}
			}
			terms[j] = e
			mx = math.Max(mx, e)
		}
		var sum float64
		for _, e := range terms {
			sum += math.Exp(e - mx)
		}
		want := mx + math.Log(sum)
		if math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("%s: log estimate %.12g, direct %.12g", fam, got, want)
		}
		err = mp.Transform(z, x)
		if err != nil && err != features.ErrOverflow {
			t.Errorf("%s: Transform at norm 30: %v, want nil or ErrOverflow", fam, err)
		}
		if err == nil {
			for _, v := range z.RawMatrix().Data {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s: Transform gave %v without an error", fam, v)
				}
			}
		}
	}
}
