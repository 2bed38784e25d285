package kkbeam

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/linear"
)

// readAllBatches parses text as file name with src and returns the
// batches and bad rows.
func readAllBatches(t *testing.T, name, text string, src Source) ([]*Batch, []*BadRow, error) {
	t.Helper()
	var bs []*Batch
	var bads []*BadRow
	err := ReadFile(name, strings.NewReader(text), src,
		func(b *Batch) error { bs = append(bs, b); return nil },
		func(r *BadRow) error { bads = append(bads, r); return nil })
	return bs, bads, err
}

// TestReadFileCSV: rows keep their file line numbers across blank lines,
// a BOM and CRLF ends; batches hold Chunk rows and count from the file's
// first good row; each bad line is reported with data's message for the
// whole file (same text, same line number) and left out.
func TestReadFileCSV(t *testing.T) {
	text := "\ufeffa, b ,y\r\n1,2,0\r\n\r\n3,4,1\n5,x,0\n7,8\n9,10,1\n11,12,0\n"
	bs, bads, err := readAllBatches(t, "f.csv", text, Source{Chunk: 2})
	if err != nil {
		t.Fatal(err)
	}
	var lines []int64
	var x, y []float64
	var starts []int64
	for _, b := range bs {
		lines = append(lines, b.Lines...)
		x = append(x, b.X...)
		y = append(y, b.Y...)
		starts = append(starts, b.Start)
		if b.Cols != 2 || b.File != "f.csv" {
			t.Errorf("batch of width %d from %q", b.Cols, b.File)
		}
	}
	if !slices.Equal(lines, []int64{2, 4, 7, 8}) || !slices.Equal(x, []float64{1, 2, 3, 4, 9, 10, 11, 12}) ||
		!slices.Equal(y, []float64{0, 1, 1, 0}) || !slices.Equal(starts, []int64{0, 2, 2}) {
		t.Errorf("lines %v x %v y %v starts %v", lines, x, y, starts)
	}
	if h := bs[0].Header; h == nil || !slices.Equal(h.Columns, []string{"a", "b"}) || h.Label != "y" {
		t.Errorf("header %+v", bs[0].Header)
	}
	if len(bads) != 2 || bads[0].Line != 5 || bads[1].Line != 6 || bs[1].Bad != 2 || bs[1].FirstBad.Line != 5 {
		t.Fatalf("bad rows %+v", bads)
	}
	// data.ReadCSV on the whole text stops at the first bad line with
	// the message the bad row carries.
	_, want := data.ReadCSV(strings.NewReader(text), data.CSVOptions{})
	if want == nil || bads[0].Err != want.Error() {
		t.Errorf("bad row message %q, want data's %v", bads[0].Err, want)
	}
	cut := strings.Replace(text, "5,x,0\n", "", 1)
	_, want = data.ReadCSV(strings.NewReader(cut), data.CSVOptions{})
	if want == nil || strings.Replace(bads[1].Err, "line 6", "line 5", 1) != want.Error() {
		t.Errorf("bad row message %q, want data's %v (one line up)", bads[1].Err, want)
	}
}

// TestReadFileErrors: problems of a whole file are *FileError with
// data's message; an empty file and a file of only a header differ.
func TestReadFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		src        Source
		want       string
	}{
		{"empty.csv", "", Source{}, "data: CSV is empty (no header row)"},
		{"nolabel.csv", "a,b\n1,2\n", Source{Label: "y"}, `data: CSV has no column "y"`},
		{"cols.csv", "b,a,z\n1,2,3\n", Source{Columns: []string{"a", "b", "c"}}, `data: columns do not match the expected ones: missing "c"`},
		{"width.csv", "a,b,c,d\n1,2,3,4\n", Source{Width: 2}, "data: 4 feature columns, want 2 (plus an optional label)"},
		{"format.txt", "1 1:2\n", Source{Format: "xml"}, "data: unknown format"},
	} {
		_, _, err := readAllBatches(t, tc.name, tc.text, tc.src)
		var fe *FileError
		if !errors.As(err, &fe) || fe.File != tc.name || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want a FileError containing %q", tc.name, err, tc.want)
		}
	}
	bs, bads, err := readAllBatches(t, "head.csv", "a,y\n", Source{})
	if err != nil || len(bads) != 0 || len(bs) != 1 || bs[0].Rows() != 0 || bs[0].Header == nil {
		t.Errorf("header only: %v, %d bad, batches %+v", err, len(bads), bs)
	}
}

