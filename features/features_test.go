package features

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/sampler"
)

// draws returns `draws` independent estimates of k(x, y), one map per seed.
func draws(t *testing.T, cfg Config, x, y []float64, n int) []float64 {
	t.Helper()
	out := make([]float64, n)
	for s := range out {
		cfg.Seed = uint64(1000 + s)
		mp, err := New(cfg, len(x))
		if err != nil {
			t.Fatal(err)
		}
		out[s], err = mp.Estimate(x, y)
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

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

func vec(d int, scale float64, phase float64) []float64 {
	v := make([]float64, d)
	for i := range v {
		v[i] = scale * math.Sin(float64(i+1)*1.7+phase)
	}
	return v
}

func scaleTo(v []float64, norm float64) []float64 {
	n := math.Sqrt(sq(v))
	out := make([]float64, len(v))
	for i := range v {
		out[i] = v[i] * norm / n
	}
	return out
}

// TestUnbiasedAndVariance checks each estimator against its exact kernel:
// the mean of many independent estimates must lie within 4 standard errors
// of k(x, y), and where a closed-form MSE exists the sample variance must
// match it within 4 standard errors of the variance estimate (whose standard
// error comes from the sample fourth moment).
func TestUnbiasedAndVariance(t *testing.T) {
	const d, n = 6, 3000
	x := scaleTo(vec(d, 1, 0), 0.8)
	y := scaleTo(vec(d, 1, 1.1), 0.6)
	cases := []struct {
		cfg Config
		mse func(m int) float64
	}{
		{Config{Kernel: "rbf", Gamma: 0.7, Features: 16}, func(m int) float64 { return RFFCosMSE(x, y, 0.7, m) }},
		{Config{Kernel: "rbf", Form: "sincos", Gamma: 0.7, Features: 16}, func(m int) float64 { return RFFSinCosMSE(x, y, 0.7, m/2) }},
		{Config{Kernel: "rbf", Form: "positive", Gamma: 0.5, Features: 16}, func(m int) float64 {
			// Gaussian = exp(−‖x‖²/2) SM exp(−‖y‖²/2) at γ = 1/2.
			f := math.Exp(-(sq(x) + sq(y)) / 2)
			return f * f * PositiveMSE(x, y, m)
		}},
		{Config{Kernel: "rbf", Form: "hyperbolic", Gamma: 0.5, Features: 16}, func(m int) float64 {
			f := math.Exp(-(sq(x) + sq(y)) / 2)
			return f * f * HyperbolicMSE(x, y, m/2)
		}},
		{Config{Kernel: "softmax", Form: "trig", Features: 16}, func(m int) float64 { return TrigMSE(x, y, m/2) }},
		{Config{Kernel: "softmax", Form: "positive", Features: 16}, func(m int) float64 { return PositiveMSE(x, y, m) }},
		{Config{Kernel: "softmax", Form: "hyperbolic", Features: 16}, func(m int) float64 { return HyperbolicMSE(x, y, m/2) }},
		{Config{Kernel: "arccos0", Features: 16}, func(m int) float64 {
			return ArcCos0MSE(kernel.ArcCos{Order: 0}.Eval(x, y), m)
		}},
		{Config{Kernel: "arccos1", Features: 16}, nil},
		{Config{Kernel: "arccos2", Features: 16}, nil},
	}
	for _, c := range cases {
		for _, smp := range []sampler.Sampler{sampler.Gaussian{}, sampler.Orthogonal{}, sampler.Structured{}, sampler.Halton{}} {
			name := fmt.Sprintf("%s/%s/%s", c.cfg.Kernel, c.cfg.Form, smp.Name())
			t.Run(name, func(t *testing.T) {
				cfg := c.cfg
				cfg.Sampler = smp
				mp, _ := New(cfg, d)
				exact := mp.Kernel().Eval(x, y)
				est := draws(t, cfg, x, y, n)
				mean, v, m4 := moments(est)
				se := math.Sqrt(v / n)
				if math.Abs(mean-exact) > 4*se {
					t.Errorf("mean %.6g, exact %.6g: off by %.1f standard errors", mean, exact, math.Abs(mean-exact)/se)
				}
				// The closed forms are for iid projections only.
				if c.mse != nil && smp.Name() == "iid" {
					want := c.mse(cfg.Features)
					seVar := math.Sqrt((m4 - v*v) / n)
					if math.Abs(v-want) > 4*seVar {
						t.Errorf("variance %.6g, Lemma 2.2/closed form %.6g: off by %.1f standard errors", v, want, math.Abs(v-want)/seVar)
					}
				}
			})
		}
	}
}

// TestOrthogonalLowersVariance: at equal D, orthogonal projections give a
// smaller estimator variance than iid ones for the RBF kernel (Yu et al.).
func TestOrthogonalLowersVariance(t *testing.T) {
	const d, n = 8, 2000
	x := scaleTo(vec(d, 1, 0), 1)
	y := scaleTo(vec(d, 1, 0.4), 1.2)
	base := Config{Kernel: "rbf", Form: "sincos", Gamma: 0.5, Features: 2 * d}
	vs := map[string]float64{}
	for _, smp := range []sampler.Sampler{sampler.Gaussian{}, sampler.Orthogonal{}, sampler.Structured{}} {
		cfg := base
		cfg.Sampler = smp
		_, v, _ := moments(draws(t, cfg, x, y, n))
		vs[smp.Name()] = v
	}
	// The variance estimates have relative standard error about √(2/n) ≈ 3%;
	// the orthogonal gain here is far larger than that.
	if !(vs["orf"] < 0.8*vs["iid"]) || !(vs["sorf"] < 0.8*vs["iid"]) {
		t.Errorf("variances iid %.4g, orf %.4g, sorf %.4g: orthogonal features should be lower", vs["iid"], vs["orf"], vs["sorf"])
	}
}

func randomRows(n, d int, seed uint64, scale float64) *mat.Dense {
	g, _ := sampler.Gaussian{}.Sample(n, d, seed)
	g.Scale(scale, g)
	return g
}

func gramError(t *testing.T, cfg Config, x *mat.Dense) float64 {
	t.Helper()
	_, d := x.Dims()
	mp, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	z, err := Apply(mp, x)
	if err != nil {
		t.Fatal(err)
	}
	var khat mat.Dense
	khat.Mul(z, z.T())
	k, err := kernel.Gram(mp.Kernel(), x, x)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kernel.RelativeError(k, &khat)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestGramErrorRate: E‖K − K̂‖²_F is proportional to 1/D for iid features, so
// the RMS relative error at 16 times the features is 4 times smaller.
func TestGramErrorRate(t *testing.T) {
	x := randomRows(200, 10, 7, 0.15)
	for _, kern := range []string{"rbf", "arccos0", "arccos1", "softmax"} {
		t.Run(kern, func(t *testing.T) {
			rms := func(D int) float64 {
				var s float64
				const seeds = 6
				for seed := 0; seed < seeds; seed++ {
					e := gramError(t, Config{Kernel: kern, Gamma: 0.1, Features: D, Seed: uint64(seed)}, x)
					s += e * e
				}
				return math.Sqrt(s / seeds)
			}
			r := rms(64) / rms(1024)
			if r < 3.2 || r > 5 {
				t.Errorf("error ratio between D=64 and D=1024 is %.2f, want about 4 (1/√D)", r)
			}
		})
	}
}

func TestFloat32MatchesFloat64(t *testing.T) {
	x := randomRows(100, 12, 3, 0.5)
	for _, kern := range []string{"rbf", "softmax", "arccos1"} {
		cfg := Config{Kernel: kern, Gamma: 0.2, Features: 256, Seed: 5}
		m64, _ := New(cfg, 12)
		cfg.Float32 = true
		m32, _ := New(cfg, 12)
		z64, _ := Apply(m64, x)
		z32, err := Apply(m32, x)
		if err != nil {
			t.Fatal(err)
		}
		var diff mat.Dense
		diff.Sub(z64, z32)
		rel := mat.Norm(&diff, 2) / mat.Norm(z64, 2)
		if rel > 1e-5 || rel == 0 {
			t.Errorf("%s: float32 features differ by %.3g relative; want (0, 1e-5]", kern, rel)
		}
	}
}

// TestPositiveStability: for inputs of huge norm the naive product
// exp(ωᵀx)·exp(−‖x‖²) is Inf·0 = NaN; the log-domain map gives finite
// features, and TransformScaled recovers the estimate exactly.
func TestPositiveStability(t *testing.T) {
	x := mat.NewDense(2, 3, []float64{300, 0, 0, 299, 1, 0})
	mp, err := New(Config{Kernel: "rbf", Form: "positive", Gamma: 0.5, Features: 64, Seed: 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	z, err := Apply(mp, x)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range z.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("non-finite feature %v", v)
		}
	}
	// The trigonometric softmax map's h(x) = exp(‖x‖²/2) overflows for a
	// norm-40 input: Transform says so, TransformScaled does not.
	trig, _ := New(Config{Kernel: "softmax", Form: "trig", Features: 64, Seed: 1}, 3)
	big := mat.NewDense(2, 3, []float64{0, 0, 40, 0, 0, 40})
	dst := mat.NewDense(2, 64, nil)
	if err := trig.Transform(dst, big); !errors.Is(err, ErrOverflow) {
		t.Errorf("trig softmax features of a norm-40 input: got %v, want ErrOverflow", err)
	}
	if _, err := trig.TransformScaled(dst, big); err != nil {
		t.Errorf("TransformScaled: %v", err)
	}
	// The positive map's features of such inputs underflow to zero unless
	// scaled; the scaled estimate must equal the estimate computed in the
	// log domain, log Σ_j exp(ω_jᵀ(x+y)) − log m − ‖x‖²/2 − ‖y‖²/2.
	sm, _ := New(Config{Kernel: "softmax", Features: 64, Seed: 1}, 3)
	s, err := sm.TransformScaled(dst, big)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range dst.RawMatrix().Data {
		if math.IsNaN(v) || v > 1 {
			t.Fatalf("scaled feature %v not in [0, 1]", v)
		}
	}
	logEst := s[0] + s[1] + math.Log(mat.Dot(dst.RowView(0), dst.RowView(1)))
	w := sm.W()
	mx := math.Inf(-1)
	a := make([]float64, 64)
	for j := range a {
		a[j] = 80 * w.At(j, 2)
		mx = math.Max(mx, a[j])
	}
	var acc float64
	for _, v := range a {
		acc += math.Exp(v - mx)
	}
	want := mx + math.Log(acc) - math.Log(64) - 1600
	if math.Abs(logEst-want) > 1e-9*math.Abs(want) {
		t.Errorf("log estimate %v, log-domain reference %v", logEst, want)
	}
	// A scaled transform of moderate inputs reproduces Transform exactly.
	xm := randomRows(5, 3, 2, 0.5)
	z1, _ := Apply(sm, xm)
	z2 := mat.NewDense(5, 64, nil)
	s2, _ := sm.TransformScaled(z2, xm)
	for i := 0; i < 5; i++ {
		for j := 0; j < 64; j++ {
			if got := math.Exp(s2[i]) * z2.At(i, j); math.Abs(got-z1.At(i, j)) > 1e-12*math.Abs(z1.At(i, j)) {
				t.Fatalf("scaled feature (%d,%d) %v, unscaled %v", i, j, got, z1.At(i, j))
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		d    int
		want string
	}{
		{Config{Kernel: "poly", Features: 4}, 3, "unknown kernel"},
		{Config{Kernel: "rbf", Gamma: 1, Features: 0}, 3, "must be positive"},
		{Config{Kernel: "rbf", Gamma: -1, Features: 4}, 3, "gamma"},
		{Config{Kernel: "rbf", Gamma: 0, Features: 4}, 3, "gamma"},
		{Config{Kernel: "rbf", Form: "sincos", Gamma: 1, Features: 5}, 3, "even"},
		{Config{Kernel: "softmax", Form: "weird", Features: 4}, 3, "unknown form"},
		{Config{Kernel: "rbf", Gamma: 1, Features: 4}, 0, "input dimension"},
	} {
		_, err := New(c.cfg, c.d)
		if err == nil || !contains(err.Error(), c.want) {
			t.Errorf("New(%+v): error %v, want one containing %q", c.cfg, err, c.want)
		}
	}
	mp, _ := New(Config{Kernel: "rbf", Gamma: 1, Features: 4}, 3)
	if err := mp.Transform(mat.NewDense(2, 4, nil), mat.NewDense(2, 2, nil)); err == nil {
		t.Error("wrong input width accepted")
	}
	if err := mp.Transform(mat.NewDense(3, 4, nil), mat.NewDense(2, 3, nil)); err == nil {
		t.Error("wrong destination shape accepted")
	}
	if err := mp.Transform(mat.NewDense(1, 4, nil), mat.NewDense(1, 3, []float64{1, math.NaN(), 0})); err == nil {
		t.Error("NaN input accepted")
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}

func TestSpecRoundTrip(t *testing.T) {
	mp, _ := New(Config{Kernel: "rbf", Gamma: 0.3, Features: 32, Sampler: sampler.Orthogonal{}, Seed: 9}, 5)
	back, err := FromSpec(mp.Spec())
	if err != nil {
		t.Fatal(err)
	}
	x := randomRows(4, 5, 1, 1)
	a, _ := Apply(mp, x)
	b, _ := Apply(back, x)
	if !mat.Equal(a, b) {
		t.Error("map rebuilt from its spec gives different features")
	}
	bad := mp.Spec()
	bad.W = bad.W[:3]
	if _, err := FromSpec(bad); err == nil {
		t.Error("truncated projection accepted")
	}
}

// TestRowIndependentOfBatch checks that a row's features do not depend on
// the rows transformed with it (a served request batched with others, a row
// predicted alone or in a file): the same bits with the pure-Go BLAS, whose
// products sum every row in one order; to rounding with OpenBLAS, whose
// GEMM takes a row through a different micro-kernel by its position in the
// batch (rows of a full block of 4, or of a remainder of 1 to 3), so the
// projection may differ in its last bit and a feature by an ulp or so of
// its argument.
func TestRowIndependentOfBatch(t *testing.T) {
	exact := strings.HasPrefix(blas.Name(), "gonum")
	for _, c := range []Config{
		{Kernel: "rbf", Form: "cos", Gamma: 0.1, Features: 1024},
		{Kernel: "softmax", Form: "positive", Features: 256},
		{Kernel: "rbf", Form: "cos", Gamma: 0.1, Features: 256, Float32: true},
	} {
		mp, err := New(c, 64)
		if err != nil {
			t.Fatal(err)
		}
		x := randomRows(200, 64, 3, 0.3)
		all := mat.NewDense(200, mp.Dim(), nil)
		if err := mp.Transform(all, x); err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for _, n := range []int{1, 2, 3, 8, 65} {
			z := mat.NewDense(n, mp.Dim(), nil)
			if err := mp.Transform(z, x.Slice(100, 100+n, 0, 64).(*mat.Dense)); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				for j, v := range z.RawRowView(i) {
					w := all.At(100+i, j)
					if exact && v != w {
						t.Fatalf("%s-%s f32=%v: row %d feature %d is %v in a batch of %d rows, %v in one of 200", c.Kernel, c.Form, c.Float32, 100+i, j, v, n, w)
					}
					// A feature is at most 1/√m·e^{…}; its argument errs by
					// a few ulp of |ωᵀx| ≲ 10, in float32 for Float32 maps.
					tol := 1e-13
					if c.Float32 {
						tol = 1e-5
					}
					d := math.Abs(v-w) / math.Max(math.Abs(w), 1/math.Sqrt(float64(mp.Dim())))
					worst = math.Max(worst, d)
					if d > tol {
						t.Fatalf("%s-%s f32=%v: row %d feature %d is %v in a batch of %d rows, %v in one of 200 (rel. %.2g)", c.Kernel, c.Form, c.Float32, 100+i, j, v, n, w, d)
					}
				}
			}
		}
		t.Logf("%s-%s f32=%v on %s: largest relative difference %.2g", c.Kernel, c.Form, c.Float32, blas.Name(), worst)
	}
}

// TestHugeFiniteInputs: finite inputs whose projections overflow (a row of
// ±1e308, whose ‖x‖² is +Inf; 1e100 for float32 maps, past float32's
// range) give ErrOverflow from every projection form, not NaN or ±Inf
// features; 1e100 is fine in float64 for the bounded forms.
func TestHugeFiniteInputs(t *testing.T) {
	for _, c := range []Config{
		{Kernel: "rbf", Form: "cos", Gamma: 0.5},
		{Kernel: "rbf", Form: "sincos", Gamma: 0.5},
		{Kernel: "rbf", Form: "positive", Gamma: 0.5},
		{Kernel: "rbf", Form: "hyperbolic", Gamma: 0.5},
		{Kernel: "softmax", Form: "positive"},
		{Kernel: "softmax", Form: "hyperbolic"},
		{Kernel: "arccos0"},
		{Kernel: "arccos1"},
		{Kernel: "arccos2"},
		{Kernel: "rbf", Form: "cos", Gamma: 0.5, Float32: true},
	} {
		c.Features, c.Seed = 16, 1
		mp, err := New(c, 3)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s-%s f32=%v", c.Kernel, c.Form, c.Float32)
		dst := mat.NewDense(1, mp.Dim(), nil)
		if err := mp.Transform(dst, mat.NewDense(1, 3, []float64{1e308, -1e308, 1e308})); !errors.Is(err, ErrOverflow) {
			t.Errorf("%s, row ±1e308: %v, want ErrOverflow", name, err)
		}
		err = mp.Transform(dst, mat.NewDense(1, 3, []float64{1e100, 0, 0}))
		if c.Float32 && !errors.Is(err, ErrOverflow) {
			t.Errorf("%s, row 1e100: %v, want ErrOverflow", name, err)
		}
		if err == nil {
			for _, v := range dst.RawMatrix().Data {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("%s, row 1e100: feature %v with no error", name, v)
					break
				}
			}
		}
	}
}
