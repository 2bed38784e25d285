package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/backend"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/sampler"
)

// featureFlags are the flags that define a feature map.
type featureFlags struct {
	kernel, form, sampler string
	gamma                 float64
	features              int
	seed                  uint64
	float32               bool
}

func (f *featureFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.kernel, "kernel", "rbf", "kernel: rbf, softmax, arccos0, arccos1 or arccos2")
	fl.StringVar(&f.form, "form", "", "feature form (rbf: cos, sincos, positive, hyperbolic; softmax: positive, trig, hyperbolic)")
	fl.Float64Var(&f.gamma, "gamma", 0, "RBF bandwidth γ in exp(-γ‖x-y‖²) (default 1/d)")
	fl.IntVar(&f.features, "features", 512, "number of random features D")
	fl.StringVar(&f.sampler, "sampler", "iid", "projection sampler: iid, orf, sorf, halton or truncated")
	fl.Uint64Var(&f.seed, "seed", 0, "random seed")
	fl.BoolVar(&f.float32, "float32", false, "compute the projection in single precision")
}

func (f *featureFlags) config(cmd *cobra.Command, d int) (features.Config, error) {
	s, err := sampler.ByName(f.sampler)
	if err != nil {
		return features.Config{}, err
	}
	g := f.gamma
	if !cmd.Flags().Changed("gamma") {
		g = 1 / float64(d)
	} else if !(g > 0) || math.IsInf(g, 0) {
		return features.Config{}, fmt.Errorf("--gamma must be positive, got %v", g)
	}
	if f.features <= 0 {
		return features.Config{}, fmt.Errorf("--features must be positive, got %d", f.features)
	}
	return features.Config{Kernel: f.kernel, Form: f.form, Gamma: g, Features: f.features,
		Sampler: s, Seed: f.seed, Float32: f.float32}, nil
}

// result is what fit prints with --json and what demo tabulates.
type result struct {
	Kernel        string   `json:"kernel"`
	Form          string   `json:"form"`
	Sampler       string   `json:"sampler"`
	Features      int      `json:"features"`
	Gamma         float64  `json:"gamma,omitempty"`
	Lambda        float64  `json:"lambda"`
	Task          string   `json:"task"`
	TrainRows     int      `json:"train_rows"`
	TestRows      int      `json:"test_rows"`
	TestAccuracy  *float64 `json:"test_accuracy,omitempty"`
	TestRMSE      *float64 `json:"test_rmse,omitempty"`
	TrainAccuracy *float64 `json:"train_accuracy,omitempty"`
	TrainRMSE     *float64 `json:"train_rmse,omitempty"`
	GramError     *float64 `json:"gram_error,omitempty"`
	GramNote      string   `json:"gram_note,omitempty"`
	GramRows      int      `json:"gram_rows"`
	Seconds       float64  `json:"seconds"`
	Backend       string   `json:"backend"`
}

// evaluate fits on train and scores on test (or on train when test is
// nil). Seconds covers fit + predict; the Gram error on the first
// min(1000, n) evaluation rows is measured after.
func evaluate(ctx context.Context, opt model.Options, train, test *data.Dataset) (*result, *model.Model, error) {
	start := time.Now()
	m, err := model.Fit(ctx, opt, train)
	if err != nil {
		return nil, nil, err
	}
	r, err := score(m, opt, start, train.Rows(), train, test)
	return r, m, err
}

