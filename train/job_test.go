package train

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/tasks"
)

// toyJob is a job on generated ListOps data with a tiny model.
func toyJob(kind string) *Job {
	cfg := toyConfig(kind)
	cfg.Steps = 2
	return &Job{Config: cfg, Task: TaskListOps, NTrain: 32, NEval: 0, NTest: 16, ListOpsMin: 2, ListOpsMax: 16, DataSeed: 1}
}

// TestJobMemoryBudget gives jobs whose data, parameters, activations or
// attention scores exceed the memory budget (the crashes of issue 22,
// cases 5–9): each is refused with an error stating the memory it would
// need, before any data is generated (the data directory stays empty, and
// the refusal is immediate, where generating 16 million recall sequences
// would take minutes and 96 GiB).
func TestJobMemoryBudget(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(j *Job)
		want string
	}{
		{"recall data", func(j *Job) { j.Task, j.NTrain, j.Model.Length, j.Pairs = TaskRecall, 16000000, 1024, 8 }, "data 95."},
		{"length", func(j *Job) { j.Model.Length = 1 << 24 }, "activations of a step"},
		{"depth", func(j *Job) { j.Model.Depth, j.Model.Width = arch.MaxDepth, 4096 }, "parameters and optimiser state"},
		{"batch", func(j *Job) { j.Batch, j.Model.Length = 1<<24, 16 }, "activations of a step"},
		{"attention scores", func(j *Job) { j.Model.Kind, j.Model.Length, j.Model.Heads = arch.KindTransformer, 11264, 2 }, "attention scores 16×2×11264×11264, alone 15.1 GiB"},
		{"small budget", func(j *Job) { j.MaxMemory = 1 << 20 }, "more than the memory budget of 1 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := toyJob(arch.KindTNN)
			j.WriteData = filepath.Join(t.TempDir(), "data")
			c.mod(j)
			start := time.Now()
			_, err := j.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), "would need about") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want a refusal stating the memory, with %q", err, c.want)
			}
			if _, serr := os.Stat(j.WriteData); !os.IsNotExist(serr) {
				t.Errorf("data were written before the refusal (%v)", serr)
			}
			if el := time.Since(start); el > 10*time.Second {
				t.Errorf("refusal took %v", el)
			}
		})
	}
	j := toyJob(arch.KindTNN)
	j.MaxMemory = -1
	if _, err := j.Run(context.Background()); err == nil {
		t.Error("a negative memory budget was accepted")
	}
	// The estimate of the default job fits the default budget, and is
	// above the parameters' share alone.
	need, err := EstimateMemory(toyJob(arch.KindTNN).Config, 0)
	if err != nil || need.Check(0) != nil || need.Activations <= 0 || need.Params <= 0 {
		t.Errorf("toy job: need %+v (%v)", need, err)
	}
}

// writeTSV writes samples as a TSV file and returns its path.
func writeTSV(t *testing.T, dir, name string, s []tasks.Sample) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	err = tasks.WriteTSV(f, s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestJobEvaluateReport trains a model, then evaluates its checkpoint on a
// TSV file whose most frequent class is 9 (issue 23): the majority share
// is that of class 9 in the file (not of class 0), the task is the file's
// name (not "listops") and no training batch is reported.
func TestJobEvaluateReport(t *testing.T) {
	dir := t.TempDir()
	j := toyJob(arch.KindFDTNN)
	j.Checkpoint = filepath.Join(dir, "m.ckpt")
	if _, err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var test []tasks.Sample
	for i := 0; i < 20; i++ {
		y := 9
		if i%4 == 0 {
			y = 0
		}
		if i%10 == 1 {
			y = 3
		}
		test = append(test, tasks.Sample{Source: "( ( ( [MAX 2 ) 9 ) ] )", Target: y})
	}
	path := writeTSV(t, dir, "held_out.tsv", test)
	ev := &Job{Config: Config{Checkpoint: j.Checkpoint, Batch: 8, LR: 1e-3}, EvaluateOnly: true, TestFile: path, Task: TaskListOps}
	ev.Model.Classes = tasks.Classes
	rep, err := ev.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Class 9: 20 − 5 (class 0) − 2 (class 3) = 13 of 20.
	if rep.Majority != 13.0/20 || rep.MajorityOf != "test" {
		t.Errorf("majority %v of %q, want 0.65 of the test set", rep.Majority, rep.MajorityOf)
	}
	if rep.Task != "held_out.tsv" || rep.Batch != 0 || rep.Steps != 2 || rep.NTest != 20 {
		t.Errorf("report: task %q, batch %d, steps %d, n_test %d", rep.Task, rep.Batch, rep.Steps, rep.NTest)
	}
	var out strings.Builder
	if err := rep.Render(&out); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "batch") || !strings.Contains(s, "majority class 0.6500, its largest class share") {
		t.Errorf("rendered report:\n%s", s)
	}
}

