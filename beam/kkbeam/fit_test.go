package kkbeam

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
)

// runner is the Beam runner of the pipeline tests: Prism, the SDK's local
// portable runner, which encodes every element and accumulator between
// stages as a cluster would.
var runner = flag.String("kkbeam.runner", "prism", "Beam runner of the pipeline tests")

func TestMain(m *testing.M) {
	flag.Parse()
	beamlog.LogLevel = "warn" // not Prism's progress lines

	beam.Init()
	os.Exit(m.Run())
}

// testRows is the number of letter rows the pipeline tests fit.
const testRows = 4000

// letterRows returns the first n rows of the embedded letter data.
func letterRows(n int) *data.Dataset {
	all := data.Letter()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	ds := all.Subset(idx)
	ds.Names, ds.Label = all.Names, all.Label
	return ds
}

// writeShards writes ds as CSV to shards files dir/part-NN.csv of about
// equal size, in order, and returns the glob matching them.
func writeShards(t *testing.T, dir string, ds *data.Dataset, shards int) string {
	t.Helper()
	n := ds.Rows()
	for s := range shards {
		lo, hi := s*n/shards, (s+1)*n/shards
		writeCSV(t, filepath.Join(dir, fmt.Sprintf("part-%02d.csv", s)), ds, lo, hi)
	}
	return filepath.Join(dir, "part-*.csv")
}

