package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSNNKTextAndPlot checks the text renderings of the pointwise and
// bundle studies and the pointwise plot.
func TestSNNKTextAndPlot(t *testing.T) {
	png := filepath.Join(t.TempDir(), "pointwise.png")
	out, err := run(t, "snnk", "--features", "8,16", "--draws", "4", "--plot", png)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 9 || lines[0] != "SNNK pointwise estimation (Sec. 4.1): d = 2000, entries Unif(0,1)/√d, 4 draws; mean relative error" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[6]), " "), "relu 16 ") || lines[7] != "plot written to "+png {
		t.Errorf("output:\n%s", out)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("plot: %v", err)
	}
	out, err = run(t, "snnk", "--study", "bundle", "--features", "8")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(out, "\n"); len(lines) != 4 || !strings.HasPrefix(lines[0], "bundled 2-layer network") || !strings.HasPrefix(strings.Join(strings.Fields(lines[2]), " "), "8 ") {
		t.Errorf("bundle output:\n%s", out)
	}
}
