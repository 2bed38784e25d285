package data

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// lineGate reads from r and passes a line on (up to and including its
// '\n') only once it has read the whole of it, so that a line longer than
// maxLineBytes is refused after at most that many bytes of it have been
// read — into blocks of gateBlock bytes, never copied — and never reaches
// the readers above. Those grow their buffers by copying (bufio.Scanner
// doubles, encoding/csv appends, then copies the record twice more), which
// cost five to seven times the limit in allocations for one endless line
// (reading /dev/zero: 1.1–1.5 GB for the 256 MiB limit); behind the gate
// an endless line costs the limit and a block. The bytes after the last
// '\n' of r are passed on at its end. Lines read whole in one read of r
// are shorter than a block and passed on whatever the limit: the readers
// above hold every line to the limit exactly.
type lineGate struct {
	r      io.Reader
	limit  int      // the longest line passed on, '\n' excluded ("\r" allowed beyond maxLineBytes)
	blocks [][]byte // the buffered bytes, in order, from blocks[0][off]
	off    int
	ready  int      // buffered bytes that may be passed on: whole lines (all at the end of r)
	tail   int      // buffered bytes after them: a line not yet ended
	err    error    // r's error, or errLineTooLong; returned once the ready bytes are passed on
	spare  [][]byte // consumed blocks kept for reuse
}

// gateBlock is the size of a lineGate's blocks.
const gateBlock = 64 << 10

// errLineTooLong is the error of a line longer than maxLineBytes.
var errLineTooLong = errors.New("line too long")

// lineTooLong is the error message of errLineTooLong, with the limit.
type lineTooLong struct{}

func (lineTooLong) Error() string {
	return fmt.Sprintf("a line is longer than the limit of %s", limits.Bytes(float64(maxLineBytes)))
}
func (lineTooLong) Unwrap() error { return errLineTooLong }

// newLineGate returns a lineGate over r with the limit maxLineBytes.
func newLineGate(r io.Reader) *lineGate {
	return &lineGate{r: r, limit: maxLineBytes + 1}
}

func (g *lineGate) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for empty := 0; g.ready == 0; {
		if g.err != nil {
			if g.err == io.EOF && g.tail > 0 { // a last line without '\n'
				g.ready, g.tail = g.tail, 0
				break
			}
			return 0, g.err
		}
		n := g.fill()
		if n > 0 {
			empty = 0
		} else if empty++; empty == 100 {
			return 0, io.ErrNoProgress
		}
	}
	n := 0
	for n < len(p) && g.ready > 0 {
		b := g.blocks[0]
		c := copy(p[n:], b[g.off:min(len(b), g.off+g.ready)])
		n, g.off, g.ready = n+c, g.off+c, g.ready-c
		if g.off < len(b) {
			continue
		}
		// Block consumed: the last one is emptied for more bytes, the
		// others are kept for reuse (a few) or let go.
		g.off = 0
		if len(g.blocks) == 1 {
			g.blocks[0] = b[:0]
			continue
		}
		if len(g.spare) < 2 {
			g.spare = append(g.spare, b[:0])
		}
		g.blocks[0] = nil
		g.blocks = g.blocks[1:]
	}
	return n, nil
}

// fill reads once from r into the last block, or a new one if it is
// full, and returns the number of bytes read.
func (g *lineGate) fill() int {
	last := len(g.blocks) - 1
	if last < 0 || len(g.blocks[last]) == cap(g.blocks[last]) {
		var b []byte
		if k := len(g.spare); k > 0 {
			b, g.spare = g.spare[k-1], g.spare[:k-1]
		} else {
			b = make([]byte, 0, gateBlock)
		}
		g.blocks = append(g.blocks, b)
		last++
	}
	b := g.blocks[last]
	start := len(b)
	n, err := g.r.Read(b[start:cap(b)])
	b = b[:start+n]
	g.blocks[last] = b
	switch i := bytes.LastIndexByte(b[start:], '\n'); {
	case i < 0:
		g.tail += n
	case g.tail+bytes.IndexByte(b[start:], '\n') > g.limit:
		// The line that ends here began in an earlier block and is too
		// long: pass on the lines before it only. (Lines within one read
		// are shorter than a block; the readers above hold them to the
		// limit exactly.)
		g.err = lineTooLong{}
		return n
	default:
		g.ready += g.tail + i + 1
		g.tail = n - i - 1
	}
	switch {
	case g.tail > g.limit:
		g.err = lineTooLong{}
	case err != nil:
		g.err = err
	}
	return n
}

// MaxLineBytes is the longest line of a LIBSVM file, and the longest
// record of a CSV file, that the readers accept: 256 MiB. It bounds the
// memory one line can take before it is parsed.
const MaxLineBytes = 1 << 28

// maxLineBytes is MaxLineBytes; tests lower it.
var maxLineBytes = MaxLineBytes

// bom is the UTF-8 byte-order mark.
var bom = []byte{0xEF, 0xBB, 0xBF}

// skipBOM returns a buffered reader of r past a leading UTF-8 byte-order
// mark, if there is one.
func skipBOM(r io.Reader) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	b, err := br.Peek(len(bom))
	if err != nil && err != io.EOF {
		return nil, err
	}
	if bytes.Equal(b, bom) {
		if _, err := br.Discard(len(bom)); err != nil {
			return nil, err
		}
	}
	return br, nil
}
