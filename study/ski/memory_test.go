package ski

import (
	"context"
	"math"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// measureHeap runs f and returns the peak of the heap's object bytes above
// their level before f (sampled every 100 µs and once at the end) and the
// bytes f allocated in all (runtime.MemStats.TotalAlloc).
//
// The two bracket the memory f holds at once: the sampled peak may miss
// the moment of the true one, but it never exceeds the heap f really
// used (garbage not yet collected included, up to about twice the live
// heap with GOGC = 100), and the total allocated is at least the largest
// live heap.
func measureHeap(f func()) (peak, total float64) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	alloc := ms.TotalAlloc
	stop, stopped := make(chan struct{}), make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		var high uint64
		for {
			metrics.Read(s)
			high = max(high, s[0].Value.Uint64())
			select {
			case <-stop:
				stopped <- high
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	high := <-stopped
	runtime.ReadMemStats(&ms)
	if high < base {
		high = base
	}
	return float64(high - base), float64(ms.TotalAlloc - alloc)
}

// memoryFactor is the tolerance of the estimates against the measured
// heap. An estimate counts the live arrays of the run's largest step; the
// sampled heap also holds garbage awaiting collection (up to about as much
// again with GOGC = 100), the total allocated adds up steps that free what
// they allocate, and the estimates round up on purpose (slices' growth,
// fallbacks that may not run, one scratch buffer per core). Each of these
// is a factor of 2 at most; 4 leaves room for two of them.
const memoryFactor = 4

// checkEstimate runs f and checks est against the heap it uses: est at
// least a quarter of the sampled peak (the estimate does not miss a large
// allocation) and at most four times all f allocated (it does not count
// memory that is never allocated).
func checkEstimate(t *testing.T, name string, est limits.Estimate, f func()) {
	t.Helper()
	peak, total := measureHeap(f)
	b := est.Bytes()
	t.Logf("%s: estimate %s, sampled peak %s (ratio %.2f), allocated %s (ratio %.2f)", name,
		limits.Bytes(b), limits.Bytes(peak), b/peak, limits.Bytes(total), b/total)
	if b < peak/memoryFactor || b > memoryFactor*total {
		t.Errorf("%s: estimate %s (%s) outside [peak/%d, %d·allocated] = [%s, %s]", name, limits.Bytes(b), est,
			memoryFactor, memoryFactor, limits.Bytes(peak/memoryFactor), limits.Bytes(memoryFactor*total))
	}
}

// checkHuge checks that est, computed by f, is finite and above 8 GiB and
// that computing it allocated less than 1 MiB.
func checkHuge(t *testing.T, name string, f func() limits.Estimate) {
	t.Helper()
	var est limits.Estimate
	_, total := measureHeap(func() { est = f() })
	if b := est.Bytes(); math.IsInf(b, 0) || math.IsNaN(b) || !(b > 8<<30) {
		t.Errorf("%s: estimate %v bytes (%s), want finite and above 8 GiB", name, b, est)
	}
	if total > 1<<20 {
		t.Errorf("%s: computing the estimate allocated %s", name, limits.Bytes(total))
	}
	if err := est.Check(8<<30, "--max-memory"); err == nil {
		t.Errorf("%s: %s passes an 8 GiB budget", name, est)
	}
}

// TestMemoryMeasured compares the estimates of small runs of each study
// with the heap they use.
func TestMemoryMeasured(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []ErrorBoundConfig{{N: 128, Ranks: []int{8, 32}}, {N: 256, Ranks: []int{128}}} {
		checkEstimate(t, "error bound", cfg.Memory(), func() {
			if _, err := ErrorBound(ctx, cfg, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	imp := ImpulseConfig{Activations: []string{"gelu"}, N: 1 << 16}
	checkEstimate(t, "impulse", imp.Memory(), func() {
		if _, err := Impulse(ctx, imp, nil); err != nil {
			t.Fatal(err)
		}
	})
	for _, cfg := range []TimingConfig{
		{Channels: 16, Inducing: 64, FilterWidth: 8, Lambda: 0.99, MaxN: 1 << 13, Seed: 1},
		{Channels: 1, Inducing: 512, FilterWidth: 0, Lambda: 0.9, MaxN: 1 << 15, MaxDense: 512, Seed: 2},
	} {
		checkEstimate(t, "timing", cfg.Memory(), func() {
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
		checkEstimate(t, "device", cfg.Memory(), func() {
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
	checkHuge(t, "impulse widths", ImpulseConfig{Hidden: []int{huge, huge}}.Memory)
	checkHuge(t, "impulse beyond its n", ImpulseConfig{N: 1 << 30}.Memory)
	// The impulse study's n is at most 2²⁴: 1.5 GiB.
	if b := (ImpulseConfig{N: huge}).Memory().Bytes(); !(b > 1<<30) || b > 2<<30 {
		t.Errorf("impulse at n = 2²⁴: %s", limits.Bytes(b))
	}
	checkHuge(t, "timing length", TimingConfig{Channels: 64, Inducing: 64, FilterWidth: 32, Lambda: 0.99, MaxN: huge}.Memory)
	checkHuge(t, "timing channels", TimingConfig{Channels: huge, Inducing: 64, FilterWidth: 32, Lambda: 0.99, MaxN: 1 << 12}.Memory)
	checkHuge(t, "timing filters", TimingConfig{Channels: 1 << 12, Inducing: 64, FilterWidth: huge, Lambda: 0.99, MaxN: 512}.Memory)
	checkHuge(t, "device", DeviceConfig{Timing: TimingConfig{Channels: huge, Inducing: 64, Lambda: 0.99, MaxN: 1 << 12}}.Memory)
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
