package catalog

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/cluster"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/sampler"
)

// exact returns the kernel an entry estimates.
func exact(t *testing.T, e features.Entry, gamma float64) func(x, y []float64) float64 {
	switch e.Kernel {
	case "rbf":
		return kernel.RBF{Gamma: gamma}.Eval
	case "softmax":
		return kernel.Softmax{}.Eval
	case "arccos0", "arccos2":
		return kernel.ArcCos{Order: int(e.Kernel[6] - '0')}.Eval
	case "arccos1":
		if e.Name == "snnk/relu" {
			return func(x, y []float64) float64 { return 0.5 * kernel.ArcCos{Order: 1}.Eval(x, y) }
		}
		return kernel.ArcCos{Order: 1}.Eval
	}
	t.Fatalf("entry %s: no exact kernel for %q", e.Name, e.Kernel)
	return nil
}

// Every registered map is an unbiased estimator of its kernel: the mean
// over independent seeds is within 5 standard errors of the exact value.
func TestEveryEntryUnbiased(t *testing.T) {
	const d, D, draws, gamma = 3, 64, 400, 0.5
	r := Default()
	x, _ := sampler.Gaussian{}.Sample(40, d, 11)
	x.Scale(0.4, x)
	qc, _, err := cluster.KMeans(x, 2, 1, 20)
	if err != nil {
		t.Fatal(err)
	}
	pairs := [][2][]float64{
		{x.RawRowView(0), x.RawRowView(1)},
		{x.RawRowView(2), x.RawRowView(2)},
		{x.RawRowView(3), x.RawRowView(7)},
	}
	for _, name := range r.Names() {
		e, err := r.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		k := exact(t, e, gamma)
		for pi, p := range pairs {
			est := make([]float64, draws)
			for s := range est {
				pr, err := r.Pair(name, features.Options{InputDim: d, Features: D, Gamma: gamma, Seed: uint64(1000*pi + s),
					Norm: 0.7, QueryCentres: qc, KeyCentres: qc})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if est[s], err = features.EstimatePair(pr, p[0], p[1]); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			mean, sd := stat.MeanStdDev(est, nil)
			se := sd / math.Sqrt(draws)
			want := k(p[0], p[1])
			if math.Abs(mean-want) > 5*se+1e-12 {
				t.Errorf("%s pair %d: mean %.6f ± %.2g, exact %.6f", name, pi, mean, se, want)
			}
		}
	}
}

// Every symmetric map round-trips through the decoders of the registry
// (what a model file holds) to identical features.
func TestSymmetricEntriesRoundTrip(t *testing.T) {
	r := Default()
	x, _ := sampler.Gaussian{}.Sample(5, 4, 2)
	for _, name := range r.Names() {
		e, _ := r.Lookup(name)
		if e.Asymmetric {
			if _, err := r.Map(name, features.Options{InputDim: 4, Features: 16}); err == nil {
				t.Errorf("%s: asymmetric entry built as a map", name)
			}
			continue
		}
		m, err := r.Map(name, features.Options{InputDim: 4, Features: 16, Gamma: 1, Seed: 3})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		kind, spec, err := features.Encode(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := r.Decode(kind, spec)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		a, _ := features.Apply(m, x)
		b, err := features.Apply(back, x)
		if err != nil || !mat.Equal(a, b) {
			t.Errorf("%s: decoded map differs (%v)", name, err)
		}
	}
}

// Odd budgets are rounded up for the maps that need an even dimension.
func TestEvenRounding(t *testing.T) {
	r := Default()
	for _, name := range []string{"trig", "hyperbolic", "rbf/sincos"} {
		p, err := r.Pair(name, features.Options{InputDim: 2, Features: 7, Gamma: 1})
		if err != nil {
			t.Fatal(err)
		}
		if p.Dim() != 8 {
			t.Errorf("%s: dimension %d, want 8", name, p.Dim())
		}
	}
}
