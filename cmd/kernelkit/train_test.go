package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/tasks"
	"github.com/kernelkit/kernelkit/train"
)

// runTrain executes the train command (whether or not the root command
// has it wired in) and returns its standard output.
func runTrain(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newTrainCmd()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), err
}

// TestTrainCommand trains a tiny model for a few steps from generated
// data written as LRA TSV files, resumes it from its checkpoint, evaluates
// the saved model on a TSV file, and refuses bad flags.
func TestTrainCommand(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "m.ckpt")
	base := []string{"--task", "listops", "--model", "fd-tnn", "--length", "16", "--width", "8", "--depth", "1",
		"--n-train", "32", "--n-eval", "8", "--n-test", "16", "--batch", "8", "--warmup", "1", "--rpe-hidden", "4"}
	out, err := runTrain(t, append(base, "--steps", "3", "--checkpoint", ck, "--write-data", dir, "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Steps   int     `json:"steps"`
		TestAcc float64 `json:"test_accuracy"`
		NTest   int     `json:"n_test"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.Steps != 3 || rep.NTest != 16 || rep.TestAcc < 0 || rep.TestAcc > 1 {
		t.Errorf("report %+v", rep)
	}
	for _, set := range []string{"train", "val", "test"} {
		f, err := os.Open(filepath.Join(dir, "listops_"+set+".tsv"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := tasks.ReadTSV(f, tasks.Classes)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"train": 32, "val": 8, "test": 16}[set]; len(s) != want {
			t.Errorf("%s: %d samples, want %d", set, len(s), want)
		}
	}
	// Resume to 5 steps on the written files.
	out, err = runTrain(t, append(base, "--steps", "5", "--checkpoint", ck, "--train", filepath.Join(dir, "listops_train.tsv"),
		"--test", filepath.Join(dir, "listops_test.tsv"))...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "steps 3→5") {
		t.Errorf("resumed run did not continue from step 3:\n%s", out)
	}
	// Evaluate the saved model on the test file.
	out, err = runTrain(t, "--evaluate", "--checkpoint", ck, "--test", filepath.Join(dir, "listops_test.tsv"), "--batch", "8", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Steps != 5 || rep.NTest != 16 {
		t.Errorf("evaluation report %+v (%v): %s", rep, err, out)
	}
	for _, bad := range [][]string{
		{"--model", "rnn"},
		{"--task", "copy"},
		{"--model", "ski-tnn", "--causal"},
		{"--adapter", "lora"},
		{"--evaluate"},
		{"--lr", "NaN"},
	} {
		if _, err := runTrain(t, append(append([]string(nil), base...), append(bad, "--steps", "1")...)...); err == nil {
			t.Errorf("train %v succeeded", bad)
		}
	}
}

// TestTrainHRFCommand trains the hrf model (angular hybrid random feature
// attention) with its feature counts as flags, recorded in the checkpoint,
// writes a CPU profile (a gzip-compressed pprof file), and refuses
// non-positive counts.
func TestTrainHRFCommand(t *testing.T) {
	dir := t.TempDir()
	ck, prof := filepath.Join(dir, "hrf.ckpt"), filepath.Join(dir, "cpu.prof")
	base := []string{"--task", "listops", "--model", "hrf", "--length", "16", "--width", "8", "--depth", "1",
		"--n-train", "16", "--n-eval", "0", "--n-test", "8", "--batch", "8", "--warmup", "1", "--steps", "2"}
	out, err := runTrain(t, append(base, "--hrf-m", "3", "--hrf-n", "2", "--redraw", "1", "--checkpoint", ck, "--cpuprofile", prof, "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Kind  string `json:"model"`
		Steps int    `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Kind != "hrf" || rep.Steps != 2 {
		t.Fatalf("report %+v (%v): %s", rep, err, out)
	}
	c, err := train.ReadCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.HRFM != 3 || c.Model.HRFN != 2 {
		t.Errorf("checkpoint holds HRF counts m=%d, n=%d, want 3 and 2", c.Model.HRFM, c.Model.HRFN)
	}
	p, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) < 2 || p[0] != 0x1f || p[1] != 0x8b {
		t.Errorf("CPU profile of %d bytes is not gzip data", len(p))
	}
	for _, bad := range [][]string{{"--hrf-m", "-1"}, {"--hrf-n", "-3"}} {
		if _, err := runTrain(t, append(append([]string(nil), base...), bad...)...); err == nil {
			t.Errorf("train %v succeeded", bad)
		}
	}
}
