package limits

import (
	"math"
	"strings"
	"testing"
)

func TestLimits(t *testing.T) {
	for _, c := range []struct {
		r, c int
		ok   bool
		msg  string
	}{
		{1000, 1000, true, ""},
		{1 << 15, 1 << 15, true, ""},
		{1 << 16, 1 << 15, false, "16 GiB (limit 8 GiB)"},
		{math.MaxInt, 2, false, "overflows"},
		{1 << 62, 1 << 62, false, "overflows"},
		{-1, 3, false, "negative"},
	} {
		n, err := Matrix("the matrix", c.r, c.c)
		if c.ok != (err == nil) {
			t.Errorf("%d×%d: %v", c.r, c.c, err)
			continue
		}
		if c.ok && n != c.r*c.c {
			t.Errorf("%d×%d: %d elements", c.r, c.c, n)
		}
		if !c.ok && !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%d×%d: %q lacks %q", c.r, c.c, err, c.msg)
		}
	}
	if Dim("d", 0) == nil || Dim("d", MaxDim+1) == nil || Dim("d", 3) != nil {
		t.Error("Dim bounds")
	}
	if Count("draws", 1, 2) == nil || Count("draws", MaxCount+1, 2) == nil || Count("draws", 2, 2) != nil || Count("draws", MaxCount, 1) != nil {
		t.Error("Count bounds")
	}
	if Bytes(1536) != "1.5 KiB" {
		t.Error(Bytes(1536))
	}
}
