package tasks

import (
	"errors"
	"strings"
	"testing"
)

// A line of exactly MaxLineBytes bytes (its end excluded, "\n" or "\r\n")
// is read; one byte more is a *LineTooLongError naming the line and the
// 4 MiB limit, not bufio's "token too long". The header is line 1.
func TestReadTSVLineLimit(t *testing.T) {
	// A sample line "aaa…a\t1" of n bytes.
	sample := func(n int) string { return strings.Repeat("a", n-2) + "\t1" }
	for _, end := range []string{"\n", "\r\n"} {
		in := "Source\tTarget" + end + "x\t0" + end + sample(MaxLineBytes) + end + "y\t2" + end
		got, err := ReadTSV(strings.NewReader(in), Classes)
		if err != nil {
			t.Fatalf("line end %q: a line of MaxLineBytes bytes: %v", end, err)
		}
		if len(got) != 3 || len(got[1].Source) != MaxLineBytes-2 || got[1].Line != 3 || got[2].Line != 4 {
			t.Fatalf("line end %q: %d samples", end, len(got))
		}
		for _, tail := range []string{end, ""} { // also the last line without an end
			in := "Source\tTarget" + end + "x\t0" + end + sample(MaxLineBytes+1) + tail
			_, err := ReadTSV(strings.NewReader(in), Classes)
			var le *LineTooLongError
			if !errors.As(err, &le) || le.Line != 3 {
				t.Fatalf("line end %q, tail %q: a line of MaxLineBytes+1 bytes gave %v, want line 3 too long", end, tail, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "line 3 is longer than the limit of 4 MiB") || strings.Contains(msg, "token") {
				t.Errorf("message %q", msg)
			}
		}
	}
	// A header line too long, and a 10 MB line as in the report.
	for _, in := range []string{strings.Repeat("S", MaxLineBytes+1) + "\tTarget\n", "Source\tTarget\n" + strings.Repeat("b", 10_000_000) + "\t1\n"} {
		_, err := ReadTSV(strings.NewReader(in), Classes)
		var le *LineTooLongError
		if !errors.As(err, &le) || le.Line != strings.Count(in, "\n") {
			t.Fatalf("gave %v, want line %d too long", err, strings.Count(in, "\n"))
		}
	}
}

// A leading UTF-8 byte-order mark is skipped, as the CSV reader skips it;
// the same bytes elsewhere are data.
func TestReadTSVByteOrderMark(t *testing.T) {
	plain := "Source\tTarget\r\n( [MAX 2 9 ] )\t9\r\n"
	want, err := ReadTSV(strings.NewReader(plain), Classes)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadTSV(strings.NewReader("\uFEFF"+plain), Classes)
	if err != nil {
		t.Fatalf("with a byte-order mark: %v", err)
	}
	if len(got) != 1 || got[0] != want[0] {
		t.Fatalf("with a byte-order mark %+v, without %+v", got, want)
	}
	// A mark inside a header field is not skipped: that header lacks Source.
	if _, err := ReadTSV(strings.NewReader("Target\t\uFEFFSource\n1\tx\n"), Classes); err == nil {
		t.Error("a byte-order mark inside the header was ignored")
	}
}
