package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/data"
)

// csvToParquet writes the CSV file at path as a Parquet file of the same
// columns (integer-valued columns as INT64, the others DOUBLE), in row
// groups of groupRows rows, and returns its path (the CSV path with the
// extension .parquet).
func csvToParquet(t *testing.T, path string, groupRows int) string {
	t.Helper()
	ds, err := data.Open(path, data.OpenOptions{Format: "csv", NoLabel: true})
	if err != nil {
		t.Fatal(err)
	}
	var cols []data.ParquetColumn
	for j, name := range ds.Names {
		isInt := true
		for i := 0; i < ds.Rows(); i++ {
			if v := ds.X.At(i, j); v != math.Trunc(v) {
				isInt = false
			}
		}
		cols = append(cols, data.ParquetColumn{Name: name, Int: isInt, Value: func(i int) float64 { return ds.X.At(i, j) }})
	}
	var buf bytes.Buffer
	if err := data.WriteParquetRowGroups(&buf, ds.Rows(), groupRows, cols, nil); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSuffix(path, filepath.Ext(path)) + ".parquet"
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestParquetFitPredictTransform (issue 38): fit, predict and transform
// read Parquet (by its extension, or --format parquet) as they read the
// CSV file of the same rows: the same model file, the same predictions
// and features.
func TestParquetFitPredictTransform(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 3000)
	test := letterCSV(t, dir, "test.csv", 19000, 19500)
	ptrain, ptest := csvToParquet(t, train, 1024), csvToParquet(t, test, 1024)
	fit := func(name, train, test string, extra ...string) []byte {
		t.Helper()
		path := filepath.Join(dir, name)
		args := append([]string{"fit", "--train", train, "--test", test, "--features", "64", "--seed", "2", "--model", path}, extra...)
		if _, err := run(t, args...); err != nil {
			t.Fatalf("fit %s: %v", name, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want := fit("csv.kk", train, test)
	if got := fit("parquet.kk", ptrain, ptest); !bytes.Equal(got, want) {
		t.Error("fit on Parquet wrote another model file than on CSV")
	}
	named := filepath.Join(dir, "train.data")
	if err := os.Rename(ptrain, named); err != nil {
		t.Fatal(err)
	}
	if got := fit("forced.kk", named, ptest, "--format", "parquet"); !bytes.Equal(got, want) {
		t.Error("fit --format parquet wrote another model file than on CSV")
	}
	model := filepath.Join(dir, "csv.kk")
	for _, args := range [][]string{
		{"predict", "--model", model, "--scores"},
		{"transform", "--model", model},
		{"transform", "--features", "8", "--seed", "4", "--label", "label"},
	} {
		csvOut, err := run(t, append(args, "--data", test)...)
		if err != nil {
			t.Fatalf("%v on CSV: %v", args, err)
		}
		pqOut, err := run(t, append(args, "--data", ptest)...)
		if err != nil {
			t.Fatalf("%v on Parquet: %v", args, err)
		}
		if csvOut != pqOut || len(csvOut) < 1000 {
			t.Errorf("%v: %d bytes from Parquet differ from the %d from CSV", args, len(pqOut), len(csvOut))
		}
	}
}

// TestFitSameBytesAnyFormat (issue 38): the same rows as CSV, Parquet
// and LIBSVM give the same model file, in memory and with --stream: byte
// for byte for CSV and Parquet (in row groups of 4096 rows, so that a
// streamed pass crosses row groups and the scaler's blocks of 16384
// rows); for LIBSVM, which has no column names, the same bytes but for
// the CSV file's "columns" and "label" entries. The cases are those of
// TestFitStreamSameBytes that LIBSVM can hold, and the weighted and
// multi-target ones for CSV and Parquet.
func TestFitSameBytesAnyFormat(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 18000)
	test := letterCSV(t, dir, "test.csv", 19000, 19500)
	ptrain, ptest := csvToParquet(t, train, 4096), csvToParquet(t, test, 4096)
	strain, stest := letterSVM(t, dir, "train.svm", 0, 18000), letterSVM(t, dir, "test.svm", 19000, 19500)
	weighted := letterRowsCSV(t, dir, "weighted.csv", 0, 18000, func(i int) int { return i % 3 }, nil)
	weightedTest := letterRowsCSV(t, dir, "weighted-test.csv", 19000, 19500, func(int) int { return 1 }, nil)
	multi := multiCSV(t, dir, "multi.csv", 3000, 4, true)
	multiTest := multiCSV(t, dir, "multi-test.csv", 200, 5, true)
	names := []byte(`"columns":["x.box","y.box","width","high","onpix","x.bar","y.bar","x2bar","y2bar","xybar","x2ybr","xy2br","x.ege","xegvy","y.ege","yegvx"],"label":"label",`)
	common := []string{"--features", "64", "--seed", "1"}
	type files struct{ train, test string }
	for _, c := range []struct {
		name    string
		formats map[string]files // csv, parquet and, where it can hold the rows, libsvm
		args    []string
	}{
		{"plain", map[string]files{"csv": {train, test}, "parquet": {ptrain, ptest}, "libsvm": {strain, stest}}, nil},
		{"gcv", map[string]files{"csv": {train, test}, "parquet": {ptrain, ptest}, "libsvm": {strain, stest}}, []string{"--select", "gcv"}},
		{"calibrate", map[string]files{"csv": {train, test}, "parquet": {ptrain, ptest}, "libsvm": {strain, stest}}, []string{"--calibrate", "--folds", "3"}},
		{"gamma scale", map[string]files{"csv": {train, test}, "parquet": {ptrain, ptest}, "libsvm": {strain, stest}}, []string{"--gamma", "scale", "--no-standardize"}},
		{"weights", map[string]files{"csv": {weighted, weightedTest}, "parquet": {csvToParquet(t, weighted, 4096), csvToParquet(t, weightedTest, 4096)}},
			[]string{"--weight-column", "w", "--class-weight", "balanced"}},
		{"targets", map[string]files{"csv": {multi, multiTest}, "parquet": {csvToParquet(t, multi, 1024), csvToParquet(t, multiTest, 1024)}},
			[]string{"--targets", "t1,t2", "--select", "gcv"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want []byte // the CSV in-memory fit's
			for _, format := range []string{"csv", "parquet", "libsvm"} {
				f, ok := c.formats[format]
				if !ok {
					continue
				}
				for _, stream := range []bool{false, true} {
					path := filepath.Join(dir, c.name+"-"+format+map[bool]string{false: ".kk", true: "-stream.kk"}[stream])
					args := append([]string{"fit", "--train", f.train, "--test", f.test, "--model", path}, common...)
					args = append(args, c.args...)
					if stream {
						args = append(args, "--stream")
					}
					if _, err := run(t, args...); err != nil {
						t.Fatalf("%s, stream %v: %v", format, stream, err)
					}
					got, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					if want == nil {
						want = got
						continue
					}
					expect := want
					if format == "libsvm" {
						if expect = bytes.Replace(want, names, nil, 1); len(expect) == len(want) {
							t.Fatalf("the CSV model file has no %s", names)
						}
					}
					if !bytes.Equal(got, expect) {
						i := 0
						for i < len(got) && i < len(expect) && got[i] == expect[i] {
							i++
						}
						lo := max(0, i-60)
						t.Errorf("%s, stream %v: another model file than CSV's in memory: from byte %d, …%s… against …%s…", format, stream, i,
							got[lo:min(len(got), i+40)], expect[lo:min(len(expect), i+40)])
					}
				}
			}
		})
	}
}

// TestParquetOutput (issue 38): predict --out x.parquet and transform
// --out x.parquet write Parquet with the columns and values of the CSV
// output (the class as INT64, the rest DOUBLE), replacing the file
// atomically: an interrupted write leaves the old file and no temporary
// file.
func TestParquetOutput(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 3000)
	test := letterCSV(t, dir, "test.csv", 19000, 19500)
	model := filepath.Join(dir, "m.kk")
	if _, err := run(t, "fit", "--train", train, "--model", model, "--features", "32", "--seed", "2", "--calibrate", "--folds", "3"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		cols int
	}{
		{[]string{"predict", "--model", model, "--scores"}, 1 + 26 + 26},
		{[]string{"predict", "--model", model}, 1},
		{[]string{"transform", "--model", model}, 32},
		{[]string{"transform", "--map", "positive", "--features", "8", "--seed", "4", "--label", "label", "--scaled"}, 9},
	} {
		csvOut, err := run(t, append(c.args, "--data", test)...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		pq := filepath.Join(dir, "out.PARQUET")
		if _, err := run(t, append(c.args, "--data", test, "--out", pq)...); err != nil {
			t.Fatalf("%v --out %s: %v", c.args, pq, err)
		}
		got, err := data.Open(pq, data.OpenOptions{NoLabel: true})
		if err != nil {
			t.Fatal(err)
		}
		header, want := parseCSV(t, csvOut)
		if got.Rows() != 500 || got.Cols() != c.cols || strings.Join(got.Names, ",") != strings.Join(header, ",") {
			t.Fatalf("%v: %d×%d columns %q, want 500×%d %q", c.args, got.Rows(), got.Cols(), got.Names, c.cols, header)
		}
		for i, row := range want {
			if !slicesEqual(got.X.RawRowView(i), row) {
				t.Fatalf("%v: row %d is %v in Parquet, %v in CSV", c.args, i, got.X.RawRowView(i), row)
			}
		}
	}

	// Interrupted: the old file stays, and no temporary file is left.
	pq := filepath.Join(dir, "keep.parquet")
	if err := os.WriteFile(pq, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := newRoot()
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	root.SetArgs([]string{"--blas", "gonum", "predict", "--model", model, "--data", test, "--out", pq})
	if err := root.ExecuteContext(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted predict: %v", err)
	}
	if b, err := os.ReadFile(pq); err != nil || string(b) != "old" {
		t.Errorf("the old file became %q (%v)", b, err)
	}
	if left, err := filepath.Glob(filepath.Join(dir, ".keep.parquet.tmp-*")); err != nil || len(left) > 0 {
		t.Errorf("temporary files left: %v %v", left, err)
	}
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
