package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/nn"
)

// modelWeights returns the weights stored in a model file.
func modelWeights(t *testing.T, path string) []float64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Weights []float64 `json:"weights"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f.Weights
}

// csvValues returns the numbers of a CSV text after its header line.
func csvValues(t *testing.T, text string) []float64 {
	t.Helper()
	var out []float64
	for _, line := range strings.Split(strings.TrimSpace(text), "\n")[1:] {
		for _, f := range strings.Split(line, ",") {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

// maxRel returns max|a − b| / max|b|.
func maxRel(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var scale, diff float64
	for i := range b {
		scale = math.Max(scale, math.Abs(b[i]))
		diff = math.Max(diff, math.Abs(a[i]-b[i]))
	}
	return diff / scale
}

// TestDeviceFit compares fit --device go (features and ridge statistics
// on GoMLX's pure-Go backend) with the CPU fit on 1500 rows of the letter
// set: the same test accuracy and weights equal to 1e-9 of their scale in
// float64, with k-fold λ selection and with --stream too; with --float32
// an accuracy within 0.01.
func TestDeviceFit(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 1500)
	test := letterCSV(t, dir, "test.csv", 19500, 20000)
	fit := func(name string, extra ...string) (float64, []float64) {
		t.Helper()
		mpath := filepath.Join(dir, name)
		args := append([]string{"fit", "--train", train, "--test", test, "--features", "128", "--seed", "5",
			"--gamma", "0.1", "--model", mpath, "--json"}, extra...)
		out, err := run(t, args...)
		if err != nil {
			t.Fatalf("fit %v: %v", extra, err)
		}
		var r struct {
			Acc    float64 `json:"test_accuracy"`
			Device string  `json:"device"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if onDevice := slices.Contains(extra, "--device"); onDevice != strings.HasPrefix(r.Device, "go (") {
			t.Errorf("fit %v reports device %q", extra, r.Device)
		}
		return r.Acc, modelWeights(t, mpath)
	}
	for _, sel := range [][]string{nil, {"--select", "kfold", "--folds", "3"}} {
		acc, w := fit("cpu.kk", sel...)
		dacc, dw := fit("go.kk", append([]string{"--device", "go"}, sel...)...)
		if dacc != acc {
			t.Errorf("fit --device go %v: test accuracy %v, CPU fit %v", sel, dacc, acc)
		}
		if e := maxRel(dw, w); !(e <= 1e-9) {
			t.Errorf("fit --device go %v: weights differ from the CPU fit's by %.3g of their scale", sel, e)
		}
	}
	// Streamed: model.FitStream feeds the device statistics batch by batch.
	acc, w := fit("cpus.kk", "--stream")
	if dacc, dw := fit("gos.kk", "--stream", "--device", "go"); dacc != acc || !(maxRel(dw, w) <= 1e-9) {
		t.Errorf("fit --stream --device go: test accuracy %v, CPU fit %v; weights differ by %.3g", dacc, acc, maxRel(dw, w))
	}
	acc, _ = fit("cpu32.kk", "--float32")
	if dacc, _ := fit("go32.kk", "--float32", "--device", "go"); !(math.Abs(dacc-acc) <= 0.01) {
		t.Errorf("fit --float32 --device go: test accuracy %v, CPU fit %v", dacc, acc)
	}
}

// TestDeviceTransform compares transform --device go with the CPU
// transform, with a model (its scaler on the host, its map on the
// device) and with scaled softmax features drawn from the flags: values
// equal to 1e-12 of their scale.
func TestDeviceTransform(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 500)
	test := letterCSV(t, dir, "test.csv", 19900, 20000)
	mpath := filepath.Join(dir, "m.kk")
	if _, err := run(t, "fit", "--train", train, "--features", "32", "--seed", "2", "--model", mpath); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"transform", "--model", mpath, "--data", test},
		{"transform", "--data", test, "--label", "label", "--kernel", "softmax", "--features", "8", "--scaled"},
	} {
		want, err := run(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := run(t, append(args, "--device", "go")...)
		if err != nil {
			t.Fatalf("%v --device go: %v", args, err)
		}
		if e := maxRel(csvValues(t, got), csvValues(t, want)); !(e <= 1e-12) {
			t.Errorf("%v --device go: values differ from the CPU's by %.3g of their scale", args, e)
		}
	}
}

// TestDeviceErrors checks the one-line errors of --device: cuda in a
// program without XLA (the default build) names the build command; an
// unknown device and --exact with a device are refused.
func TestDeviceErrors(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 200)
	if !slices.Contains(nn.Backends(), "xla") {
		const want = "--device cuda: this program has no XLA backend (build with CGO_ENABLED=1 go build -tags xla ./cmd/kernelkit)"
		for _, args := range [][]string{
			{"fit", "--train", train, "--device", "cuda"},
			{"transform", "--data", train, "--device", "cuda"},
		} {
			if _, err := run(t, args...); err == nil || err.Error() != want {
				t.Errorf("%v: error %v, want %q", args, err, want)
			}
		}
	}
	for _, args := range [][]string{
		{"fit", "--train", train, "--device", "gpu"},
		{"fit", "--train", train, "--device", "go", "--exact"},
		{"transform", "--data", train, "--device", "tpu"},
	} {
		if _, err := run(t, args...); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line", args, err)
		}
	}
}
