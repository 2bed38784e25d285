package data

import (
	"io"
	"strings"
	"testing"
)

// TestLineLimit: a CSV record or LIBSVM line longer than the limit is
// refused once the limit (plus the buffers' read-ahead) has been read, not
// read whole. The limit is lowered to 1 KiB for the test.
func TestLineLimit(t *testing.T) {
	defer func(n int) { maxLineBytes = n }(maxLineBytes)
	maxLineBytes = 1 << 10
	endless := func(prefix, unit string) io.Reader {
		// 64 MiB without a line end, generated as it is read.
		return io.MultiReader(strings.NewReader(prefix), io.LimitReader(&repeater{unit: unit}, 64<<20))
	}
	r := &countingReader{r: endless("a,y\n\"", "1")}
	_, err := ReadCSV(r, CSVOptions{})
	checkMessage(t, "endless quoted CSV cell", err, "after line 1", "longer than the limit of 1 KiB")
	if r.n > 1<<20 {
		t.Errorf("CSV: read %d bytes before refusing", r.n)
	}
	r = &countingReader{r: endless("", "a")}
	_, err = ReadCSV(r, CSVOptions{})
	checkMessage(t, "endless CSV header", err, "header", "longer than the limit of 1 KiB")
	r = &countingReader{r: endless("1 1:1\n2 ", "1:1 ")}
	_, err = ReadLIBSVM(r, 0)
	checkMessage(t, "endless LIBSVM line", err, "line 2", "longer than the limit of 1 KiB")
	if r.n > 1<<20 {
		t.Errorf("LIBSVM: read %d bytes before refusing", r.n)
	}
	// Records of many short lines count as one record.
	_, err = ReadCSV(endless("a,y\n\"", "1\n"), CSVOptions{})
	checkMessage(t, "quoted cell of endless lines", err, "longer than the limit")
	// Records just under the limit, many of them, are fine.
	long := "a,y\n" + strings.Repeat(strings.Repeat("0", 999)+"1,0\n", 5000)
	if d, err := ReadCSV(strings.NewReader(long), CSVOptions{}); err != nil || d.Rows() != 5000 {
		t.Errorf("5000 records of 1003 bytes: %v", err)
	}
}

// repeater reads unit over and over.
type repeater struct {
	unit string
	at   int
}

func (r *repeater) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.unit[r.at]
		r.at = (r.at + 1) % len(r.unit)
	}
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
