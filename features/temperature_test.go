package features

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/sampler"
)

// TestTemperedUnbiasedAndVariance: the softmax maps drawn with a
// temperature τ estimate exp(xᵀy/τ): over independent draws (fixed
// seeds), the mean lies within 4 standard errors of exp(xᵀy/τ), and the
// sample variance matches HRF Lemma 2.2's MSE evaluated at x/√τ and y/√τ
// within 4 standard errors of the variance estimate (from the sample
// fourth moment), as TestUnbiasedAndVariance checks the unscaled maps. At
// τ = 4 the rows have norms 1.6 and 1.2; the unscaled maps would estimate
// exp(xᵀy) instead, which is off by hundreds of standard errors.
func TestTemperedUnbiasedAndVariance(t *testing.T) {
	const d, n, tau = 6, 3000, 4.0
	x := scaleTo(vec(d, 1, 0), 1.6)
	y := scaleTo(vec(d, 1, 1.1), 1.2)
	xs := scaleTo(x, 0.8) // x/√τ
	ys := scaleTo(y, 0.6)
	var ip float64
	for i := range x {
		ip += x[i] * y[i]
	}
	want := math.Exp(ip / tau)
	for _, c := range []struct {
		form string
		mse  func(m int) float64
	}{
		{"trig", func(m int) float64 { return TrigMSE(xs, ys, m/2) }},
		{"positive", func(m int) float64 { return PositiveMSE(xs, ys, m) }},
		{"hyperbolic", func(m int) float64 { return HyperbolicMSE(xs, ys, m/2) }},
	} {
		t.Run(c.form, func(t *testing.T) {
			cfg := Config{Kernel: "softmax", Form: c.form, Features: 16, Temperature: tau, Sampler: sampler.Gaussian{}}
			est := make([]float64, n)
			for s := range est {
				cfg.Seed = uint64(1000 + s)
				mp, err := Draw(cfg, d)
				if err != nil {
					t.Fatal(err)
				}
				if s == 0 {
					if k := mp.(KernelEstimator).Kernel().Eval(x, y); math.Abs(k-want) > 1e-14*want {
						t.Fatalf("kernel of the tempered map: %v, want exp(xᵀy/τ) = %v", k, want)
					}
				}
				z, err := Apply(mp, mat.NewDense(2, d, append(append([]float64(nil), x...), y...)))
				if err != nil {
					t.Fatal(err)
				}
				est[s] = mat.Dot(z.RowView(0), z.RowView(1))
			}
			mean, v, m4 := moments(est)
			se := math.Sqrt(v / n)
			if math.Abs(mean-want) > 4*se {
				t.Errorf("mean %.6g, exp(xᵀy/τ) %.6g: off by %.1f standard errors", mean, want, math.Abs(mean-want)/se)
			}
			mse := c.mse(cfg.Features)
			seVar := math.Sqrt((m4 - v*v) / n)
			if math.Abs(v-mse) > 4*seVar {
				t.Errorf("variance %.6g, Lemma 2.2 at x/√τ, y/√τ %.6g: off by %.1f standard errors", v, mse, math.Abs(v-mse)/seVar)
			}
		})
	}
}

// TestTemperIsScaledInput: a tempered map is the unscaled map applied to
// x/√τ, bit for bit, in every transform (Transform, TransformScaled,
// Transform32), and Untemper recovers the map and τ.
func TestTemperIsScaledInput(t *testing.T) {
	const d, tau = 5, 2.5
	x := randomRows(70, d, 4, 1.5)
	s := 1 / math.Sqrt(tau)
	var xs mat.Dense
	xs.Apply(func(_, _ int, v float64) float64 { return v * s }, x)
	for _, form := range []string{"positive", "trig", "hyperbolic"} {
		cfg := Config{Kernel: "softmax", Form: form, Features: 32, Seed: 3, Temperature: tau}
		tm, err := Draw(cfg, d)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Temperature = 0
		mp, err := New(cfg, d)
		if err != nil {
			t.Fatal(err)
		}
		if inner, got := Untemper(tm); got != tau || !mat.Equal(inner.(*Map).W(), mp.W()) {
			t.Errorf("%s: Untemper gives τ = %v and another map", form, got)
		}
		a, err := Apply(tm, x)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Apply(mp, &xs)
		if !mat.Equal(a, b) {
			t.Errorf("%s: tempered features differ from the map's of x/√τ", form)
		}
		za, zb := mat.NewDense(70, 32, nil), mat.NewDense(70, 32, nil)
		sa, err := tm.(ScaledTransformer).TransformScaled(za, x)
		if err != nil {
			t.Fatal(err)
		}
		sb, _ := mp.TransformScaled(zb, &xs)
		if !mat.Equal(za, zb) || !equalSlices(sa, sb) {
			t.Errorf("%s: tempered scaled features differ from the map's of x/√τ", form)
		}
		a32 := blas32.General{Rows: 70, Cols: 32, Stride: 32, Data: make([]float32, 70*32)}
		b32 := blas32.General{Rows: 70, Cols: 32, Stride: 32, Data: make([]float32, 70*32)}
		if err := tm.(transform32).Transform32(a32, x); err != nil {
			t.Fatal(err)
		}
		if err := mp.Transform32(b32, &xs); err != nil {
			t.Fatal(err)
		}
		for i := range a32.Data {
			if a32.Data[i] != b32.Data[i] {
				t.Errorf("%s: Transform32 of the tempered map differs at %d", form, i)
				break
			}
		}
	}
}

