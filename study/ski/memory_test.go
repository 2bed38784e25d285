package ski

import (
	"context"
	"testing"

	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/memtest"
)

// TestMemoryMeasured compares the estimates of small runs of each study
// with the heap they use.
func TestMemoryMeasured(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []ErrorBoundConfig{{N: 128, Ranks: []int{8, 32}}, {N: 256, Ranks: []int{128}}} {
		memtest.CheckEstimate(t, "error bound", cfg.Memory(), func() {
			if _, err := ErrorBound(ctx, cfg, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	imp := ImpulseConfig{Activations: []string{"gelu"}, N: 1 << 16}
	memtest.CheckEstimate(t, "impulse", imp.Memory(), func() {
		if _, err := Impulse(ctx, imp, nil); err != nil {
			t.Fatal(err)
		}
	})
	for _, cfg := range []TimingConfig{
		{Channels: 16, Inducing: 64, FilterWidth: 8, Lambda: 0.99, MaxN: 1 << 13, Seed: 1},
		{Channels: 1, Inducing: 512, FilterWidth: 0, Lambda: 0.9, MaxN: 1 << 15, MaxDense: 512, Seed: 2},
	} {
		memtest.CheckEstimate(t, "timing", cfg.Memory(), func() {
			if _, err := Timing(ctx, cfg, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDeviceMemoryMeasured compares the estimate of a device comparison
// on GoMLX's pure-Go backend (dense operators in host memory) with the
// heap it uses.
func TestDeviceMemoryMeasured(t *testing.T) {
	dev, err := device.Open(device.Go)
	if err != nil {
		t.Skipf("no pure-Go device: %v", err)
	}
	for _, d := range []int{1, 4} {
		cfg := DeviceConfig{Device: dev, Timing: TimingConfig{Channels: d, Inducing: 32, FilterWidth: 4, Lambda: 0.99, MaxN: 512, MaxDense: 512, Seed: 1}}
		memtest.CheckEstimate(t, "device", cfg.Memory(), func() {
			if _, err := CompareDevice(context.Background(), cfg, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMemoryHuge checks that sizes far beyond any machine give finite
// estimates above 8 GiB without allocating: MLP widths, sequence
// lengths, channels or filter widths of 2²⁴ (n = 2²⁴ frequencies, the
// impulse study's largest, need 1.5 GiB); and that the default toeplitz run
// (d = 64, r = 64, m = 32, n up to 2²⁰) fits the default budget of 8 GiB.
func TestMemoryHuge(t *testing.T) {
	const huge = 1 << 24
	memtest.CheckHuge(t, "impulse widths", ImpulseConfig{Hidden: []int{huge, huge}}.Memory)
	memtest.CheckHuge(t, "impulse beyond its n", ImpulseConfig{N: 1 << 30}.Memory)
	// The impulse study's n is at most 2²⁴: 1.5 GiB.
	if b := (ImpulseConfig{N: huge}).Memory().Bytes(); !(b > 1<<30) || b > 2<<30 {
		t.Errorf("impulse at n = 2²⁴: %s", limits.Bytes(b))
	}
	memtest.CheckHuge(t, "timing length", TimingConfig{Channels: 64, Inducing: 64, FilterWidth: 32, Lambda: 0.99, MaxN: huge}.Memory)
	memtest.CheckHuge(t, "timing channels", TimingConfig{Channels: huge, Inducing: 64, FilterWidth: 32, Lambda: 0.99, MaxN: 1 << 12}.Memory)
	memtest.CheckHuge(t, "timing filters", TimingConfig{Channels: 1 << 12, Inducing: 64, FilterWidth: huge, Lambda: 0.99, MaxN: 512}.Memory)
	memtest.CheckHuge(t, "device", DeviceConfig{Timing: TimingConfig{Channels: huge, Inducing: 64, Lambda: 0.99, MaxN: 1 << 12}}.Memory)
	// The error study's n is at most 4096: 1.5 GiB at most.
	if b := (ErrorBoundConfig{N: 4096, Ranks: []int{4096}}).Memory().Bytes(); !(b > 1<<30) || b > 4<<30 {
		t.Errorf("error bound at n = r = 4096: %s", limits.Bytes(b))
	}
	def := TimingConfig{Channels: 64, Inducing: 64, FilterWidth: 32, Lambda: 0.99, MaxN: 1 << 20, MaxDense: 4096}
	if err := def.Memory().Check(8<<30, "--max-memory"); err != nil {
		t.Errorf("the default timing study: %v", err)
	}
	t.Logf("default timing study: %s", def.Memory())
}
