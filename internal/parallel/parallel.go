// Package parallel holds the small worker-pool helpers that kernelkit's hot
// loops share: splitting a range of rows into chunks and running the chunks
// over the available cores.
//
// Both helpers make the work a goroutine does a function of the chunk
// indices, never of scheduling, so that floating-point results do not
// change from run to run:
//
//   - Chunks assigns chunk c to worker c mod W (W = Workers of the number
//     of chunks), and each worker takes its chunks in increasing order.
//     Per-worker partial sums are therefore the same on every run with the
//     same GOMAXPROCS; they differ between machines with different core
//     counts, because W does.
//   - Ordered hands each chunk's partial result to a commit step that runs
//     once per chunk, one at a time, in increasing chunk order. A reduction
//     that adds the partial results in commit is a function of the data and
//     the chunk boundaries only: the same bits on any number of cores.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers returns the number of goroutines to use for n independent items:
// GOMAXPROCS, but never more than n and never less than 1.
func Workers(n int) int {
	w := runtime.GOMAXPROCS(0)
	if w > n {
		w = n
	}
	if w < 1 {
		w = 1
	}
	return w
}

// numChunks returns ⌈n/chunk⌉ (chunk ≥ 1) without overflow.
func numChunks(n, chunk int) int {
	return n/chunk + min(n%chunk, 1)
}

// Chunks calls fn(worker, lo, hi) for consecutive half-open ranges [lo, hi)
// of size at most chunk covering [0, n), spread over Workers goroutines.
// The worker index lies in [0, Workers(⌈n/chunk⌉)) and lets callers keep
// per-worker scratch space. Chunk c (the range starting at c·chunk) goes to
// worker c mod Workers, and a worker handles its chunks in increasing
// order, so anything a worker accumulates depends on n, chunk and the
// worker count only, not on scheduling. Chunks returns when every call has
// returned. A chunk size below 1 is taken as 1.
func Chunks(n, chunk int, fn func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	if chunk < 1 {
		chunk = 1
	}
	nchunks := numChunks(n, chunk)
	w := Workers(nchunks)
	run := func(worker int) {
		for c := worker; c < nchunks; c += w {
			lo := c * chunk
			fn(worker, lo, lo+min(chunk, n-lo))
		}
	}
	if w == 1 {
		run(0)
		return
	}
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		wg.Go(func() { run(k) })
	}
	wg.Wait()
}

// Ordered is a parallel reduction over the chunks of [0, n) whose result
// does not depend on scheduling or on the number of cores. Workers
// goroutines take the chunks [lo, hi) of size at most chunk in increasing
// order and call work(worker, lo, hi), which may run concurrently with
// other chunks' work and typically computes the chunk's partial result into
// per-worker scratch space. Then, once every earlier chunk has been
// committed, the same goroutine calls commit(worker, lo, hi): commits run
// one at a time, in increasing order of lo, each exactly once, and the next
// work call of that worker starts only after its commit has returned, so
// the scratch space of a worker holds at most one pending chunk. A total
// built up by commit is thus the same left-to-right sum of the chunks'
// partial results on every run and machine. Ordered returns when every
// commit has returned. A chunk size below 1 is taken as 1.
func Ordered(n, chunk int, work, commit func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	if chunk < 1 {
		chunk = 1
	}
	nchunks := numChunks(n, chunk)
	w := Workers(nchunks)
	if w == 1 {
		for c := 0; c < nchunks; c++ {
			lo := c * chunk
			hi := lo + min(chunk, n-lo)
			work(0, lo, hi)
			commit(0, lo, hi)
		}
		return
	}
	var (
		next      atomic.Int64 // next chunk to take
		mu        sync.Mutex
		turn      = sync.NewCond(&mu)
		committed int // chunks committed so far; guarded by mu
		wg        sync.WaitGroup
	)
	for k := 0; k < w; k++ {
		wg.Go(func() {
			for {
				c := int(next.Add(1) - 1)
				if c >= nchunks {
					return
				}
				lo := c * chunk
				hi := lo + min(chunk, n-lo)
				work(k, lo, hi)
				// The goroutine holding the lowest uncommitted chunk never
				// waits, so the commits always make progress.
				mu.Lock()
				for committed != c {
					turn.Wait()
				}
				mu.Unlock()
				commit(k, lo, hi)
				mu.Lock()
				committed++
				turn.Broadcast()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// Tasks calls fn(worker, i) once for each task i in [0, n), on Workers(n)
// goroutines that take the tasks in increasing order of i as they become
// free (tasks listed first start first, so list the largest first for an
// even finish). The worker index lies in [0, Workers(n)) and lets callers
// keep per-worker scratch space; which worker runs which task depends on
// scheduling, so a task must compute its result from its index alone and
// write it where no other task writes. Tasks returns when every call has
// returned.
func Tasks(n int, fn func(worker, i int)) {
	if n <= 0 {
		return
	}
	w := Workers(n)
	if w == 1 {
		for i := 0; i < n; i++ {
			fn(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(k, i)
			}
		})
	}
	wg.Wait()
}
