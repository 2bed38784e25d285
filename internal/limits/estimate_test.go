package limits

import (
	"strings"
	"testing"
)

func TestEstimate(t *testing.T) {
	var e Estimate
	e.Add("scores", 1<<10, 1<<10)   // 8 MiB
	e.Add32("features", 1<<10, 512) // 2 MiB
	e.Add("scores", 1<<10, 1<<10)   // same part: 16 MiB
	e.AddBytes("small", 1)
	if got, want := e.Bytes(), float64(18<<20+1); got != want {
		t.Fatalf("Bytes %v, want %v", got, want)
	}
	if err := e.Check(18<<20+1, "--max-memory"); err != nil {
		t.Errorf("at the budget: %v", err)
	}
	err := e.Check(16<<20, "--max-memory")
	if err == nil {
		t.Fatal("above the budget: no error")
	}
	for _, s := range []string{"scores 16 MiB", "features 2 MiB", "--max-memory 16 MiB", "about 18.0 MiB"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q lacks %q", err, s)
		}
	}
	var o Estimate
	o.Add("huge", 1<<40, 1<<40) // no overflow: float64
	e.Merge(o)
	if e.Check(1<<62, "budget") == nil {
		t.Error("2⁸³ bytes within a 2⁶² budget")
	}
}
