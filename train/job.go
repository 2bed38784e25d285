package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

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
	// ListOpsMin and ListOpsMax are the strict length window (0: Length/4
	// and Length, LRA's (500, 2000) at length 2000).
	ListOpsMin, ListOpsMax int
	Pairs                  int
	// DataSeed seeds the generated data (independent of the model seed).
	DataSeed uint64
	// TrainFile, EvalFile, TestFile read LRA TSV files instead (EvalFile
	// and TestFile optional).
	TrainFile, EvalFile, TestFile string
	// WriteData, if set, is a directory where the generated sets are
	// written as <task>_train.tsv, <task>_val.tsv, <task>_test.tsv.
	WriteData string
	// EvaluateOnly evaluates the model of Checkpoint on the test (or
	// evaluation) set without training.
	EvaluateOnly bool
}

// JobReport is the outcome of a job.
type JobReport struct {
	Task      string  `json:"task"`
	Kind      string  `json:"model"`
	Length    int     `json:"length"`
	Width     int     `json:"width"`
	Depth     int     `json:"depth"`
	Batch     int     `json:"batch"`
	Steps     int     `json:"steps"`
	NTrain    int     `json:"n_train"`
	NEval     int     `json:"n_eval"`
	NTest     int     `json:"n_test"`
	Truncated int     `json:"truncated"`
	EvalAcc   float64 `json:"eval_accuracy"`
	TestAcc   float64 `json:"test_accuracy"`
	TestLoss  float64 `json:"test_loss"`
	// Majority is the test accuracy of always predicting the most frequent
	// training class.
	Majority float64 `json:"majority_class_accuracy"`
	Wall     float64 `json:"wall_seconds"`
	Result   *Result `json:"result,omitempty"`
}

// Run runs the job.
func (j *Job) Run(ctx context.Context) (*JobReport, error) {
	start := time.Now()
	trainS, evalS, testS, err := j.data()
	if err != nil {
		return nil, err
	}
	trainX, err := FromSamples(trainS)
	if err != nil {
		return nil, err
	}
	evalX, err := FromSamples(evalS)
	if err != nil {
		return nil, err
	}
	testX, err := FromSamples(testS)
	if err != nil {
		return nil, err
	}
	cfg := j.Config
	if j.EvaluateOnly {
		if cfg.Checkpoint == "" {
			return nil, errors.New("train: evaluation needs a checkpoint")
		}
		ck, err := ReadCheckpoint(cfg.Checkpoint)
		if err != nil {
			return nil, err
		}
		cfg.Model, cfg.Seed, cfg.Steps = ck.Model, ck.Seed, int(ck.Step)
	}
	tr, err := New(cfg)
	if err != nil {
		return nil, err
	}
	rep := &JobReport{Task: j.Task, Kind: cfg.Model.Kind, Length: cfg.Model.Length, Width: cfg.Model.Width, Depth: cfg.Model.Depth,
		Batch: cfg.Batch, NTrain: len(trainX), NEval: len(evalX), NTest: len(testX),
		Truncated: Truncated(trainX, cfg.Model.Length) + Truncated(evalX, cfg.Model.Length) + Truncated(testX, cfg.Model.Length)}
	if j.TrainFile != "" {
		rep.Task = filepath.Base(j.TrainFile)
	}
	if !j.EvaluateOnly {
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
	final := testX
	if len(final) == 0 {
		final = evalX
	}
	if len(final) > 0 {
		if rep.TestAcc, rep.TestLoss, err = tr.Evaluate(final); err != nil {
			return nil, err
		}
		rep.Majority = majority(trainX, final)
	}
	rep.Wall = time.Since(start).Seconds()
	return rep, nil
}

// majority returns the accuracy on test of the most frequent training
// class.
func majority(train, test []Example) float64 {
	counts := map[int]int{}
	best := 0
	for _, e := range train {
		counts[e.Label]++
		if counts[e.Label] > counts[best] {
			best = e.Label
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

// data reads or generates the three sets.
func (j *Job) data() (trainS, evalS, testS []tasks.Sample, err error) {
	if j.TrainFile != "" || j.EvaluateOnly {
		read := func(path string) ([]tasks.Sample, error) {
			if path == "" {
				return nil, nil
			}
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			s, err := tasks.ReadTSV(f, j.Model.Classes)
			cerr := f.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return s, cerr
		}
		if trainS, err = read(j.TrainFile); err != nil {
			return nil, nil, nil, err
		}
		if evalS, err = read(j.EvalFile); err != nil {
			return nil, nil, nil, err
		}
		if testS, err = read(j.TestFile); err != nil {
			return nil, nil, nil, err
		}
		if j.EvaluateOnly && len(testS)+len(evalS) == 0 {
			return nil, nil, nil, errors.New("train: evaluation needs a test or evaluation file")
		}
		return trainS, evalS, testS, nil
	}
	for _, n := range []int{j.NTrain, j.NEval, j.NTest} {
		if err := limits.Dim("train: number of samples", max(n, 1)); err != nil {
			return nil, nil, nil, err
		}
	}
	if j.NTrain <= 0 || j.NEval < 0 || j.NTest < 0 {
		return nil, nil, nil, fmt.Errorf("train: need a positive number of training samples, got %d", j.NTrain)
	}
	total := j.NTrain + j.NEval + j.NTest
	var all []tasks.Sample
	switch j.Task {
	case TaskListOps:
		c := tasks.DefaultListOps()
		c.MinLength, c.MaxLength = j.ListOpsMin, j.ListOpsMax
		if c.MaxLength == 0 {
			c.MinLength, c.MaxLength = j.Model.Length/4, j.Model.Length
		}
		all, err = tasks.GenerateListOps(c, total, j.DataSeed)
	case TaskRecall:
		all, err = tasks.GenerateRecall(tasks.RecallConfig{Length: j.Model.Length, Pairs: j.Pairs}, total, j.DataSeed)
	default:
		return nil, nil, nil, fmt.Errorf("train: unknown task %q (want listops or recall, or give --train)", j.Task)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	trainS, evalS, testS = all[:j.NTrain], all[j.NTrain:j.NTrain+j.NEval], all[j.NTrain+j.NEval:]
	if j.WriteData != "" {
		for _, set := range []struct {
			name string
			s    []tasks.Sample
		}{{"train", trainS}, {"val", evalS}, {"test", testS}} {
			path := filepath.Join(j.WriteData, j.Task+"_"+set.name+".tsv")
			if err := atomicfile.Write(path, func(w io.Writer) error { return tasks.WriteTSV(w, set.s) }); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return trainS, evalS, testS, nil
}

// Render writes the report as a short table.
func (r *JobReport) Render(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "task\t%s (train %d, eval %d, test %d; %d truncated to the length)\n", r.Task, r.NTrain, r.NEval, r.NTest, r.Truncated)
	fmt.Fprintf(tw, "model\t%s, length %d, width %d, depth %d, batch %d\n", r.Kind, r.Length, r.Width, r.Depth, r.Batch)
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
	fmt.Fprintf(tw, "test accuracy\t%.4f (loss %.4f; majority class %.4f)\n", r.TestAcc, r.TestLoss, r.Majority)
	fmt.Fprintf(tw, "wall time\t%.1f s\n", r.Wall)
	return tw.Flush()
}
