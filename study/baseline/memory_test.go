package baseline

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

// TestMemoryMeasured compares the estimates of one fit each, on given
// rows and on the embedded letter data, with the heap the demo uses.
func TestMemoryMeasured(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  DemoConfig
	}{
		{"letter subset, rbf, D = 768", DemoConfig{Kernels: []string{"rbf"}, Samplers: []string{"iid"}, Features: []int{768},
			Gamma: 1.0 / 16, Lambda: 0.5, Train: demoLetterRows(0, 2500), Test: demoLetterRows(19200, 20000), Name: "subset"}},
		{"letter subset, arccos1 orf, D = 512", DemoConfig{Kernels: []string{"arccos1"}, Samplers: []string{"orf"}, Features: []int{64, 512},
			Gamma: 1.0 / 16, Lambda: 0, Train: demoLetterRows(0, 3000), Test: demoLetterRows(19500, 20000), Name: "subset"}},
		{"letter, gaussian, D = 256", DemoConfig{Kernels: []string{"gaussian"}, Samplers: []string{"sorf"}, Features: []int{256},
			Gamma: 1.0 / 16, Lambda: 0.5}},
	} {
		checkEstimate(t, c.name, c.cfg.Memory(), func() {
			if _, err := Demo(context.Background(), c.cfg, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMemoryHuge checks that 2²⁴ features give a finite estimate above
// 8 GiB (the ridge statistics alone are 2⁵¹ bytes) without allocating, on
// the letter data and on given rows, and that an estimate grows with the
// data it is given.
func TestMemoryHuge(t *testing.T) {
	cfg := DefaultDemo()
	cfg.Features = []int{128, 1 << 24}
	checkHuge(t, "letter", cfg.Memory)
	cfg.Train, cfg.Test = demoLetterRows(0, 100), demoLetterRows(100, 200)
	checkHuge(t, "given rows", cfg.Memory)
	small := DemoConfig{Features: []int{16}, Train: cfg.Train, Test: cfg.Test}.Memory()
	big := DemoConfig{Features: []int{16}, Train: demoLetterRows(0, 16000), Test: demoLetterRows(16000, 20000)}.Memory()
	if !(big.Bytes() > small.Bytes()) {
		t.Errorf("estimate %s on 100 rows, %s on 16000", small, big)
	}
}
