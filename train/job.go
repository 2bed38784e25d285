package train

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/kernelkit/kernelkit/analog"
	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/internal/atomicfile"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/tasks"
)

// Tasks generated without download.
const (
	TaskListOps = "listops"
	TaskRecall  = "recall"
)

// Job is a training run on a task: data generated (Task) or read from LRA
// TSV files, training, and the evaluation on held-out data.
type Job struct {
	Config
	// Task generates the data when TrainFile is empty: listops (the LRA
	// generator with the length window (ListOpsMin, ListOpsMax)) or recall
	// (Pairs key–value pairs in sequences of Model.Length tokens).
	Task string
	// NTrain, NEval, NTest are the generated set sizes (split in this
	// order from one draw, as the LRA generator splits).
	NTrain, NEval, NTest int
	// ListOpsMin and ListOpsMax are the strict length window: ListOpsMax
	// 0 stands for Length, and ListOpsMin 0 with ListOpsMax 0 for Length/4
	// (LRA's (500, 2000) at length 2000).
	ListOpsMin, ListOpsMax int
	Pairs                  int
	// DataSeed seeds the generated data (independent of the model seed).
	DataSeed uint64
	// TrainFile, EvalFile, TestFile read LRA TSV files instead (EvalFile
	// and TestFile optional).
	TrainFile, EvalFile, TestFile string
	// WriteData, if set, is a directory (created if missing) where the
	// generated sets are written as <task>_train.tsv, <task>_val.tsv,
	// <task>_test.tsv.
	WriteData string
	// EvaluateOnly evaluates the model of Checkpoint on the test (or
	// evaluation) set without training.
	EvaluateOnly bool
	// Analog, if "ideal" or "pcm", also evaluates the model with the
	// random-feature projections of its FAVOR+ attention on emulated
	// analog crossbars (EvaluateAnalog: analog.Ideal(), or
	// analog.PCM(AnalogSeed)), calibrated on up to AnalogCalibration
	// training examples (the evaluation examples when there is no
	// training set; default 64).
	Analog            string
	AnalogSeed        uint64
	AnalogCalibration int
	// Warn, if set, receives warnings (sequences longer than the model's
	// length, which are truncated) before training starts; its error ends
	// the run.
	Warn func(string) error
	// Export, if set, is where the trained model is written as an
	// inference file (Trainer.Export, seqmodel) after training.
	Export string
}

// JobReport is the outcome of a job.
type JobReport struct {
	// Task is the generated task, or the base name of the data file (the
	// training file; for an evaluation, the file evaluated on).
	Task   string `json:"task"`
	Kind   string `json:"model"`
	Length int    `json:"length"`
	Width  int    `json:"width"`
	Depth  int    `json:"depth"`
	// FeatureMap is the performer's feature family when it is not FAVOR+
	// (arch.ModelConfig.FeatureMap).
	FeatureMap string `json:"feature_map,omitempty"`
	// Batch is the training batch (0 for an evaluation, whose
	// checkpoint does not record the batch it was trained with).
	Batch     int     `json:"batch,omitempty"`
	Steps     int     `json:"steps"`
	NTrain    int     `json:"n_train"`
	NEval     int     `json:"n_eval"`
	NTest     int     `json:"n_test"`
	Truncated int     `json:"truncated"`
	EvalAcc   float64 `json:"eval_accuracy"`
	TestAcc   float64 `json:"test_accuracy"`
	TestLoss  float64 `json:"test_loss"`
	// Majority is the test accuracy of always predicting the most frequent
	// class: of the training set when there is one (MajorityOf "train"),
	// else of the evaluated set itself (MajorityOf "test", its largest
	// class share).
	Majority   float64 `json:"majority_class_accuracy"`
	MajorityOf string  `json:"majority_class_of"`
	Wall       float64 `json:"wall_seconds"`
	Result     *Result `json:"result,omitempty"`
	// Analog is the emulated hardware of the analog evaluation ("ideal" or
	// "pcm"), AnalogAcc and AnalogLoss its test accuracy and loss.
	Analog     string  `json:"analog,omitempty"`
	AnalogAcc  float64 `json:"analog_test_accuracy,omitempty"`
	AnalogLoss float64 `json:"analog_test_loss,omitempty"`
}

