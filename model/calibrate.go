package model

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/calibrate"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/linear"
)

// Probability calibration (Options.Calibrate) is modelled on
// scikit-learn's CalibratedClassifierCV(method='sigmoid', ensemble=False)
// on the ridge classifier's decision scores: the rows are split in F
// folds (F = Options.Folds, default 5), each fold's rows are scored by the
// model fitted with the chosen λ on the other folds — solved from the
// per-fold statistics the fit accumulates anyway, the complement's being
// the sum of the other folds' — and package calibrate fits Platt sigmoids
// on these out-of-fold scores, with the rows' sample weights
// (Options.SampleWeights or the data set's weight column; a row of weight
// zero is no row). The model kept is the one fitted on all rows; the
// calibration is only applied to its scores. The cost over a plain fit is
// F − 1 more solves and a third pass over the rows computing their
// features (for Fit and FitStream alike; see pipeline.go), and memory for
// the n out-of-fold scores.
//
// It differs from scikit-learn's in these points:
//
//   - the folds are stratified by class without shuffling, as
//     scikit-learn's StratifiedKFold(shuffle=False) but assigned
//     round-robin: the rows of positive weight are ordered by class (in
//     row order within a class) and the p-th goes to fold p mod F (see
//     Plan.Strata in plan.go); rows of weight zero come last. The rows
//     are added to their folds' statistics, and their scores to the
//     sigmoid fits, in row order. Each class needs
//     at least F rows of positive weight (an error otherwise, as
//     scikit-learn's), so every fold's complement has every class. K-fold
//     λ selection in a calibrated fit uses the same folds (without
//     calibration its folds are the rows i mod F);
//   - the fold models share the λ chosen on all rows, the scaler
//     (Options.Standardize) fitted on all rows and the one feature map
//     (drawn from all rows where it depends on the data), where
//     cross_val_predict refits a whole pipeline, λ selection and scaler
//     included, on each fold's complement;
//   - class weights (Options.ClassWeight, ClassWeights) weigh the ridge
//     fits but not the sigmoid fits, as in scikit-learn, where they are
//     the estimator's and only sample_weight reaches the calibrator; a
//     calibration with them would be one of the reweighted classes (on
//     letter's A-or-B against the rest, 7.6% of the rows, with
//     "balanced": mean probability 0.137 and test log-loss 0.131, against
//     0.075 and 0.065 with sample weights alone);
//   - Platt's prior counts are the numbers of rows of positive weight of
//     each label (scikit-learn 1.2 counts rows of weight zero too; later
//     versions sum the weights; see package calibrate);
//   - the sigmoids are fitted by Newton's method (scikit-learn: BFGS or
//     L-BFGS; the same minimiser up to the stopping tolerances), and the
//     k > 2 normalisation is a log-sum-exp (see package calibrate).

// fitFolds returns the statistics partitions of an in-memory fit: those of
// λ selection (folds), or with Calibrate the k-fold folds (Options.Folds,
// default 5), which λ selection by k-fold shares.
func (opt Options) fitFolds() (int, error) {
	if !opt.Calibrate {
		return opt.folds()
	}
	if opt.Task != Classification {
		return 0, fmt.Errorf("model: calibration is for classification, the task is %q", opt.Task)
	}
	o := opt
	o.Calibrate = false
	if _, err := o.folds(); err != nil {
		return 0, err
	}
	k := opt.Folds
	if k == 0 {
		k = 5
	}
	if k < 2 {
		return 0, fmt.Errorf("model: calibration needs at least 2 folds, got %d", k)
	}
	return k, nil
}

// foldModels returns the ridge models, with the given λ, fitted on the
// statistics of every fold but one, for each fold of stats.
func foldModels(ctx context.Context, stats []*linear.Stats, lambda float64) ([]*linear.Model, error) {
	folds := len(stats)
	if folds < 2 {
		return nil, fmt.Errorf("model: out-of-fold scores need at least 2 folds, got %d", folds)
	}
	models := make([]*linear.Model, folds)
	for f := range folds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var comp *linear.Stats
		for g, s := range stats {
			switch {
			case g == f:
			case comp == nil:
				comp = s.Clone()
			default:
				if err := comp.Merge(s); err != nil {
					return nil, err
				}
			}
		}
		lm, err := linear.Fit(comp, lambda, true)
		if err != nil {
			return nil, fmt.Errorf("model: the model without fold %d: %w", f, err)
		}
		models[f] = lm
	}
	return models, nil
}

