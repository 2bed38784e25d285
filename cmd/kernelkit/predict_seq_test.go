package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/seqmodel"
	"github.com/kernelkit/kernelkit/tasks"
)

// seqModel trains a small fd-tnn for a few steps with train --export and
// --write-data, and returns the inference file, the checkpoint and the
// directory of the generated sets.
func seqModel(t *testing.T) (model, ckpt, dir string) {
	t.Helper()
	dir = t.TempDir()
	model, ckpt = filepath.Join(dir, "m.kks"), filepath.Join(dir, "a.ckpt")
	if _, _, err := runCtx(t, context.Background(), "train", "--model", "fd-tnn", "--length", "48", "--width", "16", "--depth", "1",
		"--steps", "4", "--batch", "16", "--n-train", "64", "--n-eval", "0", "--n-test", "32", "--write-data", dir,
		"--checkpoint", ckpt, "--export", model); err != nil {
		t.Fatal(err)
	}
	return model, ckpt, dir
}

// TestExportPredict: export writes the bytes of train --export; predict
// reads an LRA TSV file and a file of one sequence per line, writes the
// library's labels, logits (float32, shortest form) and probabilities,
// and on labelled rows the accuracy and log-loss of train --evaluate.
func TestExportPredict(t *testing.T) {
	model, ckpt, dir := seqModel(t)
	exported := filepath.Join(dir, "e.kks")
	out, _, err := runCtx(t, context.Background(), "export", ckpt, "--out", exported)
	if err != nil || !strings.Contains(out, "wrote "+exported+": fd-tnn, length 48") {
		t.Fatalf("export: %q, %v", out, err)
	}
	a, b := must(os.ReadFile(model)), must(os.ReadFile(exported))
	if string(a) != string(b) {
		t.Error("export and train --export wrote different files")
	}
	test := filepath.Join(dir, "listops_test.tsv")
	pred, stderr, err := runCtx(t, context.Background(), "predict", "--model", model, "--data", test, "--scores")
	if err != nil {
		t.Fatal(err)
	}
	m, err := seqmodel.LoadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(test)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := tasks.ReadTSV(f, 10)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	var seqs [][]int32
	var lines []string
	for _, s := range samples {
		ids, err := m.Tokenize(s.Source)
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ids)
		lines = append(lines, s.Source)
	}
	s, err := m.NewScorer(seqmodel.ScorerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	z, err := s.Logits(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	labels, probs := seqmodel.Labels(z, 10), seqmodel.Probabilities(z, 10)
	rows := strings.Split(strings.TrimSuffix(pred, "\n"), "\n")
	if len(rows) != len(seqs)+1 || !strings.HasPrefix(rows[0], "prediction,score0,") || !strings.HasSuffix(rows[0], ",prob9") {
		t.Fatalf("%d lines, header %q", len(rows), rows[0])
	}
	for i, r := range rows[1:] {
		f := strings.Split(r, ",")
		if len(f) != 21 || f[0] != strconv.Itoa(labels[i]) {
			t.Fatalf("row %d: %q, label %d", i, r, labels[i])
		}
		for j := range 10 {
			zz, err1 := strconv.ParseFloat(f[1+j], 32)
			p, err2 := strconv.ParseFloat(f[11+j], 64)
			if err1 != nil || err2 != nil || float32(zz) != z[i*10+j] || p != probs[i*10+j] {
				t.Fatalf("row %d, class %d: %s and %s, want %v and %v", i, j, f[1+j], f[11+j], z[i*10+j], probs[i*10+j])
			}
		}
	}
	correct, loss := 0, 0.0
	for i, smp := range samples {
		if labels[i] == smp.Target {
			correct++
		}
		loss -= math.Log(probs[i*10+smp.Target])
	}
	acc, loss := float64(correct)/float64(len(samples)), loss/float64(len(samples))
	if want := fmt.Sprintf("accuracy %.4f, log-loss %.4f, ", acc, loss); !strings.Contains(stderr, want) {
		t.Errorf("predict says %q, want %q", stderr, want)
	}
	// train --evaluate scores in passes of the training batch (16),
	// predict in passes of its scorer's batch bound: where they differ,
	// the logits differ by float32 rounding (about 1e-7 relative,
	// seqmodel's doc), the mean loss by as little, and a label only where
	// two logits tie within it; the loss is printed to 4 decimals.
	eval, _, err := runCtx(t, context.Background(), "train", "--evaluate", "--checkpoint", ckpt, "--test", test)
	if err != nil {
		t.Fatal(err)
	}
	ev := strings.Fields(eval[strings.Index(eval, "test accuracy"):])
	ea, err1 := strconv.ParseFloat(ev[2], 64)
	el, err2 := strconv.ParseFloat(strings.TrimSuffix(ev[4], ";"), 64)
	if err1 != nil || err2 != nil || math.Abs(ea-acc) > 5e-5 || math.Abs(el-loss) > 5e-5+1e-6 {
		t.Errorf("evaluation: accuracy %s, loss %s; predict's %v, %v", ev[2], ev[4], acc, loss)
	}
	plain := filepath.Join(dir, "lines.txt")
	if err := os.WriteFile(plain, []byte(strings.Join(lines, "\n")+"\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, stderr, err := runCtx(t, context.Background(), "predict", "--model", model, "--data", plain)
	if err != nil || stderr != "" {
		t.Fatalf("lines: %v, %q", err, stderr)
	}
	want := []string{"prediction"}
	for _, l := range labels {
		want = append(want, strconv.Itoa(l))
	}
	if !slices.Equal(strings.Split(strings.TrimSuffix(got, "\n"), "\n"), want) {
		t.Errorf("lines: predictions %q, want %q", got, want)
	}
	if math.IsNaN(probs[0]) {
		t.Fatal("NaN probability")
	}
}

// TestPredictSeqBadInput: each bad input of predict on a sequence model
// is one line naming the file's line.
func TestPredictSeqBadInput(t *testing.T) {
	model, _, dir := seqModel(t)
	long := strings.Repeat("[MAX 1 ", 30) + strings.Repeat("] ", 30)
	for _, c := range []struct {
		name, data, want string
		args             []string
	}{
		{"unknown token", "Source\tTarget\n[MAX 1 2 ]\t2\n[FOO 3 ]\t3\n", "line 3: unknown token \"[FOO\" at token 0", nil},
		{"bad target", "Source\tTarget\n[MAX 1 2 ]\t12\n", "line 2: target \"12\" is not a class", nil},
		{"ragged row", "Source\tTarget\n[MAX 1 2 ]\n", "line 2 has 1 fields, the header 2", nil},
		{"only parentheses", "( )\n", "line 1: the sequence has no tokens", nil},
		{"empty", "\n\n", "has no sequences", nil},
		{"no Source column", "a\tb\n", "lacks a Source column", []string{"--format", "tsv"}},
		{"csv format", "1 2\n", "--format \"csv\"", []string{"--format", "csv"}},
		{"label", "1 2\n", "--label and --weight-column apply to ridge models", []string{"--label", "y"}},
		{"line over 4 MiB", "[MAX 1 2 ]\n" + strings.Repeat("1 ", 3<<20) + "\n", "line 2 is longer than the limit of 4 MiB", nil},
	} {
		path := filepath.Join(dir, "bad.txt")
		if err := os.WriteFile(path, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := runCtx(t, context.Background(), append([]string{"predict", "--model", model, "--data", path}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line saying %q", c.name, err, c.want)
		}
	}
	path := filepath.Join(dir, "long.txt")
	if err := os.WriteFile(path, []byte("[MAX 1 2 ]\n"+long+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runCtx(t, context.Background(), "predict", "--model", model, "--data", path)
	if err != nil || !strings.Contains(stderr, "warning: 1 of 2 sequences are longer than the model's length 48") || strings.Count(out, "\n") != 3 {
		t.Errorf("a long sequence: %v, %q, %q", err, stderr, out)
	}
	if _, _, err := runCtx(t, context.Background(), "export", filepath.Join(dir, "listops_test.tsv"), "--out", filepath.Join(dir, "x.kks")); err == nil {
		t.Error("export of a TSV file: no error")
	}
	if _, _, err := runCtx(t, context.Background(), "predict", "--model", model); err == nil || !strings.Contains(err.Error(), "--data is required") {
		t.Errorf("no --data: %v", err)
	}
}
