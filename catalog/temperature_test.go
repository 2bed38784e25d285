package catalog

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/cluster"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
)

// scaled returns s·x.
func scaled(x *mat.Dense, s float64) *mat.Dense {
	var out mat.Dense
	out.Scale(s, x)
	return &out
}

// Every softmax-kernel entry built with Options.Temperature = τ estimates
// exp(xᵀy/τ): the mean over independent seeds is within 5 standard errors
// of it (as TestEveryEntryUnbiased, on rows √τ times larger, so that the
// scaled rows are that test's and the estimators' variances the same). The
// fitted maps (oprf, sderf, aderf) are fitted to Options.Data.
func TestEveryEntryTempered(t *testing.T) {
	const d, D, draws, tau = 3, 64, 400, 4.0
	r := Default()
	x, _ := sampler.Gaussian{}.Sample(40, d, 11)
	x.Scale(0.4*math.Sqrt(tau), x)
	qc, _, err := cluster.KMeans(x, 2, 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	pairs := [][2][]float64{
		{x.RawRowView(0), x.RawRowView(1)},
		{x.RawRowView(2), x.RawRowView(2)},
		{x.RawRowView(3), x.RawRowView(7)},
	}
	n := 0
	for _, name := range r.Names() {
		e, _ := r.Lookup(name)
		if e.Kernel != "softmax" || deterministic(name) {
			continue
		}
		n++
		for pi, p := range pairs {
			est := make([]float64, draws)
			for s := range est {
				pr, err := r.Pair(name, features.Options{InputDim: d, Features: D, Seed: uint64(1000*pi + s), Temperature: tau,
					Norm: 0.7 * math.Sqrt(tau), QueryCentres: qc, KeyCentres: qc, Data: x})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if est[s], err = features.EstimatePair(pr, p[0], p[1]); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			mean, sd := stat.MeanStdDev(est, nil)
			se := sd / math.Sqrt(draws)
			want := math.Exp(mat.Dot(mat.NewVecDense(d, p[0]), mat.NewVecDense(d, p[1])) / tau)
			if math.Abs(mean-want) > 5*se+1e-12 {
				t.Errorf("%s pair %d: mean %.6f ± %.2g, exp(xᵀy/τ) %.6f", name, pi, mean, se, want)
			}
		}
	}
	if n < 8 {
		t.Errorf("%d random softmax entries, want at least 8 (positive, trig, hyperbolic, the hybrids, simrf, oprf, sderf, aderf)", n)
	}
}

// A tempered entry is the entry's map of exp(xᵀy), built on the options
// scaled by 1/√τ (sample rows, centres, norm), applied to x/√τ: the same
// features bit for bit, for every softmax entry, the Nyström one
// included; the symmetric ones round-trip through the registry's decoders
// (the tempered kind). Other kernels and invalid temperatures are refused.
func TestTemperedEntryIsScaledInput(t *testing.T) {
	const d, tau = 4, 6.0
	s := 1 / math.Sqrt(tau)
	r := Default()
	data, _ := sampler.Gaussian{}.Sample(50, d, 3)
	data.Scale(2, data)
	x, _ := sampler.Gaussian{}.Sample(6, d, 4)
	x.Scale(2, x)
	qc, _, err := cluster.KMeans(data, 2, 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	base := features.Options{InputDim: d, Features: 16, Seed: 9, Norm: 2, QueryCentres: qc, KeyCentres: qc, Data: data}
	adapted := 0
	defer func() {
		if adapted < 3 {
			t.Errorf("%d adaptive tempered entries, want at least 3 (oprf, sderf, aderf)", adapted)
		}
	}()
	for _, name := range r.Names() {
		e, _ := r.Lookup(name)
		o := base
		o.Temperature = tau
		if e.Kernel != "softmax" {
			o.Gamma = 1
			if _, err := r.Pair(name, o); err == nil || !strings.Contains(err.Error(), "softmax") {
				t.Errorf("%s (%s kernel) with a temperature: %v", name, e.Kernel, err)
			}
			continue
		}
		for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
			o.Temperature = bad
			if _, err := r.Pair(name, o); err == nil {
				t.Errorf("%s: temperature %v accepted", name, bad)
			}
		}
		o.Temperature = tau
		tp, err := r.Pair(name, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		u := base
		u.Data, u.QueryCentres, u.KeyCentres, u.Norm = scaled(data, s), scaled(qc, s), scaled(qc, s), 2*s
		up, err := r.Pair(name, u)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		xs := scaled(x, s)
		for _, side := range []func(features.Pair, *mat.Dense) (*mat.Dense, error){features.Queries, features.Keys} {
			a, err := side(tp, x)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			b, _ := side(up, xs)
			if !mat.Equal(a, b) {
				t.Errorf("%s: tempered features differ from the unscaled map's of x/√τ", name)
			}
		}
		// A data-fitted entry, tempered, fits its inner map to the scaled
		// rows: the same features as the unscaled entry fitted to x/√τ.
		if ad, ok := adaptive(tp); ok {
			adapted++
			fitted, err := ad.Adapt(x, data)
			if err != nil {
				t.Fatalf("%s: Adapt: %v", name, err)
			}
			uad, ok := adaptive(up)
			if !ok {
				t.Fatalf("%s: tempered entry adaptive, the plain one not", name)
			}
			ref, err := uad.Adapt(xs, scaled(data, s))
			if err != nil {
				t.Fatalf("%s: Adapt: %v", name, err)
			}
			for _, side := range []func(features.Pair, *mat.Dense) (*mat.Dense, error){features.Queries, features.Keys} {
				a, err := side(fitted, x)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				b, _ := side(ref, xs)
				if !mat.Equal(a, b) {
					t.Errorf("%s: tempered and adapted features differ from the plain map's fitted to x/√τ", name)
				}
			}
		}
		// Tempering again multiplies the temperatures, and their product
		// is checked (6·1e308 overflows).
		tp2, err := features.TemperPair(tp, 2)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t2 := 0.0
		if m, ok := features.AsTransformer(tp2); ok {
			_, t2 = features.Untemper(m)
		} else {
			_, t2 = features.UntemperPair(tp2)
		}
		if t2 != 2*tau {
			t.Errorf("%s tempered by %g then 2: τ = %g, want %g", name, tau, t2, 2*tau)
		}
		if _, err := features.TemperPair(tp, 1e308); err == nil || !strings.Contains(err.Error(), "0 < τ < +Inf") {
			t.Errorf("%s at τ = %g tempered by 1e308: %v, want the domain error", name, tau, err)
		}
		if e.Asymmetric {
			continue
		}
		m, err := r.Map(name, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		kind, spec, err := features.Encode(m)
		if err != nil || kind != features.TemperedSpecKind {
			t.Fatalf("%s: encoded as %q (%v)", name, kind, err)
		}
		back, err := r.Decode(kind, spec)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		a, _ := features.Apply(m, x)
		if b, err := features.Apply(back, x); err != nil || !mat.Equal(a, b) {
			t.Errorf("%s: decoded tempered map differs (%v)", name, err)
		}
	}
}

// adaptive returns p's features.Adaptive: the pair's own, or its symmetric
// map's (as attention.Linear looks for it).
func adaptive(p features.Pair) (features.Adaptive, bool) {
	if ad, ok := p.(features.Adaptive); ok {
		return ad, true
	}
	if m, ok := features.AsTransformer(p); ok {
		ad, ok := m.(features.Adaptive)
		return ad, ok
	}
	return nil, false
}
