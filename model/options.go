package model

import (
	"fmt"

	"github.com/kernelkit/kernelkit/features"
)

// Options configures Fit.
type Options struct {
	Task Task
	// Features configures the random feature map drawn for the fit
	// (features.Draw, so a Temperature tempers a softmax map); it is used
	// when Map is nil.
	Features features.Config
	// Map, if set, is the feature map to fit with (any map of the
	// contract, e.g. one from package catalog); its input dimension must
	// be the number of feature columns. Save needs it to implement
	// features.Encoder.
	Map features.Transformer
	// Lambda is the ridge parameter (≥ 0). With Select set it is ignored.
	Lambda float64
	// Select chooses λ from Grid: "" (use Lambda), "gcv" or "kfold".
	Select string
	// Grid is the λ grid for selection (default 10⁻⁴…10³, one per decade).
	Grid []float64
	// Folds is the number of folds for "kfold" and for Calibrate
	// (default 5), at most the number of rows. Without Calibrate row i
	// goes to fold i mod Folds; with it the folds are stratified by class
	// (see calibrate.go), and every class needs at least Folds rows of
	// positive weight. The per-fold statistics (two copies of each fold's
	// D×D matrix on the CPU) may hold at most limits.MaxElements values
	// (8 GiB) in all; more is an error before they are allocated.
	Folds int
	// Calibrate fits Platt sigmoids on out-of-fold decision scores
	// (classification; Fit and FitStream, the latter in a third pass over
	// the rows; see Model.Probabilities and the files calibrate.go and
	// pipeline.go): modelled on scikit-learn's
	// CalibratedClassifierCV(method='sigmoid', ensemble=False) with Folds
	// folds.
	Calibrate bool
	// Standardize fits a scaler on the training rows.
	Standardize bool
	// ChunkRows is the number of rows transformed and accumulated at a time
	// (default 2048); memory does not grow with the number of rows.
	ChunkRows int
	// Float32 computes each chunk's features and statistics in single
	// precision (features.Map.Transform32, linear.Stats.AddFloat32Serial),
	// at about twice the speed of the statistics stage, and adds the
	// chunks up in float64; the solve stays in float64. Set
	// Features.Float32 with it to project in single precision as well.
	Float32 bool
	// Progress, if set, is called with the number of rows done.
	Progress func(done, total int)
	// Accumulator, if set, makes the accumulator of the ridge statistics
	// (e.g. one that computes them on a GPU: package device); nil means
	// kernelkit's CPU accumulator (see Accumulate). Fit and FitStream call
	// it once, with the fitted map, the number of target columns and the
	// number of folds — or, for a calibration, whose stratified folds it
	// cannot be told, once for each fold with one fold. It takes no
	// weights: sample or class weights with it are an error.
	Accumulator NewStatsAccumulator
	// SampleWeights, if set, weighs the rows of Fit's training set (one
	// finite, non-negative weight per row): the fit minimises
	// Σ w_i‖y_i − Wᵀz_i − b‖² + λ‖W‖². nil means the data set's own
	// weights (data.Dataset.Weights, a weight column), if any; setting
	// both is an error. FitStream takes the weights of the batches
	// (data.Batch.Weights). See weights.go for what the weights change.
	SampleWeights []float64
	// ClassWeight is "" (no class weights) or "balanced": class c weighs
	// n/(C·n_c), n the rows, C the number of classes present and n_c the
	// rows of class c (scikit-learn's class_weight='balanced'; counted in
	// the fit's first pass). Classification only.
	ClassWeight string
	// ClassWeights gives explicit weights by class index (classes it does
	// not name weigh 1); it excludes ClassWeight. Class weights multiply
	// the sample weights, as in scikit-learn.
	ClassWeights map[int]float64
}

// newMap returns opt.Map, checked against the input dimension d, or draws
// the map of opt.Features.
func (opt Options) newMap(d int) (features.Transformer, error) {
	if opt.Map == nil {
		return features.Draw(opt.Features, d)
	}
	if opt.Map.InputDim() != d {
		return nil, fmt.Errorf("model: feature map takes %d inputs, data has %d feature columns", opt.Map.InputDim(), d)
	}
	return opt.Map, nil
}

// folds returns the number of statistics partitions opt.Select needs: 1,
// or the k of k-fold cross-validation (default 5). fitFolds adds a
// calibration's.
func (opt Options) folds() (int, error) {
	switch opt.Select {
	case "", "gcv":
		return 1, nil
	case "kfold":
		k := opt.Folds
		if k == 0 {
			k = 5
		}
		if k < 2 {
			return 0, fmt.Errorf("model: k-fold needs at least 2 folds, got %d", k)
		}
		return k, nil
	}
	return 0, fmt.Errorf("model: unknown lambda selection %q (want gcv or kfold)", opt.Select)
}
