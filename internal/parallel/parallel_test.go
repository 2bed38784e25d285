package parallel

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var cases = []struct{ n, chunk int }{{0, 3}, {1, 3}, {10, 3}, {100, 7}, {5, 0}, {64, 64}, {65, 64}}

// withProcs runs fn with GOMAXPROCS set to p.
func withProcs(p int, fn func()) {
	old := runtime.GOMAXPROCS(p)
	defer runtime.GOMAXPROCS(old)
	fn()
}

func TestChunksCoverOnce(t *testing.T) {
	for _, p := range []int{1, 2, 5} {
		withProcs(p, func() {
			for _, c := range cases {
				chunk := max(c.chunk, 1)
				nchunks := (c.n + chunk - 1) / chunk
				w := Workers(nchunks)
				seen := make([]int32, c.n)
				var mu sync.Mutex
				last := make(map[int]int)
				Chunks(c.n, c.chunk, func(worker, lo, hi int) {
					if worker < 0 || worker >= w || lo >= hi || hi > c.n || hi-lo > chunk || lo%chunk != 0 {
						t.Errorf("p=%d n=%d chunk=%d: bad call worker %d [%d,%d)", p, c.n, c.chunk, worker, lo, hi)
						return
					}
					// Chunk index mod workers is the worker, taken in increasing order.
					ci := lo / chunk
					mu.Lock()
					prev, ok := last[worker]
					last[worker] = ci
					mu.Unlock()
					if ci%w != worker || (ok && prev >= ci) {
						t.Errorf("p=%d n=%d chunk=%d: chunk %d on worker %d after chunk %d", p, c.n, c.chunk, ci, worker, prev)
					}
					for i := lo; i < hi; i++ {
						atomic.AddInt32(&seen[i], 1)
					}
				})
				for i, s := range seen {
					if s != 1 {
						t.Fatalf("p=%d n=%d chunk=%d: index %d visited %d times", p, c.n, c.chunk, i, s)
					}
				}
			}
		})
	}
}

// TestOrderedCommitsInOrder: every chunk is worked on and committed once,
// commits come in increasing order, never overlap, and follow the same
// worker's work on that chunk.
func TestOrderedCommitsInOrder(t *testing.T) {
	for _, p := range []int{1, 2, 5} {
		withProcs(p, func() {
			for _, c := range cases {
				chunk := max(c.chunk, 1)
				nchunks := (c.n + chunk - 1) / chunk
				w := Workers(nchunks)
				pending := make([]int, max(w, 1)) // per worker: lo of the chunk worked on, or -1
				for i := range pending {
					pending[i] = -1
				}
				var inCommit atomic.Int32
				var order []int
				worked := make([]int32, c.n)
				Ordered(c.n, c.chunk, func(worker, lo, hi int) {
					if worker < 0 || worker >= w || pending[worker] != -1 {
						t.Errorf("p=%d n=%d: work on worker %d with a chunk pending", p, c.n, worker)
						return
					}
					pending[worker] = lo
					for i := lo; i < hi; i++ {
						atomic.AddInt32(&worked[i], 1)
					}
					if lo%(3*chunk) == 0 {
						time.Sleep(time.Millisecond) // let later chunks finish first
					}
				}, func(worker, lo, hi int) {
					if inCommit.Add(1) != 1 {
						t.Errorf("p=%d n=%d: overlapping commits", p, c.n)
					}
					if pending[worker] != lo {
						t.Errorf("p=%d n=%d: commit of [%d,%d) on worker %d, which worked on %d", p, c.n, lo, hi, worker, pending[worker])
					}
					pending[worker] = -1
					order = append(order, lo)
					inCommit.Add(-1)
				})
				if len(order) != nchunks {
					t.Fatalf("p=%d n=%d chunk=%d: %d commits, want %d", p, c.n, c.chunk, len(order), nchunks)
				}
				for i, lo := range order {
					if lo != i*chunk {
						t.Fatalf("p=%d n=%d chunk=%d: commit %d was chunk at %d", p, c.n, c.chunk, i, lo)
					}
				}
				for i, s := range worked {
					if s != 1 {
						t.Fatalf("p=%d n=%d chunk=%d: index %d worked on %d times", p, c.n, c.chunk, i, s)
					}
				}
			}
		})
	}
}

// TestOrderedSumIndependentOfCores: a floating-point sum reduced by Ordered
// has the same bits for every GOMAXPROCS, and equals the left-to-right sum
// of the chunk sums.
func TestOrderedSumIndependentOfCores(t *testing.T) {
	const n, chunk = 10000, 97
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sin(float64(i)) * math.Pow(10, float64(i%17-8))
	}
	var want float64
	for lo := 0; lo < n; lo += chunk {
		var s float64
		for _, v := range x[lo:min(lo+chunk, n)] {
			s += v
		}
		want += s
	}
	for _, p := range []int{1, 2, 3, 8} {
		withProcs(p, func() {
			part := make([]float64, Workers(n))
			var total float64
			Ordered(n, chunk, func(w, lo, hi int) {
				part[w] = 0
				for _, v := range x[lo:hi] {
					part[w] += v
				}
			}, func(w, _, _ int) { total += part[w] })
			if math.Float64bits(total) != math.Float64bits(want) {
				t.Errorf("GOMAXPROCS=%d: sum %v, want %v bit for bit", p, total, want)
			}
		})
	}
}

// TestTasksRunOnce: every task runs exactly once, on a worker index in
// range, for several GOMAXPROCS, and no worker index runs two tasks at
// once (so per-worker scratch space is safe).
func TestTasksRunOnce(t *testing.T) {
	for _, p := range []int{1, 2, 5} {
		withProcs(p, func() {
			for _, n := range []int{0, 1, 2, 7, 100} {
				w := Workers(n)
				ran := make([]int32, n)
				busy := make([]atomic.Int32, max(w, 1))
				Tasks(n, func(worker, i int) {
					if worker < 0 || worker >= w || i < 0 || i >= n {
						t.Errorf("p=%d n=%d: task %d on worker %d", p, n, i, worker)
						return
					}
					if busy[worker].Add(1) != 1 {
						t.Errorf("p=%d n=%d: worker %d runs two tasks at once", p, n, worker)
					}
					if i%5 == 0 {
						time.Sleep(100 * time.Microsecond)
					}
					atomic.AddInt32(&ran[i], 1)
					busy[worker].Add(-1)
				})
				for i, r := range ran {
					if r != 1 {
						t.Fatalf("p=%d n=%d: task %d ran %d times", p, n, i, r)
					}
				}
			}
		})
	}
}
