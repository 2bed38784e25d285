package train

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummarize checks the grouping, the order and the statistics of
// Summarize against values worked by hand, and WriteTable's rows.
func TestSummarize(t *testing.T) {
	res := &Result{}
	rep := func(kind string, width int, acc, maj float64) JobReport {
		return JobReport{Kind: kind, Length: 512, Width: width, Depth: 4, TestAcc: acc, Majority: maj, Result: res}
	}
	reports := []JobReport{
		rep("tnn", 64, 0.30, 0.16), rep("fd-tnn", 64, 0.38, 0.16), rep("tnn", 64, 0.34, 0.17),
		rep("fd-tnn", 128, 0.40, 0.16), rep("tnn", 64, 0.32, 0.16),
		{Kind: "tnn", Length: 512, Width: 64, Depth: 4, TestAcc: 0.99}, // an evaluation: left out
	}
	got := Summarize(reports)
	if len(got) != 3 {
		t.Fatalf("%d replicates, want 3: %+v", len(got), got)
	}
	if got[0].Width != 128 || got[1].Kind != "fd-tnn" || got[2].Kind != "tnn" {
		t.Fatalf("order %s/%d, %s/%d, %s/%d", got[0].Kind, got[0].Width, got[1].Kind, got[1].Width, got[2].Kind, got[2].Width)
	}
	tnn := got[2]
	// 0.30, 0.34, 0.32: mean 0.32, deviations ∓0.02, 0: sd = √(0.0008/2) = 0.02.
	if math.Abs(tnn.Mean-0.32) > 1e-15 || math.Abs(tnn.SD-0.02) > 1e-15 || math.Abs(tnn.SE-0.02/math.Sqrt(3)) > 1e-15 ||
		tnn.Min != 0.30 || tnn.Max != 0.34 || tnn.Majority != 0.17 || len(tnn.TestAcc) != 3 {
		t.Errorf("tnn replicate %+v", tnn)
	}
	if got[1].SD != 0 || got[1].SE != 0 {
		t.Errorf("one run has sd %v, se %v", got[1].SD, got[1].SE)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, got); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| tnn | 512 | 64 | 4 | 3 | 32.00 ± 2.00 % | 30.00 / 34.00 / 32.00 | 17.0 % |", "| fd-tnn | 512 | 64 | 4 | 1 | 38.00 ± — % |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestReadReport reads a report back and refuses files that are not the
// report of a training run.
func TestReadReport(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, v any) string {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("run.json", JobReport{Kind: "fd-tnn", TestAcc: 0.38, Result: &Result{Steps: 5}})
	if r, err := ReadReport(good); err != nil || r.Kind != "fd-tnn" || r.TestAcc != 0.38 || r.Result.Steps != 5 {
		t.Errorf("read back %+v, %v", r, err)
	}
	for name, v := range map[string]any{"eval.json": JobReport{Kind: "tnn"}, "list.json": []int{1}} {
		if _, err := ReadReport(write(name, v)); err == nil {
			t.Errorf("%s accepted as a training report", name)
		}
	}
	if _, err := ReadReport(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file gave no error")
	}
	other := write("long-tnn-s2.json", JobReport{Kind: "tnn", Result: &Result{Steps: 7}})
	reps, names, err := ReadReports([]string{good, other})
	if err != nil || len(reps) != 2 || reps[1].Kind != "tnn" || names[0] != "run" || names[1] != "long-tnn-s2" {
		t.Errorf("ReadReports: %v, %v, %v", reps, names, err)
	}
	if _, _, err := ReadReports([]string{good, filepath.Join(dir, "missing.json")}); err == nil {
		t.Error("ReadReports with a missing file: no error")
	}
}

// TestReportDeviceKeys checks that a report names the device and the BLAS
// under their own keys, keeps "backend" for older readers, and that a
// report written before "device" existed still reads.
func TestReportDeviceKeys(t *testing.T) {
	raw, err := json.Marshal(Result{Device: DeviceCPU, BLAS: "gonum", Backend: "cpu (native engine, float32; BLAS gonum)"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"device":"cpu"`, `"blas":"gonum"`, `"backend":"cpu (native engine, float32; BLAS gonum)"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("report %s lacks %s", raw, want)
		}
	}
	p := filepath.Join(t.TempDir(), "old.json")
	old := `{"task":"listops","model":"fd-tnn","test_accuracy":0.5,"result":{"steps":3,"backend":"cpu (native engine, float32; BLAS openblas)"}}`
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadReport(p)
	if err != nil || r.Result.Backend != "cpu (native engine, float32; BLAS openblas)" || r.Result.Device != "" || r.Result.Steps != 3 {
		t.Errorf("old report read as %+v, %v", r, err)
	}
}