// outOfFold returns the scores of the rows of x (mapped by t), row i
// scored by the ridge model with the given λ fitted on the statistics of
// every fold but fold i mod len(stats).
func outOfFold(ctx context.Context, t features.Transformer, x *mat.Dense, stats []*linear.Stats, lambda float64) (*mat.Dense, error) {
	models, err := foldModels(ctx, stats, lambda)
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	k := stats[0].K
	if _, err := limits.Matrix("model: out-of-fold scores", n, k); err != nil {
		return nil, err
	}
	out := mat.NewDense(n, k, nil)
	if err := scoreFolds(ctx, t, x, models, nil, 0, out); err != nil {
		return nil, err
	}
	return out, nil
}

// scoreFolds writes into out the scores of the rows of x (mapped by t),
// row i scored by models[fold[i]] (fold nil: models[(first+i) mod
// len(models)]). The features are computed in blocks of predictBlock rows
// on all cores; each row's score depends on its block only.
func scoreFolds(ctx context.Context, t features.Transformer, x *mat.Dense, models []*linear.Model, fold []int, first int, out *mat.Dense) error {
	folds := len(models)
	n, d := x.Dims()
	_, k := out.Dims()
	foldOf := func(i int) int { return (first + i) % folds }
	if fold != nil {
		foldOf = func(i int) int { return fold[i] }
	}
	dim := t.Dim()
	rows := min(predictBlock, n)
	nb := (n + rows - 1) / rows
	workers := parallel.Workers(nb)
	zbuf := make([][]float64, workers)
	fz := make([][]float64, workers)
	fs := make([][]float64, workers)
	errs := make([]error, nb)
	parallel.Chunks(n, rows, func(w, lo, hi int) {
		if err := ctx.Err(); err != nil {
			errs[lo/rows] = err
			return
		}
		if zbuf[w] == nil {
			zbuf[w] = make([]float64, rows*dim)
			fz[w] = make([]float64, rows*dim)
			fs[w] = make([]float64, rows*k)
		}
		z := mat.NewDense(hi-lo, dim, zbuf[w][:(hi-lo)*dim])
		if err := t.Transform(z, x.Slice(lo, hi, 0, d).(*mat.Dense)); err != nil {
			errs[lo/rows] = err
			return
		}
		// Gather the block's rows of each fold, score them with that
		// fold's model and scatter the scores back.
		for f, lm := range models {
			mrows := 0
			for i := range hi - lo {
				if foldOf(lo+i) == f {
					copy(fz[w][mrows*dim:(mrows+1)*dim], z.RawRowView(i))
					mrows++
				}
			}
			if mrows == 0 {
				continue
			}
			s := mat.NewDense(mrows, k, fs[w][:mrows*k])
			if err := lm.PredictTo(s, mat.NewDense(mrows, dim, fz[w][:mrows*dim])); err != nil {
				errs[lo/rows] = err
				return
			}
			j := 0
			for i := range hi - lo {
				if foldOf(lo+i) == f {
					copy(out.RawRowView(lo+i), s.RawRowView(j))
					j++
				}
			}
		}
	})
	return firstError(errs)
}

// Probabilities returns the n×K calibrated class probabilities of raw rows
// x: the model's scores (Predict) through its calibration. It is an error
// for a regression model or a model fitted without calibration
// (Options.Calibrate, kernelkit fit --calibrate).
func (m *Model) Probabilities(x *mat.Dense) (*mat.Dense, error) {
	if m.Task != Classification {
		return nil, errors.New("model: Probabilities on a regression model")
	}
	if m.Calibration == nil {
		return nil, errors.New("model: the model has no calibration (fit it with Options.Calibrate, kernelkit fit --calibrate)")
	}
	s, err := m.Predict(x)
	if err != nil {
		return nil, err
	}
	return m.Calibration.Probabilities(s)
}

// checkCalibration validates a calibration read from a model file of the
// given task and classes.
func checkCalibration(c *calibrate.Platt, task Task, classes int) error {
	if c == nil {
		return nil
	}
	if task != Classification {
		return errors.New("model: regression model with a calibration")
	}
	if c.Classes != classes {
		return fmt.Errorf("model: calibration of %d classes in a model of %d", c.Classes, classes)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}
