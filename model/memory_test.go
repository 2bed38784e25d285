package model

import (
	"math"
	"testing"
)

// TestMemory checks the estimate against the sizes it counts: the ridge
// statistics dominate at large D and grow with the folds; huge sizes give
// a finite estimate without allocating.
func TestMemory(t *testing.T) {
	opt := Options{}
	e := Memory(opt, 1024, 16, 26)
	stats := 8.0 * statLanes * 1024 * (1024 + 26 + 1)
	want := stats + 8*1024*(1024+26) + 8*statLanes*2048*1024 + 8*1024*16 // statistics, solve, chunks, projection
	if b := e.Bytes(); b != want {
		t.Errorf("D = 1024: %v bytes, want %v", b, want)
	}
	k := Memory(Options{Select: "kfold", Folds: 5}, 1024, 16, 26)
	if got := k.Bytes() - e.Bytes(); math.Abs(got-4*stats) > 1 {
		t.Errorf("5 folds add %v bytes, want 4 sets of statistics %v", got, 4*stats)
	}
	h := Memory(opt, 1<<24, 1<<24, 1<<20)
	if b := h.Bytes(); math.IsInf(b, 0) || b < 1<<50 {
		t.Errorf("huge sizes: %v bytes", b)
	}
}
