package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/data"
)

// letterSVM writes rows [lo, hi) of letter as a LIBSVM file (zeros left
// out) named name in dir.
func letterSVM(t *testing.T, dir, name string, lo, hi int) string {
	t.Helper()
	d := data.Letter()
	var b strings.Builder
	for i := lo; i < hi; i++ {
		b.WriteString(ftoa(d.Y[i]))
		for j, v := range d.X.RawRowView(i) {
			if v != 0 {
				b.WriteString(" " + strconv.Itoa(j+1) + ":" + ftoa(v))
			}
		}
		b.WriteString("\n")
	}
	return write(t, dir, name, b.String())
}

// TestFitStreamLIBSVM (issue 35): fit --stream reads LIBSVM files
// (--format libsvm, or found by --format auto) and writes the model file
// of the in-memory fit, byte for byte: a plain fit on 18000 rows (more
// than one block of the scaler's moments), GCV, a calibration and
// --gamma scale on unscaled rows. It used to read every file as CSV
// ("CSV has no feature columns"). A streamed registry map (--map
// nystrom, whose landmarks come from a sample of the stream) takes the
// rows' width, and a weight column, which LIBSVM has not, is refused in
// one line.
func TestFitStreamLIBSVM(t *testing.T) {
	dir := t.TempDir()
	trainTxt := letterSVM(t, dir, "train.txt", 0, 18000)
	testTxt := letterSVM(t, dir, "test.txt", 19000, 19500)
	trainSVM := letterSVM(t, dir, "train.svm", 0, 18000)
	testSVM := letterSVM(t, dir, "test.svm", 19000, 19500)
	common := []string{"--features", "64", "--seed", "1"}
	for _, c := range []struct {
		name        string
		train, test string
		args        []string
	}{
		{"plain", trainTxt, testTxt, []string{"--format", "libsvm"}},
		{"auto", trainSVM, testSVM, nil},
		{"gcv", trainTxt, testTxt, []string{"--format", "libsvm", "--select", "gcv"}},
		{"calibrate", trainSVM, testSVM, []string{"--format", "libsvm", "--calibrate", "--folds", "3"}},
		{"gamma scale", trainTxt, testTxt, []string{"--format", "auto", "--gamma", "scale", "--no-standardize"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := make([][]byte, 2)
			for i, stream := range []bool{false, true} {
				path := filepath.Join(dir, c.name+map[bool]string{false: ".kk", true: "-stream.kk"}[stream])
				args := append([]string{"fit", "--train", c.train, "--test", c.test, "--model", path}, common...)
				args = append(args, c.args...)
				if stream {
					args = append(args, "--stream")
				}
				if _, err := run(t, args...); err != nil {
					t.Fatalf("stream %v: %v", stream, err)
				}
				var err error
				if files[i], err = os.ReadFile(path); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Contains(files[0], []byte(`"task":"classification"`)) {
				t.Errorf("the model file is no classifier: %.200s", files[0])
			}
			if !bytes.Equal(files[0], files[1]) {
				i := 0
				for i < len(files[0]) && i < len(files[1]) && files[0][i] == files[1][i] {
					i++
				}
				lo := max(0, i-80)
				t.Errorf("fit --stream wrote another model file: from byte %d, …%s… against …%s…", i,
					files[1][lo:min(len(files[1]), i+40)], files[0][lo:min(len(files[0]), i+40)])
			}
		})
	}

	mpath := filepath.Join(dir, "nystrom.kk")
	if _, err := run(t, "fit", "--train", trainSVM, "--test", testSVM, "--stream", "--map", "nystrom",
		"--features", "32", "--seed", "1", "--model", mpath); err != nil {
		t.Fatalf("--stream --map nystrom on LIBSVM rows: %v", err)
	}
	out, err := run(t, "predict", "--model", mpath, "--data", testSVM)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(out, "\n"); lines != 501 {
		t.Errorf("predict wrote %d lines, want a header and 500 rows", lines)
	}

	_, err = run(t, "fit", "--train", trainTxt, "--test", testTxt, "--stream", "--format", "libsvm", "--weight-column", "w")
	if err == nil || !strings.Contains(err.Error(), "no weight column") || strings.Contains(err.Error(), "\n") {
		t.Errorf("--weight-column on a streamed LIBSVM file: %v", err)
	}
}
