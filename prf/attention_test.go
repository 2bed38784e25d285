package prf_test

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/prf"
	"github.com/kernelkit/kernelkit/sampler"
)

// TestLinearAttentionAdapts: attention.Linear with a catalog oprf, sderf
// or aderf map (fitted to an isotropic prior) gives, on a non-causal call,
// the output of the same projection fitted explicitly to the call's
// scaled queries and kept keys (FAVOR++ and FAVOR#: the parameters of the
// batch), to rounding; a causal call keeps the prior.
func TestLinearAttentionAdapts(t *testing.T) {
	const l, d, m = 40, 8, 16
	q, _ := sampler.Gaussian{}.Sample(l, d, 1)
	k, _ := sampler.Gaussian{}.Sample(l, d, 2)
	v, _ := sampler.Gaussian{}.Sample(l, d, 3)
	for j := 0; j < d; j++ { // anisotropic keys
		for i := 0; i < l; i++ {
			k.Set(i, j, k.At(i, j)*float64(j+1)/4)
		}
	}
	pad := make([]bool, l)
	pad[3], pad[17] = true, true
	f := math.Pow(d, -0.25)
	var qs, ks mat.Dense
	qs.Scale(f, q)
	kept := mat.NewDense(l-2, d, nil)
	for i, r := 0, 0; i < l; i++ {
		if !pad[i] {
			copy(kept.RawRowView(r), k.RawRowView(i))
			r++
		}
	}
	ks.Scale(f, kept)
	st, err := prf.NewStats(&qs, &ks)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"oprf", "sderf", "aderf"} {
		p, err := catalog.Default().Pair(name, features.Options{InputDim: d, Features: m, Sampler: sampler.Orthogonal{}, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		got, err := (&attention.Linear{Pair: p}).ApplyMasked(q, k, v, pad)
		if err != nil {
			t.Fatal(err)
		}
		var fitted features.Pair
		if mp, ok := features.AsTransformer(p); ok {
			f, err := mp.(*prf.Map).Fit(st)
			if err != nil {
				t.Fatal(err)
			}
			fitted = features.Symmetric(f)
		} else {
			if fitted, err = p.(*prf.Pair).Fit(st); err != nil {
				t.Fatal(err)
			}
		}
		want, err := (&attention.Linear{Pair: fitted}).ApplyMasked(q, k, v, pad)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.EqualApprox(got, want, 1e-12) {
			t.Errorf("%s: adapted attention differs from the explicitly fitted map", name)
		}
		prior, err := (&attention.Linear{Pair: p, Causal: true}).Apply(q, k, v)
		if err != nil {
			t.Fatal(err)
		}
		fit, err := (&attention.Linear{Pair: fitted, Causal: true}).Apply(q, k, v)
		if err != nil {
			t.Fatal(err)
		}
		if mat.EqualApprox(prior, fit, 1e-9) {
			t.Errorf("%s: the causal call was refitted", name)
		}
	}
}
