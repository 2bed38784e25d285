package data

import (
	"bytes"
	"encoding/csv"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// checkError fails unless err's message is one line shorter than 200
// bytes.
func checkError(t *testing.T, err error) {
	t.Helper()
	if msg := err.Error(); len(msg) >= 200 || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error message of %d bytes or several lines: %.300q", len(msg), msg)
	}
}

// checkDataset fails unless a dataset read whole (ReadCSV, ReadParquet)
// is a valid matrix (checkMatrix) with a name for each column and, with
// noLabel false, one finite target a row (none with noLabel).
func checkDataset(t *testing.T, d *Dataset, noLabel bool) {
	t.Helper()
	rows, cols := d.Rows(), d.Cols()
	checkMatrix(t, d.X, rows, cols)
	if len(d.Names) != cols {
		t.Fatalf("%d names for %d columns", len(d.Names), cols)
	}
	if noLabel != (d.Y == nil) || (d.Y != nil && len(d.Y) != rows) {
		t.Fatalf("%d targets for %d rows (no label: %v)", len(d.Y), rows, noLabel)
	}
	for _, v := range d.Y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("non-finite target %v", v)
		}
	}
}

// checkStreamed fails unless read, called for one row at a time until
// io.EOF, gives d's rows and targets in order (source names the reader
// that read d whole).
func checkStreamed(t *testing.T, read func(max int) (*mat.Dense, []float64, error), d *Dataset, source string) {
	t.Helper()
	rows, cols := d.Rows(), d.Cols()
	for i := 0; ; i++ {
		x, y, err := read(1)
		if err == io.EOF {
			if i != rows {
				t.Fatalf("streamed %d rows, %s %d", i, source, rows)
			}
			return
		}
		if err != nil || i >= rows {
			t.Fatalf("streamed row %d of %d: %v", i, rows, err)
		}
		checkMatrix(t, x, 1, cols)
		if !mat.Equal(x, d.X.Slice(i, i+1, 0, cols)) {
			t.Fatalf("row %d streamed %v, read %v", i, mat.Row(nil, 0, x), mat.Row(nil, i, d.X))
		}
		if d.Y != nil && (len(y) != 1 || y[0] != d.Y[i]) {
			t.Fatalf("row %d: target %v streamed, %v read", i, y, d.Y[i])
		}
	}
}

// checkMatrix fails unless x is rows×cols within limits.MaxElements and
// every value is finite.
func checkMatrix(t *testing.T, x *mat.Dense, rows, cols int) {
	t.Helper()
	r, c := x.Dims()
	if r != rows || c != cols || r < 1 || c < 1 {
		t.Fatalf("matrix is %d×%d, want %d×%d", r, c, rows, cols)
	}
	if n, err := limits.Matrix("x", r, c); err != nil || len(x.RawMatrix().Data) != n {
		t.Fatalf("matrix of %d×%d: %v", r, c, err)
	}
	for _, v := range x.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("non-finite value %v", v)
		}
	}
}

// FuzzCSV reads arbitrary bytes as a CSV file. Invariants: no panic; an
// error is one short line; on success the names, matrix and targets agree
// in shape and every value is finite; every cell is a plain decimal number
// (checked with a regular expression on the records of encoding/csv); the
// bytes read the same with a byte-order mark in front and in batches of
// one row; and the data written back as CSV read the same values.
func FuzzCSV(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte, noLabel bool) {
		opt := CSVOptions{NoLabel: noLabel}
		d, err := ReadCSV(bytes.NewReader(in), opt)
		if err != nil {
			checkError(t, err)
			return
		}
		rows, cols := d.Rows(), d.Cols()
		checkDataset(t, d, noLabel)
		if bom := []byte("\uFEFF"); !bytes.HasPrefix(in, bom) {
			// With a byte-order mark in front, the file reads the same.
			withBOM, err := ReadCSV(bytes.NewReader(append(bom, in...)), opt)
			if err != nil {
				t.Fatalf("with a byte-order mark: %v", err)
			}
			if withBOM.Label != d.Label || !slices.Equal(withBOM.Names, d.Names) || !mat.Equal(withBOM.X, d.X) || !equalFloats(withBOM.Y, d.Y) {
				t.Fatalf("with a byte-order mark: names %q label %q, without %q %q", withBOM.Names, withBOM.Label, d.Names, d.Label)
			}
		}
		// Every cell is a plain decimal number, by an independent check.
		cr := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(in, []byte("\uFEFF"))))
		cr.TrimLeadingSpace = true
		recs, err := cr.ReadAll()
		if err != nil || len(recs) != rows+1 {
			t.Fatalf("encoding/csv reads %d records (%v), ReadCSV %d rows", len(recs), err, rows)
		}
		for _, rec := range recs[1:] {
			for _, cell := range rec {
				if !decimalRE.MatchString(strings.TrimSpace(cell)) {
					t.Fatalf("cell %q accepted", cell)
				}
			}
		}
		// Streaming in batches of one row.
		r, err := NewCSVReader(bytes.NewReader(in), opt)
		if err != nil {
			t.Fatalf("streaming reader refuses what ReadCSV accepted: %v", err)
		}
		checkStreamed(t, r.Read, d, "ReadCSV")
		// Written back with the shortest round-trip numbers, the data
		// reads the same.
		var b strings.Builder
		n := cols
		if d.Y != nil {
			n++
		}
		b.WriteString("c0")
		for j := 1; j < n; j++ {
			b.WriteString(",c" + strconv.Itoa(j))
		}
		b.WriteByte('\n')
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.FormatFloat(d.X.At(i, j), 'g', -1, 64))
			}
			if d.Y != nil {
				b.WriteString("," + strconv.FormatFloat(d.Y[i], 'g', -1, 64))
			}
			b.WriteByte('\n')
		}
		back, err := ReadCSV(strings.NewReader(b.String()), opt)
		if err != nil {
			t.Fatalf("written back: %v", err)
		}
		if !mat.Equal(back.X, d.X) || !equalFloats(back.Y, d.Y) {
			t.Fatal("written back, the data reads differently")
		}
	})
}

