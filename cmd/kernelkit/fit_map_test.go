package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/sampler"
)

// TestFitMap: fit --map nystrom/kmeans --features 64 writes a model file
// whose predictions (predict --scores) are bit for bit those of the same
// fit made in process, and the same seed gives the same file; the fit
// reports the map and its test accuracy, which predict reproduces. An
// asymmetric map (angular) is refused, as are --map with --kernel, --form
// or --exact; a streamed fit with --map works.
func TestFitMap(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 1500)
	test := letterCSV(t, dir, "test.csv", 19000, 19500)
	m1, m2 := filepath.Join(dir, "m1.kk"), filepath.Join(dir, "m2.kk")
	args := []string{"fit", "--train", train, "--test", test, "--map", "nystrom/kmeans", "--features", "64", "--seed", "7", "--json"}
	out, err := run(t, append(args, "--model", m1)...)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("fit --json printed %q: %v", out, err)
	}
	acc, _ := r["test_accuracy"].(float64)
	t.Logf("nystrom/kmeans, D=64: test accuracy %.4f", acc)
	if r["map"] != "nystrom/kmeans" || r["features"] != 64.0 || !(acc > 0.5) {
		t.Errorf("fit reported map %v, features %v, test accuracy %v", r["map"], r["features"], r["test_accuracy"])
	}
	if _, err := run(t, append(args, "--model", m2)...); err != nil {
		t.Fatal(err)
	}
	if b1, b2 := must(os.ReadFile(m1)), must(os.ReadFile(m2)); !bytes.Equal(b1, b2) {
		t.Error("the same seed gave different model files")
	}

	// The same fit in process.
	tr, err := data.Open(train, data.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	te, err := data.Open(test, data.OpenOptions{Label: tr.Label, Columns: tr.Names})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sampler.ByName("iid")
	if err != nil {
		t.Fatal(err)
	}
	cfg := model.Job{Train: tr, Test: te, Names: tr.Names, MapName: "nystrom/kmeans", Registry: catalog.Default(),
		Model:      model.Options{Task: model.Classification, Lambda: 0.5, Standardize: true, Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 64, Sampler: s, Seed: 7}},
		MapOptions: features.Options{InputDim: 16, Features: 64, Gamma: 1.0 / 16, Sampler: s, Seed: 7}}
	_, m, err := model.RunJob(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := m.Evaluate(te, 0)
	if err != nil {
		t.Fatal(err)
	}
	pout, err := run(t, "predict", "--model", m1, "--data", test, "--scores")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(pout), "\n")[1:]
	if len(lines) != te.Rows() {
		t.Fatalf("%d predictions for %d rows", len(lines), te.Rows())
	}
	correct := 0
	for i, line := range lines {
		f := strings.Split(line, ",")
		for j, x := range f[1:] {
			v, err := strconv.ParseFloat(x, 64)
			if err != nil || v != ev.Scores.At(i, j) {
				t.Fatalf("row %d class %d: predict wrote %s, the fitted model gives %v", i, j, x, ev.Scores.At(i, j))
			}
		}
		if p, err := strconv.Atoi(f[0]); err == nil && float64(p) == te.Y[i] {
			correct++
		}
	}
	if got := float64(correct) / float64(len(lines)); got != acc {
		t.Errorf("predict accuracy %v, fit reported %v", got, acc)
	}

	// Refusals.
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--map", "angular"}, "asymmetric"},
		{[]string{"--map", "nystrom", "--kernel", "rbf"}, "--kernel"},
		{[]string{"--map", "nystrom", "--form", "cos"}, "--form"},
		{[]string{"--map", "nystrom", "--exact"}, "--exact"},
		{[]string{"--map", "no-such-map"}, "unknown map"},
	} {
		_, err := run(t, append([]string{"fit", "--train", train, "--features", "32"}, c.extra...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("fit %v: error %v, want one mentioning %q", c.extra, err, c.want)
		}
	}

	// Streamed rows: the landmarks come from a reservoir sample.
	out, err = run(t, "fit", "--train", train, "--test", test, "--map", "nystrom/kmeans", "--features", "64", "--seed", "7", "--stream", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rs map[string]any
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatal(err)
	}
	if a, _ := rs["test_accuracy"].(float64); !(a > 0.5) {
		t.Errorf("streamed fit with --map: test accuracy %v", rs["test_accuracy"])
	}
}

// TestTransformMap: transform --map builds the registry's map on the rows
// it transforms (Nyström landmarks from them) and writes D columns per row;
// asymmetric maps, --scaled without log-scales, --map with --kernel and
// --map with --model are refused.
func TestTransformMap(t *testing.T) {
	dir := t.TempDir()
	rows := letterCSV(t, dir, "rows.csv", 0, 200)
	out, err := run(t, "transform", "--data", rows, "--label", "label", "--map", "nystrom/kmeans", "--features", "16", "--seed", "2")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 201 || len(strings.Split(lines[1], ",")) != 16 {
		t.Errorf("transform --map wrote %d lines of %d columns", len(lines), len(strings.Split(lines[1], ",")))
	}
	if out2, err := run(t, "transform", "--data", rows, "--label", "label", "--map", "nystrom/kmeans", "--features", "16", "--seed", "2"); err != nil || out2 != out {
		t.Errorf("the same seed gave other features (%v)", err)
	}
	if out, err := run(t, "transform", "--data", rows, "--label", "label", "--map", "positive", "--features", "8", "--scaled"); err != nil || !strings.Contains(out, "log_scale") {
		t.Errorf("transform --map positive --scaled: %v", err)
	}
	for _, extra := range [][]string{{"--map", "angular"}, {"--map", "nystrom", "--scaled"}, {"--map", "positive", "--kernel", "softmax"},
		{"--map", "positive", "--model", filepath.Join(dir, "none.kk")}} {
		if _, err := run(t, append([]string{"transform", "--data", rows, "--label", "label", "--features", "8"}, extra...)...); err == nil {
			t.Errorf("transform %v accepted", extra)
		}
	}
}