// TestJobListOpsWindowAndWriteData generates ListOps with --listops-min
// 100 and no --listops-max at length 128: every sequence has 101…127
// tokens (the minimum was ignored before); the data directory, which
// does not exist, is created.
func TestJobListOpsWindowAndWriteData(t *testing.T) {
	j := toyJob(arch.KindTNN)
	j.Model.Length, j.ListOpsMin, j.ListOpsMax, j.NTrain, j.NTest = 128, 100, 0, 8, 4
	j.WriteData = filepath.Join(t.TempDir(), "new", "dir")
	c, err := j.listOpsConfig(128)
	if err != nil || c.MinLength != 100 || c.MaxLength != 128 {
		t.Fatalf("window (%d, %d) (%v), want (100, 128)", c.MinLength, c.MaxLength, err)
	}
	sets, err := j.data(128)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets {
		for _, x := range s.samples {
			if n := len(tasks.Tokenize(x.Source)); n <= 100 || n >= 128 {
				t.Errorf("sequence of %d tokens outside (100, 128)", n)
			}
		}
	}
	for _, name := range []string{"listops_train.tsv", "listops_val.tsv", "listops_test.tsv"} {
		if _, err := os.Stat(filepath.Join(j.WriteData, name)); err != nil {
			t.Error(err)
		}
	}
	// Both zero: the default window (length/4, length).
	j.ListOpsMin = 0
	if c, err := j.listOpsConfig(128); err != nil || c.MinLength != 32 || c.MaxLength != 128 {
		t.Errorf("default window (%d, %d) (%v), want (32, 128)", c.MinLength, c.MaxLength, err)
	}
	j.ListOpsMin = 127
	if _, err := j.listOpsConfig(128); err == nil || !strings.Contains(err.Error(), "--listops-min 127") {
		t.Errorf("empty window (127, 128): %v", err)
	}
}

// TestJobFileErrors reads a TSV file with an unknown token on line 3: the
// error names the file, the line, the token's position and the token
// (issue 22, case 15); and a file with sequences longer than the length
// gives a warning before training.
func TestJobFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeTSV(t, dir, "bad.tsv", []tasks.Sample{{Source: "( [MAX 2 ] )", Target: 2}, {Source: "( ( [MIN 4 ) FOO ] )", Target: 4}})
	j := toyJob(arch.KindTNN)
	j.TrainFile = bad
	_, err := j.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), bad+": line 3, token 3: unknown token \"FOO\"") {
		t.Errorf("error %v, want the file, line 3, token 3 and the token", err)
	}
	var long []tasks.Sample
	for i := 0; i < 16; i++ {
		long = append(long, tasks.Sample{Source: "[SM" + strings.Repeat(" 1", 20+i) + " ]", Target: (20 + i) % 10})
	}
	j = toyJob(arch.KindTNN)
	j.TrainFile = writeTSV(t, dir, "long.tsv", long)
	j.Steps = 1
	var warned []string
	j.Warn = func(s string) error { warned = append(warned, s); return nil }
	rep, err := j.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Truncated != 16 || len(warned) != 1 || !strings.Contains(warned[0], "16 of 16 sequences are longer than the length 16") {
		t.Errorf("truncated %d, warnings %q", rep.Truncated, warned)
	}
}