// FuzzLIBSVM reads arbitrary bytes as a LIBSVM file at a width of 0 (the
// largest index) to 254. Invariants: no panic; an error is one short line;
// on success the matrix is rows×width within limits.MaxElements (width as
// given, or the largest index, at most limits.MaxDim), values and labels
// are finite and written as plain decimal numbers; read at a larger width the rows are the same padded with
// zeros; and the data written back in LIBSVM form reads the same.
func FuzzLIBSVM(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte, width uint8) {
		dim := int(width) - 1
		d, err := ReadLIBSVM(bytes.NewReader(in), dim)
		if err != nil {
			checkError(t, err)
			return
		}
		rows, cols := d.Rows(), d.Cols()
		if dim > 0 && cols != dim || cols > limits.MaxDim {
			t.Fatalf("width %d, asked for %d", cols, dim)
		}
		checkMatrix(t, d.X, rows, cols)
		if len(d.Y) != rows || d.Names != nil {
			t.Fatalf("%d labels for %d rows, names %q", len(d.Y), rows, d.Names)
		}
		for _, v := range d.Y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite label %v", v)
			}
		}
		// Every label and value is a plain decimal number, by an
		// independent check.
		for _, line := range strings.Split(strings.TrimPrefix(string(in), "\uFEFF"), "\n") {
			line, _, _ = strings.Cut(line, "#")
			for i, f := range strings.Fields(line) {
				if i > 0 {
					_, f, _ = strings.Cut(f, ":")
				}
				if !decimalRE.MatchString(f) {
					t.Fatalf("number %q accepted", f)
				}
			}
		}
		wide, err := ReadLIBSVM(bytes.NewReader(in), cols+3)
		if err != nil {
			t.Fatalf("at width %d: %v", cols+3, err)
		}
		if !mat.Equal(wide.X.Slice(0, rows, 0, cols), d.X) || !mat.Equal(wide.X.Slice(0, rows, cols, cols+3), mat.NewDense(rows, 3, nil)) || !equalFloats(wide.Y, d.Y) {
			t.Fatalf("at width %d the rows differ", cols+3)
		}
		var b strings.Builder
		for i := 0; i < rows; i++ {
			b.WriteString(strconv.FormatFloat(d.Y[i], 'g', -1, 64))
			for j, v := range d.X.RawRowView(i) {
				if v != 0 {
					b.WriteString(" " + strconv.Itoa(j+1) + ":" + strconv.FormatFloat(v, 'g', -1, 64))
				}
			}
			b.WriteByte('\n')
		}
		back, err := ReadLIBSVM(strings.NewReader(b.String()), cols)
		if err != nil {
			t.Fatalf("written back: %v", err)
		}
		if !mat.Equal(back.X, d.X) || !equalFloats(back.Y, d.Y) {
			t.Fatal("written back, the data reads differently")
		}
	})
}

// decimalRE matches the plain decimal numbers the readers accept.
var decimalRE = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// equalFloats reports whether a and b hold the same values and are both
// nil or both not nil.
func equalFloats(a, b []float64) bool {
	return slices.Equal(a, b) && (a == nil) == (b == nil)
}
