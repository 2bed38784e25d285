package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCtx executes the CLI in process under ctx and returns its standard
// output and standard error.
func runCtx(t *testing.T, ctx context.Context, args ...string) (string, string, error) {
	t.Helper()
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

// permute rewrites a CSV file with its columns in the order given by
// index (a column may be dropped or repeated).
func permute(t *testing.T, src, dst string, index []int) string {
	t.Helper()
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Split(line, ",")
		for j, i := range index {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(f[i])
		}
		b.WriteByte('\n')
	}
	return write(t, filepath.Dir(dst), filepath.Base(dst), b.String())
}

// TestPredictColumns: predict and transform match the data's columns to
// the model's by name: the same columns in another order (label first)
// give the same bytes; a missing, extra or renamed column is refused with
// its name; the width of LIBSVM rows comes from the model, so a file whose
// largest index is below it is read with zeros.
func TestPredictColumns(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 1000)
	test := letterCSV(t, dir, "test.csv", 19800, 20000)
	mpath := filepath.Join(dir, "m.kk")
	if _, err := run(t, "fit", "--train", train, "--features", "64", "--seed", "2", "--model", mpath); err != nil {
		t.Fatal(err)
	}
	predict := func(data string, extra ...string) (string, error) {
		return run(t, append([]string{"predict", "--model", mpath, "--data", data, "--scores"}, extra...)...)
	}
	want, err := predict(test)
	if err != nil {
		t.Fatal(err)
	}
	wantZ, err := run(t, "transform", "--model", mpath, "--data", test)
	if err != nil {
		t.Fatal(err)
	}
	// label first, features reversed; and without the label.
	rev := []int{16}
	for j := 15; j >= 0; j-- {
		rev = append(rev, j)
	}
	for _, c := range []struct {
		name  string
		index []int
	}{{"reordered", rev}, {"unlabelled reordered", rev[1:]}} {
		p := permute(t, test, filepath.Join(dir, c.name+".csv"), c.index)
		if got, err := predict(p); err != nil || got != want {
			t.Errorf("%s: predictions differ (%v)", c.name, err)
		}
		if got, err := run(t, "transform", "--model", mpath, "--data", p); err != nil || got != wantZ {
			t.Errorf("%s: features differ (%v)", c.name, err)
		}
	}
	renamed := write(t, dir, "renamed.csv", strings.Replace(string(must(os.ReadFile(test))), "onpix", "pixels", 1))
	for _, c := range []struct {
		name, data, want string
	}{
		{"missing column", permute(t, test, filepath.Join(dir, "missing.csv"), append(rev[:5:5], rev[6:]...)), `missing "xy2br"`},
		{"extra column", permute(t, test, filepath.Join(dir, "extra.csv"), append([]int{3}, rev...)), `column "high" appears twice`},
		{"renamed column", renamed, `missing "onpix"; unexpected "pixels"`},
	} {
		_, err := predict(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.data) {
			t.Errorf("%s: error %v, want one naming the file and %q", c.name, err, c.want)
		}
	}
	extra := write(t, dir, "extra2.csv", "bonus,"+strings.ReplaceAll(strings.TrimSpace(string(must(os.ReadFile(test)))), "\n", "\n1,")+"\n")
	if _, err := predict(extra); err == nil || !strings.Contains(err.Error(), `unexpected "bonus"`) {
		t.Errorf("extra column: %v", err)
	}

	// A LIBSVM model of width 3; rows using only the first two features.
	svm := write(t, dir, "train.svm", strings.Repeat("1 1:0.5 3:1\n0 1:-0.5 2:1\n1 2:0.2 3:0.9\n0 1:-1 2:0.4\n", 10))
	narrow := write(t, dir, "narrow.svm", "1 1:0.5\n0 2:1\n")
	wide := write(t, dir, "wide.svm", "1 1:0.5 4:1\n")
	spath := filepath.Join(dir, "s.kk")
	if _, err := run(t, "fit", "--train", svm, "--test", narrow, "--features", "16", "--model", spath); err != nil {
		t.Fatalf("LIBSVM test file narrower than the training file: %v", err)
	}
	out, err := run(t, "predict", "--model", spath, "--data", narrow)
	if err != nil || strings.Count(out, "\n") != 3 {
		t.Errorf("narrow LIBSVM rows: %q, %v", out, err)
	}
	if _, err := run(t, "predict", "--model", spath, "--data", wide); err == nil || !strings.Contains(err.Error(), "4") {
		t.Errorf("LIBSVM index beyond the model's width: %v", err)
	}
	csv2 := write(t, dir, "two.csv", "a,b\n1,2\n")
	if _, err := run(t, "predict", "--model", spath, "--data", csv2); err == nil || !strings.Contains(err.Error(), "2 feature columns, want 3") {
		t.Errorf("CSV of the wrong width: %v", err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestAtomicOutputs: a failing writer, a failed fit and a cancelled fit
// leave the old output file as it was, and no temporary file behind.
func TestAtomicOutputs(t *testing.T) {
	dir := t.TempDir()
	old := write(t, dir, "old.kk", "the old model\n")
	check := func(what string) {
		t.Helper()
		if b, err := os.ReadFile(old); err != nil || string(b) != "the old model\n" {
			t.Errorf("%s: old file now %q (%v)", what, b, err)
		}
		if ents, err := os.ReadDir(dir); err != nil || len(ents) != 2 {
			t.Errorf("%s: directory holds %d entries (%v)", what, len(ents), err)
		}
	}
	train := letterCSV(t, dir, "train.csv", 0, 300)
	boom := errors.New("disk full")
	if err := writeOut(newFit(), old, func(w io.Writer) error {
		if _, err := io.WriteString(w, "half a mod"); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Errorf("failing writer: %v", err)
	}
	check("failing writer")
	if _, err := run(t, "fit", "--train", train, "--features", "0", "--model", old); err == nil {
		t.Error("failed fit: no error")
	}
	check("failed fit")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := runCtx(t, ctx, "--blas", "gonum", "fit", "--train", train, "--features", "16", "--model", old); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled fit: %v", err)
	}
	check("cancelled fit")
	if err := writeOut(newFit(), old, func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(old); err != nil || len(b) != 0 {
		t.Errorf("successful write left %q (%v)", b, err)
	}
}

// TestFlagChecks: non-finite values and repeated single-valued flags are
// refused, with one short line naming the flag.
func TestFlagChecks(t *testing.T) {
	dir := t.TempDir()
	good := letterCSV(t, dir, "good.csv", 0, 100)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", "--train", good, "--gamma", "nan"}, `"--gamma" flag: must be`},
		{[]string{"fit", "--train", good, "--gamma", "inf"}, `"--gamma" flag: must be`},
		{[]string{"fit", "--train", good, "--lambda", "inf"}, `"--lambda" flag: must be`},
		{[]string{"fit", "--train", good, "--lambda", "NaN"}, `"--lambda" flag: must be`},
		{[]string{"fit", "--train", good, "--lambda", "1e400"}, `"--lambda" flag: must be`},
		{[]string{"transform", "--data", good, "--gamma", "-Inf"}, `"--gamma" flag: must be`},
		{[]string{"demo", "--gamma", "nan"}, `"--gamma" flag: must be`},
		{[]string{"demo", "--lambda", "+inf"}, `"--lambda" flag: must be`},
		{[]string{"fit", "--train", good, "--label", "label", "--label", "x.box"}, `"--label" flag: given twice`},
		{[]string{"predict", "--model", "m", "--label", "a", "--label", "b"}, `"--label" flag: given twice`},
		{[]string{"transform", "--data", good, "--label", "a", "--label", "b"}, `"--label" flag: given twice`},
		{[]string{"fit", "--train", good, "--train", good}, `"--train" flag: given twice`},
		{[]string{"demo", "--features", "32,x"}, `"--features" flag`},
		{[]string{"demo", "--kernels", "rbf,poly"}, `unknown demo kernel "poly"`},
		{[]string{"fit", "--train", good, "--task", strings.Repeat("t", 1000)}, "unknown task"},
		{[]string{"fit", "--train", good, "--format", strings.Repeat("f", 1000)}, "unknown format"},
	} {
		_, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || len(err.Error()) > 200 {
			t.Errorf("%.80q: error %.300q, want one short line containing %q", c.args, err, c.want)
		}
	}
}

// TestSingleLabelFile: a training file whose labels are all one value is
// refused, in memory and streamed.
func TestSingleLabelFile(t *testing.T) {
	dir := t.TempDir()
	one := write(t, dir, "one.csv", "a,b,label\n1,2,1\n3,4,1\n5,6,1\n")
	for _, extra := range [][]string{nil, {"--stream", "--test", one}} {
		_, err := run(t, append([]string{"fit", "--train", one, "--features", "8"}, extra...)...)
		if err == nil || !strings.Contains(err.Error(), "every training label is 1") {
			t.Errorf("fit %v: %v", extra, err)
		}
	}
}

// TestBackendNotice: the pure-Go fallback of --blas auto is reported only
// with --verbose (or a timing flag), and an error stays one line.
func TestBackendNotice(t *testing.T) {
	t.Setenv("KERNELKIT_BLAS", "gonum")
	_, stderr, err := runCtx(t, context.Background(), "fit")
	if err == nil || stderr != "" {
		t.Errorf("without -v: stderr %q, error %v", stderr, err)
	}
	_, stderr, err = runCtx(t, context.Background(), "-v", "fit")
	if err == nil || !strings.HasPrefix(stderr, "notice: using pure-Go BLAS") {
		t.Errorf("with -v: stderr %q, error %v", stderr, err)
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("a\nb\r\nc"); got != "a b c" {
		t.Errorf("oneLine: %q", got)
	}
	long := oneLine(strings.Repeat("é", 400))
	if len(long) > 310 || !strings.HasSuffix(long, "…") || !strings.HasPrefix(long, "éé") || strings.ContainsRune(long, '\uFFFD') {
		t.Errorf("oneLine of a long message: %d bytes %q", len(long), long[len(long)-10:])
	}
}
