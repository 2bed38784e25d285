package performer

import (
	"context"
	"math"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/sampler"
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
		checkEstimate(t, c.name, c.cfg.Memory(), func() {
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
		checkEstimate(t, c.name, c.cfg.Memory(), func() {
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
		checkHuge(t, "MSE "+c.name, c.cfg.Memory)
	}
	checkHuge(t, "timing length", TimingConfig{Lengths: []int{huge}, Dim: 16, MaxExact: huge}.Memory)
	checkHuge(t, "timing dimension", TimingConfig{Lengths: []int{1024}, Dim: huge}.Memory)
	checkHuge(t, "device length", DeviceConfig{Lengths: []int{huge}, Batch: 1, Heads: 1, Dim: 16, Features: []int{16}, MaxExact: huge}.Memory)
	checkHuge(t, "device features", DeviceConfig{Lengths: []int{1024}, Batch: 1, Heads: 1, Dim: 16, Features: []int{huge}}.Memory)
	checkHuge(t, "device batch", DeviceConfig{Lengths: []int{1024}, Batch: huge, Heads: huge, Dim: 16, Features: []int{16}}.Memory)
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
	checkEstimate(t, "device", cfg.Memory(), func() {
		if _, err := CompareDevice(context.Background(), cfg, nil); err != nil {
			t.Fatal(err)
		}
	})
}
