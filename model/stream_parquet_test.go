package model

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
)

// writeLetterParquet writes the 20000 rows of letter, with a weight
// column w (1, 2, 3 in turn), as a Parquet file at path in row groups of
// 3072 rows.
func writeLetterParquet(t *testing.T, path string) {
	t.Helper()
	d := data.Letter()
	cols := []data.ParquetColumn{{Name: "w", Int: true, Value: func(i int) float64 { return float64(1 + i%3) }}}
	for j, name := range d.Names {
		cols = append(cols, data.ParquetColumn{Name: name, Value: func(i int) float64 { return d.X.At(i, j) }})
	}
	cols = append(cols, data.ParquetColumn{Name: "label", Int: true, Value: func(i int) float64 { return d.Y[i] }})
	var b bytes.Buffer
	if err := data.WriteParquetRowGroups(&b, d.Rows(), 3072, cols, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStreamFileParquetSameBytes (issue 38): a Parquet file streamed by
// StreamFile (format given, or found from the extension) gives the model
// file that Fit gives on the rows data.Open reads from it, byte for byte,
// with the same column names: a plain fit, a weighted one, GCV, a
// calibration and unstandardised rows. The 20000 rows in row groups of
// 3072 rows are more than one block of the scaler, whose blocks end
// inside row groups.
func TestStreamFileParquetSameBytes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "letter.parquet")
	writeLetterParquet(t, path)
	feat := features.Config{Kernel: "rbf", Gamma: 0.1, Features: 48, Seed: 5}
	cls := Options{Task: Classification, Standardize: true, Lambda: 0.5, Features: feat, ChunkRows: 1000}
	with := func(o Options, f func(*Options)) Options { f(&o); return o }
	for _, c := range []struct {
		name, format, weight string
		opt                  Options
	}{
		{"plain", "parquet", "", cls},
		{"auto format", "auto", "", cls},
		{"weights", "parquet", "w", cls},
		{"gcv", "", "w", with(cls, func(o *Options) { o.Select = "gcv" })},
		{"calibrate", "parquet", "", with(cls, func(o *Options) { o.Calibrate, o.Folds = true, 3 })},
		{"unstandardised", "parquet", "", with(cls, func(o *Options) { o.Standardize = false })},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds, err := data.Open(path, data.OpenOptions{Format: c.format, Weight: c.weight})
			if err != nil {
				t.Fatal(err)
			}
			if c.weight == "" { // w is a feature then
				if ds.Cols() != 17 || ds.Names[0] != "w" {
					t.Fatalf("columns %q", ds.Names)
				}
			}
			mem, err := Fit(ctx, c.opt, ds)
			if err != nil {
				t.Fatal(err)
			}
			want := saved(t, mem)
			open, cols, width, err := StreamFile(path, c.format, data.CSVOptions{Weight: c.weight})
			if err != nil {
				t.Fatal(err)
			}
			if width != ds.Cols() || strings.Join(cols.Names, ",") != strings.Join(ds.Names, ",") || cols.Label != "label" || cols.Targets != nil {
				t.Fatalf("width %d, columns %+v; the in-memory rows have width %d and names %q", width, cols, ds.Cols(), ds.Names)
			}
			s, err := FitStreamColumns(ctx, c.opt, open, cols)
			if err != nil {
				t.Fatal(err)
			}
			if got := saved(t, s); !bytes.Equal(got, want) {
				t.Errorf("the streamed model file differs from the in-memory one %s", firstDiff(got, want))
			}
		})
	}
	if _, _, _, err := StreamFile(path, "parquet", data.CSVOptions{Weight: "nope"}); err == nil || !strings.HasPrefix(err.Error(), path+`: data: Parquet has no weight column "nope"`) {
		t.Errorf("missing weight column: %v", err)
	}
}
