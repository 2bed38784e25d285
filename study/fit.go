package study

import (
	"context"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/model"
)

// The main job of `kernelkit fit` lives in package model (model.Job,
// model.RunJob); these names stay for the programs that still call them
// here (scripts/stages.go, the Beam command).

// FitConfig is model.Job.
type FitConfig = model.Job

// FitResult is model.JobResult.
type FitResult = model.JobResult

// GammaBlock is model.GammaBlock.
const GammaBlock = model.GammaBlock

// Fit is model.RunJob.
func Fit(ctx context.Context, cfg FitConfig, progress func(done, total int)) (*FitResult, *model.Model, error) {
	return model.RunJob(ctx, cfg, progress)
}

// ParseTask is model.ParseTask.
func ParseTask(s string, d *data.Dataset) (model.Task, error) { return model.ParseTask(s, d) }

// StreamCSV is model.StreamCSV.
func StreamCSV(path string, opt data.CSVOptions) (model.Opener, []string, error) {
	return model.StreamCSV(path, opt)
}

// StreamCSVColumns is model.StreamCSVColumns.
func StreamCSVColumns(path string, opt data.CSVOptions) (model.Opener, model.Columns, error) {
	return model.StreamCSVColumns(path, opt)
}

// ScaleGamma is model.ScaleGamma.
func ScaleGamma(x *mat.Dense, standardize bool) (float64, error) {
	return model.ScaleGamma(x, standardize)
}

// ScaleGammaStream is model.ScaleGammaStream.
func ScaleGammaStream(open model.Opener, standardize bool, chunk int) (float64, error) {
	return model.ScaleGammaStream(open, standardize, chunk)
}
