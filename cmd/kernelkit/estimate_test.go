package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/prf"
	"github.com/kernelkit/kernelkit/study/hrf"
)

// TestEstimateOverflowRefused checks that norms whose results are not
// representable are refused in one line naming --norms and the range, by
// every study that reads norms, with and without --json (before, the
// angle study ignored --norms, the data study printed +Inf and NaN as
// MSEs with exit 0 and --json failed with "json: unsupported value:
// +Inf"), and that at the largest accepted norm every estimator of the
// data study gives finite JSON.
func TestEstimateOverflowRefused(t *testing.T) {
	dir := t.TempDir()
	csv := letterCSV(t, dir, "l.csv", 0, 120)
	studies := [][]string{
		{"estimate", "--draws", "2"},
		{"estimate", "--data", csv, "--pairs", "10", "--features", "16", "--draws", "2"},
		{"estimate", "--study", "softmax", "--d", "4", "--features", "16"},
		{"estimate", "--study", "zoo", "--d", "4", "--draws", "2"},
	}
	for _, args := range studies {
		for _, norm := range []string{"30", "1e200", "1.7976931348623157e308", "18.83"} {
			for _, js := range []bool{false, true} {
				a := append(append([]string(nil), args...), "--norms", norm)
				if js {
					a = append(a, "--json")
				}
				out, err := run(t, a...)
				if err == nil {
					t.Errorf("%v: accepted, printed %.200q", a, out)
					continue
				}
				if msg := err.Error(); !strings.Contains(msg, "--norms") || !strings.Contains(msg, "(0, 18.82]") || strings.Contains(msg, "\n") {
					t.Errorf("%v: error %q, want one line naming --norms and (0, 18.82]", a, msg)
				}
			}
		}
	}
	out, err := run(t, "estimate", "--data", csv, "--pairs", "10", "--features", "16", "--draws", "2", "--norms", fmt.Sprint(hrf.MaxNorm()),
		"--estimator", "trig,positive,hyperbolic,angular,gaussian,bipolar,clustered,simrf,oprf,sderf,aderf", "--json")
	if err != nil {
		t.Fatalf("every estimator at --norms %v: %v", hrf.MaxNorm(), err)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 11 {
		t.Fatalf("--json at the largest norm: %v, %d rows", err, len(rows))
	}
	for _, r := range rows {
		if _, ok := r["mse"].(float64); !ok {
			t.Errorf("%v: mse %v", r["estimator"], r["mse"])
		}
	}
}

// TestEstimateSimplexSampler checks that --sampler simplex is accepted for
// oprf and sderf (and the other estimators), as prf.Simplex is by the
// library, and gives the library's result: the data study's JSON equals
// hrf.Data's rows with Sampler prf.Simplex{}; the zoo labels the rows
// oprf/simplex. Before, the CLI refused the sampler name.
func TestEstimateSimplexSampler(t *testing.T) {
	dir := t.TempDir()
	csv := letterCSV(t, dir, "l.csv", 0, 120)
	out, err := run(t, "estimate", "--data", csv, "--estimator", "oprf,sderf,positive", "--sampler", "simplex",
		"--pairs", "20", "--features", "16", "--draws", "3", "--norms", "0.5,1", "--seed", "4", "--json")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := readData(csv, "auto", "", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hrf.Data(context.Background(), hrf.DataConfig{X: ds.X, Estimators: []string{"oprf", "sderf", "positive"},
		Sampler: prf.Simplex{}, Features: 16, Draws: 3, Pairs: 20, Norms: []float64{0.5, 1}, Seed: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(res.Rows)
	if err != nil {
		t.Fatal(err)
	}
	var got, lib []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &lib); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(lib) {
		t.Errorf("CLI rows %v\nlibrary rows %v", got, lib)
	}
	if len(got) != 6 || got[0]["sampler"] != "simplex" {
		t.Errorf("rows: %v", got)
	}
	out, err = run(t, "estimate", "--study", "zoo", "--d", "4", "--draws", "2", "--norms", "1", "--estimator", "oprf,sderf", "--sampler", "simplex")
	if err != nil || !strings.Contains(out, "oprf/simplex") || !strings.Contains(out, "sderf/simplex") {
		t.Errorf("zoo with --sampler simplex: %v\n%s", err, out)
	}
}

// TestEstimateStudyFlags checks that each study honours the flags it
// reads and refuses the ones it does not: --study softmax ran every
// budget 64 … 512 whatever --features said, the angle study ignored
// --norms, the clustered study --features and --pairs; --draws for
// softmax, --plot for data, --d for angle and --sampler without
// --estimator in the zoo were silently ignored.
func TestEstimateStudyFlags(t *testing.T) {
	out, err := run(t, "estimate", "--study", "softmax", "--estimator", "positive,oprf", "--d", "4", "--features", "24", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var soft []map[string]any
	if err := json.Unmarshal([]byte(out), &soft); err != nil || len(soft) != 2 {
		t.Fatalf("softmax --features 24: %v, %d rows", err, len(soft))
	}
	for _, r := range soft {
		if r["features"] != 24.0 {
			t.Errorf("softmax row with budget %v, want 24", r["features"])
		}
	}
	out, err = run(t, "estimate", "--estimator", "trig", "--draws", "2", "--norms", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ang []map[string]any
	if err := json.Unmarshal([]byte(out), &ang); err != nil || len(ang) != hrf.AnglesSteps || ang[0]["r"] != 2.0 {
		t.Fatalf("angle --norms 2: %v, %d rows, first %v", err, len(ang), ang)
	}
	out, err = run(t, "estimate", "--study", "clustered", "--features", "10", "--pairs", "30", "--draws", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var cl []map[string]any
	if err := json.Unmarshal([]byte(out), &cl); err != nil || len(cl) != 2*3 {
		t.Fatalf("clustered --features 10: %v, %d rows", err, len(cl))
	}
	for _, r := range cl {
		if r["features"] != 10.0 {
			t.Errorf("clustered row with m = %v, want 10", r["features"])
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--study", "softmax", "--draws", "3"}, "--draws is not used by --study softmax"},
		{[]string{"--study", "softmax", "--plot", "x.png"}, "--plot is not used by --study softmax"},
		{[]string{"--study", "clustered", "--norms", "2"}, "--norms is not used by --study clustered"},
		{[]string{"--study", "clustered", "--estimator", "trig"}, "--estimator is not used by --study clustered"},
		{[]string{"--pairs", "5"}, "--pairs is not used by --study angle"},
		{[]string{"--d", "5"}, "--d is not used by --study angle"},
		{[]string{"--study", "angle", "--data", "x.csv"}, "--data is not used by --study angle"},
		{[]string{"--data", "x.csv", "--plot", "x.png"}, "--plot is not used by --study data"},
		{[]string{"--study", "zoo", "--pairs", "5"}, "--pairs is not used by --study zoo"},
		{[]string{"--study", "zoo", "--sampler", "orf"}, "--sampler applies to the estimators of --estimator"},
		{[]string{"--sampler", "magic"}, "--sampler: unknown sampler"},
	} {
		if _, err := run(t, append([]string{"estimate"}, c.args...)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

// TestEstimateTemperature: --temperature τ at norm r runs the study at
// norm r/√τ, the same rows and bytes as --norms r/√τ, since
// exp(xᵀy/τ) = exp(x'ᵀy') with x' = x/√τ; a study without norms refuses it.
func TestEstimateTemperature(t *testing.T) {
	common := []string{"estimate", "--data", "../../data/letter.csv", "--estimator", "positive,trig", "--features", "16",
		"--draws", "3", "--pairs", "5", "--json"}
	tempered, err := run(t, append(common, "--norms", "2", "--temperature", "4")...)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := run(t, append(common, "--norms", "1")...)
	if err != nil {
		t.Fatal(err)
	}
	if tempered != plain {
		t.Errorf("--norms 2 --temperature 4:\n%s\nwant the output of --norms 1:\n%s", tempered, plain)
	}
	if _, err := run(t, "estimate", "--study", "clustered", "--temperature", "2"); err == nil || !strings.Contains(err.Error(), "--temperature is not used") {
		t.Errorf("clustered --temperature 2: %v", err)
	}
	if _, err := run(t, "estimate", "--temperature", "0"); err == nil || !strings.Contains(err.Error(), `"--temperature" flag`) {
		t.Errorf("--temperature 0: %v", err)
	}
}
