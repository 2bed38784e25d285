package baseline

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/kernelkit/kernelkit/data"
)

var demoLetter = sync.OnceValue(data.Letter)

// demoLetterRows returns rows [lo, hi) of the embedded letter data.
func demoLetterRows(lo, hi int) *data.Dataset {
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	return demoLetter().Subset(idx)
}

// TestDemo runs the demo on 2000 training and 300 test rows of the letter
// data. Monte Carlo estimators of a kernel have a relative error of order
// 1/√D, so for the estimators with bounded variance (RFF cos, arc-cosine 0
// and 1) every fourfold increase of D must cut the Gram error by at least
// 1.3 (theory: 2), and the heavy-tailed hyperbolic estimator of the
// Gaussian must at least improve from D = 16 to 256. Orthogonal rows never
// increase the variance (Yu et al. 2016), so ORF must be within 10 % of iid
// at the largest D; test accuracy must rise with D.
func TestDemo(t *testing.T) {
	cfg := DefaultDemo()
	cfg.Samplers = []string{"iid", "orf"}
	cfg.Features = []int{256, 16, 64} // run in increasing order
	cfg.Train, cfg.Test, cfg.Name = demoLetterRows(0, 2000), demoLetterRows(19700, 20000), "letter subset"
	calls := 0
	res, err := Demo(context.Background(), cfg, func(done, total int) {
		calls++
		if done != calls || total != 24 {
			t.Errorf("progress(%d, %d) at call %d", done, total, calls)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 24 || calls != 24 || res.Classes != 26 {
		t.Fatalf("%d rows, %d progress calls, %d classes", len(res.Rows), calls, res.Classes)
	}
	gram := map[string][]float64{} // kernel/form/sampler → errors by D
	acc := map[string][]float64{}
	for i, r := range res.Rows {
		if want := []int{16, 64, 256}[i%3]; r.Features != want || r.TrainRows != 2000 || r.TestRows != 300 || r.GramRows != 300 {
			t.Fatalf("row %d: D=%d, %d train, %d test, %d Gram rows", i, r.Features, r.TrainRows, r.TestRows, r.GramRows)
		}
		if r.GramError == nil || r.TestAccuracy == nil || !(*r.GramError > 0) || math.IsInf(*r.GramError, 0) {
			t.Fatalf("row %d: Gram error %v, accuracy %v", i, r.GramError, r.TestAccuracy)
		}
		k := r.Kernel + "/" + r.Form + "/" + r.Sampler
		gram[k] = append(gram[k], *r.GramError)
		acc[k] = append(acc[k], *r.TestAccuracy)
	}
	if len(gram) != 8 {
		t.Fatalf("row groups %v", gram)
	}
	for k, g := range gram {
		if strings.Contains(k, "hyperbolic") {
			if !(g[2] < g[0]) {
				t.Errorf("%s: Gram error %v does not fall from D=16 to 256", k, g)
			}
		} else if !(g[1] < g[0]/1.3 && g[2] < g[1]/1.3) {
			t.Errorf("%s: Gram error %v does not fall as 1/√D", k, g)
		}
		if a := acc[k]; !(a[2] > a[0]) {
			t.Errorf("%s: test accuracy %v does not rise with D", k, a)
		}
		if iid := strings.TrimSuffix(k, "/orf") + "/iid"; strings.HasSuffix(k, "/orf") && !(g[2] <= 1.1*gram[iid][2]) {
			t.Errorf("%s: Gram error %v at D=256, iid %v", k, g[2], gram[iid][2])
		}
	}
	var tb strings.Builder
	if err := res.Table().Render(&tb); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(tb.String()), "\n"); len(lines) != 28 ||
		!strings.HasPrefix(lines[0], "kernelkit demo: letter subset (2000 train, 300 test, d=16, 26 classes), γ=0.0625, λ=0.5, seed 0") {
		t.Errorf("table:\n%s", tb.String())
	}
	p := res.Plot()
	if len(p.Series) != 8 || len(p.XTicks) != 3 || p.Series[1].Name != "RBF (RFF cos) / orf" || p.Series[1].Y[2] != gram["rbf/cos/orf"][2] {
		t.Errorf("plot: %d series, ticks %v, second %q %v", len(p.Series), p.XTicks, p.Series[1].Name, p.Series[1].Y)
	}
}

// TestDemoConfigErrors: invalid configurations are errors before any fit,
// and a cancelled context stops the demo with its error.
func TestDemoConfigErrors(t *testing.T) {
	small := func(f func(*DemoConfig)) DemoConfig {
		c := DefaultDemo()
		c.Kernels, c.Samplers, c.Features = []string{"rbf"}, []string{"iid"}, []int{8}
		c.Train, c.Test = demoLetterRows(0, 200), demoLetterRows(200, 300)
		f(&c)
		return c
	}
	for _, c := range []struct {
		cfg  DemoConfig
		want string
	}{
		{small(func(c *DemoConfig) { c.Kernels = []string{"poly"} }), "unknown demo kernel"},
		{small(func(c *DemoConfig) { c.Samplers = []string{"sobol"} }), "sobol"},
		{small(func(c *DemoConfig) { c.Features = []int{8, 0} }), "feature count 0"},
		{small(func(c *DemoConfig) { c.Features = nil }), "at least one"},
		{small(func(c *DemoConfig) { c.Gamma = math.NaN() }), "gamma"},
		{small(func(c *DemoConfig) { c.Gamma = math.Inf(1) }), "gamma"},
		{small(func(c *DemoConfig) { c.Lambda = -1 }), "lambda"},
	} {
		if _, err := Demo(context.Background(), c.cfg, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.cfg, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Demo(ctx, small(func(*DemoConfig) {}), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled demo: %v", err)
	}
}
