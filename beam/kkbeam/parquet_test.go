package kkbeam

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
)

// parquetGroupRows is the row-group size of the tests' Parquet shards: the
// smallest data.WriteParquetRowGroups writes, so that shards of a few
// thousand rows have several row groups and batches cross their bounds.
const parquetGroupRows = 1024

// tableColumns returns the columns of ds as a table: the features, then
// the weight column, the label (an integer column for a classification's
// classes) and the target columns, as they are set.
func tableColumns(ds *data.Dataset, lo int, intLabel bool) []data.ParquetColumn {
	var cols []data.ParquetColumn
	for j, name := range ds.Names {
		cols = append(cols, data.ParquetColumn{Name: name, Value: func(i int) float64 { return ds.X.At(lo+i, j) }})
	}
	if ds.Weights != nil {
		cols = append(cols, data.ParquetColumn{Name: ds.WeightColumn, Value: func(i int) float64 { return ds.Weights[lo+i] }})
	}
	if ds.Y != nil {
		cols = append(cols, data.ParquetColumn{Name: ds.Label, Int: intLabel, Value: func(i int) float64 { return ds.Y[lo+i] }})
	}
	for k, name := range ds.TargetNames {
		cols = append(cols, data.ParquetColumn{Name: name, Value: func(i int) float64 { return ds.Targets.At(lo+i, k) }})
	}
	return cols
}

// writeParquetShards writes ds to shards Parquet files dir/part-NN.parquet
// of about equal size, in order, in row groups of parquetGroupRows rows,
// and returns the glob matching them.
func writeParquetShards(t *testing.T, dir string, ds *data.Dataset, shards int, intLabel bool) string {
	t.Helper()
	n := ds.Rows()
	for s := range shards {
		lo, hi := s*n/shards, (s+1)*n/shards
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%02d.parquet", s)))
		if err != nil {
			t.Fatal(err)
		}
		if err := data.WriteParquetRowGroups(f, hi-lo, parquetGroupRows, tableColumns(ds, lo, intLabel), nil); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "part-*.parquet")
}

