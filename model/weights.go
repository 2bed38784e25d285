package model

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Sample weights, class weights and multi-output regression.
//
// A weighted fit is the fit of the weighted sample: row i counts w_i
// times. The ridge statistics are weighted (linear.Stats.AddWeighted),
// the intercept centres on the weighted means, GCV counts Σw_i rows, and
// the scaler (Options.Standardize) is fitted with the sample weights
// (data.FitScalerWeighted), so a fit with integer sample weights equals
// the fit on the rows repeated that often, to rounding, and a row of weight
// zero is the same as no row. K-fold selection keeps row i in fold
// i mod folds with its weight, and scores the weighted mean squared error.
//
// Class weights (Options.ClassWeight, Options.ClassWeights) multiply the
// sample weights of the rows of each class, as scikit-learn's
// class_weight does in RidgeClassifier; they weigh the ridge statistics
// but not the scaler, which the fit's first pass (pipeline.go) computes
// before the class counts of "balanced" are known.
//
// A classification needs rows of positive weight (sample weight times
// class weight) in at least two classes, in Fit as in FitStream: weights
// that leave one class alone, like a training set of one label, would
// give a model that predicts that class whatever the input, and are
// refused.
//
// Weights need kernelkit's own accumulator: with Options.Accumulator set
// (a device), weights are an error.
//
// Multi-output regression takes the targets of data.Dataset.Targets
// (n×k) or, for FitStream, of the batches' data.Batch.Targets: one ridge
// fit with K = k, the same as k fits of one target each (the statistics
// ZᵀZ and the factorisation are shared; λ selection sums the scores over
// the targets).

// errAccumulatorWeights is the error of weights with Options.Accumulator.
var errAccumulatorWeights = errors.New("model: sample and class weights need kernelkit's CPU accumulator; Options.Accumulator (a device) takes no weights")

// classWeighted reports whether opt asks for class weights.
func (opt Options) classWeighted() bool {
	return opt.ClassWeight != "" || opt.ClassWeights != nil
}

// checkClassWeights checks the class-weight options against the task.
func (opt Options) checkClassWeights() error {
	if !opt.classWeighted() {
		return nil
	}
	if opt.Task != Classification {
		return fmt.Errorf("model: class weights are for classification, the task is %q", opt.Task)
	}
	if opt.ClassWeight != "" && opt.ClassWeights != nil {
		return errors.New("model: give class weights either as \"balanced\" or explicitly, not both")
	}
	if opt.ClassWeight != "" && opt.ClassWeight != "balanced" {
		return fmt.Errorf("model: unknown class weight %.40q (want balanced, or explicit weights)", opt.ClassWeight)
	}
	// In class order, so that the error names the same class every time
	// (a map's order is random).
	for _, c := range slices.Sorted(maps.Keys(opt.ClassWeights)) {
		v := opt.ClassWeights[c]
		if c < 0 {
			return fmt.Errorf("model: class weight for class %d, classes are from 0", c)
		}
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("model: class weight %v of class %d is not a finite non-negative number", v, c)
		}
	}
	return nil
}

// classWeightVector returns the weight of each of k classes, whose row
// counts are counts (len k): "balanced" n/(C·n_c), C the classes with
// rows, or the explicit weights (1 for classes not named). An explicit
// weight for a class index ≥ k is an error (scikit-learn refuses weights
// of classes not in the data). It returns nil without class weights.
func (opt Options) classWeightVector(counts []int) ([]float64, error) {
	if !opt.classWeighted() {
		return nil, nil
	}
	k := len(counts)
	cw := make([]float64, k)
	if opt.ClassWeight == "balanced" {
		n, present := 0, 0
		for _, c := range counts {
			n += c
			if c > 0 {
				present++
			}
		}
		for c, nc := range counts {
			if nc > 0 {
				cw[c] = float64(n) / (float64(present) * float64(nc))
			}
		}
		return cw, nil
	}
	for c := range cw {
		cw[c] = 1
	}
	for _, c := range slices.Sorted(maps.Keys(opt.ClassWeights)) {
		if c >= k {
			return nil, fmt.Errorf("model: class weight for class %d, the labels are 0 to %d", c, k-1)
		}
		cw[c] = opt.ClassWeights[c]
	}
	return cw, nil
}

// checkRowWeights returns an error naming the first weight of w that is
// negative, NaN or infinite; first is the index of w's first row among
// all the rows.
func checkRowWeights(w []float64, first int) error {
	for i, v := range w {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("model: weight %v of row %d is not a finite non-negative number", v, first+i)
		}
	}
	return nil
}

// combineWeights returns the row weights sample_i·cw[labels_i]: sample
// itself without class weights, the class weights without sample weights,
// nil without either.
func combineWeights(sample []float64, labels []int, cw []float64) []float64 {
	if cw == nil {
		return sample
	}
	w := make([]float64, len(labels))
	for i, l := range labels {
		w[i] = cw[l]
		if sample != nil {
			w[i] *= sample[i]
		}
	}
	return w
}

// positiveClasses returns an error unless at least two classes have a row
// of positive weight: pos[c] reports whether class c has a row of positive
// sample weight, and cw, if not nil, are the class weights. A fit in which
// one class alone weighs anything has, like a training set of one label,
// nothing to separate: its model would predict that class whatever the
// input.
func positiveClasses(pos []bool, cw []float64) error {
	first, n := -1, 0
	for c, p := range pos {
		if p && (cw == nil || cw[c] > 0) {
			if first < 0 {
				first = c
			}
			n++
		}
	}
	switch n {
	case 0:
		return errors.New("model: every row has weight zero")
	case 1:
		return fmt.Errorf("model: only class %d has rows of positive weight (sample times class weight); classification needs rows of positive weight in at least 2 classes", first)
	}
	return nil
}

// positiveTotal returns an error when the weights add up to zero.
func positiveTotal(w []float64) error {
	for _, v := range w {
		if v > 0 {
			return nil
		}
	}
	return errors.New("model: every row has weight zero")
}

// addRows adds the rows of x with their targets to acc, weighted by w if
// it is not nil (kernelkit's accumulator only), row i in fold fold[i] if
// fold is not nil (kernelkit's accumulator or foldAccumulators).
func addRows(ctx context.Context, acc StatsAccumulator, x, targets *mat.Dense, w []float64, fold []int, progress func(int)) error {
	if w == nil && fold == nil {
		return acc.Add(ctx, x, targets, progress)
	}
	if f, ok := acc.(*foldAccumulators); ok && w == nil {
		return f.addFolds(ctx, x, targets, fold, progress)
	}
	a, ok := acc.(*accumulator)
	switch {
	case !ok && w != nil:
		return errAccumulatorWeights
	case !ok:
		return errAccumulatorFolds
	}
	return a.add(ctx, x, targets, w, fold, progress)
}
