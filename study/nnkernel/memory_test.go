package nnkernel

import (
	"context"
	"testing"

	"github.com/kernelkit/kernelkit/internal/memtest"
)

// TestMemoryMeasured compares the estimates of small runs of each study
// with the heap they use.
func TestMemoryMeasured(t *testing.T) {
	ctx := context.Background()
	pw := PointwiseConfig{Features: []int{64, 1024}, Draws: 2, Seed: 1}
	memtest.CheckEstimate(t, "pointwise", pw.Memory(), func() {
		if _, err := Pointwise(ctx, pw, nil); err != nil {
			t.Fatal(err)
		}
	})
	bd := BundleConfig{Features: []int{384}, Seed: 1}
	memtest.CheckEstimate(t, "bundle", bd.Memory(), func() {
		if _, err := Bundle(ctx, bd, nil); err != nil {
			t.Fatal(err)
		}
	})
	train, test := letterSplit(t, 600, 400)
	for _, cfg := range []ClassifyConfig{
		{Name: "closed form", Train: train, Test: test, Hidden: 8, M: 48, Epochs: 1, Seeds: 1, Seed: 1},
		{Name: "MLPs", Train: train, Test: test, Hidden: 192, M: 8, Epochs: 1, Seeds: 1, Seed: 1},
		{Name: "MLPs, 2 epochs", Train: train, Test: test, Hidden: 128, M: 4, Epochs: 2, Seeds: 1, Seed: 1},
	} {
		memtest.CheckEstimate(t, "classify "+cfg.Name, cfg.Memory(), func() {
			if _, err := Classify(ctx, cfg, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMemoryHuge checks that sizes far beyond any machine give finite
// estimates above 8 GiB without allocating: 2²⁴ features, hidden widths of
// 2²⁴, 2²⁰ seeds and draws.
func TestMemoryHuge(t *testing.T) {
	const huge, many = 1 << 24, 1 << 20
	memtest.CheckHuge(t, "pointwise", PointwiseConfig{Features: []int{8, huge}, Draws: many}.Memory)
	memtest.CheckHuge(t, "bundle", BundleConfig{Features: []int{huge}}.Memory)
	train, test := letterSplit(t, 200, 100)
	memtest.CheckHuge(t, "classify features", ClassifyConfig{Train: train, Test: test, Hidden: 8, M: huge, Epochs: 1, Seeds: many}.Memory)
	memtest.CheckHuge(t, "classify hidden", ClassifyConfig{Train: train, Test: test, Hidden: huge, M: 1 << 12, Epochs: 1, Seeds: many}.Memory)
	if b := (ClassifyConfig{}).Memory().Bytes(); b != 0 {
		t.Errorf("no data: estimate %v bytes", b)
	}
}
