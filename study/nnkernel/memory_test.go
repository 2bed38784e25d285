package nnkernel

import (
	"context"
	"math"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

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
	pw := PointwiseConfig{Features: []int{64, 1024}, Draws: 2, Seed: 1}
	checkEstimate(t, "pointwise", pw.Memory(), func() {
		if _, err := Pointwise(ctx, pw, nil); err != nil {
			t.Fatal(err)
		}
	})
	bd := BundleConfig{Features: []int{384}, Seed: 1}
	checkEstimate(t, "bundle", bd.Memory(), func() {
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
		checkEstimate(t, "classify "+cfg.Name, cfg.Memory(), func() {
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
	checkHuge(t, "pointwise", PointwiseConfig{Features: []int{8, huge}, Draws: many}.Memory)
	checkHuge(t, "bundle", BundleConfig{Features: []int{huge}}.Memory)
	train, test := letterSplit(t, 200, 100)
	checkHuge(t, "classify features", ClassifyConfig{Train: train, Test: test, Hidden: 8, M: huge, Epochs: 1, Seeds: many}.Memory)
	checkHuge(t, "classify hidden", ClassifyConfig{Train: train, Test: test, Hidden: huge, M: 1 << 12, Epochs: 1, Seeds: many}.Memory)
	if b := (ClassifyConfig{}).Memory().Bytes(); b != 0 {
		t.Errorf("no data: estimate %v bytes", b)
	}
}
