package data

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// letterLIBSVM returns rows [0, n) of letter as LIBSVM text, zeros left
// out, with a comment, a blank line, a row of no entries and a
// byte-order mark, as a file of the format may have them.
func letterLIBSVM(n int) string {
	d := Letter()
	var b strings.Builder
	b.WriteString("\uFEFF# letter rows\n")
	for i := range n {
		b.WriteString(strconv.FormatFloat(d.Y[i], 'g', -1, 64))
		for j, v := range d.X.RawRowView(i) {
			if v != 0 {
				b.WriteString(" " + strconv.Itoa(j+1) + ":" + strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		b.WriteString("\n")
		if i == 7 {
			b.WriteString("\n3 # a row of no entries\n")
		}
	}
	return b.String()
}

// TestLIBSVMReaderMatchesReadLIBSVM: streamed in batches of any size, at
// the width ScanLIBSVM finds, LIBSVM rows are those ReadLIBSVM reads,
// label for label and bit for bit, and the row count is the scan's.
func TestLIBSVMReaderMatchesReadLIBSVM(t *testing.T) {
	text := letterLIBSVM(3000)
	want, err := ReadLIBSVM(strings.NewReader(text), 0)
	if err != nil {
		t.Fatal(err)
	}
	width, rows, err := ScanLIBSVM(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if width != want.Cols() || rows != want.Rows() {
		t.Fatalf("scan: width %d, %d rows; ReadLIBSVM: %d, %d", width, rows, want.Cols(), want.Rows())
	}
	for _, size := range []int{1, 7, 1000, 2999, 3001, 0} {
		r, err := NewLIBSVMReader(strings.NewReader(text), width)
		if err != nil {
			t.Fatal(err)
		}
		var xs []*mat.Dense
		var ys []float64
		for {
			b, err := r.ReadBatch(size)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("batches of %d: %v", size, err)
			}
			if n, _ := b.X.Dims(); n == 0 || (size > 0 && n > size) || len(b.Y) != n || b.Weights != nil || b.Targets != nil {
				t.Fatalf("batches of %d: a batch of %d rows, %d labels", size, n, len(b.Y))
			}
			xs, ys = append(xs, b.X), append(ys, b.Y...)
		}
		i := 0
		for _, x := range xs {
			n, _ := x.Dims()
			for k := range n {
				for j, v := range x.RawRowView(k) {
					if w := want.X.At(i, j); v != w {
						t.Fatalf("batches of %d: row %d column %d is %v, ReadLIBSVM's %v", size, i, j, v, w)
					}
				}
				if ys[i] != want.Y[i] {
					t.Fatalf("batches of %d: label %d is %v, ReadLIBSVM's %v", size, i, ys[i], want.Y[i])
				}
				i++
			}
		}
		if i != want.Rows() {
			t.Fatalf("batches of %d: %d rows, want %d", size, i, want.Rows())
		}
	}
}

// TestLIBSVMStreamErrors: the streaming reader and the scan refuse what
// ReadLIBSVM refuses, with its messages (line numbers counted over the
// whole file), and a width outside 1 to MaxDim.
func TestLIBSVMStreamErrors(t *testing.T) {
	for _, c := range []struct{ in, msg string }{
		{"1 1:1\n2 2:x\n", "line 2, index 2"},
		{"1 1:1\n\n1 2:1 1:1\n", "line 3: indices not increasing"},
		{"1 1:1\nNaN 1:1\n", "line 2: label"},
		{"1 1:1\n1 0:1\n", "line 2: feature index 0"},
		{"1 1:1\n1 3\n", "is not index:value"},
	} {
		_, rerr := ReadLIBSVM(strings.NewReader(c.in), 0)
		_, _, serr := ScanLIBSVM(strings.NewReader(c.in))
		r, err := NewLIBSVMReader(strings.NewReader(c.in), 4)
		if err != nil {
			t.Fatal(err)
		}
		_, berr := r.ReadBatch(0)
		for _, err := range []error{rerr, serr, berr} {
			if err == nil || !strings.Contains(err.Error(), c.msg) || err.Error() != rerr.Error() {
				t.Errorf("%q: %v, want ReadLIBSVM's %v (%s)", c.in, err, rerr, c.msg)
			}
		}
	}
	r, err := NewLIBSVMReader(strings.NewReader("1 1:1\n1 5:1\n"), 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadBatch(0); err == nil || !strings.Contains(err.Error(), "line 2: feature index 5 is beyond the width 4") {
		t.Errorf("index beyond the width: %v", err)
	}
	for _, in := range []string{"", "# only a comment\n\n", "1\n2 # no features\n"} {
		if _, _, err := ScanLIBSVM(strings.NewReader(in)); err == nil {
			t.Errorf("ScanLIBSVM(%q) accepted it", in)
		}
	}
	for _, w := range []int{0, -1, 1<<24 + 1} {
		if _, err := NewLIBSVMReader(strings.NewReader("1 1:1\n"), w); err == nil {
			t.Errorf("width %d accepted", w)
		}
	}
	// An endless line is refused after the limit, by line.
	defer func(n int) { maxLineBytes = n }(maxLineBytes)
	maxLineBytes = 1 << 10
	endless := io.MultiReader(strings.NewReader("1 1:1\n2 "), io.LimitReader(&repeater{unit: "1:1 "}, 64<<20))
	_, _, err = ScanLIBSVM(endless)
	checkMessage(t, "endless LIBSVM line, scanned", err, "line 2", "longer than the limit of 1 KiB")
}

// TestFileFormatAndLIBSVMFile: FileFormat decides as Open does, and a
// LIBSVMFile names the file in its errors.
func TestFileFormatAndLIBSVMFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	svm := write("rows.txt", "1 1:0.5 3:2\n0 2:1\n")
	csvf := write("rows.dat", "a,b,y\n1,2,0\n")
	ext := write("rows.svm", "a,b,y\n")
	for _, c := range []struct{ path, format, want string }{
		{svm, "auto", "libsvm"}, {svm, "", "libsvm"}, {csvf, "auto", "csv"}, {ext, "auto", "libsvm"}, {svm, "csv", "csv"},
	} {
		if got, err := FileFormat(c.path, c.format); err != nil || got != c.want {
			t.Errorf("FileFormat(%s, %q) = %q, %v; want %q", filepath.Base(c.path), c.format, got, err, c.want)
		}
	}
	if _, err := FileFormat(svm, "tsv"); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("format tsv: %v", err)
	}
	width, err := LIBSVMFileWidth(svm)
	if err != nil || width != 3 {
		t.Fatalf("width %d, %v; want 3", width, err)
	}
	f, err := OpenLIBSVM(svm, width)
	if err != nil {
		t.Fatal(err)
	}
	x, y, err := f.Read(0)
	if err != nil {
		t.Fatal(err)
	}
	if want := mat.NewDense(2, 3, []float64{0.5, 0, 2, 0, 1, 0}); !mat.Equal(x, want) || len(y) != 2 || y[0] != 1 || y[1] != 0 {
		t.Errorf("rows %v, labels %v", mat.Formatted(x), y)
	}
	if _, _, err := f.Read(0); err != io.EOF {
		t.Errorf("after the last row: %v, want io.EOF", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	bad := write("bad.svm", "1 1:1\n1 2:z\n")
	if _, err := LIBSVMFileWidth(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Errorf("scan error %v does not name the file", err)
	}
	if f, err = OpenLIBSVM(bad, 2); err != nil {
		t.Fatal(err)
	}
	_, err = f.ReadBatch(0)
	if err == nil || !strings.HasPrefix(err.Error(), bad+": ") || errors.Is(err, io.EOF) {
		t.Errorf("read error %v does not name the file", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
