package main

import (
	"strings"
	"testing"
)

// TestToeplitzNoFilter checks the timing study without a sparse filter
// (--m 0, which used to crash on a discarded sampler error) and its text
// rendering.
func TestToeplitzNoFilter(t *testing.T) {
	out, err := run(t, "toeplitz", "--no-diagnostics", "--max-n", "1024", "--d", "2", "--r", "8", "--m", "0")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 7 || lines[1] != "timing, d = 2 channels (SKI: r = 8, m = 0; seconds per operator application):" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[3]), " "), "512 0.") || !strings.HasPrefix(lines[5], "log-log slopes (time against n): dense ") {
		t.Errorf("output:\n%s", out)
	}
}
