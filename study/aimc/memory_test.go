package aimc

import (
	"context"
	"testing"

	"github.com/kernelkit/kernelkit/analog"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/memtest"
	"github.com/kernelkit/kernelkit/sampler"
)

// TestMemoryMeasured compares the estimates of one seed's ridge study and
// of the attention study with the heap they use.
func TestMemoryMeasured(t *testing.T) {
	ctx := context.Background()
	train, test := letterSplit(t, 1500, 1000)
	for _, cfg := range []RidgeConfig{
		{Name: "arccos0", Train: train, Test: test, Kernels: []string{"arccos0"}, Samplers: []sampler.Sampler{sampler.Gaussian{}},
			Ratios: []int{5}, Seeds: 1, Lambda: 0.5, Hardware: analog.PCM(1), Seed: 1},
		{Name: "rbf orf", Train: train, Test: test, Kernels: []string{"rbf"}, Samplers: []sampler.Sampler{sampler.Orthogonal{}},
			Ratios: []int{3, 5}, Seeds: 1, Lambda: 0.5, Hardware: analog.PCM(1), Seed: 1},
	} {
		memtest.CheckEstimate(t, "ridge "+cfg.Name, cfg.Memory(), func() {
			if _, err := Ridge(ctx, cfg, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	att := AttentionConfig{Length: 1024, Dim: 16, Features: []int{256}, Hardware: analog.PCM(1), Seed: 1}
	memtest.CheckEstimate(t, "attention", att.Memory(), func() {
		if _, err := Attention(ctx, att, nil); err != nil {
			t.Fatal(err)
		}
	})
}

// TestMemoryHuge checks that sizes far beyond any machine give finite
// estimates above 8 GiB without allocating: 2²⁴ features (d = 16,
// log2(D/d) = 20) or 2³⁰ features (log2(D/d) = 26, beyond the limit),
// attention lengths, dimensions and feature counts of 2²⁴.
func TestMemoryHuge(t *testing.T) {
	const huge = 1 << 24
	train, test := letterSplit(t, 200, 100)
	for _, r := range []int{20, 26} {
		cfg := RidgeConfig{Train: train, Test: test, Kernels: []string{"rbf"}, Samplers: []sampler.Sampler{sampler.Gaussian{}},
			Ratios: []int{1, r}, Seeds: 1 << 20}
		memtest.CheckHuge(t, "ridge", cfg.Memory)
	}
	memtest.CheckHuge(t, "attention length", AttentionConfig{Length: huge}.Memory)
	memtest.CheckHuge(t, "attention dimension", AttentionConfig{Dim: huge}.Memory)
	memtest.CheckHuge(t, "attention features", AttentionConfig{Features: []int{64, huge}}.Memory)
	if b := (RidgeConfig{}).Memory().Bytes(); b != 0 {
		t.Errorf("no data: estimate %v bytes", b)
	}
}

// TestCostAllocatesNothing checks that the cost model needs no memory
// estimate: its memory does not depend on L, d and m, even at 2²⁴ each.
func TestCostAllocatesNothing(t *testing.T) {
	const huge = 1 << 24
	var err error
	_, total := memtest.MeasureHeap(func() { _, err = Cost([][3]int{{huge, huge, huge}, {1, 1, 1}}) })
	if err != nil {
		t.Fatal(err)
	}
	if total > 64<<10 {
		t.Errorf("the cost model allocated %s", limits.Bytes(total))
	}
}
