package tasks

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// MaxLineBytes bounds a line of a TSV file, its end ("\n" or "\r\n")
// excluded (an LRA ListOps source of 2000 tokens with its parentheses is
// about 10 kB): 4 MiB.
const MaxLineBytes = 1 << 22

// LineTooLongError reports a TSV line longer than MaxLineBytes; Line
// counts from 1 (the header).
type LineTooLongError struct {
	Line int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("tasks: line %d is longer than the limit of %s (tasks.MaxLineBytes)", e.Line, limits.Bytes(MaxLineBytes))
}

// bom is the UTF-8 byte-order mark, which some editors put at the start of
// a file.
const bom = "\uFEFF"

// WriteTSV writes samples in the LRA format: a header "Source\tTarget" and
// one row per sample, rows ended by "\r\n" as Python's csv writer (which
// the LRA generator uses) ends them.
func WriteTSV(w io.Writer, samples []Sample) error {
	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString("Source\tTarget\r\n"); err != nil {
		return err
	}
	for i, s := range samples {
		if strings.ContainsAny(s.Source, "\t\r\n\"") {
			return fmt.Errorf("tasks: sample %d: a source cannot hold tabs, quotes or line breaks", i)
		}
		if _, err := fmt.Fprintf(bw, "%s\t%d\r\n", s.Source, s.Target); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadTSV reads a file in the LRA format: a header naming the columns
// Source and Target (in either order, other columns ignored), then one
// sample per line; "\n" or "\r\n" line ends; blank lines are skipped; a
// leading UTF-8 byte-order mark is skipped. The target must be an integer
// in [0, classes). Each sample records its line (the header is line 1). A
// line longer than MaxLineBytes is a *LineTooLongError, found after at
// most MaxLineBytes + 2 bytes of it are buffered.
func ReadTSV(r io.Reader, classes int) ([]Sample, error) {
	sc := bufio.NewScanner(r)
	// Room for the longest line and its "\r\n": the length is checked
	// below without the line end, so the limit is exact either way.
	sc.Buffer(make([]byte, 64*1024), MaxLineBytes+2)
	if !sc.Scan() {
		if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
			return nil, &LineTooLongError{Line: 1}
		} else if err != nil {
			return nil, fmt.Errorf("tasks: reading the header: %w", err)
		}
		return nil, errors.New("tasks: empty TSV file (want a header Source<TAB>Target)")
	}
	head := strings.TrimSuffix(strings.TrimPrefix(sc.Text(), bom), "\r")
	if len(head) > MaxLineBytes {
		return nil, &LineTooLongError{Line: 1}
	}
	header := strings.Split(head, "\t")
	src, tgt := -1, -1
	for i, h := range header {
		switch strings.TrimSpace(h) {
		case "Source":
			src = i
		case "Target":
			tgt = i
		}
	}
	if src < 0 || tgt < 0 {
		return nil, fmt.Errorf("tasks: the TSV header %.60q lacks Source and Target columns", head)
	}
	var out []Sample
	line := 1
	for sc.Scan() {
		line++
		text := strings.TrimSuffix(sc.Text(), "\r")
		if len(text) > MaxLineBytes {
			return nil, &LineTooLongError{Line: line}
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != len(header) {
			return nil, fmt.Errorf("tasks: line %d has %d fields, the header %d", line, len(f), len(header))
		}
		y, err := strconv.Atoi(strings.TrimSpace(f[tgt]))
		if err != nil || y < 0 || y >= classes {
			return nil, fmt.Errorf("tasks: line %d: target %.20q is not a class in [0, %d)", line, f[tgt], classes)
		}
		out = append(out, Sample{Source: f[src], Target: y, Line: line})
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, &LineTooLongError{Line: line + 1}
	} else if err != nil {
		return nil, fmt.Errorf("tasks: line %d: %w", line+1, err)
	}
	if len(out) == 0 {
		return nil, errors.New("tasks: the TSV file has no samples")
	}
	return out, nil
}
