package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/model"
)

// letterRowsCSV writes rows [lo, hi) of letter as CSV with a first column
// "w" holding weight(i) (i from 0), each row repeated times(i) times (1 if
// times is nil); with weight nil there is no weight column.
func letterRowsCSV(t *testing.T, dir, name string, lo, hi int, weight, times func(int) int) string {
	t.Helper()
	src, err := os.ReadFile("../../data/letter.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(src)), "\n")
	var b strings.Builder
	if weight != nil {
		b.WriteString("w,")
	}
	b.WriteString(lines[0] + "\n")
	for i, line := range lines[1+lo : 1+hi] {
		n := 1
		if times != nil {
			n = times(i)
		}
		for range n {
			if weight != nil {
				b.WriteString(strconv.Itoa(weight(i)) + ",")
			}
			b.WriteString(line + "\n")
		}
	}
	return write(t, dir, name, b.String())
}

// loadModel reads a model file.
func loadModel(t *testing.T, path string) *model.Model {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	m, err := model.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// modelRelDiff returns max|a − b|/max(1, max|b|) over the weights and
// intercepts of two models.
func modelRelDiff(a, b *model.Model) float64 {
	wa, wb := a.Linear.W.RawMatrix().Data, b.Linear.W.RawMatrix().Data
	if len(wa) != len(wb) {
		return math.Inf(1)
	}
	diff, scale := 0.0, 1.0
	for i := range wb {
		diff = math.Max(diff, math.Abs(wa[i]-wb[i]))
		scale = math.Max(scale, math.Abs(wb[i]))
	}
	for i := range b.Linear.B {
		diff = math.Max(diff, math.Abs(a.Linear.B[i]-b.Linear.B[i]))
		scale = math.Max(scale, math.Abs(b.Linear.B[i]))
	}
	return diff / scale
}

// TestFitWeightColumn: fit --weight-column w on letter rows with integer
// weights 0…3 writes the model of the fit on the rows repeated that often
// (no weight column) to 1e-10 relative, in memory and with --stream; the
// test file's weight column is dropped (a test file without one works
// too, with the same test accuracy).
func TestFitWeightColumn(t *testing.T) {
	dir := t.TempDir()
	weight := func(i int) int { return (i * 7) % 4 }
	train := letterRowsCSV(t, dir, "train.csv", 0, 800, weight, nil)
	rep := letterRowsCSV(t, dir, "rep.csv", 0, 800, nil, weight)
	testW := letterRowsCSV(t, dir, "testw.csv", 19000, 19400, weight, nil)
	test := letterRowsCSV(t, dir, "test.csv", 19000, 19400, nil, nil)
	common := []string{"fit", "--features", "64", "--gamma", "0.0625", "--seed", "2", "--json"}
	fit := func(path string, args ...string) (*model.Model, map[string]any) {
		t.Helper()
		mp := filepath.Join(dir, fmt.Sprintf("m%d.kk", len(args)+len(path)))
		out, err := run(t, append(append(append([]string(nil), common...), "--model", mp), args...)...)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return loadModel(t, mp), r
	}
	want, wr := fit("rep", "--train", rep, "--test", test)
	got, gr := fit("w", "--train", train, "--weight-column", "w", "--test", testW)
	if e := modelRelDiff(got, want); e > 1e-10 {
		t.Errorf("--weight-column: model differs from the repeated rows' by %.3g", e)
	}
	if len(got.Columns) != 16 || got.Columns[0] != "x.box" {
		t.Errorf("model columns %q include the weight column", got.Columns)
	}
	if gr["test_accuracy"] != wr["test_accuracy"] {
		t.Errorf("test accuracy %v, repeated rows %v", gr["test_accuracy"], wr["test_accuracy"])
	}
	_, plain := fit("wp", "--train", train, "--weight-column", "w", "--test", test)
	if plain["test_accuracy"] != gr["test_accuracy"] {
		t.Errorf("test file without the weight column: accuracy %v, with it %v", plain["test_accuracy"], gr["test_accuracy"])
	}
	streamed, _ := fit("ws", "--train", train, "--weight-column", "w", "--test", testW, "--stream")
	if e := modelRelDiff(streamed, want); e > 1e-10 {
		t.Errorf("--weight-column --stream: model differs from the repeated rows' by %.3g", e)
	}
	// predict skips the weight column when told its name, and refuses it
	// as an unexpected column otherwise.
	mp := filepath.Join(dir, "mpred.kk")
	if _, err := run(t, append(append([]string(nil), common...), "--model", mp, "--train", train, "--weight-column", "w")...); err != nil {
		t.Fatal(err)
	}
	withW, err := run(t, "predict", "--model", mp, "--data", testW, "--weight-column", "w")
	if err != nil {
		t.Fatalf("predict --weight-column: %v", err)
	}
	without, err := run(t, "predict", "--model", mp, "--data", test)
	if err != nil {
		t.Fatal(err)
	}
	if withW != without || strings.Count(withW, "\n") != 401 {
		t.Errorf("predict --weight-column: %d lines, differ from the file without the column: %v", strings.Count(withW, "\n"), withW != without)
	}
	if _, err := run(t, "predict", "--model", mp, "--data", testW); err == nil || !strings.Contains(err.Error(), `"w"`) {
		t.Errorf("predict on a file with the weight column, no --weight-column: %v, want an unexpected-column error", err)
	}
}

// TestFitClassWeightFlag: --class-weight balanced writes the same model
// file, byte for byte, as --class-weight with the weights n/(C·n_c)
// computed by hand from the training labels, in memory and streamed.
func TestFitClassWeightFlag(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 600)
	test := letterCSV(t, dir, "test.csv", 19000, 19200)
	ds, err := data.Open(train, data.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int]int{}
	for _, v := range ds.Y {
		counts[int(v)]++
	}
	var pairs []string
	for c, nc := range counts {
		w := float64(ds.Rows()) / (float64(len(counts)) * float64(nc))
		pairs = append(pairs, strconv.Itoa(c)+"="+strconv.FormatFloat(w, 'g', -1, 64))
	}
	for _, stream := range []bool{false, true} {
		args := []string{"fit", "--train", train, "--test", test, "--features", "32", "--seed", "4"}
		if stream {
			args = append(args, "--stream")
		}
		m1, m2 := filepath.Join(dir, "bal.kk"), filepath.Join(dir, "hand.kk")
		if _, err := run(t, append(args, "--class-weight", "balanced", "--model", m1)...); err != nil {
			t.Fatal(err)
		}
		if _, err := run(t, append(args, "--class-weight", strings.Join(pairs, ","), "--model", m2)...); err != nil {
			t.Fatal(err)
		}
		if b1, b2 := must(os.ReadFile(m1)), must(os.ReadFile(m2)); string(b1) != string(b2) {
			t.Errorf("stream %v: balanced and hand-computed class weights give different model files", stream)
		}
	}
}

// regressionCSV writes n rows "a,t1,b,c,t2,w" with t1 = sin(2a) + b,
// t2 = a·c + noise and weights w = 1 + (i mod 3)/2, seeded.
func regressionCSV(t *testing.T, dir, name string, n int, seed uint64) string {
	t.Helper()
	r := rng.New(seed)
	var b strings.Builder
	b.WriteString("a,t1,b,c,t2,w\n")
	for i := range n {
		a, bb, c := 2*r.Float64()-1, 2*r.Float64()-1, 2*r.Float64()-1
		fmt.Fprintf(&b, "%g,%g,%g,%g,%g,%g\n", a, math.Sin(2*a)+bb, bb, c, a*c+0.05*r.NormFloat64(), 1+float64(i%3)/2)
	}
	return write(t, dir, name, b.String())
}

// TestFitTargetsWeighted: fit --targets t1,t2 --weight-column w fits a
// weighted two-output regression (the task follows), reports the RMSE of
// each target — equal to the loaded model's Evaluate on the test file to
// 1e-12, their mean as test_rmse, each below 0.2 — stores the outputs and
// target names in the model file, and --stream gives the same model to
// 1e-10.
func TestFitTargetsWeighted(t *testing.T) {
	dir := t.TempDir()
	train := regressionCSV(t, dir, "train.csv", 500, 1)
	test := regressionCSV(t, dir, "test.csv", 200, 2)
	mp, ms := filepath.Join(dir, "m.kk"), filepath.Join(dir, "s.kk")
	args := []string{"fit", "--train", train, "--test", test, "--targets", "t1,t2", "--weight-column", "w", "--features", "64", "--gamma", "0.5", "--lambda", "0.01", "--seed", "1"}
	out, err := run(t, append(args, "--json", "--model", mp)...)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Task     string    `json:"task"`
		TestRMSE float64   `json:"test_rmse"`
		PerTgt   []float64 `json:"rmse_per_target"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	m := loadModel(t, mp)
	te, err := data.Open(test, data.OpenOptions{Columns: m.Columns, Targets: m.Targets, Weight: "w"})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := m.Evaluate(te, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Task != "regression" || len(r.PerTgt) != 2 || len(m.Targets) != 2 || m.Targets[1] != "t2" {
		t.Fatalf("task %q, RMSE per target %v, model targets %q", r.Task, r.PerTgt, m.Targets)
	}
	for c, v := range r.PerTgt {
		if math.Abs(v-ev.RMSEs[c]) > 1e-12*ev.RMSEs[c] {
			t.Errorf("target %d: reported RMSE %v, Evaluate %v", c, v, ev.RMSEs[c])
		}
	}
	if math.Abs(r.TestRMSE-(r.PerTgt[0]+r.PerTgt[1])/2) > 1e-12 || !(r.PerTgt[0] < 0.2 && r.PerTgt[1] < 0.2) {
		t.Errorf("test RMSE %v, per target %v (want their mean, each below 0.2)", r.TestRMSE, r.PerTgt)
	}
	text, err := run(t, append(args, "--stream", "--model", ms)...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "RMSE per target t1 ") {
		t.Errorf("fit printed %q", text)
	}
	s := loadModel(t, ms)
	if e := modelRelDiff(s, m); e > 1e-10 || len(s.Targets) != 2 {
		t.Errorf("--stream --targets: model differs by %.3g, targets %q", e, s.Targets)
	}
}

// TestFitWeightErrors: every misuse of the weight, class-weight and
// target flags is an error of one line naming the problem.
func TestFitWeightErrors(t *testing.T) {
	dir := t.TempDir()
	train := letterRowsCSV(t, dir, "train.csv", 0, 200, func(i int) int { return i % 3 }, nil)
	letter := letterCSV(t, dir, "letter.csv", 0, 200)
	reg := regressionCSV(t, dir, "reg.csv", 100, 3)
	neg := write(t, dir, "neg.csv", "w,a,y\n1,0.5,0\n-2,0.25,1\n1,1,1\n")
	lastW := write(t, dir, "lastw.csv", "a,y,w\n0.5,0,1\n0.25,1,1\n")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown weight column", []string{"--train", letter, "--weight-column", "wt"}, `no weight column "wt"`},
		{"negative weight", []string{"--train", neg, "--weight-column", "w"}, "weight -2 of row 1"},
		{"weight is the default label", []string{"--train", lastW, "--weight-column", "w"}, "name the label"},
		{"unknown target", []string{"--train", reg, "--targets", "t1,t3"}, `no target column "t3"`},
		{"targets and label", []string{"--train", reg, "--targets", "t1,t2", "--label", "t1"}, "drop --label"},
		{"targets as classification", []string{"--train", reg, "--targets", "t1,t2", "--task", "classification"}, "multi-output regression"},
		{"class weight syntax", []string{"--train", letter, "--class-weight", "a=1"}, "class=weight"},
		{"class weight value", []string{"--train", letter, "--class-weight", "1=-1"}, "finite non-negative"},
		{"class weight twice", []string{"--train", letter, "--class-weight", "balanced", "--class-weight", "balanced"}, "given twice"},
		{"class beyond labels", []string{"--train", letter, "--class-weight", "30=2"}, "class 30"},
		{"class weights on regression", []string{"--train", reg, "--label", "t1", "--weight-column", "w", "--task", "regression", "--class-weight", "balanced"}, "class weights are for classification"},
		{"exact with weights", []string{"--train", train, "--weight-column", "w", "--exact"}, "--exact fits one unweighted target"},
		{"classification of two weighted targets", []string{"--train", reg, "--targets", "t1,t2", "--weight-column", "w", "--task", "classify"}, "multi-output regression"},
	} {
		_, err := run(t, append([]string{"fit", "--features", "8"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
}
