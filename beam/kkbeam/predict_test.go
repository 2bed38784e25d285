package kkbeam

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
)

// TestPredict: the batch-prediction pipeline writes, for each shard, one
// line per row keyed by file and line, in the shard's order, with the
// class model.Classify gives that row and its scores; it reports the
// accuracy on the labelled rows. A bad row fails it with data's message
// unless a dead-letter file takes it.
func TestPredict(t *testing.T) {
	ctx := context.Background()
	ds := letterRows(600)
	dir := t.TempDir()
	glob := writeShards(t, dir, ds, 3)
	m, err := model.Fit(ctx, model.Options{Task: model.Classification,
		Features: features.Config{Kernel: "rbf", Gamma: 0.05, Features: 64, Seed: 2}, Lambda: 0.1, Standardize: true}, ds)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(t.TempDir(), "m.kk")
	if err := os.WriteFile(mpath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := model.Load(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want, err := loaded.Classify(ds.X)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := Predict(ctx, PredictOptions{Input: glob, Model: mpath, OutDir: out, Scores: true, Run: RunOptions{Runner: *runner}})
	if err != nil {
		t.Fatal(err)
	}
	row := 0
	for s := range 3 {
		in := filepath.Join(dir, "part-0"+strconv.Itoa(s)+".csv")
		recs := readCSVFile(t, OutputPath(out, in))
		if strings.Join(recs[0], ",") != "file,line,prediction,score0,score1,score2,score3,score4,score5,score6,score7,score8,score9,score10,score11,score12,score13,score14,score15,score16,score17,score18,score19,score20,score21,score22,score23,score24,score25" {
			t.Fatalf("header %v", recs[0])
		}
		for i, rec := range recs[1:] {
			if rec[0] != in || rec[1] != strconv.Itoa(i+2) || rec[2] != strconv.Itoa(want[row]) {
				t.Fatalf("shard %d row %d: %v, want line %d class %d", s, i, rec[:3], i+2, want[row])
			}
			row++
		}
	}
	ev, err := loaded.Evaluate(ds, 0)
	if err != nil {
		t.Fatal(err)
	}
	if row != 600 || res.Rows != 600 || res.Files != 3 || res.Labelled != 600 || res.Accuracy != ev.Accuracy {
		t.Errorf("%d rows written, result %+v, accuracy want %v", row, res, ev.Accuracy)
	}

	corrupt(t, filepath.Join(dir, "part-02.csv"), 10, func(s string) string { return s + ",1" })
	_, err = Predict(ctx, PredictOptions{Input: glob, Model: mpath, OutDir: t.TempDir(), Run: RunOptions{Runner: *runner}})
	_, wantErr := data.Open(filepath.Join(dir, "part-02.csv"), data.OpenOptions{})
	if err == nil || wantErr == nil || !strings.HasPrefix(err.Error(), wantErr.Error()) {
		t.Errorf("bad row: %v, want %v", err, wantErr)
	}
	dead := filepath.Join(t.TempDir(), "dead.csv")
	res, err = Predict(ctx, PredictOptions{Input: glob, Model: mpath, OutDir: t.TempDir(), DeadLetter: dead, Run: RunOptions{Runner: *runner}})
	if err != nil {
		t.Fatal(err)
	}
	if recs := readCSVFile(t, dead); res.Bad != 1 || res.Rows != 599 || len(recs) != 2 || recs[1][1] != "10" {
		t.Errorf("dead letter: %+v, %v", res, recs)
	}
}

func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
