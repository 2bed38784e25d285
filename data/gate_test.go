package data

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// TestEndlessLineMemory (issue 22): reading endless zero bytes without a
// line end (/dev/zero) is refused, and the bytes allocated meanwhile stay
// near the line limit, lowered here to 8 MiB: at most the limit and 1 MiB
// (the line gate's blocks of 64 KiB hold the limit and one block; the
// buffers above it are 64 KiB each), for CSV (whole, streamed, and through
// Open from a file with no known extension), LIBSVM, and /dev/zero itself
// where there is one. The readers above the gate grew their buffers by
// copying: five to seven times the limit for CSV, twice for LIBSVM.
func TestEndlessLineMemory(t *testing.T) {
	defer func(n int) { maxLineBytes = n }(maxLineBytes)
	maxLineBytes = 8 << 20
	const slack = 1 << 20
	zeros := func(prefix string) io.Reader {
		return io.MultiReader(strings.NewReader(prefix), &repeater{unit: "\x00"})
	}
	cases := []struct {
		name string
		read func() error
		want string
	}{
		{"CSV header", func() error { _, err := ReadCSV(zeros(""), CSVOptions{}); return err }, "header"},
		{"CSV record", func() error { _, err := ReadCSV(zeros("a,y\n"), CSVOptions{}); return err }, "after line 1"},
		{"CSV stream", func() error {
			r, err := NewCSVReader(zeros("a,y\n1,0\n"), CSVOptions{})
			if err != nil {
				return err
			}
			_, err = r.ReadBatch(10)
			return err
		}, "after line 2"},
		{"LIBSVM", func() error { _, err := ReadLIBSVM(zeros("1 1:1\n"), 0); return err }, "LIBSVM line 2"},
		{"LIBSVM first line", func() error { _, err := ReadLIBSVM(zeros(""), 0); return err }, "LIBSVM line 1"},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases = append(cases, struct {
			name string
			read func() error
			want string
		}{"Open /dev/zero", func() error { _, err := Open("/dev/zero", OpenOptions{}); return err }, "/dev/zero"})
	}
	for _, c := range cases {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := c.read()
		runtime.ReadMemStats(&after)
		grew := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d KiB allocated (limit %d KiB): %v", c.name, grew>>10, maxLineBytes>>10, err)
		checkMessage(t, c.name, err, c.want, "longer than the limit of 8 MiB")
		if grew > uint64(maxLineBytes+slack) {
			t.Errorf("%s: %d KiB allocated, want at most the line limit and %d KiB, %d KiB", c.name, grew>>10, slack>>10, (maxLineBytes+slack)>>10)
		}
	}
}

// TestLineGate: the gate passes any stream on unchanged — lines of every
// length up to the limit, a last line without '\n', CRLF endings — through
// reads of one byte and of any size, and refuses a line one byte over the
// limit ("\r" aside) after the lines before it.
func TestLineGate(t *testing.T) {
	defer func(n int) { maxLineBytes = n }(maxLineBytes)
	maxLineBytes = 100 << 10 // more than a block
	var b strings.Builder
	for i := range 300 {
		b.WriteString(strings.Repeat("x", i*i%(maxLineBytes+1)))
		if i%7 == 0 {
			b.WriteByte('\r')
		}
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat("y", maxLineBytes)) // last line, no '\n'
	in := b.String()
	for _, wrap := range []struct {
		name string
		r    func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte", iotest.OneByteReader},
		{"half", iotest.HalfReader},
	} {
		out, err := io.ReadAll(newLineGate(wrap.r(strings.NewReader(in))))
		if err != nil || !bytes.Equal(out, []byte(in)) {
			t.Errorf("%s: %d of %d bytes passed on, error %v", wrap.name, len(out), len(in), err)
		}
		for _, extra := range []string{"", "\n"} {
			over := "a\nbb\n" + strings.Repeat("z", maxLineBytes+2) + extra
			out, err = io.ReadAll(newLineGate(wrap.r(strings.NewReader(over))))
			if string(out) != "a\nbb\n" || err == nil || !strings.Contains(err.Error(), "longer than the limit of 100 KiB") {
				t.Errorf("%s: a line over the limit: passed %q…, error %v", wrap.name, out[:min(len(out), 10)], err)
			}
		}
	}
}