func equalSlices(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTemperatureDomain: a temperature is positive and finite; 0 in a
// Config means none; New draws only the unscaled map; other kernels have no
// temperature; τ = 1 is the map itself and temperatures compose.
func TestTemperatureDomain(t *testing.T) {
	for _, tau := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if err := CheckTemperature(tau); err == nil || !strings.Contains(err.Error(), "0 < τ < +Inf") {
			t.Errorf("CheckTemperature(%v): %v", tau, err)
		}
		if tau == 0 {
			continue
		}
		if _, err := Draw(Config{Kernel: "softmax", Features: 8, Temperature: tau}, 3); err == nil {
			t.Errorf("Draw with temperature %v accepted", tau)
		}
		if _, err := Temper(&Map{}, tau); err == nil {
			t.Errorf("Temper(%v) accepted", tau)
		}
	}
	mp, err := Draw(Config{Kernel: "softmax", Features: 8}, 3)
	if _, ok := mp.(*Map); err != nil || !ok {
		t.Errorf("Draw without a temperature: %T, %v; want the *Map", mp, err)
	}
	if _, err := New(Config{Kernel: "softmax", Features: 8, Temperature: 2}, 3); err == nil || !strings.Contains(err.Error(), "Draw") {
		t.Errorf("New with a temperature: %v", err)
	}
	if _, err := New(Config{Kernel: "softmax", Features: 8, Temperature: 1}, 3); err != nil {
		t.Errorf("New at τ = 1: %v", err)
	}
	if _, err := FromProjection(Config{Kernel: "softmax", Features: 2, Temperature: 2}, mat.NewDense(2, 3, nil)); err == nil {
		t.Error("FromProjection with a temperature accepted")
	}
	for _, k := range []string{"rbf", "arccos1"} {
		if _, err := Draw(Config{Kernel: k, Gamma: 1, Features: 8, Temperature: 2}, 3); err == nil || !strings.Contains(err.Error(), "softmax") {
			t.Errorf("%s with a temperature: %v", k, err)
		}
	}
	base, _ := New(Config{Kernel: "softmax", Features: 8}, 3)
	if same, err := Temper(base, 1); err != nil || same != Transformer(base) {
		t.Errorf("Temper at τ = 1: %v, %v", same, err)
	}
	t2, _ := Temper(base, 2)
	t6, err := Temper(t2, 3)
	if inner, tau := Untemper(t6); err != nil || inner != Transformer(base) || tau != 6 {
		t.Errorf("Temper of a tempered map: inner %v, τ %v, %v; want the map at τ = 6", inner, tau, err)
	}
	// The composed temperature is checked too: 1e300·1e300 overflows, and
	// 1e-300·1e-300 underflows to 0.
	for _, tau := range []float64{1e300, 1e-300} {
		big, err := Temper(base, tau)
		if err != nil {
			t.Fatalf("Temper(%g): %v", tau, err)
		}
		if _, err := Temper(big, tau); err == nil || !strings.Contains(err.Error(), "0 < τ < +Inf") {
			t.Errorf("Temper(%g) of a map at τ = %g: %v, want the domain error", tau, tau, err)
		}
	}
	if inner, tau := Untemper(base); inner != Transformer(base) || tau != 1 {
		t.Errorf("Untemper of a plain map: τ = %v", tau)
	}
	// An input that overflows when scaled (τ < 1) is an overflow.
	small, _ := Temper(base, 1e-300)
	if err := small.Transform(mat.NewDense(1, 8, nil), mat.NewDense(1, 3, []float64{1e160, 0, 0})); !errors.Is(err, ErrOverflow) {
		t.Errorf("scaled input beyond float64: %v, want ErrOverflow", err)
	}
}

