package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// run executes the CLI in process with the pure-Go backend.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(append([]string{"--blas", "gonum"}, args...))
	err := root.Execute()
	return out.String(), err
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// letterCSV writes rows [lo, hi) of the embedded letter data as CSV.
func letterCSV(t *testing.T, dir, name string, lo, hi int) string {
	t.Helper()
	src, err := os.ReadFile("../../data/letter.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(src)), "\n")
	body := append([]string{lines[0]}, lines[1+lo:1+hi]...)
	return write(t, dir, name, strings.Join(body, "\n")+"\n")
}

func TestFitPredictTransform(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 3000)
	test := letterCSV(t, dir, "test.csv", 19000, 20000)
	mpath := filepath.Join(dir, "m.kk")
	out, err := run(t, "fit", "--train", train, "--test", test, "--kernel", "rbf", "--gamma", "0.0625",
		"--features", "256", "--sampler", "orf", "--lambda", "0.5", "--seed", "3", "--model", mpath, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("fit --json printed %q: %v", out, err)
	}
	acc, ok := r["test_accuracy"].(float64)
	if !ok || acc < 0.6 {
		t.Errorf("test_accuracy %v", r["test_accuracy"])
	}
	if ge, ok := r["gram_error"].(float64); !ok || ge <= 0 || ge > 0.25 {
		t.Errorf("gram_error %v", r["gram_error"])
	}
	if _, ok := r["seconds"].(float64); !ok {
		t.Error("no seconds")
	}
	// predict with the saved model reproduces the fit-time accuracy.
	pout := filepath.Join(dir, "pred.csv")
	if _, err := run(t, "predict", "--model", mpath, "--data", test, "--out", pout); err != nil {
		t.Fatal(err)
	}
	preds, _ := os.ReadFile(pout)
	src, _ := os.ReadFile(test)
	pl := strings.Split(strings.TrimSpace(string(preds)), "\n")[1:]
	tl := strings.Split(strings.TrimSpace(string(src)), "\n")[1:]
	if len(pl) != len(tl) {
		t.Fatalf("%d predictions for %d rows", len(pl), len(tl))
	}
	c := 0
	for i := range pl {
		f := strings.Split(tl[i], ",")
		if f[len(f)-1] == pl[i] {
			c++
		}
	}
	if got := float64(c) / float64(len(pl)); got != acc {
		t.Errorf("predict accuracy %v, fit reported %v", got, acc)
	}
	// transform with the model: one row of 256 features per input row.
	tout, err := run(t, "transform", "--model", mpath, "--data", test)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(tout), "\n")
	if len(rows) != 1001 || len(strings.Split(rows[1], ",")) != 256 {
		t.Errorf("transform wrote %d rows of %d columns", len(rows), len(strings.Split(rows[1], ",")))
	}
	// transform without a model, scaled exponential features.
	if out, err := run(t, "transform", "--data", test, "--label", "label", "--kernel", "softmax", "--features", "8", "--scaled"); err != nil || !strings.Contains(out, "log_scale") {
		t.Errorf("scaled transform: %v", err)
	}
}