// score evaluates a fitted model on test (or on train when test is nil);
// seconds runs from start to the end of the prediction.
func score(m *model.Model, opt model.Options, start time.Time, trainRows int, train, test *data.Dataset) (*result, error) {
	eval := test
	if eval == nil {
		eval = train
	}
	if eval == nil {
		return nil, errors.New("no evaluation data")
	}
	if eval.Cols() != m.Map.InputDim() {
		return nil, fmt.Errorf("evaluation data has %d feature columns, the model %d", eval.Cols(), m.Map.InputDim())
	}
	scores, err := m.Predict(eval.X)
	if err != nil {
		return nil, err
	}
	secs := time.Since(start).Seconds()
	var spec features.Spec
	if mp, ok := m.Map.(*features.Map); ok {
		spec = mp.Spec()
	}
	r := &result{Kernel: spec.Kernel, Form: spec.Form, Sampler: spec.Sampler, Features: spec.Features,
		Gamma: spec.Gamma, Lambda: m.Linear.Lambda, Task: string(opt.Task), TrainRows: trainRows,
		Seconds: secs, Backend: backend.Name()}
	if test != nil {
		r.TestRows = test.Rows()
	}
	var metric float64
	if eval.Y != nil {
		switch opt.Task {
		case model.Classification:
			pred := argmax(scores)
			c := 0
			for i, p := range pred {
				if float64(p) == eval.Y[i] {
					c++
				}
			}
			metric = float64(c) / float64(len(pred))
			if test != nil {
				r.TestAccuracy = &metric
			} else {
				r.TrainAccuracy = &metric
			}
		case model.Regression:
			var s float64
			for i, y := range eval.Y {
				d := scores.At(i, 0) - y
				s += d * d
			}
			metric = math.Sqrt(s / float64(len(eval.Y)))
			if test != nil {
				r.TestRMSE = &metric
			} else {
				r.TrainRMSE = &metric
			}
		}
	}
	ev, err := m.Evaluate(eval, 1000)
	if err != nil {
		return nil, err
	}
	n, ge := ev.GramRows, ev.GramError
	if n == 0 {
		err = errors.New(ev.GramNote)
	}
	if err != nil {
		// The model is fine; only the error measure is out of reach (an
		// exact softmax Gram matrix beyond float64, say). Say so.
		r.GramNote = err.Error()
	} else {
		r.GramError, r.GramRows = &ge, n
	}
	return r, nil
}

func argmax(s *mat.Dense) []int {
	n, _ := s.Dims()
	out := make([]int, n)
	for i := range out {
		row := s.RawRowView(i)
		for j, v := range row {
			if v > row[out[i]] {
				out[i] = j
			}
		}
	}
	return out
}

// inferTask picks classification for small non-negative integer labels.
func inferTask(d *data.Dataset) model.Task {
	for _, y := range d.Y {
		if y < 0 || y != math.Trunc(y) || y >= 1000 {
			return model.Regression
		}
	}
	return model.Classification
}

func parseTask(s string, d *data.Dataset) (model.Task, error) {
	switch s {
	case "auto":
		return inferTask(d), nil
	case "classification", "classify":
		return model.Classification, nil
	case "regression", "regress":
		return model.Regression, nil
	}
	return "", fmt.Errorf("unknown --task %q (want auto, classification or regression)", s)
}

func newFit() *cobra.Command {
	var ff featureFlags
	var train, test, label, format, out, task, sel string
	var lambda float64
	var folds int
	var asJSON, noStd, stream bool
	cmd := &cobra.Command{
		Use:   "fit --train A.csv [--test B.csv] [flags]",
		Short: "Fit a kernel ridge model on random features",
		Long: "fit reads a training set (CSV with a header row, label column by --label or last; or LIBSVM),\n" +
			"standardises it, maps it to random features and fits ridge regression or classification.\n" +
			"With --test it reports test accuracy (or RMSE) and the relative Gram error on the first\n" +
			"min(1000, n) test rows; --model saves the fitted model.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if train == "" {
				return errors.New("--train is required")
			}
			if !(lambda >= 0) || math.IsInf(lambda, 0) {
				return fmt.Errorf("--lambda must be non-negative, got %v", lambda)
			}
			var te *data.Dataset
			var err error
			if test != "" {
				if te, err = readData(test, format, label, false); err != nil {
					return err
				}
			}
			var r *result
			var m *model.Model
			if stream {
				if r, m, err = fitStream(cmd, &ff, train, label, task, lambda, sel, folds, !noStd, te); err != nil {
					return err
				}
			} else {
				tr, err := readData(train, format, label, false)
				if err != nil {
					return err
				}
				t, err := parseTask(task, tr)
				if err != nil {
					return err
				}
				fc, err := ff.config(cmd, tr.Cols())
				if err != nil {
					return err
				}
				bar := newBar(tr.Rows(), "fit")
				opt := model.Options{Task: t, Features: fc, Lambda: lambda, Select: sel, Folds: folds,
					Standardize: !noStd, Progress: func(done, _ int) { _ = bar.Set(done) }}
				r, m, err = evaluate(cmd.Context(), opt, tr, te)
				_ = bar.Finish()
				if err != nil {
					return err
				}
			}
			if out != "" {
				if err := writeOut(cmd, out, m.Save); err != nil {
					return err
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				return enc.Encode(r)
			}
			printResult(cmd.OutOrStdout(), r, out)
			return nil
		},
	}
	ff.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&train, "train", "", "training data (CSV or LIBSVM)")
	fl.StringVar(&test, "test", "", "test data, same format")
	fl.StringVar(&label, "label", "", "name of the label column (default: last)")
	fl.StringVar(&format, "format", "auto", "data format: auto, csv or libsvm")
	fl.StringVar(&task, "task", "auto", "auto, classification or regression")
	fl.Float64Var(&lambda, "lambda", 0.5, "ridge parameter λ")
	fl.StringVar(&sel, "select", "", "choose λ from a grid: gcv or kfold")
	fl.IntVar(&folds, "folds", 5, "folds for --select kfold")
	fl.BoolVar(&noStd, "no-standardize", false, "do not standardise features")
	fl.BoolVar(&stream, "stream", false, "read the training CSV in two streaming passes (memory independent of the row count)")
	fl.StringVar(&out, "model", "", "write the fitted model to this file")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