// writeCSV writes rows lo..hi of ds (features, then the label) with a
// header row, numbers in shortest round-trip form.
func writeCSV(t *testing.T, path string, ds *data.Dataset, lo, hi int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	if err := w.Write(append(slices.Clone(ds.Names), ds.Label)); err != nil {
		t.Fatal(err)
	}
	for i := lo; i < hi; i++ {
		var rec []string
		for _, v := range ds.X.RawRowView(i) {
			rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		rec = append(rec, strconv.FormatFloat(ds.Y[i], 'g', -1, 64))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// relDiff returns max|a−b| / max|b| over the entries.
func relDiff(a, b []float64) float64 {
	var num, den float64
	for i := range b {
		num = math.Max(num, math.Abs(a[i]-b[i]))
		den = math.Max(den, math.Abs(b[i]))
	}
	if den == 0 {
		return num
	}
	return num / den
}

// compareModels checks that got, the Beam model, equals want on the rows
// x: same task, classes, columns and λ; scaler, weights and intercept
// within tol relative (max-norm); the same predicted class for every row
// (regression: predictions within tol). It returns the weights' relative
// difference.
func compareModels(t *testing.T, name string, got, want *model.Model, x *mat.Dense, tol float64) float64 {
	t.Helper()
	if got.Task != want.Task || got.Classes != want.Classes || !slices.Equal(got.Columns, want.Columns) || got.TrainRows != want.TrainRows {
		t.Errorf("%s: task %s/%d columns %v rows %d, want %s/%d %v %d", name, got.Task, got.Classes, got.Columns, got.TrainRows,
			want.Task, want.Classes, want.Columns, want.TrainRows)
	}
	if got.Linear.Lambda != want.Linear.Lambda || got.Linear.Jitter != want.Linear.Jitter {
		t.Errorf("%s: λ %v (jitter %v), want %v (%v)", name, got.Linear.Lambda, got.Linear.Jitter, want.Linear.Lambda, want.Linear.Jitter)
	}
	if (got.Scaler == nil) != (want.Scaler == nil) {
		t.Fatalf("%s: scaler %v, want %v", name, got.Scaler != nil, want.Scaler != nil)
	}
	if got.Scaler != nil {
		// The moments merged in another order: within 2γ_n of each
		// other relative to the columns' largest entries (see
		// weightBound), far below tol.
		if d := relDiff(got.Scaler.Mean, want.Scaler.Mean); d > tol {
			t.Errorf("%s: scaler means differ by %.3g relative", name, d)
		}
		if d := relDiff(got.Scaler.Scale, want.Scaler.Scale); d > tol {
			t.Errorf("%s: scaler scales differ by %.3g relative", name, d)
		}
	}
	gm, gok := got.Map.(*features.Map)
	wm, wok := want.Map.(*features.Map)
	if gok != wok {
		t.Errorf("%s: maps %T and %T", name, got.Map, want.Map)
	} else if gok {
		gs, ws := gm.Spec(), wm.Spec()
		if !slices.Equal(gs.W, ws.W) || !slices.Equal(gs.B, ws.B) || gs.Gamma != ws.Gamma {
			t.Errorf("%s: feature maps differ", name)
		}
	}
	if len(got.Scores) != len(want.Scores) {
		t.Errorf("%s: %d selection scores, want %d", name, len(got.Scores), len(want.Scores))
	} else if d := relDiff(got.Scores, want.Scores); d > tol {
		t.Errorf("%s: selection scores differ by %.3g relative", name, d)
	}
	dw := relDiff(got.Linear.W.RawMatrix().Data, want.Linear.W.RawMatrix().Data)
	if dw > tol {
		t.Errorf("%s: weights differ by %.3g relative, want ≤ %g", name, dw, tol)
	}
	if d := relDiff(got.Linear.B, want.Linear.B); d > tol {
		t.Errorf("%s: intercepts differ by %.3g relative", name, d)
	}
	gp, err := got.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	wp, err := want.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	if want.Task == model.Classification {
		gc, wc := argmax(gp), argmax(wp)
		diff := 0
		for i := range gc {
			if gc[i] != wc[i] {
				diff++
			}
		}
		if diff > 0 {
			t.Errorf("%s: %d of %d predicted classes differ", name, diff, len(gc))
		}
	} else if d := relDiff(gp.RawMatrix().Data, wp.RawMatrix().Data); d > tol {
		t.Errorf("%s: predictions differ by %.3g relative", name, d)
	}
	return dw
}

func argmax(s *mat.Dense) []int {
	n, k := s.Dims()
	out := make([]int, n)
	for i := range n {
		for j := 1; j < k; j++ {
			if s.At(i, j) > s.At(i, out[i]) {
				out[i] = j
			}
		}
	}
	return out
}

// streamOpener returns model.FitStream's opener over one CSV file, as
// kernelkit fit --stream makes it.
func streamOpener(t *testing.T, path string) (model.Opener, []string) {
	t.Helper()
	f, err := data.OpenCSV(path, data.CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	names := f.Names()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return func() (model.Batches, func() error, error) {
		f, err := data.OpenCSV(path, data.CSVOptions{})
		if err != nil {
			return nil, nil, err
		}
		return f, f.Close, nil
	}, names
}

// TestFitEqualsInMemory is the acceptance test of the Beam fit: the first
// 4000 letter rows split into 8 CSV shards give, through the two Beam
// pipelines, the model model.Fit and model.FitStream give on the same
// rows in one piece — the same map, λ and classes, weights within the
// rounding bound of weightBound (the sums are added in another order),
// the same predicted class for every row — with λ chosen by GCV and by
// 5-fold cross-validation (whose fold assignment must follow the rows'
// global order), and with the statistics merged by a fan-out tree after a
// reshuffle.
func TestFitEqualsInMemory(t *testing.T) {
	dir := t.TempDir()
	ds := letterRows(testRows)
	glob := writeShards(t, dir, ds, 8)
	whole := filepath.Join(t.TempDir(), "all.csv")
	writeCSV(t, whole, ds, 0, ds.Rows())
	cfg := features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 256, Seed: 7}
	for _, tc := range []struct {
		name string
		opt  model.Options
		run  RunOptions
	}{
		{"gcv", model.Options{Task: model.Classification, Features: cfg, Select: "gcv", Standardize: true}, RunOptions{}},
		{"kfold", model.Options{Task: model.Classification, Features: cfg, Select: "kfold", Folds: 5, Standardize: true}, RunOptions{}},
		{"lambda-tree", model.Options{Task: model.Classification, Features: cfg, Lambda: 0.01, Standardize: true},
			RunOptions{Fanout: 3, Reshuffle: true, Chunk: 300}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			tc.run.Runner = *runner
			res, err := Fit(ctx, FitOptions{Input: glob, Model: tc.opt, Run: tc.run})
			if err != nil {
				t.Fatal(err)
			}
			if res.Files != 8 || res.Rows != testRows || res.Bad != 0 {
				t.Errorf("read %d files, %d rows, %d bad; want 8, %d, 0", res.Files, res.Rows, res.Bad, testRows)
			}
			want, err := model.Fit(ctx, tc.opt, ds)
			if err != nil {
				t.Fatal(err)
			}
			tol := weightBound(t, want, ds)
			dw := compareModels(t, "Beam vs model.Fit", res.Model, want, ds.X, tol)
			open, names := streamOpener(t, whole)
			ws, err := model.FitStream(ctx, tc.opt, open, names)
			if err != nil {
				t.Fatal(err)
			}
			ws.Label = want.Label // FitStream does not record the label name
			ds2 := compareModels(t, "Beam vs model.FitStream", res.Model, ws, ds.X, tol)
			t.Logf("%s: λ=%g, weights differ from model.Fit by %.2g and from model.FitStream by %.2g (relative, max norm)",
				tc.name, res.Model.Linear.Lambda, dw, ds2)
		})
	}
}

// TestBadRows: a bad cell fails the fit with data.Open's message for that
// file (file name, line and column); with a dead-letter file the bad rows
// are written there, counted, and the model is model.Fit's on the other
// rows.
func TestBadRows(t *testing.T) {
	dir := t.TempDir()
	ds := letterRows(800)
	glob := writeShards(t, dir, ds, 4)
	// Row 30 of shard 1 (line 32) gets a non-number; shard 3 gets a line
	// with a missing field at line 5.
	corrupt(t, filepath.Join(dir, "part-01.csv"), 32, func(s string) string { return "x1" + s[strings.IndexByte(s, ','):] })
	corrupt(t, filepath.Join(dir, "part-03.csv"), 5, func(s string) string { return s[strings.IndexByte(s, ',')+1:] })
	opt := model.Options{Task: model.Classification, Features: features.Config{Kernel: "rbf", Gamma: 0.05, Features: 64, Seed: 1},
		Lambda: 0.1, Standardize: true}
	ctx := context.Background()
	_, err := Fit(ctx, FitOptions{Input: glob, Model: opt, Run: RunOptions{Runner: *runner}})
	_, want := data.Open(filepath.Join(dir, "part-01.csv"), data.OpenOptions{})
	if err == nil || want == nil || !strings.HasPrefix(err.Error(), want.Error()+" (and 1 more bad rows") {
		t.Fatalf("bad rows: got error %v, want %v (and 1 more …)", err, want)
	}
	t.Logf("error: %v", err)

	dead := filepath.Join(t.TempDir(), "bad.csv")
	res, err := Fit(ctx, FitOptions{Input: glob, Model: opt, DeadLetter: dead, Run: RunOptions{Runner: *runner}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bad != 2 || res.Rows != 798 {
		t.Errorf("%d rows and %d bad, want 798 and 2", res.Rows, res.Bad)
	}
	f, err := os.Open(dead)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[1][0] != filepath.Join(dir, "part-01.csv") || recs[1][1] != "32" ||
		recs[2][0] != filepath.Join(dir, "part-03.csv") || recs[2][1] != "5" || !strings.Contains(recs[2][2], "line 5 has 16 fields, header has 17") {
		t.Errorf("dead letters %q", recs)
	}
	// Rows 30 of shard 1 (global 200+30) and 3 of shard 3 (600+3) dropped.
	keep := []int{}
	for i := range ds.Rows() {
		if i != 230 && i != 603 {
			keep = append(keep, i)
		}
	}
	rest := ds.Subset(keep)
	rest.Names, rest.Label = ds.Names, ds.Label
	wantM, err := model.Fit(ctx, opt, rest)
	if err != nil {
		t.Fatal(err)
	}
	compareModels(t, "dead letters", res.Model, wantM, rest.X, weightBound(t, wantM, rest))
}

// corrupt rewrites line no (1-based) of the file at path with fn.
func corrupt(t *testing.T, path string, no int, fn func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	lines[no-1] = fn(lines[no-1])
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeLIBSVM writes rows lo..hi of ds in LIBSVM form, zeros left out.
func writeLIBSVM(t *testing.T, path string, ds *data.Dataset, lo, hi int) {
	t.Helper()
	var b strings.Builder
	for i := lo; i < hi; i++ {
		b.WriteString(strconv.FormatFloat(ds.Y[i], 'g', -1, 64))
		for j, v := range ds.X.RawRowView(i) {
			if v != 0 {
				fmt.Fprintf(&b, " %d:%s", j+1, strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFitLIBSVM: LIBSVM shards whose largest indices differ (the last
// column is zero in all but the last shard, so the early shards are
// narrower) fit the model of data.ReadLIBSVM's reading of the whole file,
// a regression here with λ by GCV and no standardisation.
func TestFitLIBSVM(t *testing.T) {
	ds := letterRows(600)
	n, d := ds.X.Dims()
	for i := range n - 50 {
		ds.X.Set(i, d-1, 0)
	}
	dir := t.TempDir()
	for s := range 3 {
		writeLIBSVM(t, filepath.Join(dir, fmt.Sprintf("p%d.svm", s)), ds, s*n/3, (s+1)*n/3)
	}
	whole := filepath.Join(t.TempDir(), "all.svm")
	writeLIBSVM(t, whole, ds, 0, n)
	all, err := data.Open(whole, data.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opt := model.Options{Task: model.Regression, Features: features.Config{Kernel: "rbf", Gamma: 0.01, Features: 128, Seed: 3}, Select: "gcv"}
	res, err := Fit(context.Background(), FitOptions{Input: filepath.Join(dir, "*.svm"), Model: opt, Run: RunOptions{Runner: *runner, Chunk: 64}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := model.Fit(context.Background(), opt, all)
	if err != nil {
		t.Fatal(err)
	}
	if res.Model.Map.InputDim() != d {
		t.Fatalf("input width %d, want %d", res.Model.Map.InputDim(), d)
	}
	dw := compareModels(t, "LIBSVM", res.Model, want, all.X, weightBound(t, want, all))
	t.Logf("LIBSVM regression: weights differ by %.2g relative", dw)
}

// TestFitErrors: what the first pass finds stops the fit with a message
// naming the file: differing columns, a label that is no class index, a
// single class, no rows.
func TestFitErrors(t *testing.T) {
	ctx := context.Background()
	opt := model.Options{Task: model.Classification, Features: features.Config{Kernel: "rbf", Gamma: 1, Features: 8}, Lambda: 1}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"columns", map[string]string{"a.csv": "p,q,y\n1,2,0\n", "b.csv": "q,p,y\n1,2,1\n"},
			`the files' columns differ: a.csv has the columns "p", "q" and label "y", but b.csv has "q", "p"`},
		{"class", map[string]string{"a.csv": "p,y\n1,0\n2,1\n", "b.csv": "p,y\n1,0\n2,1\n3,2.5\n"}, "b.csv: line 4: model: label 2.5 is not a class index"},
		{"one class", map[string]string{"a.csv": "p,y\n1,3\n", "b.csv": "p,y\n2,3\n"}, "every training label is 3"},
		{"no rows", map[string]string{"a.csv": "p,y\n"}, "model: no training rows"},
		{"header", map[string]string{"a.csv": "p,y\n1,0\n2,1\n", "b.csv": ""}, "b.csv: data: CSV is empty (no header row)"},
	} {
		dir := t.TempDir()
		for name, text := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Fit(ctx, FitOptions{Input: filepath.Join(dir, "*.csv"), Model: opt, Run: RunOptions{Runner: *runner}})
		if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), dir+"/", ""), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := Fit(ctx, FitOptions{Input: filepath.Join(t.TempDir(), "*.csv"), Model: opt}); err == nil || !strings.Contains(err.Error(), "no file matches") {
		t.Errorf("no files: %v", err)
	}
	if _, err := Fit(ctx, FitOptions{Input: "x", Model: opt, Run: RunOptions{Runner: "flink"}}); err == nil || !strings.Contains(err.Error(), "needs a statistics directory") {
		t.Errorf("flink without --stats-dir: %v", err)
	}
	if _, err := Fit(ctx, FitOptions{Input: "x", Model: opt, Run: RunOptions{Runner: "nope"}}); err == nil || !strings.Contains(err.Error(), `unknown runner "nope"`) {
		t.Errorf("unknown runner: %v", err)
	}
}