// TestReadFileColumns: with expected columns a file's columns are
// reordered by name and the label found as data.Open finds it.
func TestReadFileColumns(t *testing.T) {
	bs, _, err := readAllBatches(t, "f.csv", "b,a\n1,2\n3,4\n", Source{Columns: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bs[0].X, []float64{2, 1, 4, 3}) || bs[0].Y != nil {
		t.Errorf("x %v y %v (no label)", bs[0].X, bs[0].Y)
	}
	// An unexpected column that is not the last is refused, as data.Open
	// refuses it.
	_, _, err = readAllBatches(t, "f.csv", "b,y,a\n1,0,2\n", Source{Columns: []string{"a", "b"}})
	if err == nil || !strings.Contains(err.Error(), `unexpected "y"`) {
		t.Errorf("unexpected middle column: %v", err)
	}
	bs, _, err = readAllBatches(t, "f.csv", "b,a,y\n1,2,0\n3,4,1\n", Source{Columns: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bs[0].X, []float64{2, 1, 4, 3}) || !slices.Equal(bs[0].Y, []float64{0, 1}) {
		t.Errorf("x %v y %v (label last)", bs[0].X, bs[0].Y)
	}
}

// TestReadFileLIBSVM: comment and blank lines are skipped with their line
// numbers kept; without a width each batch is as wide as its largest
// index, with one it is that wide and an index beyond it is a bad row
// with data's message.
func TestReadFileLIBSVM(t *testing.T) {
	text := "# comment\n1 1:0.5 3:2\n\n0 2:1\n2\n1 5:1 # five\n"
	bs, bads, err := readAllBatches(t, "f.svm", text, Source{Chunk: 2})
	if err != nil || len(bads) != 0 {
		t.Fatal(err, bads)
	}
	if len(bs) != 2 || bs[0].Cols != 3 || !slices.Equal(bs[0].X, []float64{0.5, 0, 2, 0, 1, 0}) || !slices.Equal(bs[0].Lines, []int64{2, 4}) ||
		bs[1].Cols != 5 || !slices.Equal(bs[1].Y, []float64{2, 1}) || !slices.Equal(bs[1].Lines, []int64{5, 6}) {
		t.Errorf("batches %+v %+v", bs[0], bs[1])
	}
	bs, bads, err = readAllBatches(t, "f.svm", text, Source{Width: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 1 || bs[0].Cols != 4 || bs[0].Rows() != 3 || len(bads) != 1 || bads[0].Line != 6 {
		t.Fatalf("width 4: %+v, bad %+v", bs, bads)
	}
	_, want := data.ReadLIBSVM(strings.NewReader(text), 4)
	if want == nil || bads[0].Err != want.Error() {
		t.Errorf("bad row %q, want data's %v", bads[0].Err, want)
	}
	// Labels only: a batch of width 0.
	bs, _, err = readAllBatches(t, "f.svm", "1\n0\n", Source{})
	if err != nil || bs[0].Cols != 0 || bs[0].Rows() != 2 || bs[0].X != nil {
		t.Errorf("labels only: %v %+v", err, bs)
	}
}

// TestSniff: the format comes from the extension (a .gz suffix removed)
// or the first data line, as data.Open decides.
func TestSniff(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"a.csv", "1 1:2\n", "csv"},
		{"a.svm.gz", "x", "libsvm"},
		{"a.txt", "# c\n\n1 1:2 3:4\n", "libsvm"},
		{"a.txt", "a,b\n", "csv"},
		{"a", "1 2\n", "csv"},
	} {
		got, _, err := sniff(tc.name, strings.NewReader(tc.text), "auto")
		if err != nil || got != tc.want {
			t.Errorf("%s %q: %q, %v; want %q", tc.name, tc.text, got, err, tc.want)
		}
	}
}

// TestMomentsMatchScalerAccumulator: Moments is data.ScalerAccumulator
// with exported state: fed the same batches it gives the same scaler, bit
// for bit; merged in another order, the same to rounding.
func TestMomentsMatchScalerAccumulator(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const cols = 5
	var acc data.ScalerAccumulator
	var m, left, right Moments
	for b := range 7 {
		n := 1 + r.IntN(50)
		x := make([]float64, n*cols)
		for i := range x {
			x[i] = 100 + 10*r.NormFloat64()
		}
		x[0] = 3 // column 0 varies, the last column is constant
		for i := range n {
			x[i*cols+cols-1] = 42
		}
		if err := acc.Add(mat.NewDense(n, cols, x)); err != nil {
			t.Fatal(err)
		}
		m.Add(x, n, cols)
		if b%2 == 0 {
			left.Add(x, n, cols)
		} else {
			right.Add(x, n, cols)
		}
	}
	want, err := acc.Scaler()
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Scaler(cols)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Mean, want.Mean) || !slices.Equal(got.Scale, want.Scale) || got.Scale[cols-1] != 1 {
		t.Errorf("scaler %v, want %v", got, want)
	}
	right.Merge(&left)
	merged, err := right.Scaler(cols)
	if err != nil {
		t.Fatal(err)
	}
	if d := relDiff(merged.Scale, want.Scale); d > 1e-14 {
		t.Errorf("merged in another order: scales differ by %.3g", d)
	}
	// A narrower Moments (LIBSVM rows without the last columns) merges as
	// zeros.
	var narrow, wide, padded Moments
	narrow.Add([]float64{1, 2, 3, 4}, 2, 2)
	wide.Add([]float64{1, 2, 0, 3, 4, 0}, 2, 3)
	padded.Merge(&narrow)
	padded.Merge(&Moments{})
	s1, _ := padded.Scaler(3)
	s2, _ := wide.Scaler(3)
	if !slices.Equal(s1.Mean, s2.Mean) || !slices.Equal(s1.Scale, s2.Scale) {
		t.Errorf("padded %v, want %v", s1, s2)
	}
	if _, err := (&Moments{}).Scaler(2); err == nil {
		t.Error("scaler of no rows: no error")
	}
}

// TestCodecs: batches, statistics and the first-pass accumulator survive
// their coders exactly (ZᵀZ by its upper triangle), and truncated or
// inconsistent encodings are errors, not panics or huge allocations.
func TestCodecs(t *testing.T) {
	b := Batch{File: "a,b.csv", Start: 7, Lines: []int64{3, 9}, Cols: 2, X: []float64{1, -2.5, 3e300, 0}, Y: []float64{1, 0},
		Bad: 1, FirstBad: &BadRow{File: "a,b.csv", Line: 4, Err: "e", Text: "t"}, Header: &Header{File: "a,b.csv", Columns: []string{"p", "q"}, Label: "y"}}
	buf, err := EncodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBatch(buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.File != b.File || got.Start != b.Start || !slices.Equal(got.Lines, b.Lines) || got.Cols != 2 || !slices.Equal(got.X, b.X) ||
		!slices.Equal(got.Y, b.Y) || got.Bad != 1 || *got.FirstBad != *b.FirstBad || !slices.Equal(got.Header.Columns, b.Header.Columns) {
		t.Errorf("batch %+v, want %+v", got, b)
	}
	nb := Batch{File: "u", Lines: []int64{1}, Cols: 1, X: []float64{2}}
	if enc, err := EncodeBatch(nb); err != nil {
		t.Fatal(err)
	} else if got, err := DecodeBatch(enc); err != nil || got.Y != nil {
		t.Errorf("unlabelled batch: Y %v, %v", got.Y, err)
	}
	for cut := 0; cut < len(buf); cut += 7 {
		if _, err := DecodeBatch(buf[:cut]); err == nil {
			t.Fatalf("batch cut to %d bytes: no error", cut)
		}
	}

	r := rand.New(rand.NewPCG(3, 4))
	s := &Stats{Rows: 11, Bad: 2}
	for range 2 {
		f := linear.NewStats(4, 3)
		z := mat.NewDense(11, 4, nil)
		y := mat.NewDense(11, 3, nil)
		for i := range 11 {
			for j := range 4 {
				z.Set(i, j, r.NormFloat64())
			}
			y.Set(i, i%3, 1)
		}
		if err := f.Add(z, y); err != nil {
			t.Fatal(err)
		}
		s.Folds = append(s.Folds, f)
	}
	buf, err = EncodeStats(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := 8*4 + 2*8*(3+10+12+4+3+3); len(buf) != want {
		t.Errorf("statistics encode to %d bytes, want %d (upper triangle only)", len(buf), want)
	}
	gs, err := DecodeStats(buf)
	if err != nil {
		t.Fatal(err)
	}
	for f, w := range s.Folds {
		g := gs.Folds[f]
		for i := range 4 {
			for j := i; j < 4; j++ {
				if g.ZtZ[i*4+j] != w.ZtZ[i*4+j] {
					t.Fatalf("fold %d ZtZ[%d,%d] = %v, want %v", f, i, j, g.ZtZ[i*4+j], w.ZtZ[i*4+j])
				}
			}
		}
		if g.N != w.N || !slices.Equal(g.ZtY, w.ZtY) || !slices.Equal(g.SumZ, w.SumZ) || !slices.Equal(g.SumY, w.SumY) || !slices.Equal(g.SumY2, w.SumY2) {
			t.Errorf("fold %d differs after decoding", f)
		}
	}
	if gs.Rows != 11 || gs.Bad != 2 {
		t.Errorf("rows %d bad %d", gs.Rows, gs.Bad)
	}
	for cut := 0; cut < len(buf); cut += 13 {
		if _, err := DecodeStats(buf[:cut]); err == nil {
			t.Fatalf("statistics cut to %d bytes: no error", cut)
		}
	}
	// A header claiming D = 2²⁴ with no data behind it fails before
	// allocating.
	huge := &enc{}
	huge.u64(codecVersion)
	huge.i64(1)
	huge.i64(0)
	huge.u64(1)
	huge.u64(1 << 24)
	huge.u64(1)
	huge.i64(1)
	if _, err := DecodeStats(huge.b); err == nil {
		t.Error("huge statistics header: no error")
	}

	p := &Prep{Rows: 3, Files: map[string]int64{"a": 3}, Width: 2, Moments: Moments{N: 3, Mean: []float64{1, 0.1}, M2: []float64{2, 1e-300}},
		Labels: Labels{Any: true, Max: 4, ClassLike: true}}
	buf, err = EncodePrep(p)
	if err != nil {
		t.Fatal(err)
	}
	gp, err := DecodePrep(buf)
	if err != nil || !slices.Equal(gp.Moments.M2, p.Moments.M2) || gp.Files["a"] != 3 || gp.Labels != p.Labels {
		t.Errorf("prep %+v, %v", gp, err)
	}
}
