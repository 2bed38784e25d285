package model

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The header of 65,536 classes is exactly the names in order, and it is
// built in linear time: well under a second, where the quadratic
// concatenation of the old predict took 13 s.
func TestClassColumnsManyClasses(t *testing.T) {
	const k = 1 << 16
	start := time.Now()
	h := ClassColumns("score", k)
	h += ClassColumns("prob", k)
	elapsed := time.Since(start)
	fields := strings.Split(h, ",")
	if len(fields) != 2*k+1 || fields[0] != "" {
		t.Fatalf("%d fields (first %q), want a leading comma and %d names", len(fields), fields[0], 2*k)
	}
	for j := range k {
		if want := "score" + strconv.Itoa(j); fields[1+j] != want {
			t.Fatalf("field %d is %q, want %q", 1+j, fields[1+j], want)
		}
		if want := "prob" + strconv.Itoa(j); fields[1+k+j] != want {
			t.Fatalf("field %d is %q, want %q", 1+k+j, fields[1+k+j], want)
		}
	}
	// Linear work is about a megabyte of appends (milliseconds); the
	// quadratic build copies about 20 GB. A second leaves room for a
	// loaded machine and the race detector.
	if elapsed > time.Second {
		t.Errorf("building the header of %d classes took %v", k, elapsed)
	}
}

func TestAppendClassColumns(t *testing.T) {
	for _, c := range []struct {
		b      string
		prefix string
		k      int
		want   string
	}{
		{"prediction", "score", 3, "prediction,score0,score1,score2"},
		{"prediction", "score", 0, "prediction"},
		{"prediction", "score", -1, "prediction"},
		{"", "p", 12, ",p0,p1,p2,p3,p4,p5,p6,p7,p8,p9,p10,p11"},
		{"x", "", 2, "x,0,1"},
	} {
		if got := string(AppendClassColumns([]byte(c.b), c.prefix, c.k)); got != c.want {
			t.Errorf("AppendClassColumns(%q, %q, %d) = %q, want %q", c.b, c.prefix, c.k, got, c.want)
		}
	}
}

func BenchmarkClassColumns65536(b *testing.B) {
	for b.Loop() {
		if len(ClassColumns("score", 1<<16)) == 0 {
			b.Fatal("empty header")
		}
	}
}
