package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/catalog"
)

// clusterCSV writes n rows of three well-separated clusters in the plane
// (columns a, b, y, and a weight column w = weight(label) unless weight is
// nil): row i of cluster and label i mod 3, at a distance of 0.5 from its
// centre.
func clusterCSV(t *testing.T, dir, name string, n, phase int, weight func(label int) int) string {
	t.Helper()
	centres := [3][2]float64{{0, 0}, {6, 0}, {0, 6}}
	var b strings.Builder
	b.WriteString("a,b,y")
	if weight != nil {
		b.WriteString(",w")
	}
	b.WriteByte('\n')
	for i := range n {
		c := i % 3
		a := float64(i*7 + phase)
		fmt.Fprintf(&b, "%v,%v,%d", centres[c][0]+0.5*math.Cos(a), centres[c][1]+0.5*math.Sin(a), c)
		if weight != nil {
			fmt.Fprintf(&b, ",%d", weight(c))
		}
		b.WriteByte('\n')
	}
	return write(t, dir, name, b.String())
}

// TestFitCalibrateStratifiedFolds (issue 22): fit --calibrate --folds 3 on
// labels i mod 3 — where folds i mod 3 would each hold one class and the
// probabilities contradicted the labels on 29 of 30 test rows — gives
// probabilities (predict --scores) whose largest is the label's on every
// test row; a class with fewer rows than folds is refused in one line.
func TestFitCalibrateStratifiedFolds(t *testing.T) {
	dir := t.TempDir()
	train := clusterCSV(t, dir, "train.csv", 30, 0, nil)
	test := clusterCSV(t, dir, "test.csv", 30, 1, nil)
	mpath := dir + "/m.kk"
	if _, err := run(t, "fit", "--train", train, "--calibrate", "--folds", "3", "--features", "64", "--gamma", "0.5",
		"--lambda", "0.001", "--seed", "1", "--model", mpath); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "predict", "--model", mpath, "--data", test, "--scores")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 31 || !strings.HasSuffix(lines[0], "prob0,prob1,prob2") {
		t.Fatalf("predict --scores wrote %d lines, header %q", len(lines), lines[0])
	}
	wrong := 0
	for i, line := range lines[1:] {
		f := strings.Split(line, ",")
		best, bestP := -1, -1.0
		for c, s := range f[len(f)-3:] {
			p, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("row %d: %v", i, err)
			}
			if p > bestP {
				best, bestP = c, p
			}
		}
		if best != i%3 {
			wrong++
		}
	}
	if wrong > 0 {
		t.Errorf("the calibrated probabilities contradict %d of 30 test labels", wrong)
	}
	_, err = run(t, "fit", "--train", train, "--calibrate", "--folds", "11", "--features", "16")
	if err == nil || !strings.Contains(err.Error(), "11 folds needs at least 11 rows of positive weight in each class, class 0 has 10") ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("11 folds of classes of 10 rows: error %v", err)
	}
}

// TestFitOnePositiveClass (issue 22): class weights, or a weight column,
// that leave one class alone with rows of positive weight are refused, in
// memory and streamed, as a training set of one label is.
func TestFitOnePositiveClass(t *testing.T) {
	dir := t.TempDir()
	plain := clusterCSV(t, dir, "plain.csv", 30, 0, nil)
	onlyTwo := clusterCSV(t, dir, "w.csv", 30, 0, func(label int) int { return btoi(label == 2) })
	test := clusterCSV(t, dir, "test.csv", 30, 1, nil)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"class weights", []string{"--train", plain, "--class-weight", "0=0,1=0"}},
		{"class weights, streamed", []string{"--train", plain, "--class-weight", "0=0,1=0", "--stream", "--test", test}},
		{"weight column", []string{"--train", onlyTwo, "--weight-column", "w", "--label", "y"}},
		{"weight column, streamed", []string{"--train", onlyTwo, "--weight-column", "w", "--label", "y", "--stream", "--test", test}},
	} {
		_, err := run(t, append([]string{"fit", "--features", "16"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), "only class 2 has rows of positive weight") {
			t.Errorf("%s: error %v, want the refusal of one class of positive weight", c.name, err)
		}
	}
}

// btoi is 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestFitStreamFoldCount (issue 22): a streamed k-fold selection with
// more folds than rows is refused after the first pass, before the
// per-fold statistics are allocated (a million folds took all memory).
func TestFitStreamFoldCount(t *testing.T) {
	dir := t.TempDir()
	train := clusterCSV(t, dir, "train.csv", 90, 0, nil)
	test := clusterCSV(t, dir, "test.csv", 30, 1, nil)
	_, err := run(t, "fit", "--train", train, "--test", test, "--stream", "--select", "kfold", "--folds", "1000", "--features", "8")
	if err == nil || !strings.Contains(err.Error(), "got 1000 folds for 90 rows") {
		t.Errorf("1000 folds of 90 streamed rows: error %v", err)
	}
}

// TestMapsCommand (issue 22): maps lists every map of the registry, and an
// unknown --map is a short line that points to it, for fit and transform
// (it quoted the list of maps, cut mid-name at 300 bytes).
func TestMapsCommand(t *testing.T) {
	out, err := run(t, "maps")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range catalog.Default().Names() {
		if !strings.Contains(out, "\n"+name+" ") {
			t.Errorf("maps does not list %q", name)
		}
	}
	if !strings.Contains(out, "angular") || !strings.Contains(out, "query/key pair") {
		t.Error("maps does not mark the asymmetric maps")
	}
	dir := t.TempDir()
	train := clusterCSV(t, dir, "train.csv", 30, 0, nil)
	const want = "unknown map \"nosuch\"; `kernelkit maps` names them"
	for _, args := range [][]string{
		{"fit", "--train", train, "--map", "nosuch"},
		{"transform", "--data", train, "--label", "y", "--map", "nosuch"},
	} {
		if _, err := run(t, args...); err == nil || err.Error() != want {
			t.Errorf("%s --map nosuch: error %v, want %q", args[0], err, want)
		}
	}
	if _, err := run(t, "fit", "--train", train, "--map", strings.Repeat("x", 500)); err == nil || len(err.Error()) > 100 {
		t.Errorf("a 500-byte map name: error of %d bytes", len(err.Error()))
	}
}