// writeTableCSV writes rows lo..hi of ds as CSV with the columns of
// tableColumns.
func writeTableCSV(t *testing.T, path string, ds *data.Dataset, lo, hi int) {
	t.Helper()
	cols := tableColumns(ds, lo, false)
	var b strings.Builder
	for j, c := range cols {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c.Name)
	}
	b.WriteByte('\n')
	for i := range hi - lo {
		for j, c := range cols {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, c.Value(i))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeTableShards is writeShards for tableColumns's columns.
func writeTableShards(t *testing.T, dir string, ds *data.Dataset, shards int) string {
	t.Helper()
	n := ds.Rows()
	for s := range shards {
		writeTableCSV(t, filepath.Join(dir, fmt.Sprintf("part-%02d.csv", s)), ds, s*n/shards, (s+1)*n/shards)
	}
	return filepath.Join(dir, "part-*.csv")
}

// TestReadParquetAsCSV: a Parquet file of several row groups gives, chunk
// by chunk, the batches ReadFile gives for the same table as CSV — the
// same rows, lines (rows of the file), header, weights and targets, and
// the same class counts before each batch — under each choice of columns.
func TestReadParquetAsCSV(t *testing.T) {
	ds := letterRows(2500)
	ds.Weights, ds.WeightColumn = make([]float64, ds.Rows()), "w"
	for i := range ds.Weights {
		ds.Weights[i] = float64(i % 3)
	}
	dir := t.TempDir()
	pq := filepath.Join(dir, "t.parquet")
	f, err := os.Create(pq)
	if err != nil {
		t.Fatal(err)
	}
	if err := data.WriteParquetRowGroups(f, ds.Rows(), parquetGroupRows, tableColumns(ds, 0, false), nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	csvPath := filepath.Join(dir, "t.csv")
	writeTableCSV(t, csvPath, ds, 0, ds.Rows())
	raw, err := os.ReadFile(pq)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []Source{
		{Label: ds.Label, Weight: "w", Chunk: 700, CountClasses: true},
		{Weight: "w", Chunk: 1024},
		{Targets: []string{"x.box", ds.Label}, Weight: "w", Chunk: 999},
		{Columns: slices.Clone(ds.Names), Label: ds.Label, Weight: "w", Width: ds.Cols(), Chunk: 2048},
		{NoLabel: true, Chunk: 5000},
	} {
		var got []*Batch
		err := ReadParquet("t.parquet", strings.NewReader(string(raw)), int64(len(raw)), src, func(b *Batch) error {
			got = append(got, b)
			return nil
		})
		if err != nil {
			t.Fatalf("%+v: %v", src, err)
		}
		want, bads, err := readAllBatches(t, "t.parquet", string(text), src)
		if err != nil || len(bads) > 0 {
			t.Fatalf("%+v: CSV: %v, %d bad rows", src, err, len(bads))
		}
		if len(got) != len(want) {
			t.Fatalf("%+v: %d batches, want %d", src, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			// The CSV file's line 1 is its header: its row i is line i+1.
			for j := range w.Lines {
				w.Lines[j]--
			}
			if g.Start != w.Start || g.Cols != w.Cols || !slices.Equal(g.Lines, w.Lines) || !slices.Equal(g.X, w.X) ||
				!slices.Equal(g.Y, w.Y) || !slices.Equal(g.Weights, w.Weights) || !slices.Equal(g.Targets, w.Targets) ||
				!slices.Equal(g.Before, w.Before) || (g.Header == nil) != (w.Header == nil) {
				t.Fatalf("%+v: batch %d differs from the CSV reader's", src, i)
			}
			if g.Header != nil && (!slices.Equal(g.Header.Columns, w.Header.Columns) || g.Header.Label != w.Header.Label ||
				g.Header.Weight != w.Header.Weight || !slices.Equal(g.Header.Targets, w.Header.Targets)) {
				t.Fatalf("%+v: header %+v, want %+v", src, g.Header, w.Header)
			}
		}
	}
	// A missing weight column is the matcher's error, as for CSV.
	err = ReadParquet("t.parquet", strings.NewReader(string(raw)), int64(len(raw)), Source{Weight: "nope"}, func(*Batch) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `t.parquet: data: CSV has no weight column "nope"`) {
		t.Errorf("missing weight column: %v", err)
	}
}

// TestIsParquet: the format a Beam fit reads a file in, as data.Open
// chooses it.
func TestIsParquet(t *testing.T) {
	open := func(s string) func() (io.ReadCloser, error) {
		return func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }
	}
	for _, tc := range []struct {
		name, format, head string
		want, err          bool
	}{
		{"a.parquet", "", "", true, false},
		{"a.PARQUET", "auto", "", true, false},
		{"a.csv", "", "PAR1", false, false},
		{"a.dat", "", "PAR1\x15\x04", true, false},
		{"a.dat", "", "a,b\n1,2\n", false, false},
		{"a.dat", "", "PA", false, false},
		{"a.dat", "parquet", "", true, false},
		{"a.parquet", "csv", "", false, false},
		{"a.parquet.gz", "parquet", "", false, true},
	} {
		got, err := isParquet(tc.name, tc.format, open(tc.head))
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s (%q): %v, %v; want %v, error %v", tc.name, tc.format, got, err, tc.want, tc.err)
		}
	}
}

// TestFitParquet is the acceptance test of Parquet shards: the first 4000
// letter rows in 3 Parquet shards of 2 row groups each give the model
// model.Fit gives on the rows in memory, and the Beam fit of the same rows
// as CSV shards, within weightBound (the same map, λ and classes; every
// predicted class the same) — with λ by GCV, and by 5-fold
// cross-validation in batches of 300 rows (crossing the row groups'
// bounds), whose folds follow the rows' global order.
func TestFitParquet(t *testing.T) {
	ds := letterRows(testRows)
	pqGlob := writeParquetShards(t, t.TempDir(), ds, 3, true)
	csvGlob := writeShards(t, t.TempDir(), ds, 3)
	cfg := features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 256, Seed: 7}
	for _, tc := range []struct {
		name string
		opt  model.Options
		run  RunOptions
	}{
		{"gcv", model.Options{Task: model.Classification, Features: cfg, Select: "gcv", Standardize: true}, RunOptions{}},
		{"kfold", model.Options{Task: model.Classification, Features: cfg, Select: "kfold", Folds: 5, Standardize: true}, RunOptions{Chunk: 300}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			tc.run.Runner = *runner
			res, err := Fit(ctx, FitOptions{Input: pqGlob, Model: tc.opt, Run: tc.run})
			if err != nil {
				t.Fatal(err)
			}
			if res.Files != 3 || res.Rows != testRows || res.Bad != 0 {
				t.Errorf("read %d files, %d rows, %d bad; want 3, %d, 0", res.Files, res.Rows, res.Bad, testRows)
			}
			want, err := model.Fit(ctx, tc.opt, ds)
			if err != nil {
				t.Fatal(err)
			}
			tol := weightBound(t, want, ds)
			dw := compareModels(t, "Parquet on Beam vs model.Fit", res.Model, want, ds.X, tol)
			rc, err := Fit(ctx, FitOptions{Input: csvGlob, Model: tc.opt, Run: tc.run})
			if err != nil {
				t.Fatal(err)
			}
			dc := compareModels(t, "Parquet vs CSV on Beam", res.Model, rc.Model, ds.X, tol)
			t.Logf("%s: λ=%g, weights differ from model.Fit by %.2g and from the CSV shards' Beam fit by %.2g (relative, max norm; bound %.2g)",
				tc.name, res.Model.Linear.Lambda, dw, dc, tol)
		})
	}
}

