package kkbeam

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/nystrom"
)

// nystromJob returns the options of a Nyström fit (uniform landmarks, D
// components) as kernelkit fit --map nystrom makes them, and the
// SampleMap of the same map for a Beam fit.
func nystromJob(d, dim, sample int) (features.Options, *SampleMap) {
	mo := features.Options{InputDim: d, Features: dim, Gamma: 1.0 / 16, Seed: 11}
	return mo, &SampleMap{Size: sample, Seed: mo.Seed, Build: func(x *mat.Dense) (features.Transformer, error) {
		o := mo
		o.Data = x
		return catalog.Default().Map("nystrom", o)
	}}
}

// landmarks returns the landmarks of a Nyström model's map.
func landmarks(t *testing.T, m *model.Model) []float64 {
	t.Helper()
	mp, ok := m.Map.(*nystrom.Map)
	if !ok {
		t.Fatalf("map %T, want a Nyström map", m.Map)
	}
	return mp.Landmarks().RawMatrix().Data
}

// TestSampleMap: --map nystrom on Beam. The sample pass draws the rows
// the reservoir of kernelkit fit --stream keeps (model.Job.MapSample,
// here 1000 of 4000 rows), so the Beam model's landmarks are the streamed
// fit's, bit for bit, and its weights equal within weightBound; with a
// sample as large as the data, the sample is every row in order, and the
// landmarks are those of the in-memory kernelkit fit. The shards are CSV
// files and Parquet files of the same rows.
func TestSampleMap(t *testing.T) {
	ctx := context.Background()
	ds := letterRows(testRows)
	globs := map[string]string{
		"csv":     writeShards(t, t.TempDir(), ds, 5),
		"parquet": writeParquetShards(t, t.TempDir(), ds, 5, true),
	}
	whole := filepath.Join(t.TempDir(), "all.csv")
	writeCSV(t, whole, ds, 0, ds.Rows())
	opt := model.Options{Task: model.Classification, Lambda: 0.01}
	for _, tc := range []struct {
		name, format string
		sample       int
	}{{"reservoir", "csv", 1000}, {"all-rows", "csv", 10000}, {"reservoir", "parquet", 1000}, {"all-rows", "parquet", 10000}} {
		glob := globs[tc.format]
		t.Run(tc.name+"/"+tc.format, func(t *testing.T) {
			mo, sm := nystromJob(ds.Cols(), 128, tc.sample)
			res, err := Fit(ctx, FitOptions{Input: glob, Model: opt, SampleMap: sm, Run: RunOptions{Runner: *runner, Chunk: 700}})
			if err != nil {
				t.Fatal(err)
			}
			open, names := streamOpener(t, whole)
			job := model.Job{Model: opt, MapName: "nystrom", MapOptions: mo, Registry: catalog.Default(), MapSample: tc.sample,
				Stream: open, Names: names, Label: ds.Label, Test: ds}
			_, want, err := model.RunJob(ctx, job, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(landmarks(t, res.Model), landmarks(t, want)) {
				t.Fatal("landmarks differ from kernelkit fit --stream's")
			}
			tol := weightBound(t, want, ds)
			dw := compareModels(t, "Nyström on Beam vs --stream", res.Model, want, ds.X, tol)
			if tc.sample >= ds.Rows() {
				job.Stream, job.Train = nil, ds
				_, mem, err := model.RunJob(ctx, job, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(landmarks(t, res.Model), landmarks(t, mem)) {
					t.Fatal("landmarks differ from the in-memory kernelkit fit's")
				}
				dm := compareModels(t, "Nyström on Beam vs in memory", res.Model, mem, ds.X, tol)
				t.Logf("weights differ from the in-memory fit's by %.2g", dm)
			}
			t.Logf("%s: weights differ from --stream's by %.2g relative (bound %.2g)", tc.name, dw, tol)
		})
	}
}

// TestSampleMapRefusals: a data-dependent map of weighted, standardised
// rows is refused (the streamed fit's sample is standardised by
// unweighted moments).
func TestSampleMapRefusals(t *testing.T) {
	ds := letterWeighted(1200)
	glob := writeParquetShards(t, t.TempDir(), ds, 2, true)
	_, sm := nystromJob(ds.Cols(), 32, 1000)
	_, err := Fit(context.Background(), FitOptions{Input: glob, Weight: "w", SampleMap: sm,
		Model: model.Options{Task: model.Classification, Lambda: 0.01, Standardize: true}, Run: RunOptions{Runner: *runner}})
	if err == nil || !strings.Contains(err.Error(), "weighted, standardised rows") {
		t.Fatalf("weighted standardised rows: %v", err)
	}
}
