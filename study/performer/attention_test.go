package performer

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/sampler"
)

func TestMSEConfigValidate(t *testing.T) {
	ok := MSEConfig{Lengths: []int{8}, Dim: 4, Features: []int{8}, Variants: []string{"positive"}, Seeds: 1}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	q := mat.NewDense(4, 2, nil)
	for _, c := range []struct {
		name string
		edit func(c *MSEConfig)
		want string
	}{
		{"no lengths", func(c *MSEConfig) { c.Lengths = nil }, "lengths"},
		{"zero length", func(c *MSEConfig) { c.Lengths = []int{0} }, "lengths"},
		{"dim", func(c *MSEConfig) { c.Dim = 0 }, "dimension"},
		{"features", func(c *MSEConfig) { c.Features = []int{0} }, "features"},
		{"no features", func(c *MSEConfig) { c.Features = nil }, "feature"},
		{"seeds", func(c *MSEConfig) { c.Seeds = 0 }, "seeds"},
		{"too many seeds", func(c *MSEConfig) { c.Seeds = limits.MaxCount + 1 }, "seeds must be between 1 and 1048576"},
		{"variant", func(c *MSEConfig) { c.Variants = []string{"cosine"} }, "unknown variant"},
		{"no variants", func(c *MSEConfig) { c.Variants = nil }, "feature maps"},
		{"q alone", func(c *MSEConfig) { c.Q = q }, "go together"},
		{"huge", func(c *MSEConfig) { c.Lengths = []int{1 << 40}; c.Seeds = 1 << 20 }, "inputs"},
	} {
		cfg := ok
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if err := (TimingConfig{Lengths: []int{-1}, Dim: 4}).Validate(); err == nil {
		t.Error("negative timing length accepted")
	}
	if err := (TimingConfig{Dim: 4}).Validate(); err == nil {
		t.Error("timing without lengths accepted")
	}
}

// TestMSE checks the attention study: the rows' aggregates are
// the mean and standard deviation of their per-seed values, the outputs
// are finite, and the output MSE of the softmax estimators falls as the
// variance, ∝ 1/m: at least eightfold from m = 8 to 256 (32 expected).
// Queries and keys of norm about √2 keep the estimators' relative variance
// (about exp(‖x+y‖²)/m for positive features) small enough for the 1/m
// regime to hold from m = 8 on.
func TestMSE(t *testing.T) {
	q, k, v, err := randomQKV(64, 8, 10)
	if err != nil {
		t.Fatal(err)
	}
	q.Scale(0.5, q)
	k.Scale(0.5, k)
	calls := 0
	res, err := MSE(context.Background(), MSEConfig{Features: []int{8, 256},
		Variants: []string{"positive", "trig", "angular"}, Samplers: []sampler.Sampler{sampler.Orthogonal{}}, Seeds: 4, Seed: 1,
		Q: q, K: k, V: v},
		func(done, total int) {
			calls++
			if done != calls || total != 3*2*4 {
				t.Errorf("progress %d/%d at call %d", done, total, calls)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 6 || calls != 24 || res.Dim != 8 || res.Seeds != 4 || res.Backend == "" {
		t.Fatalf("%d rows, %d progress calls, result %+v", len(res.Rows), calls, res)
	}
	for _, r := range res.Rows {
		mean, std := stat.MeanStdDev(r.MSEs, nil)
		if len(r.MSEs) != 4 || r.MSE != mean || r.MSEStd != std || r.NonFinite != 0 || r.L != 64 || r.D != 8 || r.Sampler != "orf" {
			t.Errorf("%+v: aggregates do not match the per-seed values (mean %v, std %v)", r, mean, std)
		}
		if !(r.RelError > 0) || !(r.LinearSecs > 0) || !(r.ExactSecs > 0) {
			t.Errorf("%+v: non-positive error or time", r)
		}
	}
	for i := 0; i < 6; i += 2 {
		a, b := res.Rows[i], res.Rows[i+1]
		if a.Features != 8 || b.Features != 256 || !(b.MSE < a.MSE/8) || !(b.RelError < a.RelError) {
			t.Errorf("%s: MSE %v (rel %v) at m=8, %v (rel %v) at m=256: want a fall of 8x or more", a.Variant, a.MSE, a.RelError, b.MSE, b.RelError)
		}
	}

	// Random inputs: every length and the configured dimension, causal.
	rnd, err := MSE(context.Background(), MSEConfig{Lengths: []int{16, 24}, Dim: 4, Features: []int{32},
		Variants: []string{"relu", "gaussian"}, Seeds: 2, Causal: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rnd.Rows) != 4 || rnd.Rows[0].L != 16 || rnd.Rows[2].L != 24 || rnd.Rows[0].D != 4 || !rnd.Rows[0].Causal ||
		rnd.Rows[1].Variant != "gaussian" || rnd.Rows[0].Sampler != sampler.Default().Name() {
		t.Errorf("random inputs: %+v", rnd.Rows)
	}
	for _, r := range rnd.Rows {
		if r.NonFinite != 0 || !(r.MSE > 0) || math.IsInf(r.MSE, 0) {
			t.Errorf("%+v: not finite", r)
		}
	}

	var b bytes.Buffer
	if err := res.Table().Render(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "linear attention vs exact softmax attention: d=8, causal=false, 4 seeds") || strings.Count(b.String(), "\n") != 2+1+6 {
		t.Errorf("table:\n%s", b.String())
	}
	if err := res.Plot().Save(filepath.Join(t.TempDir(), "att.png")); err != nil {
		t.Error(err)
	}
}

// TestSamplerComparisons checks the z-scores of orthogonal
// against iid rows on hand-made rows.
func TestSamplerComparisons(t *testing.T) {
	res := &MSEResult{Rows: []MSERow{
		{L: 8, Variant: "positive", Sampler: "iid", Features: 16, Seeds: 4, MSE: 2, MSEStd: 1},
		{L: 8, Variant: "positive", Sampler: "orf", Features: 16, Seeds: 4, MSE: 1, MSEStd: 1},
		{L: 8, Variant: "trig", Sampler: "orf", Features: 16, Seeds: 4, MSE: 1, MSEStd: 1},
	}}
	cs := res.SamplerComparisons()
	// se = √((1 + 1)/4) = 1/√2, z = (1 − 2)·√2.
	if len(cs) != 1 || math.Abs(cs[0].Z+math.Sqrt2) > 1e-15 || cs[0].Verdict() != "not separated" || cs[0].ORF != 1 || cs[0].IID != 2 {
		t.Fatalf("comparisons %+v", cs)
	}
	for z, want := range map[float64]string{-2.5: "orf better", 2.5: "iid better", 0: "not separated"} {
		if got := (SamplerComparison{Z: z}).Verdict(); got != want {
			t.Errorf("z=%v: %q, want %q", z, got, want)
		}
	}
	var b bytes.Buffer
	if err := res.RenderComparison(&b); err != nil || !strings.Contains(b.String(), "positive   m=16   orf 1.000e+00  iid 2.000e+00  z=-1.41  not separated") {
		t.Errorf("rendering %q, %v", b.String(), err)
	}
}

// TestTiming checks the timing study: one row per length, exact
// attention only up to MaxExact, positive times and allocations, and the
// slopes only where two points exist.
func TestTiming(t *testing.T) {
	res, err := Timing(context.Background(), TimingConfig{Lengths: []int{32, 64, 128}, Dim: 8, MaxExact: 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	for i, r := range res.Rows {
		if r.L != []int{32, 64, 128}[i] || r.LinearFeats != TimingFeatures || r.LinearSample != "positive/orf" ||
			!(r.LinearSecs > 0) || r.LinearBytes == 0 {
			t.Errorf("row %d: %+v", i, r)
		}
		if exact := r.L <= 64; exact != (r.ExactSecs > 0 && r.ExactBytes > 0) {
			t.Errorf("row %d: exact time %v, bytes %v", i, r.ExactSecs, r.ExactBytes)
		}
	}
	if s := res.Summary(); !s.HasExact || !s.HasLinear || math.IsNaN(s.ExactSlope) || math.IsNaN(s.LinearSlope) {
		t.Errorf("summary %+v", s)
	}
	var b bytes.Buffer
	if err := res.Render(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "log-log slope of time against L") || !strings.Contains(b.String(), "  128        -          -") {
		t.Errorf("rendering:\n%s", b.String())
	}
	one := &TimingResult{Rows: res.Rows[2:]}
	if s := one.Summary(); s.HasExact || s.HasLinear || s.Crossover != 0 {
		t.Errorf("one row: summary %+v", s)
	}
}