// TestFitParquetFormat: --format parquet (and auto, by the PAR1 magic)
// reads files of any name as Parquet; Parquet read as CSV, a missing
// label column and a NaN fail the fit, the last two naming the file (and
// the NaN's row group, column and row).
func TestFitParquetFormat(t *testing.T) {
	ds := letterRows(1200)
	dir := t.TempDir()
	writeParquetShards(t, dir, ds, 2, true)
	for _, name := range []string{"part-00.parquet", "part-01.parquet"} {
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(dir, strings.TrimSuffix(name, ".parquet")+".dat")); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	opt := model.Options{Task: model.Classification, Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 64, Seed: 7}, Lambda: 0.01}
	for _, format := range []string{"parquet", "auto"} {
		res, err := Fit(ctx, FitOptions{Input: filepath.Join(dir, "part-*.dat"), Format: format, Model: opt, Run: RunOptions{Runner: *runner}})
		if err != nil {
			t.Fatalf("--format %s: %v", format, err)
		}
		if res.Rows != 1200 || !slices.Equal(res.Model.Columns, ds.Names) || res.Model.Label != ds.Label {
			t.Errorf("--format %s: %d rows, columns %v label %q", format, res.Rows, res.Model.Columns, res.Model.Label)
		}
	}
	_, err := Fit(ctx, FitOptions{Input: filepath.Join(dir, "part-*.dat"), Format: "csv", Model: opt, Run: RunOptions{Runner: *runner}})
	if err == nil {
		t.Error("Parquet read as CSV: no error")
	}
	_, err = Fit(ctx, FitOptions{Input: filepath.Join(dir, "part-*.dat"), Label: "nope", Format: "parquet", Model: opt, Run: RunOptions{Runner: *runner}})
	if err == nil || !strings.Contains(err.Error(), "part-00.dat: data: ") || !strings.Contains(err.Error(), "nope") {
		t.Errorf("a missing label column: %v", err)
	}
	// A NaN in the second row group of a shard fails the fit naming the
	// file, the row group, the column and the row.
	bad := filepath.Join(t.TempDir(), "bad.parquet")
	cols := tableColumns(ds, 0, true)
	cols[2].Value = func(i int) float64 {
		if i == 1100 {
			return math.NaN()
		}
		return ds.X.At(i, 2)
	}
	f, err := os.Create(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := data.WriteParquetRowGroups(f, ds.Rows(), parquetGroupRows, cols, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Fit(ctx, FitOptions{Input: bad, Model: opt, Run: RunOptions{Runner: *runner}})
	if err == nil || !strings.Contains(err.Error(), "bad.parquet: data: Parquet row group 2") || !strings.Contains(err.Error(), ds.Names[2]) ||
		!strings.Contains(err.Error(), "row 1101") {
		t.Errorf("a NaN: %v", err)
	}
}

// letterWeighted returns the first n letter rows with a weight column w:
// 0, 0.5, 1 or 2 by row, a quarter of the rows weighing nothing.
func letterWeighted(n int) *data.Dataset {
	ds := letterRows(n)
	ds.Weights, ds.WeightColumn = make([]float64, n), "w"
	for i := range ds.Weights {
		ds.Weights[i] = []float64{1, 0.5, 0, 2}[(i*7)%4]
	}
	return ds
}

// letterTargets returns the first n letter rows as a two-output
// regression: targets t0, the letter's class index, and t1, 2·x-box −
// y-box plus a tenth of the class, the features the other columns.
func letterTargets(n int) *data.Dataset {
	all := letterRows(n)
	ds := &data.Dataset{X: mat.NewDense(n, all.Cols()-2, nil), Names: all.Names[2:], Targets: mat.NewDense(n, 2, nil),
		TargetNames: []string{"t0", "t1"}}
	for i := range n {
		row := all.X.RawRowView(i)
		copy(ds.X.RawRowView(i), row[2:])
		ds.Targets.Set(i, 0, all.Y[i])
		ds.Targets.Set(i, 1, 2*row[0]-row[1]+all.Y[i]/10)
	}
	return ds
}

// TestFitWeightsTargets: a weight column (a quarter of the rows weighing
// nothing) and two target columns, read from Parquet shards by Beam,
// give the models model.Fit gives on the same rows in memory, within
// weightBound — a weighted classification with λ by 5-fold
// cross-validation, and a standardised two-output regression by GCV —
// and the weighted fit also from CSV shards.
func TestFitWeightsTargets(t *testing.T) {
	ctx := context.Background()
	cfg := features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 256, Seed: 7}
	t.Run("weights", func(t *testing.T) {
		ds := letterWeighted(testRows)
		opt := model.Options{Task: model.Classification, Features: cfg, Select: "kfold", Folds: 5, Standardize: true}
		want, err := model.Fit(ctx, opt, ds)
		if err != nil {
			t.Fatal(err)
		}
		tol := weightBound(t, want, ds)
		for _, glob := range []string{writeParquetShards(t, t.TempDir(), ds, 3, true), writeTableShards(t, t.TempDir(), ds, 3)} {
			res, err := Fit(ctx, FitOptions{Input: glob, Weight: "w", Model: opt, Run: RunOptions{Runner: *runner, Chunk: 500}})
			if err != nil {
				t.Fatal(err)
			}
			dw := compareModels(t, "weighted "+filepath.Ext(glob), res.Model, want, ds.X, tol)
			t.Logf("%s: λ=%g, weights differ by %.2g relative (bound %.2g)", filepath.Ext(glob), res.Model.Linear.Lambda, dw, tol)
		}
	})
	t.Run("targets", func(t *testing.T) {
		ds := letterTargets(testRows)
		opt := model.Options{Task: model.Regression, Features: cfg, Select: "gcv", Standardize: true}
		want, err := model.Fit(ctx, opt, ds)
		if err != nil {
			t.Fatal(err)
		}
		tol := weightBound(t, want, ds)
		glob := writeParquetShards(t, t.TempDir(), ds, 3, false)
		res, err := Fit(ctx, FitOptions{Input: glob, Targets: []string{"t0", "t1"}, Model: opt, Run: RunOptions{Runner: *runner}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Model.Targets, want.Targets) || res.Model.Label != "" {
			t.Errorf("targets %v label %q, want %v", res.Model.Targets, res.Model.Label, want.Targets)
		}
		dw := compareModels(t, "two targets", res.Model, want, ds.X, tol)
		t.Logf("λ=%g, weights differ by %.2g relative (bound %.2g)", res.Model.Linear.Lambda, dw, tol)
	})
}

// TestCalibrationFoldsWeighted: with weights (rows of weight zero among
// them) and a calibration's stratified folds, the folds the second pass
// gives each batch of each shard — from the class counts of the files
// before it and of its rows before it, and the rows of weight zero before
// it — are those model.Plan.Prepare gives the rows in one piece.
func TestCalibrationFoldsWeighted(t *testing.T) {
	ds := letterWeighted(3000)
	opt := model.Options{Task: model.Classification, Select: "kfold", Folds: 5, Calibrate: true}
	dir := t.TempDir()
	writeParquetShards(t, dir, ds, 3, true)
	src := Source{Weight: "w", Chunk: 333, CountClasses: true}
	var batches []*Batch
	prep, err := newPrep(model.Classification, false)
	if err != nil {
		t.Fatal(err)
	}
	for s := range 3 {
		name := filepath.Join(dir, fmt.Sprintf("part-%02d.parquet", s))
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		err = ReadParquet(name, strings.NewReader(string(raw)), int64(len(raw)), src, func(b *Batch) error {
			batches = append(batches, b)
			return prep.Add(b, model.Classification, false)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	plan, err := prep.Census.Plan(opt)
	if err != nil {
		t.Fatal(err)
	}
	c, err := model.NewCensus(opt)
	if err != nil {
		t.Fatal(err)
	}
	whole := &data.Batch{X: ds.X, Y: ds.Y, Weights: ds.Weights}
	if err := c.Add(whole); err != nil {
		t.Fatal(err)
	}
	wplan, err := c.Plan(opt)
	if err != nil {
		t.Fatal(err)
	}
	want, err := wplan.Prepare(whole, 0, make([]int, wplan.Classes))
	if err != nil {
		t.Fatal(err)
	}
	fn := rowsFn{Plan: plan, Offsets: map[string]int64{}, Before: map[string][]int64{}}
	mc, err := NewMapConfig(mustMap(t, ds.Cols()))
	if err != nil {
		t.Fatal(err)
	}
	fn.Map = mc
	var at int64
	total := make([]int64, plan.Classes)
	for s := range 3 {
		name := filepath.Join(dir, fmt.Sprintf("part-%02d.parquet", s))
		fn.Offsets[name], fn.Before[name] = at, slices.Clone(total)
		at += prep.Files[name]
		for l, n := range prep.FileClasses[name] {
			total[l] += n
		}
	}
	for _, b := range batches {
		if b.Rows() == 0 {
			continue
		}
		r, first, err := fn.rows(b)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Fold, want.Fold[first:first+b.Rows()]) {
			t.Fatalf("%s rows %d to %d: folds differ from model.Plan.Prepare's", b.File, b.Start, b.Start+int64(b.Rows()))
		}
	}
}

// mustMap returns a small random-feature map of d inputs.
func mustMap(t *testing.T, d int) features.Transformer {
	t.Helper()
	m, err := features.New(features.Config{Kernel: "rbf", Gamma: 0.1, Features: 8, Seed: 1}, d)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestParquetStreamFileSystem: Parquet files of a file system whose
// readers are streams (Beam's memfs, as gs:// and s3:// are) are read
// whole into memory and give the batches a local file gives, and a Beam
// fit of them the model of the same shards on the local disk (within
// weightBound); the prediction pipeline reads them too, predicting every
// row as the model does in memory.
func TestParquetStreamFileSystem(t *testing.T) {
	ctx := context.Background()
	ds := letterRows(3000)
	dir := t.TempDir()
	local := writeParquetShards(t, dir, ds, 3, true)
	paths, err := filepath.Glob(local)
	if err != nil || len(paths) != 3 {
		t.Fatalf("%v: %d shards", err, len(paths))
	}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		memfs.Write("memfs://pq/"+filepath.Base(p), raw)
		var got, want []*Batch
		collect := func(to *[]*Batch) func(*Batch) error {
			return func(b *Batch) error { *to = append(*to, b); return nil }
		}
		src := Source{Chunk: 600}
		if err := ReadInput(ctx, fileio.ReadableFile{Metadata: fileio.FileMetadata{Path: "memfs://pq/" + filepath.Base(p)}}, src, collect(&got), nil); err != nil {
			t.Fatal(err)
		}
		if err := ReadInput(ctx, fileio.ReadableFile{Metadata: fileio.FileMetadata{Path: p}}, src, collect(&want), nil); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d batches from memfs, %d from the disk", p, len(got), len(want))
		}
		for i := range got {
			if !slices.Equal(got[i].X, want[i].X) || !slices.Equal(got[i].Y, want[i].Y) || !slices.Equal(got[i].Lines, want[i].Lines) {
				t.Fatalf("%s: batch %d differs between memfs and the disk", p, i)
			}
		}
	}
	opt := model.Options{Task: model.Classification, Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 128, Seed: 7},
		Lambda: 0.01, Standardize: true}
	mem, err := Fit(ctx, FitOptions{Input: "memfs://pq/part-*.parquet", Model: opt, Run: RunOptions{Runner: *runner}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := model.Fit(ctx, opt, ds)
	if err != nil {
		t.Fatal(err)
	}
	dw := compareModels(t, "memfs Parquet vs model.Fit", mem.Model, want, ds.X, weightBound(t, want, ds))
	t.Logf("weights differ from model.Fit's by %.2g", dw)

	mpath := filepath.Join(dir, "m.kk")
	f, err := os.Create(mpath)
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Model.Save(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "preds")
	pr, err := Predict(ctx, PredictOptions{Input: local, Model: mpath, OutDir: out, Run: RunOptions{Runner: *runner}})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Rows != 3000 || pr.Labelled != 3000 {
		t.Fatalf("predicted %d rows, %d labelled", pr.Rows, pr.Labelled)
	}
	sc, err := mem.Model.Predict(ds.X)
	if err != nil {
		t.Fatal(err)
	}
	classes := argmax(sc)
	for s, p := range paths {
		rows := readCSVFile(t, OutputPath(out, p))
		lo := s * 3000 / 3
		for i, r := range rows[1:] {
			if r[1] != fmt.Sprint(i+1) || r[2] != fmt.Sprint(classes[lo+i]) {
				t.Fatalf("%s row %d: %v, want line %d class %d", p, i+1, r, i+1, classes[lo+i])
			}
		}
	}
}