// Run runs the job. Every size the job implies — the model's parameters
// and a step's activations (EstimateMemory), the data to generate or read
// — is checked against the memory budget (Config.MaxMemory) before any
// data is generated or read.
func (j *Job) Run(ctx context.Context) (*JobReport, error) {
	start := time.Now()
	cfg := j.Config
	if j.TrainFile == "" && !j.EvaluateOnly && (j.EvalFile != "" || j.TestFile != "") {
		return nil, errors.New("train: evaluation and test files are read with a training file (or with evaluation only); without one the sets are generated")
	}
	if j.EvaluateOnly {
		if cfg.Checkpoint == "" {
			return nil, errors.New("train: evaluation needs a checkpoint")
		}
		if err := checkCheckpointFile(cfg.Checkpoint, cfg.MaxMemory); err != nil {
			return nil, err
		}
		ck, err := ReadCheckpoint(cfg.Checkpoint)
		if err != nil {
			return nil, err
		}
		cfg.Model, cfg.Seed, cfg.Steps = ck.Model, ck.Seed, int(ck.Step)
	}
	if j.Analog != "" {
		if j.Analog != "ideal" && j.Analog != "pcm" {
			return nil, fmt.Errorf("train: unknown analog hardware %q (want ideal or pcm)", j.Analog)
		}
		if cfg.Model.Kind != arch.KindPerformer || arch.FittedFamily(cfg.Model.FeatureMap) || !IsNative(cfg.Device) {
			return nil, errors.New("train: --analog needs a performer with favor+ or simrf features on the native engine (--device cpu)")
		}
	}
	dataBytes, err := j.dataBytes(ctx, cfg.Model.Length)
	if err != nil {
		return nil, err
	}
	if err := checkConfig(&cfg, dataBytes); err != nil {
		return nil, err
	}
	sets, err := j.data(cfg.Model.Length)
	if err != nil {
		return nil, err
	}
	var exs [3][]Example
	for i, s := range sets {
		if exs[i], err = fromSamples(s.samples, s.path); err != nil {
			return nil, err
		}
	}
	trainX, evalX, testX := exs[0], exs[1], exs[2]
	rep := &JobReport{Task: j.Task, NTrain: len(trainX), NEval: len(evalX), NTest: len(testX)}
	total := 0
	for _, x := range exs {
		rep.Truncated += Truncated(x, cfg.Model.Length)
		total += len(x)
	}
	if rep.Truncated > 0 && j.Warn != nil {
		if err := j.Warn(fmt.Sprintf("train: %d of %d sequences are longer than the length %d; the model sees only their first %d tokens", rep.Truncated, total, cfg.Model.Length, cfg.Model.Length)); err != nil {
			return nil, err
		}
	}
	tr, err := New(cfg)
	if err != nil {
		return nil, err
	}
	cfg = tr.cfg
	rep.Kind, rep.Length, rep.Width, rep.Depth = cfg.Model.Kind, cfg.Model.Length, cfg.Model.Width, cfg.Model.Depth
	rep.FeatureMap = cfg.Model.FeatureMap
	for _, f := range []string{j.TrainFile, j.TestFile, j.EvalFile} {
		if f != "" {
			rep.Task = filepath.Base(f)
			break
		}
	}
	if !j.EvaluateOnly {
		rep.Batch = cfg.Batch
		var ev []Example
		if len(evalX) > 0 {
			ev = evalX
		}
		if rep.Result, err = tr.Fit(ctx, trainX, ev); err != nil {
			return nil, err
		}
		if n := len(rep.Result.EvalAccuracy); n > 0 {
			rep.EvalAcc = rep.Result.EvalAccuracy[n-1]
		}
	}
	rep.Steps = tr.Step()
	if j.Export != "" {
		if err := tr.exportTo(j.Export); err != nil {
			return nil, err
		}
	}
	final := testX
	if len(final) == 0 {
		final = evalX
	}
	if len(final) > 0 {
		if rep.TestAcc, rep.TestLoss, err = tr.Evaluate(final); err != nil {
			return nil, err
		}
		rep.MajorityOf = "train"
		if len(trainX) == 0 {
			rep.MajorityOf = "test"
			trainX = final
		}
		rep.Majority = majority(trainX, final)
		if j.Analog != "" {
			if err := j.evaluateAnalog(tr, rep, trainX, final); err != nil {
				return nil, err
			}
		}
	}
	rep.Wall = time.Since(start).Seconds()
	return rep, nil
}

// evaluateAnalog adds the analog evaluation of final to rep, calibrated on
// the first training examples (calib: the training set, or final itself
// for an evaluation without one).
func (j *Job) evaluateAnalog(tr *Trainer, rep *JobReport, calib, final []Example) error {
	var hw analog.Config
	switch j.Analog {
	case "ideal":
		hw = analog.Ideal()
	case "pcm":
		hw = analog.PCM(j.AnalogSeed)
	default:
		return fmt.Errorf("train: unknown analog hardware %q (want ideal or pcm)", j.Analog)
	}
	n := j.AnalogCalibration
	if n <= 0 {
		n = 64
	}
	acc, loss, err := tr.EvaluateAnalog(final, AnalogConfig{Hardware: hw, Calibration: calib[:min(n, len(calib))]})
	if err != nil {
		return err
	}
	rep.Analog, rep.AnalogAcc, rep.AnalogLoss = j.Analog, acc, loss
	return nil
}

