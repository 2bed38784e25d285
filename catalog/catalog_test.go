package catalog

import (
	"math"
	"strings"
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
	case "poly2", "poly3":
		return kernel.Polynomial{Gamma: gamma, Coef0: 1, Degree: int(e.Kernel[4] - '0')}.Eval
	case "chi2":
		return kernel.Chi2{}.Eval
	case "skewed-chi2":
		return kernel.SkewedChi2{C: 1}.Eval
	}
	t.Fatalf("entry %s: no exact kernel for %q", e.Name, e.Kernel)
	return nil
}

// deterministic reports the entries that are not random estimators: the
// Nyström maps (exact on their landmarks, tested in package nystrom and
// below) and the sampled additive χ² map (its error bound is tested in
// package features).
func deterministic(name string) bool {
	return name == "chi2" || strings.HasPrefix(name, "nystrom")
}

// Every registered random map is an unbiased estimator of its kernel: the
// mean over independent seeds is within 5 standard errors of the exact
// value. The χ² maps get non-negative inputs (their domain).
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
		if deterministic(name) {
			continue
		}
		k := exact(t, e, gamma)
		for pi, p := range pairs {
			if strings.Contains(e.Kernel, "chi2") {
				p = [2][]float64{abs(p[0]), abs(p[1])}
			}
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

// abs returns the absolute values of v.
func abs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Abs(x)
	}
	return out
}

// Every symmetric map round-trips through the decoders of the registry
// (what a model file holds) to identical features. Inputs are
// non-negative (the χ² maps' domain); the Nyström entries choose their
// landmarks from 40 sample rows.
func TestSymmetricEntriesRoundTrip(t *testing.T) {
	r := Default()
	x, _ := sampler.Gaussian{}.Sample(5, 4, 2)
	for i := 0; i < 5; i++ {
		copy(x.RawRowView(i), abs(x.RawRowView(i)))
	}
	sample, _ := sampler.Gaussian{}.Sample(40, 4, 5)
	for i := 0; i < 40; i++ {
		copy(sample.RawRowView(i), abs(sample.RawRowView(i)))
	}
	for _, name := range r.Names() {
		e, _ := r.Lookup(name)
		if e.Asymmetric {
			if _, err := r.Map(name, features.Options{InputDim: 4, Features: 16}); err == nil {
				t.Errorf("%s: asymmetric entry built as a map", name)
			}
			continue
		}
		m, err := r.Map(name, features.Options{InputDim: 4, Features: 16, Gamma: 1, Seed: 3, Data: sample})
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

// Every Nyström entry reproduces its kernel exactly on its own landmarks
// (to 1e-9), and needs sample rows: without Options.Data it is an error.
func TestNystromEntries(t *testing.T) {
	r := Default()
	sample, _ := sampler.Gaussian{}.Sample(60, 3, 8)
	sample.Scale(0.5, sample)
	for _, name := range r.Names() {
		if !strings.HasPrefix(name, "nystrom") {
			continue
		}
		e, _ := r.Lookup(name)
		if _, err := r.Map(name, features.Options{InputDim: 3, Features: 8, Gamma: 0.5}); err == nil {
			t.Errorf("%s: built without sample rows", name)
		}
		m, err := r.Map(name, features.Options{InputDim: 3, Features: 60, Gamma: 0.5, Seed: 1, Data: sample})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		k := exact(t, e, 0.5)
		z, err := features.Apply(m, sample)
		if err != nil {
			t.Fatal(err)
		}
		// With as many landmarks as rows, uniform and leverage landmarks are
		// the rows themselves; k-means centres of 60 rows into 60 clusters too.
		for i := 0; i < 60; i += 7 {
			for j := 0; j < 60; j += 5 {
				got := mat.Dot(z.RowView(i), z.RowView(j))
				if want := k(sample.RawRowView(i), sample.RawRowView(j)); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Errorf("%s: K̂[%d,%d] = %.12g, exact %.12g", name, i, j, got, want)
				}
			}
		}
	}
}
