package parallel

import (
	"sync/atomic"
	"testing"
)

func TestChunksCoverOnce(t *testing.T) {
	for _, c := range []struct{ n, chunk int }{{0, 3}, {1, 3}, {10, 3}, {100, 7}, {5, 0}} {
		seen := make([]int32, c.n)
		Chunks(c.n, c.chunk, func(w, lo, hi int) {
			if w < 0 || w >= Workers(c.n) || lo >= hi {
				t.Errorf("bad call worker %d [%d,%d)", w, lo, hi)
			}
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&seen[i], 1)
			}
		})
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("n=%d chunk=%d: index %d visited %d times", c.n, c.chunk, i, s)
			}
		}
	}
}
