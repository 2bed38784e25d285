package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVocabulary checks issue 39's one word per concept: train's engine
// is --device cpu|go|cuda (--backend still works, deprecated, and must
// agree with --device), --fft chooses the FFT like KERNELKIT_FFT, and
// fit's JSON names the BLAS under "blas" (with the old "backend" key).
func TestVocabulary(t *testing.T) {
	t.Setenv("KERNELKIT_FFT", os.Getenv("KERNELKIT_FFT")) // --fft sets it for the process; restored after the test
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 200)
	out, err := run(t, "fit", "--train", train, "--features", "8", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if b, ok := r["blas"].(string); !ok || b == "" || r["backend"] != b {
		t.Errorf(`fit --json: "blas" %v, "backend" %v`, r["blas"], r["backend"])
	}
	small := []string{"train", "--steps", "0", "--n-train", "4", "--n-eval", "0", "--n-test", "0", "--length", "16",
		"--width", "8", "--depth", "1", "--write-data", filepath.Join(dir, "sets")}
	for _, c := range []struct {
		args []string
		want string // "" for success
	}{
		{[]string{"--device", "cpu"}, ""},
		{[]string{"--backend", "cpu"}, ""},
		{[]string{"--backend", "cpu", "--device", "cpu"}, ""},
		{[]string{"--device", "gpu"}, `unknown --device "gpu"`},
		{[]string{"--backend", "go", "--device", "cpu"}, "name different engines"},
	} {
		_, err := run(t, append(small, c.args...)...)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("train %v: %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := run(t, "--fft", "fftw3", "maps"); err == nil || !strings.Contains(err.Error(), "--fft") {
		t.Errorf("--fft fftw3: %v", err)
	}
}
