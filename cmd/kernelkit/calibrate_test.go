package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCalibrate: fit --calibrate, then predict --scores writes, per row,
// the prediction, the 26 scores and the 26 calibrated probabilities; the
// probabilities lie in [0, 1] and sum to one (to 1e-14: the CSV holds
// round-trip floats), the prediction is the argmax of the scores, and the
// labelled rows' log-loss and ECE go to standard error. An uncalibrated
// model writes no probabilities; a streamed fit calibrates too (a third
// pass over the rows), and a regression refuses --calibrate.
func TestCalibrate(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 3000)
	test := letterCSV(t, dir, "test.csv", 19000, 20000)
	mpath := filepath.Join(dir, "m.kk")
	if _, err := run(t, "fit", "--train", train, "--features", "128", "--gamma", "0.0625", "--lambda", "0.5",
		"--seed", "1", "--calibrate", "--model", mpath); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runCtx(t, context.Background(), "--blas", "gonum", "predict", "--model", mpath, "--data", test, "--scores")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "log-loss") || !strings.Contains(stderr, "ECE") {
		t.Errorf("standard error %q has no log-loss and ECE", stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	const k = 26
	head := strings.Split(lines[0], ",")
	if len(head) != 1+2*k || head[1] != "score0" || head[k] != "score25" || head[k+1] != "prob0" || head[2*k] != "prob25" {
		t.Fatalf("header %q", lines[0])
	}
	if len(lines) != 1001 {
		t.Fatalf("%d lines, want 1001", len(lines))
	}
	for i, line := range lines[1:] {
		f := strings.Split(line, ",")
		if len(f) != 1+2*k {
			t.Fatalf("row %d: %d fields", i, len(f))
		}
		v := make([]float64, len(f))
		for j, s := range f {
			if v[j], err = strconv.ParseFloat(s, 64); err != nil {
				t.Fatalf("row %d field %d: %v", i, j, err)
			}
		}
		best := 0
		for c := 1; c < k; c++ {
			if v[1+c] > v[1+best] {
				best = c
			}
		}
		if int(v[0]) != best {
			t.Errorf("row %d: prediction %v, argmax of the scores %d", i, v[0], best)
		}
		var sum float64
		for _, p := range v[1+k:] {
			if !(p >= 0 && p <= 1) {
				t.Fatalf("row %d: probability %v", i, p)
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-14 {
			t.Errorf("row %d: probabilities sum to 1%+.3g", i, sum-1)
		}
	}

	// Labels that are not classes of the model: the accuracy counts them
	// as misses, and a notice says why log-loss and ECE are missing.
	src, err := os.ReadFile(test)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(src)), "\n")
	for _, c := range []struct{ label, want string }{
		{"2.5", "not a class index"},
		{"30", "label 30 is not a class of the model (0 to 25)"},
	} {
		bad := append([]string(nil), rows...)
		bad[5] = bad[5][:strings.LastIndex(bad[5], ",")+1] + c.label
		path := write(t, dir, "bad.csv", strings.Join(bad, "\n")+"\n")
		_, stderr, err := runCtx(t, context.Background(), "--blas", "gonum", "predict", "--model", mpath, "--data", path)
		if err != nil {
			t.Fatalf("label %s: %v", c.label, err)
		}
		if !strings.Contains(stderr, "accuracy") || !strings.Contains(stderr, "no log-loss or ECE") || !strings.Contains(stderr, c.want) ||
			strings.Contains(stderr, "log-loss 0") {
			t.Errorf("label %s: standard error %q, want the accuracy and a notice naming %q", c.label, stderr, c.want)
		}
	}

	plain := filepath.Join(dir, "plain.kk")
	if _, err := run(t, "fit", "--train", train, "--features", "64", "--model", plain); err != nil {
		t.Fatal(err)
	}
	out, stderr, err = runCtx(t, context.Background(), "--blas", "gonum", "predict", "--model", plain, "--data", test, "--scores")
	if err != nil || strings.Contains(out, "prob") || strings.Contains(stderr, "log-loss") {
		t.Errorf("uncalibrated model: %v; header %q, standard error %q", err, strings.SplitN(out, "\n", 2)[0], stderr)
	}
	streamed := filepath.Join(dir, "streamed.kk")
	if _, err := run(t, "fit", "--train", train, "--test", test, "--stream", "--calibrate", "--features", "16", "--model", streamed); err != nil {
		t.Errorf("fit --stream --calibrate: %v", err)
	} else if m := loadModel(t, streamed); m.Calibration == nil {
		t.Error("fit --stream --calibrate wrote a model without a calibration")
	}
	if _, err := run(t, "fit", "--train", train, "--task", "regression", "--calibrate", "--features", "16"); err == nil ||
		!strings.Contains(err.Error(), "calibration is for classification") {
		t.Errorf("fit --task regression --calibrate: %v", err)
	}
}
