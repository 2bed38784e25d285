package performer

import (
	"context"
	"testing"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/memtest"
	"github.com/kernelkit/kernelkit/sampler"
)

// TestMemoryMeasured compares the estimates of small configurations, one
// step each (one length, map, feature count and seed), whose arrays are
// a few MiB, with the heap the studies use.
func TestMemoryMeasured(t *testing.T) {
	ctx := context.Background()
	q, k, v, err := randomQKV(1024, 16, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  MSEConfig
	}{
		{"MSE positive", MSEConfig{Lengths: []int{1024}, Dim: 16, Features: []int{256}, Variants: []string{"positive"}, Seeds: 1}},
		{"MSE trig, 2 seeds", MSEConfig{Lengths: []int{512}, Dim: 32, Features: []int{512}, Variants: []string{"trig"}, Seeds: 2}},
		{"MSE angular", MSEConfig{Lengths: []int{1024}, Dim: 16, Features: []int{64}, Variants: []string{"angular"}, Seeds: 1}},
		{"MSE oprf", MSEConfig{Lengths: []int{1024}, Dim: 16, Features: []int{256}, Variants: []string{"oprf"}, Seeds: 1}},
		{"MSE causal orf", MSEConfig{Lengths: []int{1024}, Dim: 16, Features: []int{256}, Variants: []string{"positive"},
			Samplers: []sampler.Sampler{sampler.Orthogonal{}}, Seeds: 1, Causal: true}},
		{"MSE given Q, K, V", MSEConfig{Features: []int{256}, Variants: []string{"relu"}, Seeds: 1, Q: q, K: k, V: v}},
	} {
		memtest.CheckEstimate(t, c.name, c.cfg.Memory(), func() {
			if _, err := MSE(ctx, c.cfg, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, c := range []struct {
		name string
		cfg  TimingConfig
	}{
		{"timing exact", TimingConfig{Lengths: []int{2048}, Dim: 16, MaxExact: 2048}},
		{"timing linear", TimingConfig{Lengths: []int{2048}, Dim: 16}},
	} {
		memtest.CheckEstimate(t, c.name, c.cfg.Memory(), func() {
			if _, err := Timing(ctx, c.cfg, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMemoryHuge checks that configurations far beyond any machine give
// finite estimates above 8 GiB without allocating: 2²⁴ features, lengths
// or dimensions, 2²⁰ seeds.
func TestMemoryHuge(t *testing.T) {
	const huge, seeds = 1 << 24, 1 << 20
	for _, c := range []struct {
		name string
		cfg  MSEConfig
	}{
		{"features", MSEConfig{Lengths: []int{1024}, Dim: 16, Features: []int{huge}, Variants: []string{"positive"}, Seeds: 1}},
		{"hybrid features", MSEConfig{Lengths: []int{1024}, Dim: 16, Features: []int{huge}, Variants: []string{"bipolar"}, Seeds: 1}},
		{"length", MSEConfig{Lengths: []int{huge}, Dim: 16, Features: []int{16}, Variants: []string{"positive"}, Seeds: 1}},
		{"dimension", MSEConfig{Lengths: []int{16}, Dim: huge, Features: []int{16}, Variants: []string{"positive"},
			Samplers: []sampler.Sampler{sampler.Orthogonal{}}, Seeds: 1}},
		{"seeds", MSEConfig{Lengths: []int{1024}, Dim: 16, Features: []int{16}, Variants: []string{"positive"}, Seeds: seeds}},
		{"all", MSEConfig{Lengths: []int{huge}, Dim: huge, Features: []int{huge}, Variants: []string{"angular"}, Seeds: seeds}},
	} {
		memtest.CheckHuge(t, "MSE "+c.name, c.cfg.Memory)
	}
	memtest.CheckHuge(t, "timing length", TimingConfig{Lengths: []int{huge}, Dim: 16, MaxExact: huge}.Memory)
	memtest.CheckHuge(t, "timing dimension", TimingConfig{Lengths: []int{1024}, Dim: huge}.Memory)
	memtest.CheckHuge(t, "device length", DeviceConfig{Lengths: []int{huge}, Batch: 1, Heads: 1, Dim: 16, Features: []int{16}, MaxExact: huge}.Memory)
	memtest.CheckHuge(t, "device features", DeviceConfig{Lengths: []int{1024}, Batch: 1, Heads: 1, Dim: 16, Features: []int{huge}}.Memory)
	memtest.CheckHuge(t, "device batch", DeviceConfig{Lengths: []int{1024}, Batch: huge, Heads: huge, Dim: 16, Features: []int{16}}.Memory)
}

// TestFeatureShape checks the feature dimensions the estimates use against
// those of the catalog's maps, for every variant MSE runs without data.
func TestFeatureShape(t *testing.T) {
	reg := catalog.Default()
	for _, v := range []string{"positive", "favor+", "hyperbolic", "trig", "relu", "arccos0", "angular", "gaussian", "bipolar",
		"simrf", "oprf", "sderf", "aderf"} {
		for _, dm := range [][2]int{{16, 16}, {16, 192}, {64, 255}, {4, 7}, {3, 1}} {
			p, err := reg.Pair(v, features.Options{InputDim: dm[0], Features: dm[1], Sampler: sampler.Gaussian{}})
			if err != nil {
				t.Fatalf("%s: %v", v, err)
			}
			dim, _, _ := featureShape(reg, v, dm[0], dm[1])
			// The plain maps count m+1 features for odd m, whether or not
			// their form rounds m up.
			if got := float64(p.Dim()); dim != got && !(dim == got+1 && dm[1]%2 == 1) {
				t.Errorf("%s, d=%d, m=%d: estimated dimension %v, the map has %v", v, dm[0], dm[1], dim, got)
			}
		}
	}
}

// TestDeviceMemoryMeasured compares the estimate of a device comparison
// on GoMLX's pure-Go backend, whose graphs keep their values in host
// memory, with the heap it uses.
func TestDeviceMemoryMeasured(t *testing.T) {
	dev, err := device.Open(device.Go)
	if err != nil {
		t.Skipf("no pure-Go device: %v", err)
	}
	cfg := DeviceConfig{Device: dev, Lengths: []int{512}, Batch: 2, Heads: 2, Dim: 16, Features: []int{256}, MaxExact: 512, Seed: 1}
	memtest.CheckEstimate(t, "device", cfg.Memory(), func() {
		if _, err := CompareDevice(context.Background(), cfg, nil); err != nil {
			t.Fatal(err)
		}
	})
}