func printResult(w io.Writer, r *result, modelPath string) {
	fmt.Fprintf(w, "kernel %s/%s, sampler %s, D=%d, λ=%g, %d training rows, backend %s\n",
		r.Kernel, r.Form, r.Sampler, r.Features, r.Lambda, r.TrainRows, r.Backend)
	if r.TestAccuracy != nil {
		fmt.Fprintf(w, "test accuracy   %.4f (%d rows)\n", *r.TestAccuracy, r.TestRows)
	}
	if r.TestRMSE != nil {
		fmt.Fprintf(w, "test RMSE       %.4g (%d rows)\n", *r.TestRMSE, r.TestRows)
	}
	if r.TrainAccuracy != nil {
		fmt.Fprintf(w, "train accuracy  %.4f\n", *r.TrainAccuracy)
	}
	if r.TrainRMSE != nil {
		fmt.Fprintf(w, "train RMSE      %.4g\n", *r.TrainRMSE)
	}
	if r.GramError != nil {
		fmt.Fprintf(w, "Gram error      %.4f (first %d rows)\n", *r.GramError, r.GramRows)
	} else {
		fmt.Fprintf(w, "Gram error      not available: %s\n", r.GramNote)
	}
	fmt.Fprintf(w, "fit+predict     %.3f s\n", r.Seconds)
	if modelPath != "" {
		fmt.Fprintf(w, "model written to %s\n", modelPath)
	}
}

// fitStream fits from a CSV file in two streaming passes (model.FitStream)
// and scores on te, or on nothing but the Gram error of te when given.
func fitStream(cmd *cobra.Command, ff *featureFlags, path, label, task string, lambda float64, sel string, folds int, std bool, te *data.Dataset) (*result, *model.Model, error) {
	var t model.Task
	switch task {
	case "auto", "classification", "classify":
		t = model.Classification
	case "regression", "regress":
		t = model.Regression
	default:
		return nil, nil, fmt.Errorf("unknown --task %q (want auto, classification or regression)", task)
	}
	var names []string
	open := func() (model.Batches, func() error, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		r, err := data.NewCSVReader(f, data.CSVOptions{Label: label})
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		names = r.Names()
		return r, f.Close, nil
	}
	if te == nil {
		return nil, nil, errors.New("--stream needs --test (the training rows are not kept in memory)")
	}
	// Open once for the width, needed to default γ.
	b, closeFn, err := open()
	if err != nil {
		return nil, nil, err
	}
	closeFn()
	_ = b
	fc, err := ff.config(cmd, len(names))
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	opt := model.Options{Task: t, Features: fc, Lambda: lambda, Select: sel, Folds: folds, Standardize: std}
	m, err := model.FitStream(cmd.Context(), opt, open, names)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := score(m, opt, start, m.TrainRows, nil, te)
	return r, m, err
}
