package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
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

// TestFitParquetWeights runs fit as a user would on Parquet shards with a
// weight column and --format parquet, and on the same table as CSV: the
// two fits report the same λ and training rows and write models whose
// weights agree within the rounding of sums in another order (the
// acceptance tests of package kkbeam bound it against model.Fit).
func TestFitParquetWeights(t *testing.T) {
	dir := t.TempDir()
	ds := data.Letter()
	const rows, shards = 1500, 2
	cols := func(lo int) []data.ParquetColumn {
		var c []data.ParquetColumn
		for j, name := range ds.Names {
			c = append(c, data.ParquetColumn{Name: name, Value: func(i int) float64 { return ds.X.At(lo+i, j) }})
		}
		c = append(c, data.ParquetColumn{Name: "w", Value: func(i int) float64 { return float64((lo+i)%4) / 2 }},
			data.ParquetColumn{Name: ds.Label, Int: true, Value: func(i int) float64 { return ds.Y[lo+i] }})
		return c
	}
	for s := range shards {
		lo, hi := s*rows/shards, (s+1)*rows/shards
		f, err := os.Create(filepath.Join(dir, "p"+strconv.Itoa(s)+".pq"))
		if err != nil {
			t.Fatal(err)
		}
		if err := data.WriteParquetRowGroups(f, hi-lo, 1024, cols(lo), nil); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		c := cols(lo)
		for j, col := range c {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(col.Name)
		}
		b.WriteByte('\n')
		for i := range hi - lo {
			for j, col := range c {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.FormatFloat(col.Value(i), 'g', -1, 64))
			}
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, "c"+strconv.Itoa(s)+".csv"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fit := func(glob, format, mpath string) *model.Model {
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{"fit", "--train", glob, "--format", format, "--weight-column", "w", "--features", "64",
			"--seed", "3", "--select", "kfold", "--folds", "3", "--grid", "0.01,0.1,1", "--model", mpath, "--runner", "prism"}, &out, &errOut)
		if err != nil {
			t.Fatalf("%s: %v", glob, err)
		}
		if !strings.Contains(out.String(), "2 files") || !strings.Contains(out.String(), strconv.Itoa(rows)) {
			t.Errorf("%s: report %q", glob, out.String())
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
		return m
	}
	pm := fit(filepath.Join(dir, "p*.pq"), "parquet", filepath.Join(dir, "p.kk"))
	cm := fit(filepath.Join(dir, "c*.csv"), "auto", filepath.Join(dir, "c.kk"))
	if pm.Linear.Lambda != cm.Linear.Lambda || len(pm.Columns) != 16 || pm.Label != ds.Label {
		t.Fatalf("Parquet: λ %g, %d columns, label %q; CSV: λ %g", pm.Linear.Lambda, len(pm.Columns), pm.Label, cm.Linear.Lambda)
	}
	// The same sums, merged in an order that may differ between runs:
	// within the bound of package kkbeam's tests, √(D·K)·κ₂(A)·O(n·u)
	// relative, about 4·10⁻⁸ here for κ₂(A) ≤ 10⁴ (λ ≥ 0.01, n = 1500,
	// D = 64, K = 26); 10⁻⁶ leaves a margin.
	pw, cw := pm.Linear.W.RawMatrix().Data, cm.Linear.W.RawMatrix().Data
	var num, den float64
	for i := range pw {
		num, den = max(num, math.Abs(pw[i]-cw[i])), max(den, math.Abs(cw[i]))
	}
	if num > 1e-6*den {
		t.Errorf("weights from Parquet and CSV differ by %.3g relative", num/den)
	}
}