// majority returns the accuracy on test of the most frequent class of
// train (ties: the smallest class).
func majority(train, test []Example) float64 {
	counts := map[int]int{}
	best := -1
	for _, e := range train {
		counts[e.Label]++
	}
	for c, n := range counts {
		if best < 0 || n > counts[best] || n == counts[best] && c < best {
			best = c
		}
	}
	n := 0
	for _, e := range test {
		if e.Label == best {
			n++
		}
	}
	return float64(n) / float64(len(test))
}

// set is a data set: samples and the file they were read from (empty:
// generated).
type set struct {
	samples []tasks.Sample
	path    string
}

// Bytes of memory per token and per sample of the data sets, for the
// budget: a generated ListOps source takes at most 8 bytes a token ("( d
// )" around a value, "[MAX ... ] )" around an operator), a recall source
// 2 ("k "), every token id 4; a sample adds its headers and the ListOps
// generator's set of distinct sources, and the samples being generated
// and tokenised (token strings, tree nodes) at most 128 bytes a token.
const (
	listOpsSourceBytes = 8
	recallSourceBytes  = 2
	tokenIDBytes       = 4
	sampleBytes        = 256
	transientBytes     = 128
)

// dataBytes estimates the memory of the data sets (generated for length,
// or read from the job's files) without generating or reading them.
func (j *Job) dataBytes(ctx context.Context, length int) (float64, error) {
	if j.TrainFile != "" || j.EvaluateOnly {
		total := 0.0
		for _, path := range []string{j.TrainFile, j.EvalFile, j.TestFile} {
			if path == "" {
				continue
			}
			size, lines, err := fileShape(ctx, path)
			if err != nil {
				return 0, err
			}
			// The source strings (at most the file) and their token ids
			// (tokens are separated by spaces: at most (size+1)/2 of them).
			total += size + float64(tokenIDBytes)*(size+1)/2 + sampleBytes*lines
		}
		return total, nil
	}
	if err := j.checkSizes(); err != nil {
		return 0, err
	}
	n := float64(j.NTrain) + float64(j.NEval) + float64(j.NTest)
	switch j.Task {
	case TaskListOps:
		c, err := j.listOpsConfig(length)
		if err != nil {
			return 0, err
		}
		maxLen := float64(c.MaxLength - 1)
		return n*(maxLen*(listOpsSourceBytes+tokenIDBytes)+sampleBytes) + transientBytes*maxLen, nil
	case TaskRecall:
		c := tasks.RecallConfig{Length: length, Pairs: j.Pairs}
		if err := c.Validate(); err != nil {
			return 0, err
		}
		l := float64(length)
		return n*(l*(recallSourceBytes+tokenIDBytes)+sampleBytes) + transientBytes*l, nil
	}
	return 0, fmt.Errorf("train: unknown task %q (want listops or recall, or give --train)", j.Task)
}

// fileShape returns the size and the number of lines of a file, read in
// a stream of fixed-size chunks, checking ctx between chunks. The file
// must be a regular file: the data is read twice (here, to check its
// memory against the budget, and then to parse it), which a pipe or a
// device such as /dev/zero does not allow.
func fileShape(ctx context.Context, path string) (size, lines float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("train: %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return 0, 0, fmt.Errorf("train: %s is not a regular file (a pipe or a device); write the data to a file: it is read twice, for its size and then its rows", path)
	}
	buf := make([]byte, 1<<16)
	for {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		n, rerr := f.Read(buf)
		size += float64(n)
		lines += float64(bytes.Count(buf[:n], []byte{'\n'}))
		if rerr == io.EOF {
			return size, lines + 1, nil
		}
		if rerr != nil {
			return 0, 0, fmt.Errorf("train: %s: %w", path, rerr)
		}
	}
}

// checkSizes checks the numbers of samples to generate.
func (j *Job) checkSizes() error {
	for _, n := range []int{j.NTrain, j.NEval, j.NTest} {
		if err := limits.Dim("train: number of samples", max(n, 1)); err != nil {
			return err
		}
	}
	if j.NTrain <= 0 || j.NEval < 0 || j.NTest < 0 {
		return fmt.Errorf("train: need a positive number of training samples and non-negative evaluation and test samples, got %d, %d and %d", j.NTrain, j.NEval, j.NTest)
	}
	return nil
}

// listOpsConfig returns the ListOps generator's configuration for the
// model length, validated.
func (j *Job) listOpsConfig(length int) (tasks.ListOpsConfig, error) {
	c := tasks.DefaultListOps()
	c.MinLength, c.MaxLength = j.ListOpsMin, j.ListOpsMax
	if c.MaxLength == 0 {
		c.MaxLength = length
		if c.MinLength == 0 {
			c.MinLength = length / 4
		}
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("train: --listops-min %d, --listops-max %d at length %d: %w", j.ListOpsMin, j.ListOpsMax, length, err)
	}
	return c, nil
}

