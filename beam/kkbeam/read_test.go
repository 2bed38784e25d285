package kkbeam

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
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

// TestPrepCensus: the first pass's accumulator is model's census. Prep
// accumulators of the batches of two workers, merged in another order
// than the rows' and through their coder, give model.Census's plan of all
// the rows in one census: the same classes, columns and rows, the scaler
// to rounding (the pairwise merge in another order: the means within
// 2·n·u·max|x|, u the unit roundoff); a narrower LIBSVM batch counts as
// zeros in its missing columns; a label that is no class index is
// reported with its file and line.
func TestPrepCensus(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const cols = 5
	want, err := model.NewCensus(model.Options{Task: model.Classification, Standardize: true})
	if err != nil {
		t.Fatal(err)
	}
	left, err := newPrep(model.Classification, true)
	if err != nil {
		t.Fatal(err)
	}
	right, err := newPrep(model.Classification, true)
	if err != nil {
		t.Fatal(err)
	}
	var start int64
	for b := range 7 {
		n := 1 + r.IntN(50)
		x := make([]float64, n*cols)
		y := make([]float64, n)
		lines := make([]int64, n)
		for i := range x {
			x[i] = 100 + 10*r.NormFloat64()
		}
		for i := range n {
			x[i*cols+cols-1] = 42 // a constant column
			y[i] = float64(r.IntN(3))
			lines[i] = start + int64(i) + 2
		}
		if err := want.Add(&data.Batch{X: mat.NewDense(n, cols, x), Y: y}); err != nil {
			t.Fatal(err)
		}
		batch := Batch{File: "f", Start: start, Lines: lines, Cols: cols, X: x, Y: y}
		p := left
		if b%2 == 1 {
			p = right
		}
		if err := p.Add(&batch, model.Classification, true); err != nil {
			t.Fatal(err)
		}
		start += int64(n)
	}
	enc, err := EncodePrep(left)
	if err != nil {
		t.Fatal(err)
	}
	dl, err := DecodePrep(enc)
	if err != nil {
		t.Fatal(err)
	}
	if err := right.Merge(dl); err != nil {
		t.Fatal(err)
	}
	opt := model.Options{Task: model.Classification, Standardize: true}
	wp, err := want.Plan(opt)
	if err != nil {
		t.Fatal(err)
	}
	gp, err := right.Census.Plan(opt)
	if err != nil {
		t.Fatal(err)
	}
	if gp.Rows != wp.Rows || gp.Cols != wp.Cols || gp.Classes != wp.Classes || right.Rows != int64(wp.Rows) || right.Files["f"] != int64(wp.Rows) {
		t.Fatalf("merged plan %+v, want %+v", gp, wp)
	}
	var classRows int64
	for _, n := range right.FileClasses["f"] {
		classRows += n
	}
	if classRows != int64(wp.Rows) {
		t.Errorf("class rows of the file add up to %d, want %d", classRows, wp.Rows)
	}
	const u = 0x1p-53
	bound := 2 * float64(wp.Rows) * u * 150 // |x| < 150 for these draws
	for j := range cols {
		if d := math.Abs(gp.Scaler.Mean[j] - wp.Scaler.Mean[j]); d > bound {
			t.Errorf("column %d: means differ by %.3g, bound %.3g", j, d, bound)
		}
	}
	if gp.Scaler.Scale[cols-1] != 1 {
		t.Errorf("constant column scaled by %v, want 1", gp.Scaler.Scale[cols-1])
	}

	// LIBSVM: a narrower batch's missing columns are zeros.
	wide, err := newPrep(model.Regression, true)
	if err != nil {
		t.Fatal(err)
	}
	padded, err := newPrep(model.Regression, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []Batch{
		{File: "a.svm", Lines: []int64{1, 2}, Cols: 3, X: []float64{1, 2, 0, 3, 4, 0}, Y: []float64{0.5, 1}},
		{File: "b.svm", Lines: []int64{1}, Cols: 3, X: []float64{5, 6, 7}, Y: []float64{2}},
	} {
		if err := wide.Add(&b, model.Regression, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []Batch{
		{File: "b.svm", Lines: []int64{1}, Cols: 3, X: []float64{5, 6, 7}, Y: []float64{2}},
		{File: "a.svm", Lines: []int64{1, 2}, Cols: 2, X: []float64{1, 2, 3, 4}, Y: []float64{0.5, 1}},
	} {
		if err := padded.Add(&b, model.Regression, true); err != nil {
			t.Fatal(err)
		}
	}
	ro := model.Options{Task: model.Regression, Standardize: true}
	pw, err := wide.Census.Plan(ro)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := padded.Census.Plan(ro)
	if err != nil {
		t.Fatal(err)
	}
	if pp.Cols != 3 || relDiff(pp.Scaler.Mean, pw.Scaler.Mean) > 4*u || relDiff(pp.Scaler.Scale, pw.Scaler.Scale) > 16*u {
		t.Errorf("padded scaler %v, want %v", pp.Scaler, pw.Scaler)
	}

	// A label that is no class index: its file and line.
	bad, err := newPrep(model.Classification, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Add(&Batch{File: "c.csv", Lines: []int64{2, 5}, Cols: 1, X: []float64{1, 2}, Y: []float64{1, 2.5}}, model.Classification, false); err != nil {
		t.Fatal(err)
	}
	if bad.Err == nil || bad.Err.Line != 5 || !strings.Contains(bad.Err.Error(), "c.csv: line 5: model: label 2.5 is not a class index") {
		t.Errorf("bad label: %v", bad.Err)
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
	if want := 8*4 + 2*8*(5+10+12+4+3+3); len(buf) != want {
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
	huge.u64(0)
	huge.f64(0)
	if _, err := DecodeStats(huge.b); err == nil {
		t.Error("huge statistics header: no error")
	}

	p, err := newPrep(model.Classification, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Add(&Batch{File: "a", Lines: []int64{2, 3, 4}, Cols: 2, X: []float64{1, 0.1, 2, 0.2, 0, 1e-300}, Y: []float64{0, 1, 4}},
		model.Classification, true); err != nil {
		t.Fatal(err)
	}
	buf, err = EncodePrep(p)
	if err != nil {
		t.Fatal(err)
	}
	gp, err := DecodePrep(buf)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EncodePrep(gp)
	if err != nil || !bytes.Equal(again, buf) || gp.Files["a"] != 3 || !slices.Equal(gp.FileClasses["a"], []int64{1, 1, 0, 0, 1}) {
		t.Errorf("prep %+v, %v: encodes to %s, want %s", gp, err, again, buf)
	}
	if _, err := DecodePrep([]byte(`{"Rows":1}`)); err == nil {
		t.Error("prep without a census: no error")
	}
}