// TestCheckpointDamaged damages a trained checkpoint: a NaN or an
// infinity in a variable, a missing model variable, wrong dimensions, a
// missing optimiser moment or a step counter that disagrees. Each is
// refused with an error naming the variable (issue 22, case 3: a NaN gave
// "accuracy 0.1000 (loss NaN)", a missing variable was drawn afresh); a
// missing optimiser moment is refused only for further training, not for
// an evaluation. A checkpoint too large for the memory budget is refused
// before it is read.
func TestCheckpointDamaged(t *testing.T) {
	dir := t.TempDir()
	j := toyJob(arch.KindTNN)
	j.Checkpoint = filepath.Join(dir, "good.ckpt")
	if _, err := j.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	good, err := ReadCheckpoint(j.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	find := func(ck *Checkpoint, scope, name string) int {
		for i, v := range ck.Variables {
			if v.Scope == scope && v.Name == name {
				return i
			}
		}
		t.Fatalf("no variable %s/%s", scope, name)
		return -1
	}
	setF32 := func(v *SavedVariable, i int, f float32) {
		v.Data = append([]byte(nil), v.Data...)
		binary.LittleEndian.PutUint32(v.Data[4*i:], math.Float32bits(f))
	}
	remove := func(ck *Checkpoint, scope, name string) {
		i := find(ck, scope, name)
		ck.Variables = append(ck.Variables[:i:i], ck.Variables[i+1:]...)
	}
	for _, c := range []struct {
		name     string
		damage   func(ck *Checkpoint)
		want     string
		evalOnly bool // the damage only matters to further training
	}{
		{"NaN weight", func(ck *Checkpoint) { setF32(&ck.Variables[find(ck, "/block_0/glu", "w3")], 5, float32(math.NaN())) }, "/block_0/glu/w3 holds NaN at index 5", false},
		{"Inf moment", func(ck *Checkpoint) {
			setF32(&ck.Variables[find(ck, "/AdamOptimizer/head", "w_2nd_moment")], 0, float32(math.Inf(1)))
		}, "/AdamOptimizer/head/w_2nd_moment holds +Inf", false},
		{"missing weight", func(ck *Checkpoint) { remove(ck, "/block_0/gtu/tno/rpe", "b0") }, "variable /block_0/gtu/tno/rpe/b0 of the tnn model is missing", false},
		{"missing classifier", func(ck *Checkpoint) { remove(ck, "/head", "b") }, "variable /head/b of the tnn model is missing", false},
		{"wrong dims", func(ck *Checkpoint) {
			v := &ck.Variables[find(ck, "/head", "b")]
			v.Dims, v.Data = []int{5}, v.Data[:20]
		}, "variable /head/b is float32[5], the model needs float32[10]", false},
		{"missing moment", func(ck *Checkpoint) { remove(ck, "/AdamOptimizer/embed", "tokens_1st_moment") }, "lacks the optimizer state /AdamOptimizer/embed/tokens_1st_moment", true},
		{"step counter", func(ck *Checkpoint) { ck.Step, ck.History = 1, nil }, "global_step does not hold the checkpoint's step 1", true},
		{"history", func(ck *Checkpoint) { ck.History.Loss = ck.History.Loss[:1] }, "history of 1 losses from step 0 does not end at step 2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, err := json.Marshal(good)
			if err != nil {
				t.Fatal(err)
			}
			ck := &Checkpoint{}
			if err := json.Unmarshal(raw, ck); err != nil {
				t.Fatal(err)
			}
			c.damage(ck)
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".ckpt")
			if err := WriteCheckpoint(path, ck); err != nil {
				t.Fatal(err)
			}
			test := writeTSV(t, dir, "test.tsv", []tasks.Sample{{Source: "( [MAX 2 ] )", Target: 2}})
			ev := &Job{Config: Config{Checkpoint: path, Batch: 4, LR: 1e-3}, EvaluateOnly: true, TestFile: test}
			ev.Model.Classes = tasks.Classes
			_, everr := ev.Run(context.Background())
			cfg := j.Config
			cfg.Checkpoint, cfg.Steps = path, 4
			_, nerr := New(cfg)
			if nerr == nil || !strings.Contains(nerr.Error(), c.want) {
				t.Errorf("resuming: %v, want an error with %q", nerr, c.want)
			}
			if c.evalOnly {
				if everr != nil {
					t.Errorf("evaluation refused a checkpoint without optimizer state: %v", everr)
				}
			} else if everr == nil || !strings.Contains(everr.Error(), c.want) {
				t.Errorf("evaluating: %v, want an error with %q", everr, c.want)
			}
		})
	}
	// The undamaged checkpoint resumes; it is not evaluated under a
	// budget below twice its size (the JSON text and the decoded
	// variables).
	cfg := j.Config
	cfg.Steps = 3
	if _, err := New(cfg); err != nil {
		t.Errorf("the undamaged checkpoint: %v", err)
	}
	fi, err := os.Stat(cfg.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	ev := &Job{Config: Config{Checkpoint: cfg.Checkpoint, Batch: 4, LR: 1e-3, MaxMemory: fi.Size()}, EvaluateOnly: true, TestFile: filepath.Join(dir, "test.tsv")}
	ev.Model.Classes = tasks.Classes
	if _, err := ev.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "reading checkpoint") {
		t.Errorf("a checkpoint of %d bytes under a budget of as many bytes: %v", fi.Size(), err)
	}
}

// TestCheckpointBeforeFirstStep writes a checkpoint of a run of zero steps
// (whose model variables did not exist yet): it holds the whole model,
// so that ReadCheckpoint accepts it, and a run resumed from it trains.
func TestCheckpointBeforeFirstStep(t *testing.T) {
	data := toyData(t, 32, 6)
	cfg := toyConfig(arch.KindSKITNN)
	cfg.Steps, cfg.Checkpoint = 0, filepath.Join(t.TempDir(), "zero.ckpt")
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Fit(context.Background(), data, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCheckpoint(cfg.Checkpoint); err != nil {
		t.Fatalf("checkpoint of zero steps: %v", err)
	}
	cfg.Steps = 2
	tr, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.Fit(context.Background(), data, nil)
	if err != nil || len(res.Loss) != 2 {
		t.Fatalf("resumed run: %v, %+v", err, res)
	}
	straight := cfg
	straight.Checkpoint = ""
	tr, err = New(straight)
	if err != nil {
		t.Fatal(err)
	}
	want, err := tr.Fit(context.Background(), data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Loss {
		if res.Loss[i] != want.Loss[i] {
			t.Errorf("step %d: loss %v after a checkpoint of zero steps, %v straight", i+1, res.Loss[i], want.Loss[i])
		}
	}
}
