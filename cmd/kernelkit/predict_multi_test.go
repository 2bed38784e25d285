package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/atomicfile"
	"github.com/kernelkit/kernelkit/internal/rng"
)

// multiCSV writes n rows "a,t1,b,c,t2" with t1 = sin(2a) + b and
// t2 = a·c + noise, seeded; with targets false the rows are "a,b,c".
func multiCSV(t *testing.T, dir, name string, n int, seed uint64, targets bool) string {
	t.Helper()
	r := rng.New(seed)
	var b strings.Builder
	if targets {
		b.WriteString("a,t1,b,c,t2\n")
	} else {
		b.WriteString("a,b,c\n")
	}
	for range n {
		a, bb, c := 2*r.Float64()-1, 2*r.Float64()-1, 2*r.Float64()-1
		t2 := a*c + 0.05*r.NormFloat64()
		if targets {
			fmt.Fprintf(&b, "%g,%g,%g,%g,%g\n", a, math.Sin(2*a)+bb, bb, c, t2)
		} else {
			fmt.Fprintf(&b, "%g,%g,%g\n", a, bb, c)
		}
	}
	return write(t, dir, name, b.String())
}

// parseCSV returns the header fields and the values of a CSV text.
func parseCSV(t *testing.T, text string) ([]string, [][]float64) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	rows := make([][]float64, 0, len(lines)-1)
	for i, line := range lines[1:] {
		f := strings.Split(line, ",")
		row := make([]float64, len(f))
		for j, s := range f {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("row %d field %d: %v", i, j, err)
			}
			row[j] = v
		}
		rows = append(rows, row)
	}
	return strings.Split(lines[0], ","), rows
}

// TestPredictMultiOutput: predict with a model fitted by fit --targets
// t1,t2 writes the columns t1,t2, equal to the model's Predict to 1e-12
// (relative), one row per data row; with the target columns present it
// reports on standard error the mean RMSE and the RMSE of each target,
// those of model.Evaluate (printed to 6 digits), and the same data with
// the target columns first gives the same bytes; data without the target
// columns give the same predictions and no RMSE. A model file without
// target names writes prediction0,prediction1; --label on a multi-output
// model is an error naming the targets.
func TestPredictMultiOutput(t *testing.T) {
	dir := t.TempDir()
	train := multiCSV(t, dir, "train.csv", 400, 1, true)
	test := multiCSV(t, dir, "test.csv", 120, 2, true)
	mpath := filepath.Join(dir, "m.kk")
	if _, err := run(t, "fit", "--train", train, "--targets", "t1,t2", "--features", "64", "--gamma", "0.5",
		"--lambda", "0.01", "--seed", "1", "--model", mpath); err != nil {
		t.Fatal(err)
	}
	m := loadModel(t, mpath)
	if _, k := m.Linear.W.Dims(); k != 2 || len(m.Targets) != 2 {
		t.Fatalf("model of %d outputs, targets %q", k, m.Targets)
	}
	ds, err := data.Open(test, data.OpenOptions{Columns: m.Columns, Targets: m.Targets})
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Predict(ds.X)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := m.Evaluate(ds, 0)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name, out string, head ...string) {
		t.Helper()
		h, rows := parseCSV(t, out)
		if strings.Join(h, ",") != strings.Join(head, ",") {
			t.Errorf("%s: header %q, want %q", name, h, head)
		}
		if len(rows) != ds.Rows() {
			t.Fatalf("%s: %d rows, want %d", name, len(rows), ds.Rows())
		}
		for i, row := range rows {
			if len(row) != 2 {
				t.Fatalf("%s: row %d has %d fields, want 2", name, i, len(row))
			}
			for j, v := range row {
				if w := want.At(i, j); math.Abs(v-w) > 1e-12*math.Max(1, math.Abs(w)) {
					t.Errorf("%s: row %d output %d = %v, Predict %v", name, i, j, v, w)
				}
			}
		}
	}

	out, stderr, err := runCtx(t, context.Background(), "--blas", "gonum", "predict", "--model", mpath, "--data", test)
	if err != nil {
		t.Fatal(err)
	}
	check("labelled", out, "t1", "t2")
	wantNote := fmt.Sprintf("RMSE %.6g (mean of 2 targets) on 120 rows; RMSE per target t1 %.6g, t2 %.6g", ev.RMSE, ev.RMSEs[0], ev.RMSEs[1])
	if !strings.Contains(stderr, wantNote) {
		t.Errorf("standard error %q, want %q", stderr, wantNote)
	}
	if !(ev.RMSEs[0] < 0.2 && ev.RMSEs[1] < 0.2) {
		t.Errorf("RMSE per target %v, want each below 0.2", ev.RMSEs)
	}

	// The target columns first: matched by name, the same bytes.
	perm := permute(t, test, filepath.Join(dir, "perm.csv"), []int{4, 1, 3, 0, 2})
	pout, _, err := runCtx(t, context.Background(), "--blas", "gonum", "predict", "--model", mpath, "--data", perm)
	if err != nil {
		t.Fatal(err)
	}
	if pout != out {
		t.Errorf("permuted columns: output differs")
	}

	// Without the target columns: the predictions, no RMSE.
	bare := permute(t, test, filepath.Join(dir, "bare.csv"), []int{0, 2, 3})
	out, stderr, err = runCtx(t, context.Background(), "--blas", "gonum", "predict", "--model", mpath, "--data", bare)
	if err != nil {
		t.Fatal(err)
	}
	check("unlabelled", out, "t1", "t2")
	if strings.Contains(stderr, "RMSE") {
		t.Errorf("unlabelled data: standard error %q", stderr)
	}

	// A model file without target names.
	m.Targets = nil
	anon := filepath.Join(dir, "anon.kk")
	if err := atomicfile.Write(anon, m.Save); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCtx(t, context.Background(), "--blas", "gonum", "predict", "--model", anon, "--data", bare)
	if err != nil {
		t.Fatal(err)
	}
	check("no target names", out, "prediction0", "prediction1")

	_, err = run(t, "predict", "--model", mpath, "--data", test, "--label", "t1")
	if err == nil || !strings.Contains(err.Error(), "drop --label") || !strings.Contains(err.Error(), "t1, t2") {
		t.Errorf("--label on a multi-output model: %v", err)
	}
}
