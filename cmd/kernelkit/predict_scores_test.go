package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// manyClassModel fits a 65,536-class model (labels 0, 3 and 65535 on
// three rows, four features) and returns its path and a data file of n
// rows with those labels.
func manyClassModel(t *testing.T, n int) (model, rows string) {
	t.Helper()
	dir := t.TempDir()
	train := write(t, dir, "train.csv", "a,b,label\n0.1,0.2,0\n0.3,0.1,65535\n0.5,0.7,3\n")
	var b strings.Builder
	b.WriteString("a,b,label\n")
	for i := range n {
		b.WriteString(ftoa(float64(i)/float64(n)) + ",0.5," + itoa([]int{0, 3, 65535}[i%3]) + "\n")
	}
	rows = write(t, dir, "rows.csv", b.String())
	model = filepath.Join(dir, "m.kk")
	if _, err := run(t, "fit", "--train", train, "--task", "classification", "--features", "4",
		"--gamma", "1", "--seed", "1", "--model", model); err != nil {
		t.Fatal(err)
	}
	return model, rows
}

// predict --scores on a 65,536-class model writes the header
// prediction,score0,…,score65535 and one line of 65,537 fields per row,
// in linear time: the old header, built by string concatenation, took
// 10 s on its own (copying about 20 GB); the linear one takes
// milliseconds, and the whole command well under 3 s even under the race
// detector.
func TestPredictScoresManyClasses(t *testing.T) {
	const k = 1 << 16
	model, rows := manyClassModel(t, 3)
	start := time.Now()
	out, err := run(t, "predict", "--model", model, "--data", rows, "--scores")
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want a header and 3 rows", len(lines))
	}
	head := strings.Split(lines[0], ",")
	if len(head) != k+1 || head[0] != "prediction" {
		t.Fatalf("header of %d fields starting %q", len(head), head[0])
	}
	for j := range k {
		if want := "score" + strconv.Itoa(j); head[1+j] != want {
			t.Fatalf("header field %d is %q, want %q", 1+j, head[1+j], want)
		}
	}
	for i, line := range lines[1:] {
		if f := strings.Count(line, ",") + 1; f != k+1 {
			t.Fatalf("row %d has %d fields, want %d", i, f, k+1)
		}
	}
	if elapsed > 3*time.Second {
		t.Errorf("predict --scores on %d classes took %v", k, elapsed)
	}
}

// cancelWriter cancels a context at its first write, as SIGINT does
// while predict is writing.
type cancelWriter struct {
	bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.cancel()
	return w.Buffer.Write(p)
}

// predict notices the command's context: already cancelled, it writes
// nothing and returns context.Canceled; cancelled while writing to
// standard output (which, unlike --out, has no context check of its own),
// it stops at the next row instead of writing all of them.
func TestPredictCancelled(t *testing.T) {
	const n = 40
	model, rows := manyClassModel(t, n)
	args := []string{"--blas", "gonum", "predict", "--model", model, "--data", rows, "--scores"}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	start := time.Now()
	err := root.ExecuteContext(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled predict returned %v, want context.Canceled", err)
	}
	if out.Len() != 0 {
		t.Errorf("cancelled predict wrote %d bytes", out.Len())
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancelled predict took %v", d)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	cw := &cancelWriter{cancel: cancel}
	root = newRoot()
	root.SetOut(cw)
	root.SetErr(&errb)
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("predict cancelled while writing returned %v, want context.Canceled", err)
	}
	// Each line is over 600 kB, far more than the 4 kB write buffer, so
	// the first write happens within the header; the row after the one
	// being written when the context was cancelled is never started.
	if lines := bytes.Count(cw.Bytes(), []byte("\n")); lines > 2 {
		t.Errorf("predict wrote %d lines after being cancelled in the first", lines)
	}
}
