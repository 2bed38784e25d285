package tasks

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MaxLineBytes bounds a line of a TSV file (an LRA ListOps source of 2000
// tokens with its parentheses is about 10 kB).
const MaxLineBytes = 1 << 22

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
// sample per line; "\n" or "\r\n" line ends; blank lines are skipped. The
// target must be an integer in [0, classes). Each sample records its line
// (the header is line 1).
func ReadTSV(r io.Reader, classes int) ([]Sample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), MaxLineBytes)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("tasks: reading the header: %w", err)
		}
		return nil, errors.New("tasks: empty TSV file (want a header Source<TAB>Target)")
	}
	header := strings.Split(strings.TrimSuffix(sc.Text(), "\r"), "\t")
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
		return nil, fmt.Errorf("tasks: the TSV header %.60q lacks Source and Target columns", sc.Text())
	}
	var out []Sample
	line := 1
	for sc.Scan() {
		line++
		text := strings.TrimSuffix(sc.Text(), "\r")
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
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tasks: line %d: %w", line+1, err)
	}
	if len(out) == 0 {
		return nil, errors.New("tasks: the TSV file has no samples")
	}
	return out, nil
}
