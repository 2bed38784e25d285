package aimc

import (
	"context"
	"math"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/kernelkit/kernelkit/analog"
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
		checkEstimate(t, "ridge "+cfg.Name, cfg.Memory(), func() {
			if _, err := Ridge(ctx, cfg, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	att := AttentionConfig{Length: 1024, Dim: 16, Features: []int{256}, Hardware: analog.PCM(1), Seed: 1}
	checkEstimate(t, "attention", att.Memory(), func() {
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
		checkHuge(t, "ridge", cfg.Memory)
	}
	checkHuge(t, "attention length", AttentionConfig{Length: huge}.Memory)
	checkHuge(t, "attention dimension", AttentionConfig{Dim: huge}.Memory)
	checkHuge(t, "attention features", AttentionConfig{Features: []int{64, huge}}.Memory)
	if b := (RidgeConfig{}).Memory().Bytes(); b != 0 {
		t.Errorf("no data: estimate %v bytes", b)
	}
}

// TestCostAllocatesNothing checks that the cost model needs no memory
// estimate: its memory does not depend on L, d and m, even at 2²⁴ each.
func TestCostAllocatesNothing(t *testing.T) {
	const huge = 1 << 24
	var err error
	_, total := measureHeap(func() { _, err = Cost([][3]int{{huge, huge, huge}, {1, 1, 1}}) })
	if err != nil {
		t.Fatal(err)
	}
	if total > 64<<10 {
		t.Errorf("the cost model allocated %s", limits.Bytes(total))
	}
}
