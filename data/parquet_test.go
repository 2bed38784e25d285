package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// tableParquet writes the columns of ds (all features, as read with
// NoLabel) to a Parquet file at path with writeParquet, in row groups of
// groupRows rows: integer-valued columns as INT64, the others as DOUBLE.
func tableParquet(t *testing.T, path string, ds *Dataset, groupRows int) string {
	t.Helper()
	var cols []ParquetColumn
	for j, name := range ds.Names {
		isInt := true
		for i := 0; i < ds.Rows(); i++ {
			if v := ds.X.At(i, j); v != math.Trunc(v) {
				isInt = false
			}
		}
		cols = append(cols, ParquetColumn{Name: name, Int: isInt, Value: func(i int) float64 { return ds.X.At(i, j) }})
	}
	var buf bytes.Buffer
	if err := writeParquet(&buf, ds.Rows(), cols, nil, groupRows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// csvParquet writes the CSV text content as a Parquet file of the same
// columns and returns its path.
func csvParquet(t *testing.T, name, content string) string {
	t.Helper()
	ds, err := ReadCSV(strings.NewReader(content), CSVOptions{NoLabel: true})
	if err != nil {
		t.Fatal(err)
	}
	return tableParquet(t, filepath.Join(t.TempDir(), name), ds, 1024)
}

// TestParquetOpenAsCSV (issue 38): a Parquet file is opened as the CSV
// file of the same columns is, through the same column matcher: the same
// data set for every choice of label, weight, targets and expected
// columns or width, and the same errors (with "Parquet" for "CSV").
func TestParquetOpenAsCSV(t *testing.T) {
	for _, c := range []struct {
		name, content string
		opt           OpenOptions
	}{
		{"last column label", "a,b,label\n1,2.5,0\n3,4,1\n", OpenOptions{}},
		{"named label first", "y,a,b\n5,1,2\n6,3,4\n", OpenOptions{Label: "y"}},
		{"no label", "a,b\n1,2\n3,4\n", OpenOptions{NoLabel: true}},
		{"weight", "a,w,b,label\n1,0.5,2,0\n3,2,4,1\n", OpenOptions{Weight: "w"}},
		{"targets", "t1,a,t2,b\n0.5,1,1.5,2\n2.5,3,3.5,4\n", OpenOptions{Targets: []string{"t2", "t1"}}},
		{"one target is the label", "a,t,b\n1,9,2\n", OpenOptions{Targets: []string{"t"}}},
		{"reordered by name", "b,label,a\n2,1,1\n4,0,3\n", OpenOptions{Columns: []string{"a", "b"}, Label: "label", Width: 2}},
		{"label optional by name", "b,a\n2,1\n", OpenOptions{Columns: []string{"a", "b"}, Label: "label"}},
		{"one extra last column is the label", "b,a,class\n2,1,3\n", OpenOptions{Columns: []string{"a", "b"}}},
		{"weight and targets optional", "b,a,w,t1,t2\n2,1,1,5,6\n", OpenOptions{Columns: []string{"a", "b"}, Targets: []string{"t1", "t2"}, Weight: "w"}},
		{"width with last label", "p,q,r\n1,2,0\n", OpenOptions{Width: 2}},
		{"missing column", "a,label\n1,0\n", OpenOptions{Columns: []string{"a", "b"}, Label: "label"}},
		{"extra column", "a,c,b,label\n1,9,2,0\n", OpenOptions{Columns: []string{"a", "b"}, Label: "label"}},
		{"width too small", "p\n1\n", OpenOptions{Width: 2}},
		{"no such label", "a,b\n1,2\n", OpenOptions{Label: "zz"}},
		{"no such weight", "a,b\n1,2\n", OpenOptions{Weight: "w"}},
		{"no such target", "a,b,c\n1,2,3\n", OpenOptions{Targets: []string{"b", "z"}}},
		{"weight is the default label", "a,w\n1,2\n", OpenOptions{Weight: "w"}},
		{"no features", "label\n1\n", OpenOptions{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			csvPath := writeFile(t, "a.csv", c.content)
			pqPath := csvParquet(t, "a.parquet", c.content)
			want, werr := Open(csvPath, c.opt)
			got, gerr := Open(pqPath, c.opt)
			if werr != nil || gerr != nil {
				w, g := "", ""
				if werr != nil {
					w = strings.ReplaceAll(strings.TrimPrefix(werr.Error(), csvPath+": "), "CSV", "Parquet")
				}
				if gerr != nil {
					g = strings.TrimPrefix(gerr.Error(), pqPath+": ")
				}
				if w != g {
					t.Errorf("Parquet error %q, CSV error %q", g, w)
				}
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Parquet data set %+v, CSV's %+v", got, want)
			}
		})
	}
}

// TestParquetFormat: Format "parquet", the .parquet extension and the
// magic bytes PAR1 choose Parquet; FileFormat says so.
func TestParquetFormat(t *testing.T) {
	content := "a,b,label\n1,2,0\n3,4,1\n"
	base := csvParquet(t, "x.parquet", content)
	b, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct{ name, format string }{{"x.parquet", ""}, {"x.PARQUET", "auto"}, {"x.data", "auto"}, {"x.bin", "parquet"}} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		ds, err := Open(path, OpenOptions{Format: c.format})
		if err != nil || ds.Rows() != 2 || ds.Label != "label" {
			t.Errorf("%s as %q: %v", c.name, c.format, err)
		}
		if f, err := FileFormat(path, c.format); f != "parquet" || err != nil {
			t.Errorf("FileFormat(%s, %q) = %q, %v", c.name, c.format, f, err)
		}
	}
	if _, err := Open(writeFile(t, "a.csv", content), OpenOptions{Format: "xls"}); err == nil || !strings.Contains(err.Error(), "want auto, csv, libsvm or parquet") {
		t.Errorf("unknown format: %v", err)
	}
}

// TestParquetStreamBatches: ReadBatch returns the rows of ReadParquet
// whatever the batch sizes, across row groups and pages.
func TestParquetStreamBatches(t *testing.T) {
	d := Letter()
	full := d.Subset(seq(0, 5000))
	tab := &Dataset{X: full.X, Names: full.Names}
	path := tableParquet(t, filepath.Join(t.TempDir(), "l.parquet"), tab, 2048)
	f, err := OpenParquet(path, CSVOptions{Label: "x.box", Weight: "y.box", Targets: nil})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	if f.Rows() != 5000 || f.Label() != "x.box" || f.WeightColumn() != "y.box" || len(f.Names()) != 14 {
		t.Fatalf("rows %d label %q weight %q names %q", f.Rows(), f.Label(), f.WeightColumn(), f.Names())
	}
	row := 0
	for _, size := range []int{1, 7, 2040, 1, 3000, 100} {
		b, err := f.ReadBatch(size)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.X.RawMatrix().Rows {
			r := row + i
			if b.Y[i] != d.X.At(r, 0) || b.Weights[i] != d.X.At(r, 1) || !reflect.DeepEqual(b.X.RawRowView(i), d.X.RawRowView(r)[2:]) {
				t.Fatalf("row %d differs", r)
			}
		}
		row += b.X.RawMatrix().Rows
	}
	if row != 5000 {
		t.Errorf("read %d rows, want 5000", row)
	}
	if _, err := f.ReadBatch(10); err != io.EOF {
		t.Errorf("after the end: %v", err)
	}
}

func seq(lo, hi int) []int {
	s := make([]int, hi-lo)
	for i := range s {
		s[i] = lo + i
	}
	return s
}

// optionalRow is a row of a file with an optional DOUBLE column b.
type optionalRow struct {
	A int64    `parquet:"a"`
	B *float64 `parquet:"b,optional"`
	L int32    `parquet:"label"`
}

// writeRows writes rows of type T with parquet-go's generic writer, in
// row groups of groupRows rows.
func writeRows[T any](t *testing.T, name string, rows []T, groupRows int64) string {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, parquet.MaxRowsPerRowGroup(groupRows))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestParquetRefusals (issue 38): a null, a NaN, a nested column and a
// column of a type kernelkit does not read are refused in one line that
// names the file, the row group, the column and the row; an optional
// column without nulls, an unsigned column and a boolean column read.
func TestParquetRefusals(t *testing.T) {
	rows := make([]optionalRow, 300)
	for i := range rows {
		v := float64(i) / 4
		rows[i] = optionalRow{A: int64(i), B: &v, L: int32(i % 2)}
	}
	clean := writeRows(t, "clean.parquet", rows, 100)
	ds, err := Open(clean, OpenOptions{})
	if err != nil {
		t.Fatalf("optional column without nulls: %v", err)
	}
	if ds.Rows() != 300 || ds.X.At(299, 1) != 299.0/4 || ds.Y[299] != 1 {
		t.Errorf("optional column read as %v", ds.X.RawRowView(299))
	}
	rows[234].B = nil
	nulls := writeRows(t, "null.parquet", rows, 100)
	v := math.NaN()
	rows[234].B = &v
	nan := writeRows(t, "nan.parquet", rows, 100)
	type nested struct {
		A    int64     `parquet:"a"`
		Tags []float64 `parquet:"tags,list"`
	}
	type text struct {
		A    int64  `parquet:"a"`
		Name string `parquet:"name"`
	}
	type date struct {
		A   int64 `parquet:"a"`
		Day int32 `parquet:"day,date"`
	}
	for _, c := range []struct {
		path, want string
	}{
		{nulls, `data: Parquet row group 3, column "b", row 235: a null value`},
		{nan, `data: Parquet row group 3, column "b", row 235: value NaN is not finite`},
		{writeRows(t, "nested.parquet", []nested{{1, []float64{1}}}, 100), `data: Parquet row group 1, column "tags", row 1: a nested column`},
		{writeRows(t, "text.parquet", []text{{1, "x"}}, 100), `data: Parquet row group 1, column "name", row 1: type STRING is not int32`},
		{writeRows(t, "date.parquet", []date{{1, 2}}, 100), `data: Parquet row group 1, column "day", row 1: logical type DATE`},
	} {
		_, err := Open(c.path, OpenOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), c.path+": "+c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line starting %q", filepath.Base(c.path), err, c.want)
		}
	}

	type kinds struct {
		U uint64  `parquet:"u"`
		B bool    `parquet:"b"`
		F float32 `parquet:"f"`
		I int32   `parquet:"i"`
	}
	ds, err = Open(writeRows(t, "kinds.parquet", []kinds{{math.MaxUint64, true, 0.5, -3}, {1, false, -2, 7}}, 100), OpenOptions{NoLabel: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{math.MaxUint64, 1, 0.5, -3, 1, 0, -2, 7}; !reflect.DeepEqual(ds.X.RawMatrix().Data, want) {
		t.Errorf("uint64, bool, float, int32 read as %v, want %v", ds.X.RawMatrix().Data, want)
	}
}

// TestParquetDamaged: damaged or hostile files are refused with an error,
// before the library allocates what their sizes state.
func TestParquetDamaged(t *testing.T) {
	good, err := os.ReadFile(csvParquet(t, "g.parquet", "a,b,label\n1,2,0\n3,4,1\n"))
	if err != nil {
		t.Fatal(err)
	}
	footer := func(meta []byte) []byte {
		b := append([]byte("PAR1"), meta...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(meta)))
		return append(b, "PAR1"...)
	}
	hugeList := []byte{0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00} // field 1: a list of 2³¹−1 structures, in 8 bytes
	long := binary.LittleEndian.AppendUint32(append([]byte(nil), good[:len(good)-8]...), 1<<30)
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "not a Parquet file"},
		{"truncated", good[:len(good)-3], "not a Parquet file"},
		{"no magic", append([]byte("PAR0"), good[4:]...), "not a Parquet file"},
		{"encrypted", append(append([]byte(nil), good[:len(good)-4]...), "PARE"...), "encrypted"},
		{"footer too long", append(long, "PAR1"...), "does not fit"},
		{"huge list", footer(hugeList), "a list of 2147483647 elements"},
	} {
		path := filepath.Join(t.TempDir(), "d.parquet")
		if err := os.WriteFile(path, c.b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path, OpenOptions{}); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestParquetCheckChunk: page headers that state a page larger than its
// column chunk, more values than rows, or an uncompressed size out of
// proportion to its values are refused before any page is read.
func TestParquetCheckChunk(t *testing.T) {
	page := func(h format.PageHeader, payload int) []byte {
		var proto thrift.CompactProtocol
		b, err := thrift.Marshal(&proto, &h)
		if err != nil {
			t.Fatal(err)
		}
		return append(b, make([]byte, payload)...)
	}
	data := func(values, comp, uncomp int32) format.PageHeader {
		h := format.PageHeader{Type: format.DataPage, CompressedPageSize: comp, UncompressedPageSize: uncomp}
		h.DataPageHeader.Valid, h.DataPageHeader.V.NumValues = true, values
		return h
	}
	for _, c := range []struct {
		name  string
		pages []byte
		rows  int64
		want  string // "" for none
	}{
		{"good", append(page(data(10, 80, 80), 80), page(data(5, 40, 40), 40)...), 15, ""},
		{"page beyond the chunk", page(data(10, 1<<30, 1<<30), 80), 10, "do not fit in the column chunk"},
		{"more values than rows", page(data(11, 88, 88), 88), 10, "beyond the row group's 10 rows"},
		{"fewer values than rows", page(data(9, 72, 72), 72), 10, "holds 9 values for the row group's 10 rows"},
		{"uncompressed size out of proportion", page(data(10, 80, 1<<30), 80), 10, "declares 1073741824 bytes for 10 values"},
	} {
		file := append(append([]byte("PAR1"), c.pages...), make([]byte, 8)...)
		cc := &format.ColumnChunk{}
		cc.MetaData.DataPageOffset, cc.MetaData.TotalCompressedSize = 4, int64(len(c.pages))
		err := checkChunk(bytes.NewReader(file), int64(len(file)), cc, c.rows)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := checkThrift([]byte{0x19, 0xf5, 0x00}); err == nil {
		t.Error("a list of 15 elements in 1 byte accepted")
	}
	if _, err := checkThrift(bytes.Repeat([]byte{0x1c}, 40)); err == nil || errors.Is(err, errThriftShort) {
		t.Errorf("structures nested 40 deep: %v", err)
	}
}

// TestWriteParquet: WriteParquet writes INT64 and DOUBLE columns in
// their order (not sorted by name) that read back exactly, in row groups
// held to ParquetRowGroupValues values; stop's error ends the write, and
// duplicate names are refused.
func TestWriteParquet(t *testing.T) {
	cols := []ParquetColumn{
		{Name: "z10", Value: func(i int) float64 { return float64(i) / 3 }},
		{Name: "z2", Int: true, Value: func(i int) float64 { return float64(-i) }},
	}
	var buf bytes.Buffer
	if err := WriteParquet(&buf, 3000, cols, nil); err != nil {
		t.Fatal(err)
	}
	ds, err := ReadParquet(bytes.NewReader(buf.Bytes()), int64(buf.Len()), CSVOptions{NoLabel: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ds.Names, []string{"z10", "z2"}) || ds.Rows() != 3000 || ds.X.At(2999, 0) != 2999.0/3 || ds.X.At(2999, 1) != -2999 {
		t.Errorf("read back %q, %d rows, last %v", ds.Names, ds.Rows(), ds.X.RawRowView(2999))
	}
	wide := make([]ParquetColumn, 2000)
	for j := range wide {
		wide[j] = ParquetColumn{Name: "c" + string(rune('a'+j%26)) + strings.Repeat("x", j/26), Value: func(int) float64 { return 1 }}
	}
	buf.Reset()
	if err := WriteParquet(&buf, 2100, wide, nil); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if g := len(pf.RowGroups()); g != 2 { // 2048 + 52 rows: 2048·2000 values ≤ 2²²
		t.Errorf("2000 columns of 2100 rows in %d row groups, want 2 of at most 2048 rows", g)
	}
	calls := 0
	stop := errors.New("stopped")
	err = WriteParquet(io.Discard, 3000, cols, func() error {
		if calls++; calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Errorf("stop's error: %v", err)
	}
	if err := WriteParquet(io.Discard, 1, []ParquetColumn{cols[0], cols[0]}, nil); err == nil {
		t.Error("a duplicate column name accepted")
	}
}

// TestParquetLZ4 (issue 38): LZ4_RAW pages read; a damaged LZ4 page is
// refused by checkChunk (the library's decoder would double its buffer
// without end) with an error naming the row group and column.
func TestParquetLZ4(t *testing.T) {
	type row struct {
		A float64 `parquet:"a"`
		L int64   `parquet:"label"`
	}
	rows := make([]row, 500)
	for i := range rows {
		rows[i] = row{float64(i % 7), int64(i % 2)}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.Compression(&parquet.Lz4Raw))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	ds, err := ReadParquet(bytes.NewReader(b), int64(len(b)), CSVOptions{})
	if err != nil || ds.Rows() != 500 || ds.X.At(499, 0) != 499%7 {
		t.Fatalf("LZ4 file: %v", err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata().RowGroups[0].Columns[0].MetaData
	if md.Codec != format.Lz4Raw {
		t.Fatalf("codec %v", md.Codec)
	}
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	hlen, err := checkThrift(b[start:])
	if err != nil {
		t.Fatal(err)
	}
	for i := start + int64(hlen); i < start+md.TotalCompressedSize; i++ {
		b[i] = 0xff
	}
	_, err = ReadParquet(bytes.NewReader(b), int64(len(b)), CSVOptions{})
	if err == nil || !strings.Contains(err.Error(), `row group 1, column "a", row 1:`) || !strings.Contains(err.Error(), "LZ4 block") {
		t.Errorf("damaged LZ4 page: %v", err)
	}
}

// TestParquetLibraryPanics (issue 38): files on which the Parquet library
// panics (found by flipping single bytes of a fixture: a negative slice
// bound while decoding, a MAP annotation on a leaf column) are refused
// with an error naming the file, not a crash.
func TestParquetLibraryPanics(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join(fixtures, "null.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   int
		flip byte
	}{{8633, 0x01}, {8657, 0x80}} {
		b := append([]byte(nil), orig...)
		b[c.at] ^= c.flip
		path := filepath.Join(t.TempDir(), "p.parquet")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("byte %d ^ %#x: panic %v", c.at, c.flip, r)
				}
			}()
			_, err = Open(path, OpenOptions{})
		}()
		if err == nil || !strings.HasPrefix(err.Error(), path+": data: Parquet") || !strings.Contains(err.Error(), "damaged file") {
			t.Errorf("byte %d ^ %#x: %v", c.at, c.flip, err)
		}
	}
}
