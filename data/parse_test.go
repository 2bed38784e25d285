package data

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// checkMessage fails unless err is a one-line message shorter than 200
// bytes containing every string of want.
func checkMessage(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted, want an error containing %q", what, want)
		return
	}
	msg := err.Error()
	if len(msg) >= 200 || strings.ContainsAny(msg, "\n\r") {
		t.Errorf("%s: message of %d bytes or several lines: %.300q", what, len(msg), msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: message %.300q lacks %q", what, msg, w)
		}
	}
}

// TestCSVByteOrderMark: a UTF-8 byte-order mark is not part of the first
// column's name (the example lost it into the name).
func TestCSVByteOrderMark(t *testing.T) {
	in := "\xEF\xBB\xBFa,b,y\n1,2,0\n"
	d, err := ReadCSV(strings.NewReader(in), CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Names[0] != "a" || d.Names[1] != "b" || d.Label != "y" || d.X.At(0, 0) != 1 {
		t.Errorf("names %q, label %q, x %v", d.Names, d.Label, d.X.RawMatrix().Data)
	}
	if d, err := ReadCSV(strings.NewReader(in), CSVOptions{Label: "a"}); err != nil || d.Y[0] != 1 || d.Names[0] != "b" {
		t.Errorf("label the first column by name: %v", err)
	}
	// A BOM alone, or followed by a LIBSVM row.
	checkMessage(t, "BOM only", func() error { _, err := ReadCSV(strings.NewReader("\xEF\xBB\xBF"), CSVOptions{}); return err }(), "empty")
	ds, err := ReadLIBSVM(strings.NewReader("\xEF\xBB\xBF2 1:3\n"), 0)
	if err != nil || ds.Y[0] != 2 || ds.X.At(0, 0) != 3 {
		t.Errorf("LIBSVM with a BOM: %v", err)
	}
}

// TestCSVNumbers lists the cells accepted (plain decimal numbers, with
// their exact values) and rejected (everything else strconv.ParseFloat
// accepts, and non-numbers), by both the whole-file and the streaming
// reader.
func TestCSVNumbers(t *testing.T) {
	for _, c := range []struct {
		cell string
		want float64
	}{
		{"1", 1}, {"-1.5", -1.5}, {"+2", 2}, {".5", 0.5}, {"5.", 5}, {"1e3", 1000}, {"1E-3", 0.001},
		{"-2.5e+2", -250}, {"007", 7}, {" 7 ", 7}, {`"8"`, 8}, {"1e-400", 0}, {"-0", 0},
		{"1.7976931348623157e308", math.MaxFloat64},
	} {
		d, err := ReadCSV(strings.NewReader("a,y\n"+c.cell+",0\n"), CSVOptions{})
		if err != nil {
			t.Errorf("%q: %v", c.cell, err)
			continue
		}
		if got := d.X.At(0, 0); got != c.want {
			t.Errorf("%q read as %v, want %v", c.cell, got, c.want)
		}
	}
	for _, c := range []struct{ cell, want string }{
		{"1_000", "not a number"},
		{"1_0.5", "not a number"},
		{"0x1p4", "not a number"},
		{"0x10", "not a number"},
		{"0b101", "not a number"},
		{"Inf", "not finite"},
		{"+Inf", "not finite"},
		{"-inf", "not finite"},
		{"infinity", "not finite"},
		{"-Infinity", "not finite"},
		{"NaN", "not finite"},
		{"nan", "not finite"},
		{"1e400", "not finite"},
		{"-1e309", "not finite"},
		{"", "not a number"},
		{"x", "not a number"},
		{".", "not a number"},
		{"+", "not a number"},
		{"-.e1", "not a number"},
		{"e5", "not a number"},
		{"1e", "not a number"},
		{"1e+", "not a number"},
		{"1.5.2", "not a number"},
		{"--1", "not a number"},
		{"1 2", "not a number"},
		{"١", "not a number"}, // Arabic-Indic digit one
		{"1,5", "fields"},     // two cells: a decimal comma is not a number
	} {
		in := "a,y\n" + c.cell + ",0\n"
		_, err := ReadCSV(strings.NewReader(in), CSVOptions{})
		checkMessage(t, fmt.Sprintf("cell %q", c.cell), err, c.want, "line 2")
		r, err := NewCSVReader(strings.NewReader(in), CSVOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = r.Read(1)
		checkMessage(t, fmt.Sprintf("streamed cell %q", c.cell), err, c.want, "line 2")
	}
	// The label column is held to the same rule.
	_, err := ReadCSV(strings.NewReader("a,y\n1,0x1\n"), CSVOptions{})
	checkMessage(t, "hexadecimal label", err, "line 2, column 2", "not a number")
}

// TestLongCellMessage: an error caused by a 20 MB cell quotes a short
// prefix of it with its length, on one line, with file line and column.
func TestLongCellMessage(t *testing.T) {
	big := strings.Repeat("9x", 10<<20)
	_, err := ReadCSV(strings.NewReader("a,b,y\n1,2,0\n3,"+big+",1\n"), CSVOptions{})
	checkMessage(t, "20 MB cell", err, "line 3, column 2", `"9x9x`, "(20971520 bytes)")
	bin := strings.Repeat("\x00", 1000)
	_, err = ReadCSV(strings.NewReader("a,y\n"+bin+",0\n"), CSVOptions{})
	checkMessage(t, "1000 NUL bytes", err, "line 2, column 1", `\x00`, "(1000 bytes)")
	// The line of a cell after a quoted field spanning lines is the
	// cell's own line.
	_, err = ReadCSV(strings.NewReader("a,b,y\n\"1\n\",x,0\n"), CSVOptions{})
	checkMessage(t, "cell after a multi-line field", err, "line 3, column 2")
	_, err = ReadLIBSVM(strings.NewReader("1 1:"+big+"\n"), 0)
	checkMessage(t, "20 MB LIBSVM value", err, "line 1", "(20971520 bytes)")
	_, err = ReadLIBSVM(strings.NewReader("1 "+big+"\n"), 0)
	checkMessage(t, "20 MB LIBSVM token", err, "line 1", "(20971520 bytes)")
	_, err = ReadLIBSVM(strings.NewReader("1 "+strings.Repeat("7", 1<<20)+":1\n"), 0)
	checkMessage(t, "1 MB index", err, "line 1", "above the limit", "(1048576 digits)")
}

// TestLIBSVMLimits: sizes in a LIBSVM file are checked before anything of
// that size is allocated.
func TestLIBSVMLimits(t *testing.T) {
	lim := fmt.Sprint(limits.MaxDim)
	for _, c := range []struct {
		name, in string
		dim      int
		want     []string
	}{
		// The fuzzer's example: a few bytes that asked for a dense
		// matrix of 44440444444 columns.
		{"fuzzer's huge index", "1 44440444444:10\n", 0, []string{"line 1", "44440444444", "above the limit " + lim}},
		{"index past int64", "1 1:1\n0 99999999999999999999999:1\n", 0, []string{"line 2", "above the limit"}},
		{"index one past the limit", fmt.Sprintf("1 %d:1\n", limits.MaxDim+1), 0, []string{"above the limit " + lim}},
		{"index past the limit with a width", "1 44440444444:10\n", 5, []string{"above the limit"}},
		{"width past the limit", "1 1:1\n", limits.MaxDim + 1, []string{"width", "limit"}},
		// 65 rows of width 2²⁴ are 2³⁰ + 2²⁴ values: refused at line 65.
		{"matrix past the limit", strings.Repeat(fmt.Sprintf("1 %d:1\n", limits.MaxDim), 65), 0, []string{"line 65", "8.1 GiB (limit 8 GiB)"}},
		{"matrix past the limit by the width", strings.Repeat("1 1:1\n", 65), limits.MaxDim, []string{"line 65", "limit 8 GiB"}},
		{"index 0", "1 0:1\n", 0, []string{"line 1", "start at 1"}},
		{"index 000", "1 000:1\n", 0, []string{"start at 1"}},
		{"negative index", "1 -3:1\n", 0, []string{"not a positive integer"}},
		{"signed index", "1 +3:1\n", 0, []string{"not a positive integer"}},
		{"hexadecimal index", "1 0x3:1\n", 0, []string{"not a positive integer"}},
		{"index with a separator", "1 1_0:1\n", 0, []string{"not a positive integer"}},
		{"decreasing", "1 2:1 1:1\n", 0, []string{"not increasing"}},
		{"repeated", "1 2:1 2:1\n", 0, []string{"not increasing"}},
		{"value 1_000", "1 1:1_000\n", 0, []string{"line 1, index 1", "not a number"}},
		{"value 0x1p4", "1 1:0x1p4\n", 0, []string{"not a number"}},
		{"value NaN", "1 1:NaN\n", 0, []string{"not finite"}},
		{"value Inf", "1 1:Inf\n", 0, []string{"not finite"}},
		{"value infinity", "1 1:-infinity\n", 0, []string{"not finite"}},
		{"value 1e999", "1 1:1e999\n", 0, []string{"not finite"}},
		{"label 0x1p0", "0x1p0 1:1\n", 0, []string{"label", "not a number"}},
		{"label 1_0", "1_0 1:1\n", 0, []string{"label", "not a number"}},
		{"label NaN", "NaN 1:1\n", 0, []string{"label", "not finite"}},
		{"no colon", "1 1\n", 0, []string{"not index:value"}},
		{"no rows", "# only a comment\n\n", 0, []string{"no rows"}},
		{"no features", "1\n2\n", 0, []string{"no features"}},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ReadLIBSVM(strings.NewReader(c.in), c.dim)
		runtime.ReadMemStats(&after)
		checkMessage(t, c.name, err, c.want...)
		// Nothing of the refused size was allocated: a few bytes of
		// input allocate at most a few MiB (the read buffers).
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
			t.Errorf("%s: allocated %s before refusing", c.name, limits.Bytes(float64(grew)))
		}
	}
}

// TestLIBSVMWidth: with the width of the model or training data given, a
// file whose largest index is smaller is read at that width (missing
// features are zero) and a larger index is an error; without it the width
// is the largest index.
func TestLIBSVMWidth(t *testing.T) {
	in := "1 2:0.5\n0 1:-3 3:4 # comment\n\n-1\n"
	for _, c := range []struct {
		dim, width int
	}{{0, 3}, {-1, 3}, {3, 3}, {7, 7}} {
		d, err := ReadLIBSVM(strings.NewReader(in), c.dim)
		if err != nil {
			t.Errorf("dim %d: %v", c.dim, err)
			continue
		}
		want := make([]float64, 3*c.width)
		want[1] = 0.5
		want[c.width] = -3
		want[c.width+2] = 4
		if d.Rows() != 3 || d.Cols() != c.width || fmt.Sprint(d.X.RawMatrix().Data) != fmt.Sprint(want) {
			t.Errorf("dim %d: %d×%d %v, want 3×%d %v", c.dim, d.Rows(), d.Cols(), d.X.RawMatrix().Data, c.width, want)
		}
		if fmt.Sprint(d.Y) != "[1 0 -1]" || d.Names != nil {
			t.Errorf("dim %d: labels %v, names %q", c.dim, d.Y, d.Names)
		}
	}
	_, err := ReadLIBSVM(strings.NewReader(in), 2)
	checkMessage(t, "index 3 with width 2", err, "line 2", "index 3", "width 2")
	// A training width of 2²⁴ with one row is accepted (128 MiB).
	if !testing.Short() {
		d, err := ReadLIBSVM(strings.NewReader("1 5:2\n"), limits.MaxDim)
		if err != nil || d.Cols() != limits.MaxDim || d.X.At(0, 4) != 2 {
			t.Errorf("width 2²⁴: %v", err)
		}
	}
}
