package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestEstimateZoo runs a small --study zoo with the attention part on a
// CSV and the new estimators through --estimator and attention --variants.
func TestEstimateZoo(t *testing.T) {
	dir := t.TempDir()
	csv := clusterCSV(t, dir, "zoo.csv", 60, 0, nil)
	plot := filepath.Join(dir, "zoo.png")
	out, err := run(t, "estimate", "--study", "zoo", "--d", "4", "--draws", "3", "--norms", "0.5,1", "--data", csv, "--plot", plot)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"simrf", "oprf theory", "sderf/orf", "aderf/orf", "features/s", "plot written"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if out, err = run(t, "estimate", "--estimator", "simrf,oprf,sderf,aderf", "--draws", "3"); err != nil || !strings.Contains(out, "aderf") {
		t.Errorf("estimate --estimator: %v", err)
	}
	if out, err = run(t, "attention", "--variants", "simrf,oprf,sderf,aderf", "--lengths", "32", "--features", "8", "--seeds", "1"); err != nil || !strings.Contains(out, "sderf") {
		t.Errorf("attention --variants: %v\n%s", err, out)
	}
}