func TestDemoSmall(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "demo.png")
	out, err := run(t, "demo", "--kernels", "rbf,arccos0", "--samplers", "iid,sorf", "--features", "32,64", "--plot", png)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "\n") < 8 || !strings.Contains(out, "sorf") {
		t.Errorf("demo table:\n%s", out)
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 1000 {
		t.Errorf("plot not written: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good := letterCSV(t, dir, "good.csv", 0, 200)
	empty := write(t, dir, "empty.csv", "")
	ragged := write(t, dir, "ragged.csv", "a,b,label\n1,2,0\n1,0\n")
	text := write(t, dir, "text.csv", "a,b,label\n1,x,0\n")
	nan := write(t, dir, "nan.csv", "a,b,label\n1,NaN,0\n")
	inf := write(t, dir, "inf.csv", "a,b,label\n1,+Inf,0\n")
	oneLabel := write(t, dir, "one.csv", "a,b,label\n1,2,3\n3,4,3\n")
	twoCols := write(t, dir, "two.csv", "x.box,y.box,label\n1,2,3\n")
	mpath := filepath.Join(dir, "m.kk")
	if _, err := run(t, "fit", "--train", good, "--features", "16", "--model", mpath); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(mpath)
	trunc := write(t, dir, "trunc.kk", string(raw[:len(raw)/3]))
	v2 := write(t, dir, "v2.kk", strings.Replace(string(raw), `"version":2`, `"version":7`, 1))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", "--train", empty}, "empty"},
		{[]string{"fit", "--train", ragged}, "fields"},
		{[]string{"fit", "--train", text}, "not a number"},
		{[]string{"fit", "--train", nan}, "not finite"},
		{[]string{"fit", "--train", inf}, "not finite"},
		{[]string{"fit", "--train", good, "--kernel", "poly"}, "unknown kernel"},
		{[]string{"fit", "--train", good, "--features", "0"}, "features"},
		{[]string{"fit", "--train", good, "--features", "-5"}, "features"},
		{[]string{"fit", "--train", good, "--gamma", "-1"}, "gamma"},
		{[]string{"fit", "--train", good, "--lambda", "-0.5"}, "lambda"},
		{[]string{"fit", "--train", good, "--sampler", "sobol"}, "unknown sampler"},
		{[]string{"fit", "--train", good, "--bogus"}, "unknown flag"},
		{[]string{"fit"}, "--train"},
		{[]string{"fit", "--train", filepath.Join(dir, "missing.csv")}, "no such file"},
		{[]string{"predict", "--model", trunc, "--data", good}, "truncated"},
		{[]string{"predict", "--model", v2, "--data", good}, "version 7"},
		{[]string{"predict", "--model", mpath, "--data", ragged}, "fields"},
		{[]string{"demo", "--features", "0"}, `"--features" flag: "0": must be an integer in [1, 32768]`},
		{[]string{"demo", "--gamma", "nan"}, "flag: must be"},
		{[]string{"fit", "--train", good, "--gamma", "nan"}, "flag: must be"},
		{[]string{"fit", "--train", good, "--lambda", "inf"}, "flag: must be"},
		{[]string{"fit", "--train", good, "--label", "label", "--label", "label"}, "given twice"},
		{[]string{"fit", "--train", oneLabel}, "every training label is 3"},
		{[]string{"fit", "--train", good, "--test", twoCols}, "missing"},
		{[]string{"predict", "--model", mpath, "--data", twoCols}, "missing"},
		{[]string{"transform", "--model", mpath, "--data", twoCols}, "missing"},
		{[]string{"fit", "--train", good, "--format", "arff"}, "unknown format"},
		{[]string{"frobnicate"}, "unknown command"},
	} {
		_, err := run(t, c.args...)
		if err == nil {
			t.Errorf("%v: no error", c.args)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: error %q, want one line containing %q", c.args, msg, c.want)
		}
	}
}

func TestAttentionCommand(t *testing.T) {
	out, err := run(t, "attention", "--lengths", "64", "--features", "8,16", "--seeds", "2", "--variants", "positive,relu", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 4 {
		t.Fatalf("attention --json: %v, %d rows", err, len(rows))
	}
	if _, ok := rows[0]["mse"].(float64); !ok {
		t.Error("no mse")
	}
	if _, err := run(t, "attention", "--lengths", "64", "--causal", "--timing"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"attention", "--variants", "cosine"}, "unknown variant"},
		{[]string{"attention", "--features", "0"}, "--features"},
		{[]string{"attention", "--seeds", "0"}, "--seeds"},
		{[]string{"attention", "--q", "x.csv"}, "go together"},
	} {
		if _, err := run(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

func TestEstimateCommand(t *testing.T) {
	// "bipolar" is HRF App. F (hybrid.GaussianBipolar), "gaussian" HRF
	// Eq. 20 (hybrid.Gaussian), as in the catalog.
	out, err := run(t, "estimate", "--draws", "20", "--estimator", "trig,positive,angular,bipolar,gaussian", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 5*39 {
		t.Fatalf("estimate --json: %v, %d rows", err, len(rows))
	}
	if b, g := rows[3*39+5], rows[4*39+5]; b["estimator"] != "bipolar" || g["estimator"] != "gaussian" || b["rel_error"] == g["rel_error"] {
		t.Errorf("bipolar and gaussian rows: %v, %v", b, g)
	}
	dir := t.TempDir()
	csv := letterCSV(t, dir, "l.csv", 0, 300)
	out, err = run(t, "estimate", "--data", csv, "--pairs", "20", "--features", "64", "--estimator", "angular",
		"--sampler", "orf", "--draws", "5", "--seed", "3", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("estimate --data --json printed %q: %v", out, err)
	}
	for _, k := range []string{"mse", "mse_std"} {
		if v, ok := r[k].(float64); !ok || v < 0 {
			t.Errorf("%s = %v", k, r[k])
		}
	}
	if _, err := run(t, "estimate", "--study", "softmax", "--estimator", "positive,trig", "--d", "8", "--json"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"estimate", "--estimator", "magic"}, "unknown estimator"},
		{[]string{"estimate", "--features", "0"}, "--features"},
		{[]string{"estimate", "--study", "data"}, "--data"},
		{[]string{"estimate", "--study", "other"}, "unknown --study"},
		{[]string{"estimate", "--norms", "-1"}, "--norms"},
		{[]string{"estimate", "--draws", "1"}, "--draws"},
		{[]string{"estimate", "--draws", "100000000000"}, `"--draws" flag: must be an integer in [1, 1048576]`},
		{[]string{"estimate", "--study", "clustered", "--draws", "100000000000"}, `"--draws" flag: must be an integer in [1, 1048576]`},
		{[]string{"estimate", "--study", "zoo", "--draws", "100000000000"}, `"--draws" flag: must be an integer in [1, 1048576]`},
	} {
		if _, err := run(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

func TestToeplitzCommand(t *testing.T) {
	out, err := run(t, "toeplitz", "--max-n", "1024", "--max-dense", "1024", "--d", "4", "--r", "16", "--m", "5", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("toeplitz --json: %v", err)
	}
	if tm, ok := rep["timing"].([]any); !ok || len(tm) != 2 {
		t.Errorf("timing rows: %v", rep["timing"])
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"toeplitz", "--lambda", "1.5"}, "--lambda"},
		{[]string{"toeplitz", "--r", "1"}, `"--r" flag: must be an integer in [2, 16777216]`},
		{[]string{"toeplitz", "--max-n", "100"}, "--max-n"},
	} {
		if _, err := run(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

func TestAnalogCommand(t *testing.T) {
	dir := t.TempDir()
	csv := letterCSV(t, dir, "l.csv", 0, 400)
	out, err := run(t, "analog", "--data", csv, "--kernels", "rbf,arccos0", "--samplers", "iid", "--ratios", "1", "--seeds", "1", "--no-attention", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("analog --json: %v", err)
	}
	ridge, _ := rep["ridge"].([]any)
	cost, _ := rep["cost"].([]any)
	if len(ridge) != 2 || len(cost) != 8 {
		t.Errorf("%d ridge rows and %d cost rows", len(ridge), len(cost))
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"analog", "--kernels", "poly", "--no-attention", "--no-cost"}, "unknown analog kernel"},
		{[]string{"analog", "--seeds", "0"}, "--seeds"},
		{[]string{"analog", "--ratios", "x"}, "--ratios"},
		{[]string{"analog", "--t-inference", "-1"}, "--t-inference"},
	} {
		if _, err := run(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

func TestSNNKCommand(t *testing.T) {
	out, err := run(t, "snnk", "--features", "8,64", "--draws", "20", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 4 {
		t.Fatalf("snnk pointwise: %v, %d rows", err, len(rows))
	}
	if _, err := run(t, "snnk", "--study", "bundle", "--features", "8", "--json"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	csv := letterCSV(t, dir, "l.csv", 0, 300)
	out, err = run(t, "snnk", "--study", "classify", "--data", csv, "--seeds", "1", "--epochs", "2", "--hidden", "8", "--m", "4", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 4 {
		t.Fatalf("snnk classify: %v, %d rows", err, len(rows))
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"snnk", "--study", "other"}, "unknown --study"},
		{[]string{"snnk", "--draws", "1"}, "--draws"},
		{[]string{"snnk", "--draws", "100000000000"}, `"--draws" flag: must be an integer in [2, 1048576]`},
		{[]string{"snnk", "--features", "0"}, "--features"},
	} {
		if _, err := run(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

func TestFitStream(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 2000)
	test := letterCSV(t, dir, "test.csv", 19000, 20000)
	acc := func(extra ...string) float64 {
		args := append([]string{"fit", "--train", train, "--test", test, "--features", "128", "--seed", "1", "--json"}, extra...)
		out, err := run(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r["test_accuracy"].(float64)
	}
	if a, b := acc(), acc("--stream"); a != b {
		t.Errorf("streamed fit accuracy %v, in-memory %v", b, a)
	}
	if _, err := run(t, "fit", "--train", train, "--stream"); err == nil || !strings.Contains(err.Error(), "--test") {
		t.Errorf("--stream without --test: %v", err)
	}
}

func TestFitLIBSVM(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < 200; i++ {
		x1, x2 := float64(i%10)/10, float64(i%7)/7
		label := 0
		if x1+x2 > 0.9 {
			label = 1
		}
		b.WriteString(strings.Join([]string{itoa(label), "1:" + ftoa(x1), "2:" + ftoa(x2)}, " ") + "\n")
	}
	path := write(t, dir, "data.svm", b.String())
	out, err := run(t, "fit", "--train", path, "--test", path, "--features", "64", "--gamma", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if acc := r["test_accuracy"].(float64); acc < 0.9 {
		t.Errorf("LIBSVM fit accuracy %v", acc)
	}
	bad := write(t, dir, "bad.svm", "1 1:0.5 1:0.3\n")
	if _, err := run(t, "fit", "--train", bad); err == nil || !strings.Contains(err.Error(), "increasing") {
		t.Errorf("bad LIBSVM: %v", err)
	}
}

func itoa(i int) string     { return strconv.Itoa(i) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
