// Package parallel holds the small worker-pool helpers that kernelkit's hot
// loops share: splitting a range of rows into chunks and running the chunks
// over the available cores.
package parallel

import (
	"runtime"
	"sync"
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

// Chunks calls fn(worker, lo, hi) for consecutive half-open ranges [lo, hi)
// of size at most chunk covering [0, n), spread over Workers goroutines.
// The worker index lies in [0, Workers(ceil(n/chunk))) and lets callers keep
// per-worker scratch space. Chunks returns when every call has returned.
func Chunks(n, chunk int, fn func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	if chunk < 1 {
		chunk = 1
	}
	nchunks := (n + chunk - 1) / chunk
	w := Workers(nchunks)
	if w == 1 {
		for lo := 0; lo < n; lo += chunk {
			fn(0, lo, min(lo+chunk, n))
		}
		return
	}
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		wg.Add(1)
		go func(worker int) {
			defer wg.Done()
			for {
				mu.Lock()
				c := next
				next++
				mu.Unlock()
				if c >= nchunks {
					return
				}
				lo := c * chunk
				fn(worker, lo, min(lo+chunk, n))
			}
		}(k)
	}
	wg.Wait()
}
