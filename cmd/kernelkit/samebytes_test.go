package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFitStreamSameBytes (issue 24): kernelkit fit with the same flags
// writes the same model file, byte for byte, with and without --stream:
// a plain fit on 18000 rows of letter (more than one block of the
// scaler's moments), a weighted one (--weight-column, --class-weight),
// GCV and k-fold selection, a calibration (a third pass over the stream)
// a multi-output regression (--targets), a regression whose task
// --task auto decides from the labels, and --gamma scale on unscaled
// rows (whose moments are taken in blocks too). The file records the
// label or the targets' names either way.
func TestFitStreamSameBytes(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 18000)
	test := letterCSV(t, dir, "test.csv", 19000, 19500)
	weighted := letterRowsCSV(t, dir, "weighted.csv", 0, 18000, func(i int) int { return i % 3 }, nil)
	weightedTest := letterRowsCSV(t, dir, "weighted-test.csv", 19000, 19500, func(int) int { return 1 }, nil)
	multi := multiCSV(t, dir, "multi.csv", 3000, 4, true)
	multiTest := multiCSV(t, dir, "multi-test.csv", 200, 5, true)
	common := []string{"--features", "64", "--seed", "1"}
	for _, c := range []struct {
		name        string
		train, test string
		args        []string
		want        string // in the model file
	}{
		{"plain", train, test, nil, `"label":"label"`},
		{"weights", weighted, weightedTest, []string{"--weight-column", "w", "--class-weight", "balanced"}, `"label":"label"`},
		{"gcv", train, test, []string{"--select", "gcv"}, `"label":"label"`},
		{"kfold", weighted, weightedTest, []string{"--select", "kfold", "--folds", "4", "--weight-column", "w"}, `"label":"label"`},
		{"calibrate", train, test, []string{"--calibrate", "--folds", "3"}, `"calibration":`},
		{"gamma scale", train, test, []string{"--gamma", "scale", "--no-standardize"}, `"gamma":`},
		{"auto regression", multi, multiTest, []string{"--label", "t2"}, `"task":"regression"`},
		{"targets", multi, multiTest, []string{"--targets", "t1,t2", "--select", "gcv"}, `"targets":["t1","t2"]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := make([][]byte, 2)
			for i, stream := range []bool{false, true} {
				path := filepath.Join(dir, c.name+map[bool]string{false: ".kk", true: "-stream.kk"}[stream])
				args := append([]string{"fit", "--train", c.train, "--test", c.test, "--model", path}, common...)
				args = append(args, c.args...)
				if stream {
					args = append(args, "--stream")
				}
				if _, err := run(t, args...); err != nil {
					t.Fatalf("stream %v: %v", stream, err)
				}
				var err error
				if files[i], err = os.ReadFile(path); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Contains(files[0], []byte(c.want)) {
				t.Errorf("the model file has no %s", c.want)
			}
			if !bytes.Equal(files[0], files[1]) {
				i := 0
				for i < len(files[0]) && i < len(files[1]) && files[0][i] == files[1][i] {
					i++
				}
				lo := max(0, i-80)
				t.Errorf("fit --stream wrote another model file: from byte %d, …%s… against …%s…", i,
					strings.ToValidUTF8(string(files[1][lo:min(len(files[1]), i+40)]), "?"), strings.ToValidUTF8(string(files[0][lo:min(len(files[0]), i+40)]), "?"))
			}
		})
	}
}

// TestFitDeviceCalibrate (issue 24): fit --device go --calibrate
// accumulates each stratified fold's statistics on the device (one
// accumulator a fold), writes the same model file with --stream, and
// predicts the CPU calibration's classes on the test rows; its weights
// agree with the CPU's to 1e-9 of their scale (as TestDeviceFit's).
func TestFitDeviceCalibrate(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 1500)
	test := letterCSV(t, dir, "test.csv", 19500, 20000)
	fit := func(name string, extra ...string) []byte {
		t.Helper()
		path := filepath.Join(dir, name)
		args := append([]string{"fit", "--train", train, "--test", test, "--features", "64", "--seed", "5",
			"--gamma", "0.1", "--calibrate", "--folds", "3", "--model", path, "--json"}, extra...)
		out, err := run(t, args...)
		if err != nil {
			t.Fatalf("fit %v: %v", extra, err)
		}
		var r struct {
			Device string `json:"device"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if onDevice := len(extra) > 0; onDevice != strings.HasPrefix(r.Device, "go (") {
			t.Errorf("fit %v reports device %q", extra, r.Device)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fit("cpu.kk")
	dev := fit("go.kk", "--device", "go")
	if streamed := fit("go-stream.kk", "--device", "go", "--stream"); !bytes.Equal(streamed, dev) {
		t.Error("fit --device go --calibrate --stream wrote another model file than without --stream")
	}
	if !bytes.Contains(dev, []byte(`"calibration":`)) {
		t.Error("fit --device go --calibrate wrote no calibration")
	}
	if e := maxRel(modelWeights(t, filepath.Join(dir, "go.kk")), modelWeights(t, filepath.Join(dir, "cpu.kk"))); !(e <= 1e-9) {
		t.Errorf("device weights differ from the CPU's by %.3g of their scale", e)
	}
}
