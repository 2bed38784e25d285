package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/krr"
	"github.com/kernelkit/kernelkit/linear"
)

// exactTargets returns the regression targets (n×1) or the one-hot class
// targets of a training set and the number of classes.
func exactTargets(task Task, train *data.Dataset) (*mat.Dense, int, error) {
	switch task {
	case Classification:
		labels, k, err := train.Labels()
		if err != nil {
			return nil, 0, err
		}
		distinct := false
		for _, l := range labels {
			distinct = distinct || l != labels[0]
		}
		if !distinct {
			return nil, 0, fmt.Errorf("model: every training label is %d; classification needs at least 2 distinct labels", labels[0])
		}
		y, err := linear.OneHot(labels, k)
		return y, k, err
	case Regression:
		if train.Y == nil {
			return nil, 0, errors.New("model: regression needs a target column")
		}
		return mat.NewDense(len(train.Y), 1, append([]float64(nil), train.Y...)), 0, nil
	}
	return nil, 0, fmt.Errorf("model: unknown task %q (want classification or regression)", task)
}

// fitExact is RunJob for Job.Exact: exact kernel ridge regression with
// intercept (krr.Fit) on the standardised training rows, evaluated with
// krr's blocked prediction. The returned model holds the kernel-columns
// map and the dual coefficients, so it can be saved; Seconds covers the
// fit and the prediction of the evaluation rows. The Gram error is not
// measured: the kernel is exact.
func fitExact(ctx context.Context, cfg Job, opt Options, eval *data.Dataset) (*JobResult, *Model, error) {
	if cfg.Train == nil {
		return nil, nil, errors.New("model: exact kernel ridge needs the training rows in memory (not streamed)")
	}
	if opt.Select != "" {
		return nil, nil, errors.New("model: exact kernel ridge has no λ selection; give λ")
	}
	if !(opt.Lambda > 0) {
		return nil, nil, fmt.Errorf("model: exact kernel ridge needs λ > 0, got %v", opt.Lambda)
	}
	train := cfg.Train
	if train.Rows() == 0 {
		return nil, nil, errors.New("model: no training rows")
	}
	if err := krr.CheckRows(train.Rows()); err != nil {
		return nil, nil, err
	}
	k, err := kernel.Spec{Name: opt.Features.Kernel, Gamma: opt.Features.Gamma}.Kernel()
	if err != nil {
		return nil, nil, err
	}
	kname := kernel.Name(k)
	switch kname {
	case "rbf", "softmax", "arccos0", "arccos1", "arccos2":
	default:
		return nil, nil, fmt.Errorf("model: exact kernel ridge supports rbf, softmax and arccos0/1/2, got %s", kname)
	}
	// The softmax kernel's temperature: exp(xᵀy/τ) is exp(xᵀy) of the
	// rows scaled by 1/√τ, so the fit runs on scaled rows and the model's
	// kernel-columns map is tempered (features.Temper), as random
	// features are.
	tau := opt.Features.Temperature
	if tau != 0 && kname != "softmax" {
		return nil, nil, fmt.Errorf("model: the temperature is a parameter of the softmax kernel; the %s kernel has none", kname)
	}
	if tau != 0 {
		if err := features.CheckTemperature(tau); err != nil {
			return nil, nil, err
		}
	} else {
		tau = 1
	}
	scale := 1 / math.Sqrt(tau)
	y, classes, err := exactTargets(opt.Task, train)
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	x := train.X
	var scaler *data.Scaler
	if opt.Standardize {
		if scaler, err = data.FitScaler(x); err != nil {
			return nil, nil, err
		}
		if x, err = scaler.Transform(x); err != nil {
			return nil, nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if tau != 1 {
		if x, err = scaledCopy(x, scale); err != nil {
			return nil, nil, err
		}
	}
	em, err := krr.Fit(x, y, krr.Config{Kernel: k, Lambda: opt.Lambda, Intercept: true})
	if err != nil {
		return nil, nil, err
	}
	cols, err := em.Columns()
	if err != nil {
		return nil, nil, err
	}
	mp, err := features.Temper(cols, tau)
	if err != nil {
		return nil, nil, err
	}
	m := &Model{Task: opt.Task, Classes: classes, Columns: train.Names, Label: train.Label,
		Scaler: scaler, Map: mp, Linear: em.Linear(), TrainRows: train.Rows()}
	if eval.Cols() != train.Cols() {
		return nil, nil, fmt.Errorf("model: evaluation data has %d feature columns, training data %d", eval.Cols(), train.Cols())
	}
	ex := eval.X
	if scaler != nil {
		if ex, err = scaler.Transform(ex); err != nil {
			return nil, nil, err
		}
	}
	if tau != 1 {
		if ex, err = scaledCopy(ex, scale); err != nil {
			return nil, nil, err
		}
	}
	scores, err := em.Predict(ex)
	if err != nil {
		return nil, nil, err
	}
	r := &JobResult{Kernel: kname, Form: "exact", Sampler: "none", Features: train.Rows(), Lambda: opt.Lambda,
		Task: string(opt.Task), TrainRows: train.Rows(), Seconds: time.Since(start).Seconds(), Backend: blas.Name(),
		GramNote: "exact kernel ridge: no approximation"}
	if s, ok := k.(kernel.RBF); ok {
		r.Gamma = s.Gamma
	}
	if tau != 1 {
		r.Temperature = tau
	}
	if cfg.Test != nil {
		r.TestRows = cfg.Test.Rows()
	}
	if eval.Y != nil {
		if len(eval.Y) != eval.Rows() {
			return nil, nil, fmt.Errorf("model: %d labels for %d rows", len(eval.Y), eval.Rows())
		}
		acc, rmse := &r.TrainAccuracy, &r.TrainRMSE
		if cfg.Test != nil {
			acc, rmse = &r.TestAccuracy, &r.TestRMSE
		}
		if opt.Task == Classification {
			a := Accuracy(linear.Argmax(scores), eval.Y)
			*acc = &a
		} else {
			e := RMSE(scores, eval.Y)
			*rmse = &e
		}
	}
	return r, m, nil
}

// scaledCopy returns s·x, multiplied as features.Temper's maps scale
// their inputs (x·s, s = 1/√τ), so that the rows an exact fit sees are
// those its tempered map sees when it predicts; a value that overflows is
// features.ErrOverflow, as there.
func scaledCopy(x *mat.Dense, s float64) (*mat.Dense, error) {
	n, d := x.Dims()
	out := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		dst := out.RawRowView(i)
		for j, v := range x.RawRowView(i) {
			if dst[j] = v * s; math.IsInf(dst[j], 0) && !math.IsInf(v, 0) {
				return nil, features.ErrOverflow
			}
		}
	}
	return out, nil
}
