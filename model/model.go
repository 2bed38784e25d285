// Package model ties kernelkit's pieces into a fitted predictor —
// standardisation, a random feature map and a ridge model — and stores it
// in a versioned model file.
//
// Fit (rows in memory) and FitStream (rows read again in passes) are one
// pipeline (pipeline.go): a census of the rows (columns, labels, weights,
// the scaler's moments), the ridge statistics per fold, and for a
// calibration the out-of-fold scores, each computed in the same batches
// in the same order, so that the same rows and options give the same
// model file, byte for byte, whichever way the rows arrive.
//
// Job and RunJob (job.go) are the main job of `kernelkit fit` on top of
// them: γ = 'scale' (gamma.go), a map of the registry by name, exact
// kernel ridge (exact.go), evaluation and timing.
//
// # Model file format (versions 2 and 3)
//
// A model file is one JSON object (UTF-8) with the fields
//
//	format     "kernelkit-model" (anything else is rejected)
//	version    2, or 3 for a model whose map has a temperature (the field
//	           temperature below; a version-3 file is a version-2 file
//	           plus that field); version-1 files, which have no map_kind
//	           and always hold a features spec, are still read; a loader
//	           rejects versions it does not know, so a kernelkit that
//	           predates the temperature refuses a tempered model instead of
//	           ignoring its temperature
//	task       "classification" or "regression"
//	classes    number of classes K (classification), 0 otherwise
//	columns    feature column names, if known
//	label      name of the target column, if known
//	scaler     {"mean": [d], "scale": [d]} or null: x' = (x − mean)/scale
//	map_kind   the kind of the stored feature map: "features" for the maps
//	           of package features, "snnk-relu" for ReLU-SNNK towers; any
//	           kind with a decoder in package catalog's registry
//	features   the feature map's spec, as its Encoder writes it; for kind
//	           "features" the Spec of package features: kernel, form,
//	           gamma, features D, sampler name, seed, input_dim d, m,
//	           w (m·d values, row-major, bandwidth included), b (phases)
//	temperature  version 3 only, and required there: τ > 0, finite and
//	           not 1, of the softmax kernel exp(xᵀy/τ); the stored map
//	           (of exp(xᵀy)) is applied to the scaled input x'/√τ
//	           (features.Temper). Files without it load as τ = 1
//	lambda     the ridge parameter used
//	jitter     extra ridge added for conditioning (0 normally)
//	weights    D·K values, row-major (D rows, K columns; K = outputs for
//	           regression)
//	intercept  K values
//	outputs    optional (regression): the number K of target columns of a
//	           multi-output model; absent means 1
//	targets    optional (regression): the names of the K target columns
//	calibration  optional (classification): {"classes": K, "sigmoids":
//	           [{"a": A, "b": B}, …]}, the Platt sigmoids of package
//	           calibrate (K of them, one for K = 2); files without it
//	           load as uncalibrated models
//
// Floats are written in Go's shortest round-trip form, so a loaded model
// reproduces the fitted one's predictions bit for bit. The projection is
// stored, not only its seed, so a model does not depend on the random
// number generator of the version that wrote it.
package model

import (
	"github.com/kernelkit/kernelkit/calibrate"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/linear"
)

// Task is the kind of supervised problem.
type Task string

// The tasks. Auto, for a fit only, decides from the training rows, as
// `kernelkit fit --task auto` does: classification when every label is
// an integer from 0 to 999, regression otherwise (or with several target
// columns). The fitted model records the task decided.
const (
	Classification Task = "classification"
	Regression     Task = "regression"
	Auto           Task = "auto"
)

// Model is a fitted kernel ridge model on random features.
type Model struct {
	Task    Task
	Classes int
	Columns []string
	Label   string
	// Targets names the target columns of a multi-output regression model
	// (Linear.W has one column per target); nil for one target.
	Targets []string
	Scaler  *data.Scaler
	Map     features.Transformer
	Linear  *linear.Model
	// Scores holds the λ-selection scores, aligned with Grid, if any.
	Grid, Scores []float64
	// Calibration, if set, turns the class scores into probabilities
	// (Probabilities); Fit sets it with Options.Calibrate.
	Calibration *calibrate.Platt
	// TrainRows is the number of training rows (not stored in model files).
	TrainRows int
}
