package aimc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/analog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/sampler"
)

// letterSplit returns rows [0, n) of the embedded letter data split at
// row ntrain.
func letterSplit(t *testing.T, n, ntrain int) (train, test *data.Dataset) {
	t.Helper()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	train, test, err := data.Letter().Subset(idx).SplitAt(ntrain)
	if err != nil {
		t.Fatal(err)
	}
	return train, test
}

func ridgeConfig(t *testing.T, hw analog.Config) RidgeConfig {
	train, test := letterSplit(t, 600, 400)
	return RidgeConfig{Name: "letter600", Train: train, Test: test, Kernels: []string{"arccos0", "rbf"},
		Samplers: []sampler.Sampler{sampler.Gaussian{}}, Ratios: []int{5}, Seeds: 1, Lambda: 0.5, Hardware: hw, Seed: 1}
}

// TestRidge checks the ridge study on a letter subset at D = 512:
// without noise (analog.Ideal: INT8 inputs only) the emulated chip
// reproduces the fp64 accuracy and Gram error; with the PCM noise sources
// its Gram error departs from fp64 several times further.
func TestRidge(t *testing.T) {
	dev := func(rows []RidgeRow) float64 {
		var s float64
		for _, r := range rows {
			s += math.Abs(r.GramHW-r.GramFP) / r.GramFP
		}
		return s / float64(len(rows))
	}
	var calls, last int
	ideal, err := Ridge(context.Background(), ridgeConfig(t, analog.Ideal()), func(done, total int) {
		calls++
		last = done
		if total != 2 {
			t.Errorf("progress total %d, want 2", total)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || last != 2 {
		t.Errorf("progress called %d times, last done %d; want 2, 2", calls, last)
	}
	if len(ideal) != 2 {
		t.Fatalf("%d rows, want 2", len(ideal))
	}
	for i, r := range ideal {
		want := RidgeRow{Dataset: "letter600", Kernel: []string{"arccos0", "rbf"}[i], Sampler: "truncated", LogRatio: 5, Features: 16 << 5, Seeds: 1}
		got := r
		got.AccFP, got.AccHW, got.AccHWStd, got.GramFP, got.GramHW = 0, 0, 0, 0, 0
		if got != want {
			t.Errorf("row %d is %+v, want %+v", i, got, want)
		}
		if r.AccHWStd != 0 {
			t.Errorf("%s: std %v over one seed, want 0", r.Kernel, r.AccHWStd)
		}
		// 200 test rows: INT8 input quantisation may move a few of them.
		if math.Abs(r.AccHW-r.AccFP) > 0.03 {
			t.Errorf("%s ideal hardware: accuracy %.4f, fp64 %.4f", r.Kernel, r.AccHW, r.AccFP)
		}
		// Far above chance (1/26) at D = 512.
		if r.AccFP < 0.5 {
			t.Errorf("%s: fp64 accuracy %.4f", r.Kernel, r.AccFP)
		}
		if !(r.GramFP > 0 && r.GramFP < 0.3) {
			t.Errorf("%s: fp64 Gram error %v", r.Kernel, r.GramFP)
		}
	}
	if d := dev(ideal); d > 0.02 {
		t.Errorf("ideal hardware: Gram errors %.2f %% from fp64, want < 2 %%", 100*d)
	}
	pcm, err := Ridge(context.Background(), ridgeConfig(t, analog.PCM(1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range pcm {
		// The fp64 side does not depend on the hardware.
		if r.AccFP != ideal[i].AccFP || r.GramFP != ideal[i].GramFP {
			t.Errorf("%s: fp64 results changed with the hardware", r.Kernel)
		}
	}
	if di, dp := dev(ideal), dev(pcm); !(dp > 3*di) {
		t.Errorf("Gram-error departure from fp64: PCM %.2f %%, ideal %.2f %%; want PCM > 3× ideal", 100*dp, 100*di)
	}
}

func TestRidgeConfigErrors(t *testing.T) {
	for _, c := range []struct {
		edit func(*RidgeConfig)
		want string
	}{
		{func(c *RidgeConfig) { c.Kernels = []string{"poly"} }, "unknown analog kernel"},
		{func(c *RidgeConfig) { c.Seeds = 0 }, "seed"},
		{func(c *RidgeConfig) { c.Lambda = math.NaN() }, "non-negative"},
		{func(c *RidgeConfig) { c.Ratios = []int{-1} }, "out of range"},
		{func(c *RidgeConfig) { c.Ratios = []int{40} }, "out of range"},
		{func(c *RidgeConfig) { c.Samplers = []sampler.Sampler{nil} }, "nil"},
		{func(c *RidgeConfig) { c.Test = nil }, "non-empty"},
		{func(c *RidgeConfig) { c.Samplers = nil }, "at least one"},
	} {
		cfg := ridgeConfig(t, analog.Ideal())
		c.edit(&cfg)
		if _, err := Ridge(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	// More seeds than the repetition limit are refused before any runs.
	many := ridgeConfig(t, analog.Ideal())
	many.Seeds = limits.MaxCount + 1
	if err := many.Validate(); err == nil || !strings.Contains(err.Error(), "seeds must be between 1 and 1048576") {
		t.Errorf("%d seeds: error %v", many.Seeds, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Ridge(ctx, ridgeConfig(t, analog.Ideal()), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error %v", err)
	}
}

// TestAttention checks the FAVOR+ attention study at L = 128,
// d = 16: the error falls with m (like 1/√m: a factor 4 from m = 16 to
// 256), the noiseless chip matches fp64 to 2 %, and PCM noise keeps it
// within 10 %.
func TestAttention(t *testing.T) {
	run := func(hw analog.Config) []AttentionRow {
		rows, err := Attention(context.Background(), AttentionConfig{Length: 128, Dim: 16, Features: []int{16, 256}, Hardware: hw, Seed: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].Features != 16 || rows[1].Features != 256 {
			t.Fatalf("rows %+v", rows)
		}
		return rows
	}
	ideal, pcm := run(analog.Ideal()), run(analog.PCM(1))
	if r := ideal[0].RelFP / ideal[1].RelFP; r < 2 || r > 8 {
		t.Errorf("error ratio m = 16 to 256 is %.2f, want about 4", r)
	}
	for i := range ideal {
		if ideal[i].RelFP != pcm[i].RelFP {
			t.Errorf("m = %d: fp64 error changed with the hardware", ideal[i].Features)
		}
		if d := math.Abs(ideal[i].RelHW/ideal[i].RelFP - 1); d > 0.02 {
			t.Errorf("m = %d ideal: HW error %.4f, fp64 %.4f", ideal[i].Features, ideal[i].RelHW, ideal[i].RelFP)
		}
		if d := math.Abs(pcm[i].RelHW/pcm[i].RelFP - 1); d > 0.1 {
			t.Errorf("m = %d PCM: HW error %.4f, fp64 %.4f", pcm[i].Features, pcm[i].RelHW, pcm[i].RelFP)
		}
	}
	if _, err := Attention(context.Background(), AttentionConfig{Features: []int{0}}, nil); err == nil {
		t.Error("m = 0 accepted")
	}
	if _, err := Attention(context.Background(), AttentionConfig{Length: 1 << 20}, nil); err == nil {
		t.Error("L = 2²⁰ (an L×L score matrix of 8 TiB) accepted")
	}
}

func TestCost(t *testing.T) {
	cases := append(CostCases(), [3]int{100, 10, 20})
	cost, err := Cost(cases)
	if err != nil {
		t.Fatal(err)
	}
	devs := CostHardware()
	if len(cost) != len(cases)*len(devs) {
		t.Fatalf("%d rows, want %d", len(cost), len(cases)*len(devs))
	}
	for i, c := range cost {
		cs := cases[i/len(devs)]
		if want := 2 * float64(cs[0]*cs[1]*cs[2]); c.Ops != want {
			t.Errorf("row %d: %v operations, want 2·L·d·m = %v", i, c.Ops, want)
		}
		if c.Hardware != devs[i%len(devs)].Name {
			t.Errorf("row %d: device %q, want %q", i, c.Hardware, devs[i%len(devs)].Name)
		}
	}
	// Supplementary Table VIII: AIMC, L = 1024, d = 512, m = 1024.
	if math.Abs(cost[0].LatencyMS-0.0170) > 5e-5 || math.Abs(cost[0].EnergyMJ-0.1100) > 5e-5 {
		t.Errorf("AIMC cost %+v", cost[0])
	}
	if _, err := Cost([][3]int{{0, 1, 1}}); err == nil {
		t.Error("L = 0 accepted")
	}
}

// TestReportRender checks the text rendering against the CLI's
// format.
func TestReportRender(t *testing.T) {
	rep := &Report{
		Ridge: []RidgeRow{{Dataset: "letter", Kernel: "rbf", Sampler: "truncated", LogRatio: 1, Features: 32, Seeds: 2,
			AccFP: 0.5374, AccHW: 0.521, AccHWStd: 0.0325, GramFP: 0.5869, GramHW: 0.5871}},
		Attention: []AttentionRow{{Features: 64, RelFP: 0.1161, RelHW: 0.1143}},
		CostCases: [][3]int{{100, 10, 20}},
		Hardware:  analog.PCM(0),
	}
	var err error
	if rep.Cost, err = Cost(rep.CostCases); err != nil {
		t.Fatal(err)
	}
	rep.Hardware.TInference = 100
	var b bytes.Buffer
	if err := rep.Render(&b); err != nil {
		t.Fatal(err)
	}
	want := `ridge classification on emulated PCM hardware (programming noise, drift and read noise at t = 100s, 8-bit ADC, affine correction; models trained on fp64 features)

    data  kernel    sampler  log2(D/d)   D  acc fp64  acc HW   ± std  Δ (pp)  Gram fp64  Gram HW
  letter     rbf  truncated          1  32    0.5374  0.5210  0.0325   +1.64     0.5869   0.5871

FAVOR+ attention (L = 1024, d = 64, ‖q‖ ≈ 2), relative error against exact softmax attention:
   m    fp64      HW
  64  0.1161  0.1143

projection cost (analog paper, Supplementary Table VIII model: 2·L·d·m operations at peak):
    L   d   m           hardware  latency (ms)  energy (mJ)
  100  10  20  AIMC (IBM HERMES)        0.0000       0.0000
  100  10  20    GPU INT8 (A100)        0.0000       0.0000
  100  10  20    GPU FP16 (A100)        0.0000       0.0001
  100  10  20   CPU (i9-14900KF)        0.0000       0.0082
`
	if b.String() != want {
		t.Errorf("rendered\n%s\nwant\n%s", b.String(), want)
	}
	p := rep.Plot()
	if p == nil || len(p.Series) != 2 || p.Series[0].Name != "letter rbf truncated fp64" || p.Series[1].Y[0] != 0.5871 {
		t.Errorf("plot %+v", p)
	}
	if (&Report{}).Plot() != nil {
		t.Error("plot without ridge rows")
	}
}

// ExampleCost prints the cost model of the analog paper's
// Supplementary Table VIII for its first case.
func ExampleCost() {
	cost, err := Cost(CostCases()[:1])
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cost {
		fmt.Printf("%-18s %.4f ms %.4f mJ\n", c.Hardware, c.LatencyMS, c.EnergyMJ)
	}
	// Output:
	// AIMC (IBM HERMES)  0.0170 ms 0.1100 mJ
	// GPU INT8 (A100)    0.0017 ms 0.6883 mJ
	// GPU FP16 (A100)    0.0034 ms 1.3766 mJ
	// CPU (i9-14900KF)   0.8738 ms 221.0748 mJ
}
