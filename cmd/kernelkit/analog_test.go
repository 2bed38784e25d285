package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnalogTextAndPlot checks the text rendering and the PNG plot of the
// ridge study.
func TestAnalogTextAndPlot(t *testing.T) {
	dir := t.TempDir()
	csv := letterCSV(t, dir, "l.csv", 0, 400)
	png := filepath.Join(dir, "gram.png")
	out, err := run(t, "analog", "--data", csv, "--kernels", "rbf", "--samplers", "sorf", "--ratios", "1", "--seeds", "1",
		"--no-attention", "--no-cost", "--plot", png)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "ridge classification on emulated PCM hardware (") ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[3]), " "), "l rbf sorf 1 32 ") || lines[5] != "plot of Gram error against log2(D/d) written to "+png {
		t.Errorf("output:\n%s", out)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("plot: %v", err)
	}
}