// TestTemperedSpec: a tempered map stores its temperature and its inner
// map (TemperedSpecKind), every Registry decodes it to the same features,
// and malformed tempered specs are refused.
func TestTemperedSpec(t *testing.T) {
	r := NewRegistry()
	if err := r.RegisterDecoder(SpecKind, DecodeSpec); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterDecoder(TemperedSpecKind, DecodeSpec); err == nil {
		t.Error("a decoder for the reserved tempered kind was registered")
	}
	tm, err := Draw(Config{Kernel: "softmax", Form: "hyperbolic", Features: 16, Seed: 2, Temperature: 3}, 4)
	if err != nil {
		t.Fatal(err)
	}
	kind, spec, err := Encode(tm)
	if err != nil || kind != TemperedSpecKind {
		t.Fatalf("Encode: kind %q, %v", kind, err)
	}
	back, err := r.Decode(kind, spec)
	if err != nil {
		t.Fatal(err)
	}
	x := randomRows(9, 4, 1, 1)
	a, _ := Apply(tm, x)
	b, err := Apply(back, x)
	if err != nil || !mat.Equal(a, b) {
		t.Errorf("decoded tempered map gives other features (%v)", err)
	}
	var ts TemperedSpec
	if err := json.Unmarshal(spec, &ts); err != nil || ts.Temperature != 3 || ts.MapKind != SpecKind {
		t.Errorf("tempered spec %s", spec)
	}
	for name, bad := range map[string]TemperedSpec{
		"temperature 1":     {Temperature: 1, MapKind: ts.MapKind, Map: ts.Map},
		"temperature 0":     {Temperature: 0, MapKind: ts.MapKind, Map: ts.Map},
		"negative":          {Temperature: -3, MapKind: ts.MapKind, Map: ts.Map},
		"nested":            {Temperature: 2, MapKind: TemperedSpecKind, Map: spec},
		"unknown inner map": {Temperature: 2, MapKind: "quantum", Map: ts.Map},
	} {
		raw, _ := json.Marshal(bad)
		if _, err := r.Decode(TemperedSpecKind, raw); err == nil {
			t.Errorf("%s: tempered spec %s accepted", name, raw)
		}
	}
}

// TestTemperedKernelGram: TemperedKernel's Gram (one GEMM on the scaled
// rows) and Eval are exp(xᵀy/τ) to rounding. The bound: scaling each
// input by 1/√τ and the d products and sums of the inner product each err
// by a unit roundoff u of at most ‖x‖‖y‖/τ, (2d + 2)u·‖x‖‖y‖/τ in all
// (Higham's γ_d bound for the dot product plus the scalings), which exp
// turns into that relative error, plus 2u for exp and the division.
func TestTemperedKernelGram(t *testing.T) {
	const d, tau = 5, 2.5
	x := randomRows(12, d, 8, 2)
	k := TemperedKernel{Kernel: kernel.Softmax{}, Temperature: tau}
	g, err := k.Gram(x, x)
	if err != nil {
		t.Fatal(err)
	}
	const u = 0x1p-53
	for i := 0; i < 12; i++ {
		for j := 0; j < 12; j++ {
			xi, xj := x.RawRowView(i), x.RawRowView(j)
			want := math.Exp(mat.Dot(x.RowView(i), x.RowView(j)) / tau)
			bound := 2 * ((2*d+2)*u*math.Sqrt(sq(xi)*sq(xj))/tau + 2*u) * want // both computations err
			if got := g.At(i, j); math.Abs(got-want) > bound {
				t.Errorf("Gram[%d][%d] = %v, want exp(xᵀy/τ) = %v", i, j, got, want)
			}
			if e := k.Eval(xi, xj); math.Abs(e-want) > bound {
				t.Errorf("Eval[%d][%d] = %v, want exp(xᵀy/τ) = %v", i, j, e, want)
			}
		}
	}
}
