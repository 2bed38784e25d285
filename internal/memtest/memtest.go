// Package memtest measures the heap a function uses, for the tests that
// hold the studies' memory estimates (limits.Estimate) against what the
// studies allocate. It is imported by tests only.
//
// The measured peak is taken with the garbage collector at GOGC = 10, so
// that it stays close to the live heap; under KERNELKIT_BLAS=perturbed
// (blas.Perturbed, which copies its operands on every call) only the upper
// bound of CheckEstimate is checked.
package memtest

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// MeasureHeap runs f and returns the peak of the heap's object bytes above
// their level before f (sampled every 100 µs and once at the end) and the
// bytes f allocated in all (runtime.MemStats.TotalAlloc).
//
// The two bracket the memory f holds at once: the sampled peak may miss
// the moment of the true one, but it never exceeds the heap f really
// used (garbage not yet collected included: a tenth of the live heap
// more, as f runs with GOGC = 10), and the total allocated is at least the largest
// live heap.
func MeasureHeap(f func()) (peak, total float64) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
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

// Factor is the tolerance of the estimates against the measured
// heap. An estimate counts the live arrays of the run's largest step; the
// sampled heap also holds garbage awaiting collection (up to about as much
// again with GOGC = 100), the total allocated adds up steps that free what
// they allocate, and the estimates round up on purpose (slices' growth,
// fallbacks that may not run, one scratch buffer per core). Each of these
// is a factor of 2 at most; 4 leaves room for two of them.
const Factor = 4

// CheckEstimate runs f and checks est against the heap it uses: est at
// least a quarter of the sampled peak (the estimate does not miss a large
// allocation) and at most four times all f allocated (it does not count
// memory that is never allocated).
func CheckEstimate(t testing.TB, name string, est limits.Estimate, f func()) {
	t.Helper()
	peak, total := MeasureHeap(f)
	b := est.Bytes()
	t.Logf("%s: estimate %s, sampled peak %s (ratio %.2f), allocated %s (ratio %.2f)", name,
		limits.Bytes(b), limits.Bytes(peak), b/peak, limits.Bytes(total), b/total)
	low := peak / Factor
	if os.Getenv("KERNELKIT_BLAS") == "perturbed" {
		low = 0 // the perturbed BLAS copies its operands on every call: memory a study does not hold on a real BLAS
	}
	if b < low || b > Factor*total {
		t.Errorf("%s: estimate %s (%s) outside [peak/%d, %d·allocated] = [%s, %s]", name, limits.Bytes(b), est,
			Factor, Factor, limits.Bytes(peak/Factor), limits.Bytes(Factor*total))
	}
}

// CheckHuge checks that est, computed by f, is finite and above 8 GiB and
// that computing it allocated less than 1 MiB.
func CheckHuge(t testing.TB, name string, f func() limits.Estimate) {
	t.Helper()
	var est limits.Estimate
	_, total := MeasureHeap(func() { est = f() })
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
