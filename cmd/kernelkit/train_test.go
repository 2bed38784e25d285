package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
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
	cmd := newRoot() // train with the root's persistent flags (--max-memory)
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(append([]string{"train"}, args...))
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
		{"--rpe-layers", "100000000"},
		{"--train", "/dev/zero"},
		{"--test", filepath.Join(dir, "listops_test.tsv")},
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

// runTrainStderr is runTrain returning standard error too.
func runTrainStderr(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newRoot() // train with the root's persistent flags (--max-memory)
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(append([]string{"train"}, args...))
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err = cmd.Execute()
	return out.String(), errb.String(), err
}

// TestTrainMemoryBudget runs the commands of issue 22 (cases 5–9) that
// crashed by memory: each is refused at once with the memory it would
// need, under the default budget of 8 GiB; a larger --max-memory lets a
// run through that the default budget refuses, and bad budgets are refused.
func TestTrainMemoryBudget(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "recall", "--n-train", "16000000", "--length", "1024"}, "data 95."},
		{[]string{"--length", "16777216"}, "activations of a step"},
		{[]string{"--depth", "1024", "--width", "4096"}, "parameters and optimiser state"},
		{[]string{"--batch", "16777216", "--length", "16"}, "activations of a step"},
		{[]string{"--model", "transformer", "--length", "11264"}, "attention scores 16×2×11264×11264"},
	} {
		_, err := runTrain(t, append(c.args, "--steps", "1")...)
		if err == nil || !strings.Contains(err.Error(), "would need about") || !strings.Contains(err.Error(), c.want) ||
			!strings.Contains(err.Error(), "memory budget of 8 GiB") {
			t.Errorf("train %v: %v, want a refusal with %q", c.args, err, c.want)
		}
	}
	// About 43 MiB (6 MiB of data): refused at 16 MiB, run at 1 GiB.
	args := []string{"--task", "recall", "--model", "tnn", "--length", "1024", "--width", "8", "--depth", "1", "--batch", "2",
		"--n-train", "1024", "--n-eval", "0", "--n-test", "2", "--steps", "0", "--rpe-hidden", "4"}
	if _, err := runTrain(t, append(args, "--max-memory", "16MiB")...); err == nil || !strings.Contains(err.Error(), "data 6.") ||
		!strings.Contains(err.Error(), "memory budget of 16 MiB") {
		t.Errorf("--max-memory 16MiB: %v", err)
	}
	if _, err := runTrain(t, append(args, "--max-memory", "1GiB")...); err != nil {
		t.Errorf("--max-memory 1GiB: %v", err)
	}
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"8GiB", 8 << 30}, {"512MiB", 512 << 20}, {"1.5G", 3 << 29}, {"2KB", 2000}, {"4096", 4096}, {" 3 MB ", 3e6}, {"1TiB", 1 << 40},
		{"0", -1}, {"-1GiB", -1}, {"NaN", -1}, {"Inf", -1}, {"GiB", -1}, {"0x10", -1}, {"1e30", -1}, {"8 parsecs", -1},
	} {
		got, err := parseBytes(c.in)
		if c.want < 0 {
			if err == nil {
				t.Errorf("parseBytes(%q) = %d, want an error", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

// TestTrainDataMessages checks the messages of issues 22 (case 15) and 23:
// an unknown token names the file, the line and the token; sequences
// longer than --length are reported on standard error; --write-data
// creates its directory; an evaluation reports the majority share of the
// evaluated file's largest class, the file as the task, and no batch.
func TestTrainDataMessages(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--model", "tnn", "--width", "8", "--depth", "1", "--batch", "4", "--warmup", "1", "--rpe-hidden", "4", "--steps", "1"}
	bad := filepath.Join(dir, "bad.tsv")
	if err := os.WriteFile(bad, []byte("Source\tTarget\n( [MAX 2 ] )\t2\n( [MIN 4 NOPE ] )\t4\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := runTrain(t, append(base, "--length", "16", "--train", bad)...); err == nil ||
		!strings.Contains(err.Error(), bad+": line 3, token 3: unknown token \"NOPE\"") {
		t.Errorf("unknown token: %v", err)
	}
	data := filepath.Join(dir, "new", "data")
	ck := filepath.Join(dir, "m.ckpt")
	_, stderr, err := runTrainStderr(t, append(base, "--length", "16", "--listops-min", "20", "--listops-max", "40", "--n-train", "8",
		"--n-eval", "0", "--n-test", "20", "--write-data", data, "--checkpoint", ck)...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "warning: train: 28 of 28 sequences are longer than the length 16") {
		t.Errorf("standard error %q lacks the truncation warning", stderr)
	}
	test := filepath.Join(data, "listops_test.tsv")
	f, err := os.Open(test)
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
	counts := map[int]int{}
	top := 0
	for _, x := range s {
		counts[x.Target]++
		top = max(top, counts[x.Target])
	}
	out, err := runTrain(t, "--evaluate", "--checkpoint", ck, "--test", test, "--batch", "8")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("majority class %.4f, its largest class share", float64(top)/float64(len(s)))
	if !strings.Contains(out, want) || !strings.Contains(out, "listops_test.tsv (train 0, eval 0, test 20") || strings.Contains(out, "batch") {
		t.Errorf("evaluation report lacks %q or the file name, or reports a batch:\n%s", want, out)
	}
}

// TestTrainEvaluateDamagedCheckpoint evaluates a checkpoint with a NaN in
// a weight: refused, naming the variable (it gave accuracy 0.1 and exit 0).
func TestTrainEvaluateDamagedCheckpoint(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "m.ckpt")
	base := []string{"--task", "listops", "--model", "tnn", "--length", "16", "--width", "8", "--depth", "1", "--batch", "4",
		"--n-train", "8", "--n-eval", "0", "--n-test", "8", "--warmup", "1", "--rpe-hidden", "4", "--steps", "1"}
	if _, err := runTrain(t, append(base, "--checkpoint", ck, "--write-data", dir)...); err != nil {
		t.Fatal(err)
	}
	c, err := train.ReadCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range c.Variables {
		if v.Scope == "/head" && v.Name == "w" {
			c.Variables[i].Data = append([]byte(nil), v.Data...)
			copy(c.Variables[i].Data, []byte{0, 0, 0xc0, 0x7f}) // float32 NaN, little-endian
		}
	}
	if err := train.WriteCheckpoint(ck, c); err != nil {
		t.Fatal(err)
	}
	_, err = runTrain(t, "--evaluate", "--checkpoint", ck, "--test", filepath.Join(dir, "listops_test.tsv"))
	if err == nil || !strings.Contains(err.Error(), "/head/w holds NaN at index 0") {
		t.Errorf("evaluating a checkpoint with a NaN weight: %v", err)
	}
	// Finite but huge weights (3e38) make the logits overflow: refused too
	// (it printed a loss of NaN and exit 0).
	for i, v := range c.Variables {
		if v.Scope == "/head" && v.Name == "w" {
			for k := 0; k+4 <= len(v.Data); k += 4 {
				binary.LittleEndian.PutUint32(c.Variables[i].Data[k:], math.Float32bits(3e38))
			}
		}
	}
	if err := train.WriteCheckpoint(ck, c); err != nil {
		t.Fatal(err)
	}
	_, err = runTrain(t, "--evaluate", "--checkpoint", ck, "--test", filepath.Join(dir, "listops_test.tsv"))
	if err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("evaluating a checkpoint with weights of 3e38: %v", err)
	}
}

// TestTrainListOpsMin generates ListOps with --listops-min 100 and no
// --listops-max at length 128 (issue 23): every written sequence has
// 101…127 tokens (the minimum was ignored: lengths 33–127).
func TestTrainListOpsMin(t *testing.T) {
	dir := t.TempDir()
	if _, err := runTrain(t, "--task", "listops", "--model", "tnn", "--length", "128", "--width", "8", "--depth", "1", "--batch", "4",
		"--rpe-hidden", "4", "--steps", "0", "--n-train", "24", "--n-eval", "0", "--n-test", "4", "--listops-min", "100", "--write-data", dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "listops_train.tsv"))
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
	for _, x := range s {
		if n := len(tasks.Tokenize(x.Source)); n <= 100 || n >= 128 {
			t.Errorf("line %d: %d tokens, outside (100, 128)", x.Line, n)
		}
	}
}

// TestTrainAnalog trains a tiny performer, evaluates it with its FAVOR+
// projections on emulated PCM crossbars (--analog), and refuses the
// hardware names and models the analog evaluation cannot take, each with
// one line.
func TestTrainAnalog(t *testing.T) {
	base := []string{"--task", "listops", "--model", "performer", "--length", "16", "--width", "8", "--depth", "1",
		"--heads", "2", "--features", "4", "--n-train", "32", "--n-eval", "0", "--n-test", "16", "--batch", "8",
		"--warmup", "1", "--steps", "3"}
	out, err := runTrain(t, append(base, "--analog", "pcm", "--analog-calibration", "8", "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Analog    string   `json:"analog"`
		AnalogAcc *float64 `json:"analog_test_accuracy"`
		AnalogLos *float64 `json:"analog_test_loss"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.Analog != "pcm" || rep.AnalogLos == nil || *rep.AnalogLos <= 0 {
		t.Errorf("report %s lacks the analog evaluation", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--analog", "rram"}, "unknown analog hardware"},
		{[]string{"--analog", "ideal", "--model", "tnn", "--rpe-hidden", "4"}, "needs a performer"},
		{[]string{"--analog", "ideal", "--feature-map", "oprf"}, "needs a performer with favor+ or simrf"},
	} {
		_, err := runTrain(t, append(append([]string(nil), base...), c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line with %q", c.args, err, c.want)
		}
	}
}

// TestTrainNoTestSet: a run with no evaluation or test set says so
// instead of printing a test accuracy, loss and majority class of zero.
func TestTrainNoTestSet(t *testing.T) {
	out, err := runTrain(t, "--task", "listops", "--model", "tnn", "--length", "16", "--width", "8", "--depth", "1", "--batch", "4",
		"--n-train", "8", "--n-eval", "0", "--n-test", "0", "--warmup", "1", "--rpe-hidden", "4", "--steps", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "no test or evaluation set") || strings.Contains(out, "majority class 0.0000") {
		t.Errorf("report without a test set:\n%s", out)
	}
}
