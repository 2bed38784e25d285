package study

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
)

// TestFit: the result's metrics are model.Evaluate's on the returned
// model, the Gram error is model.GramError on the first rows (scaled as
// the model scales them), and a streamed fit of the same rows gives the
// same test accuracy.
func TestFit(t *testing.T) {
	train, test := demoLetterRows(0, 1500), demoLetterRows(19800, 20000)
	opt := model.Options{Task: model.Classification, Lambda: 0.5, Standardize: true,
		Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 128, Seed: 1}}
	r, m, err := Fit(context.Background(), FitConfig{Model: opt, Test: test, Train: train, GramRows: 150}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := m.Evaluate(test, 0)
	if err != nil {
		t.Fatal(err)
	}
	x, err := m.Scaler.Transform(test.X.Slice(0, 150, 0, 16).(*mat.Dense))
	if err != nil {
		t.Fatal(err)
	}
	ge, err := model.GramError(m.Map, x)
	if err != nil {
		t.Fatal(err)
	}
	if r.TestAccuracy == nil || *r.TestAccuracy != ev.Accuracy || r.GramError == nil || *r.GramError != ge || r.GramRows != 150 ||
		r.TrainRows != 1500 || r.TestRows != 200 || r.Kernel != "rbf" || r.Form != "cos" || r.Sampler != "iid" || r.Features != 128 ||
		r.TrainAccuracy != nil || r.TestRMSE != nil {
		t.Errorf("result %+v; Evaluate accuracy %v, Gram error %v", r, ev.Accuracy, ge)
	}
	if !strings.Contains(r.Text(), "test accuracy   "+strconv.FormatFloat(ev.Accuracy, 'f', 4, 64)+" (200 rows)") {
		t.Errorf("text:\n%s", r.Text())
	}

	// The same rows streamed from a CSV file.
	var b strings.Builder
	b.WriteString(strings.Join(train.Names, ",") + ",label\n")
	for i := 0; i < train.Rows(); i++ {
		for _, v := range train.X.RawRowView(i) {
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64) + ",")
		}
		b.WriteString(strconv.FormatFloat(train.Y[i], 'g', -1, 64) + "\n")
	}
	path := filepath.Join(t.TempDir(), "train.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	open, names, err := StreamCSV(path, data.CSVOptions{})
	if err != nil || len(names) != 16 {
		t.Fatalf("StreamCSV: %v, %d names", err, len(names))
	}
	done := 0
	rs, _, err := Fit(context.Background(), FitConfig{Model: opt, Stream: open, Names: names, Test: test, GramRows: 150},
		func(d, total int) { done = d })
	if err != nil {
		t.Fatal(err)
	}
	if *rs.TestAccuracy != *r.TestAccuracy || rs.TrainRows != 1500 || done != 1500 {
		t.Errorf("streamed: accuracy %v (in memory %v), %d rows, progress %d", *rs.TestAccuracy, *r.TestAccuracy, rs.TrainRows, done)
	}
	if _, _, err := Fit(context.Background(), FitConfig{Model: opt, Stream: open, Names: names}, nil); err == nil {
		t.Error("streamed fit without a test set accepted")
	}

	// Without a test set the metrics are the training set's.
	opt.Task = model.Regression
	r, _, err = Fit(context.Background(), FitConfig{Model: opt, Train: train}, nil)
	if err != nil || r.TrainRMSE == nil || r.TestRMSE != nil || r.TestRows != 0 || r.GramRows != 1000 {
		t.Errorf("regression on the training rows: %v, %+v", err, r)
	}
}

func TestParseTask(t *testing.T) {
	cls := &data.Dataset{Y: []float64{0, 3, 999}}
	reg := &data.Dataset{Y: []float64{0, 1.5}}
	big := &data.Dataset{Y: []float64{1000}}
	for _, c := range []struct {
		s    string
		d    *data.Dataset
		want model.Task
	}{
		{"auto", cls, model.Classification}, {"auto", reg, model.Regression}, {"auto", big, model.Regression},
		{"auto", nil, model.Auto}, {"classify", reg, model.Classification}, {"regress", cls, model.Regression},
		{"regression", cls, model.Regression}, {"classification", nil, model.Classification}, {"poisson", cls, ""},
	} {
		got, err := ParseTask(c.s, c.d)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("ParseTask(%q): %q, %v, want %q", c.s, got, err, c.want)
		}
	}
}
