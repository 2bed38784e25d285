package model

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
)

// writeLetterLIBSVM writes the 20000 rows of letter as a LIBSVM file
// (zeros left out, a comment line) at path.
func writeLetterLIBSVM(t *testing.T, path string) {
	t.Helper()
	d := data.Letter()
	var b strings.Builder
	b.WriteString("# letter\n")
	for i := range d.Rows() {
		b.WriteString(strconv.FormatFloat(d.Y[i], 'g', -1, 64))
		for j, v := range d.X.RawRowView(i) {
			if v != 0 {
				b.WriteString(" " + strconv.Itoa(j+1) + ":" + strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStreamFileLIBSVMSameBytes (issue 35): a LIBSVM file streamed by
// StreamFile (format given, or found from the extension) gives the model
// file that Fit gives on the rows data.Open reads from it, byte for byte:
// a plain fit, GCV, k-fold, a calibration, unstandardised rows and the
// task decided from the labels. The 20000 rows are more than one block of
// the scaler. The file has no columns or label names, as the in-memory
// one has none.
func TestStreamFileLIBSVMSameBytes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "letter.svm")
	writeLetterLIBSVM(t, path)
	ds, err := data.Open(path, data.OpenOptions{Format: "libsvm"})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Rows() <= scalerBlock {
		t.Fatalf("%d rows, not more than one scaler block (%d)", ds.Rows(), scalerBlock)
	}
	feat := features.Config{Kernel: "rbf", Gamma: 0.1, Features: 48, Seed: 5}
	cls := Options{Task: Classification, Standardize: true, Lambda: 0.5, Features: feat, ChunkRows: 1000}
	with := func(o Options, f func(*Options)) Options { f(&o); return o }
	for _, c := range []struct {
		name, format string
		opt          Options
	}{
		{"plain", "libsvm", cls},
		{"auto format", "auto", cls},
		{"gcv", "libsvm", with(cls, func(o *Options) { o.Select = "gcv" })},
		{"kfold", "", with(cls, func(o *Options) { o.Select, o.Folds = "kfold", 3 })},
		{"calibrate", "libsvm", with(cls, func(o *Options) { o.Calibrate, o.Folds = true, 3 })},
		{"unstandardised", "libsvm", with(cls, func(o *Options) { o.Standardize = false })},
		{"auto task", "libsvm", with(cls, func(o *Options) { o.Task = Auto })},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem, err := Fit(ctx, c.opt, ds)
			if err != nil {
				t.Fatal(err)
			}
			want := saved(t, mem)
			open, cols, width, err := StreamFile(path, c.format, data.CSVOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if width != ds.Cols() || cols.Names != nil || cols.Label != "" || cols.Targets != nil {
				t.Fatalf("width %d, columns %+v; the in-memory rows have width %d and no names", width, cols, ds.Cols())
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
}

// TestStreamFileRefusals: StreamFile refuses, in one line naming the
// file, what data.Open refuses for LIBSVM (several targets, a weight
// column) and an unknown format; a CSV file still streams with its names.
func TestStreamFileRefusals(t *testing.T) {
	dir := t.TempDir()
	svm := filepath.Join(dir, "rows.svm")
	if err := os.WriteFile(svm, []byte("1 1:0.5 2:1\n0 2:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		format string
		opt    data.CSVOptions
		msg    string
	}{
		{"libsvm", data.CSVOptions{Weight: "w"}, "no weight column"},
		{"auto", data.CSVOptions{Targets: []string{"a", "b"}}, "one label"},
		{"arff", data.CSVOptions{}, `unknown format "arff"`},
		{"parquet", data.CSVOptions{}, "not a Parquet file"},
	} {
		_, _, _, err := StreamFile(svm, c.format, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), "\n") {
			t.Errorf("format %q, %+v: %v, want one line with %q", c.format, c.opt, err, c.msg)
		}
	}
	csvPath := filepath.Join(dir, "rows.csv")
	if err := os.WriteFile(csvPath, []byte("a,b,y\n1,2,0\n3,4,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cols, width, err := StreamFile(csvPath, "auto", data.CSVOptions{})
	if err != nil || width != 2 || strings.Join(cols.Names, ",") != "a,b" || cols.Label != "y" {
		t.Errorf("CSV: width %d, columns %+v, %v", width, cols, err)
	}
}
