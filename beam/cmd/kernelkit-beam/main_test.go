package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/model"
)

// writeLetterShards writes the first rows letter rows as shards CSV files
// and returns their glob.
func writeLetterShards(t *testing.T, dir string, rows, shards int) string {
	t.Helper()
	ds := data.Letter()
	head := strings.Join(ds.Names, ",") + "," + ds.Label + "\n"
	for s := range shards {
		var b strings.Builder
		b.WriteString(head)
		for i := s * rows / shards; i < (s+1)*rows/shards; i++ {
			for _, v := range ds.X.RawRowView(i) {
				b.WriteString(strconv.FormatFloat(v, 'g', -1, 64) + ",")
			}
			b.WriteString(strconv.FormatFloat(ds.Y[i], 'g', -1, 64) + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, "s"+strconv.Itoa(s)+".csv"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "s*.csv")
}

// TestFitPredict runs the command as a user would: fit on 4 shards with
// --json and --calibrate writes a calibrated model file that model.Load
// reads, whose λ the report states; predict writes one prediction file per shard and the accuracy.
func TestFitPredict(t *testing.T) {
	dir := t.TempDir()
	glob := writeLetterShards(t, dir, 800, 4)
	mpath := filepath.Join(dir, "m.kk")
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"fit", "--input", glob, "--features", "64", "--seed", "3", "--select", "gcv",
		"--grid", "0.01,0.1,1", "--calibrate", "--folds", "3", "--model", mpath, "--json", "--runner", "prism"}, &out, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Lambda    float64 `json:"lambda"`
		TrainRows int     `json:"train_rows"`
		Features  int     `json:"features"`
		Gamma     float64 `json:"gamma"`
		Beam      struct {
			Runner string `json:"runner"`
			Files  int    `json:"files"`
		} `json:"beam"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	f, err := os.Open(mpath)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if rep.TrainRows != 800 || rep.Features != 64 || rep.Gamma != 1.0/16 || rep.Beam.Runner != "prism" || rep.Beam.Files != 4 ||
		rep.Lambda != m.Linear.Lambda || m.Classes != 26 || m.Task != model.Classification || len(m.Columns) != 16 || m.Calibration == nil {
		t.Errorf("report %+v, model λ %v, %d classes, calibrated %v", rep, m.Linear.Lambda, m.Classes, m.Calibration != nil)
	}
	if l := m.Linear.Lambda; l != 0.01 && l != 0.1 && l != 1 {
		t.Errorf("λ %v is not from --grid", l)
	}

	preds := filepath.Join(dir, "preds")
	out.Reset()
	errOut.Reset()
	if err := run(context.Background(), []string{"predict", "--model", mpath, "--input", glob, "--out-dir", preds}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "predictions of 800 rows from 4 files") || !strings.HasPrefix(errOut.String(), "accuracy 0.") {
		t.Errorf("predict printed %q and %q", out.String(), errOut.String())
	}
	for s := range 4 {
		b, err := os.ReadFile(filepath.Join(preds, "s"+strconv.Itoa(s)+".csv.pred.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(string(b), "\n"); lines != 201 {
			t.Errorf("shard %d: %d lines, want 201", s, lines)
		}
	}
}

// TestErrors: usage errors are single messages, and the command's own
// flags do not shadow any of Beam's.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fit"}, "--train (or --input) is required"},
		{[]string{"fit", "--input", "x", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"fit", "--input", "nothing/*.csv"}, "no file matches nothing/*.csv"},
		{[]string{"fit", "--input", "x", "--runner", "nope"}, `unknown runner "nope"`},
		{[]string{"predict", "--model", "m"}, "--model, --input and --out-dir are required"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{nil, "no command"},
	} {
		var out, errOut bytes.Buffer
		err := run(ctx, tc.args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
	}
	for _, cmd := range []string{"fit", "predict"} {
		fs := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
		if cmd == "fit" {
			(&fitOptions{}).bind(fs)
		} else {
			(&predictOptions{}).bind(fs)
		}
		fs.VisitAll(func(f *pflag.Flag) {
			if flag.CommandLine.Lookup(f.Name) != nil {
				t.Errorf("%s --%s shadows a Beam flag", cmd, f.Name)
			}
		})
	}
	var out bytes.Buffer
	if err := run(ctx, []string{"fit", "-h"}, &out, &out); err != nil || !strings.Contains(out.String(), "--input") || !strings.Contains(out.String(), "--endpoint") {
		t.Errorf("fit -h: %v, %q", err, out.String())
	}
}
