package data

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParquet reads arbitrary bytes as a Parquet file (the files a fit,
// kernelkit-beam or the server is handed). Invariants: no panic, and no
// allocation the file's stated sizes would force before they are checked
// (the fuzzer's memory limit catches those); an error is one short line;
// on success the names, matrix and targets agree in shape and every value
// is finite; and streaming the same bytes in batches of one row gives the
// same rows. Seeds: files written by WriteParquet (one and several row
// groups, INT64 and DOUBLE columns) and the fixtures of testdata/parquet
// (written by Apache Arrow: dictionary pages, v2 pages, Snappy, Zstandard,
// nulls).
func FuzzParquet(f *testing.F) {
	tables := []struct {
		rows, group int
		cols        []ParquetColumn
	}{
		{3, 1024, []ParquetColumn{
			{Name: "a", Value: func(i int) float64 { return float64(i) + 0.5 }},
			{Name: "b", Int: true, Value: func(i int) float64 { return float64(2 * i) }},
			{Name: "label", Int: true, Value: func(i int) float64 { return float64(i % 2) }},
		}},
		{7, 3, []ParquetColumn{
			{Name: "x", Value: func(i int) float64 { return math.Sin(float64(i)) }},
			{Name: "label", Value: func(i int) float64 { return float64(i) / 7 }},
		}},
	}
	for _, tb := range tables {
		var buf bytes.Buffer
		if err := writeParquet(&buf, tb.rows, tb.cols, nil, tb.group); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), false)
		f.Add(buf.Bytes(), true)
	}
	names, err := filepath.Glob(filepath.Join(fixtures, "*.parquet"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, in []byte, noLabel bool) {
		opt := CSVOptions{NoLabel: noLabel}
		d, err := ReadParquet(bytes.NewReader(in), int64(len(in)), opt)
		if err != nil {
			checkError(t, err)
			return
		}
		checkDataset(t, d, noLabel)
		// Streaming in batches of one row gives the same rows.
		r, err := NewParquetReader(bytes.NewReader(in), int64(len(in)), opt)
		if err != nil {
			t.Fatalf("streaming reader refuses what ReadParquet accepted: %v", err)
		}
		defer func() {
			if err := r.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		}()
		checkStreamed(t, r.Read, d, "ReadParquet")
	})
}

// TestShorten: a library message longer than maxLibraryMessage bytes is
// cut at a rune boundary and ended with "…", one on several lines is
// joined into one, a short one-line error is returned as it is, and the
// cut error unwraps to the whole one.
func TestShorten(t *testing.T) {
	short := errors.New("decoding thrift payload: short")
	if got := shorten(short); got != short {
		t.Errorf("short error changed: %v", got)
	}
	long := errors.New(strings.Repeat("→ 1:FIELD<LIST> ", 20))
	got := shorten(long)
	if msg := got.Error(); len(msg) > maxLibraryMessage+len("…") || !strings.HasSuffix(msg, "…") || !utf8.ValidString(msg) {
		t.Errorf("long error cut to %d bytes %q", len(msg), msg)
	}
	if !errors.Is(got, long) {
		t.Error("the cut error does not unwrap to the whole one")
	}
	if msg := shorten(errors.New("one\ntwo\tthree")).Error(); msg != "one two three" {
		t.Errorf("several lines: %q", msg)
	}
}