// data reads or generates the three sets (training, evaluation, test).
func (j *Job) data(length int) ([3]set, error) {
	var out [3]set
	if j.TrainFile != "" || j.EvaluateOnly {
		for i, path := range []string{j.TrainFile, j.EvalFile, j.TestFile} {
			if path == "" {
				continue
			}
			f, err := os.Open(path)
			if err != nil {
				return out, err
			}
			s, err := tasks.ReadTSV(f, j.Model.Classes)
			cerr := f.Close()
			if err != nil {
				return out, fmt.Errorf("train: %s: %w", path, err)
			}
			if cerr != nil {
				return out, cerr
			}
			out[i] = set{s, path}
		}
		if j.EvaluateOnly && len(out[1].samples)+len(out[2].samples) == 0 {
			return out, errors.New("train: evaluation needs a test or evaluation file")
		}
		return out, nil
	}
	if err := j.checkSizes(); err != nil {
		return out, err
	}
	total := j.NTrain + j.NEval + j.NTest
	var all []tasks.Sample
	switch j.Task {
	case TaskListOps:
		c, err := j.listOpsConfig(length)
		if err != nil {
			return out, err
		}
		if all, err = tasks.GenerateListOps(c, total, j.DataSeed); err != nil {
			return out, err
		}
	case TaskRecall:
		var err error
		if all, err = tasks.GenerateRecall(tasks.RecallConfig{Length: length, Pairs: j.Pairs}, total, j.DataSeed); err != nil {
			return out, err
		}
	default:
		return out, fmt.Errorf("train: unknown task %q (want listops or recall, or give --train)", j.Task)
	}
	out[0].samples, out[1].samples, out[2].samples = all[:j.NTrain], all[j.NTrain:j.NTrain+j.NEval], all[j.NTrain+j.NEval:]
	if j.WriteData != "" {
		if err := os.MkdirAll(j.WriteData, 0o777); err != nil {
			return out, fmt.Errorf("train: the data directory: %w", err)
		}
		for i, name := range []string{"train", "val", "test"} {
			path := filepath.Join(j.WriteData, j.Task+"_"+name+".tsv")
			s := out[i].samples
			if err := atomicfile.Write(path, func(w io.Writer) error { return tasks.WriteTSV(w, s) }); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// Render writes the report as a short table.
func (r *JobReport) Render(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "task\t%s (train %d, eval %d, test %d; %d truncated to the length)\n", r.Task, r.NTrain, r.NEval, r.NTest, r.Truncated)
	batch := ""
	if r.Batch > 0 {
		batch = fmt.Sprintf(", batch %d", r.Batch)
	}
	kind := r.Kind
	if r.FeatureMap != "" {
		kind += " (" + r.FeatureMap + " features)"
	}
	fmt.Fprintf(tw, "model\t%s, length %d, width %d, depth %d%s\n", kind, r.Length, r.Width, r.Depth, batch)
	if res := r.Result; res != nil {
		fmt.Fprintf(tw, "training\tsteps %d→%d, %.1f s, %.2f steps/s (backend %s)\n", res.StartStep, res.Steps, res.Seconds, res.StepsPerSecond, res.Backend)
		fmt.Fprintf(tw, "parameters\t%d trainable of %d\n", res.TrainableParams, res.ModelParams)
		if n := len(res.Loss); n > 0 {
			fmt.Fprintf(tw, "last loss\t%.4f\n", res.Loss[n-1])
		}
		if len(res.EvalAccuracy) > 0 {
			fmt.Fprintf(tw, "eval accuracy\t%.4f\n", r.EvalAcc)
		}
	}
	of := "of the training set"
	if r.MajorityOf == "test" {
		of = "its largest class share"
	}
	if r.MajorityOf == "" { // nothing was evaluated
		fmt.Fprintf(tw, "test accuracy\t— (no test or evaluation set)\n")
	} else {
		fmt.Fprintf(tw, "test accuracy\t%.4f (loss %.4f; majority class %.4f, %s)\n", r.TestAcc, r.TestLoss, r.Majority, of)
	}
	if r.Analog != "" {
		fmt.Fprintf(tw, "analog test accuracy\t%.4f (loss %.4f; FAVOR+ projections on emulated %s crossbars; %+.4f against digital)\n",
			r.AnalogAcc, r.AnalogLoss, r.Analog, r.AnalogAcc-r.TestAcc)
	}
	fmt.Fprintf(tw, "wall time\t%.1f s\n", r.Wall)
	return tw.Flush()
}
