package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestDevicePRF runs the fitted positive random features of package prf
// on device go: fit --map oprf|sderf --device go (the map, fitted to the
// standardised training rows on the CPU, evaluated on the device) gives
// the CPU fit's test accuracy and weights to 1e-9 of their scale, as
// TestDeviceFit; transform --device go with the stored model, and with
// the scaled features of the flags, equals the CPU's to 1e-12 of the
// values' scale (TestDeviceTransform); the ADERF pair is refused by
// --map with or without a device.
func TestDevicePRF(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 1500)
	test := letterCSV(t, dir, "test.csv", 19500, 20000)
	for _, name := range []string{"oprf", "sderf"} {
		fit := func(file string, extra ...string) (float64, []float64, string) {
			t.Helper()
			mpath := filepath.Join(dir, file)
			out, err := run(t, append([]string{"fit", "--train", train, "--test", test, "--map", name, "--features", "64",
				"--seed", "5", "--model", mpath, "--json"}, extra...)...)
			if err != nil {
				t.Fatalf("fit --map %s %v: %v", name, extra, err)
			}
			var r struct {
				Acc    float64 `json:"test_accuracy"`
				Device string  `json:"device"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			if onDevice := len(extra) > 0; onDevice != strings.HasPrefix(r.Device, "go (") {
				t.Errorf("fit --map %s %v reports device %q", name, extra, r.Device)
			}
			return r.Acc, modelWeights(t, mpath), mpath
		}
		acc, w, mpath := fit(name + ".kk")
		dacc, dw, _ := fit(name+"-go.kk", "--device", "go")
		if dacc != acc {
			t.Errorf("fit --map %s --device go: test accuracy %v, CPU fit %v", name, dacc, acc)
		}
		if e := maxRel(dw, w); !(e <= 1e-9) {
			t.Errorf("fit --map %s --device go: weights differ from the CPU fit's by %.3g of their scale", name, e)
		}
		for _, args := range [][]string{
			{"transform", "--model", mpath, "--data", test},
			{"transform", "--data", test, "--label", "label", "--map", name, "--features", "8", "--scaled"},
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
	for _, args := range [][]string{
		{"fit", "--train", train, "--map", "aderf", "--device", "go"},
		{"transform", "--data", test, "--map", "aderf", "--device", "go"},
	} {
		if _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "asymmetric") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line refusing the asymmetric pair", args, err)
		}
	}
}
