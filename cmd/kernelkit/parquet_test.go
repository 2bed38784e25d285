package main

import (
	"bytes"
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
