package model

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/kernelkit/kernelkit/linear"
)

// DefaultGrid is the λ grid used by selection when none is given.
var DefaultGrid = []float64{1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000}

// solve chooses λ and fits m.Linear on the merged statistics (SolveStats),
// recording the selection's grid and scores.
func (m *Model) solve(opt Options, stats []*linear.Stats) error {
	lin, grid, scores, err := SolveStats(opt, stats)
	if err != nil {
		return err
	}
	m.Linear, m.Grid, m.Scores = lin, grid, scores
	return nil
}

// SolveStats chooses λ — opt.Lambda, or with opt.Select the value of
// opt.Grid (default DefaultGrid) with the best GCV score (on the sum of
// the statistics) or k-fold score (across the folds) — and fits the ridge
// model, with an intercept, on the sum of stats, the statistics of the
// folds (one Stats when there are no folds), as Fit does. It returns the
// grid and its scores when it selects λ, nil otherwise. Fit, FitStream
// and distributed fits (package kkbeam of the beam module) share it.
func SolveStats(opt Options, stats []*linear.Stats) (lin *linear.Model, grid, scores []float64, err error) {
	if len(stats) == 0 {
		return nil, nil, nil, errors.New("model: no statistics to solve")
	}
	total := stats[0]
	if len(stats) > 1 {
		total = stats[0].Clone()
		for _, s := range stats[1:] {
			if err := total.Merge(s); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	lambda := opt.Lambda
	if opt.Select != "" {
		grid = opt.Grid
		if len(grid) == 0 {
			grid = DefaultGrid
		}
		switch opt.Select {
		case "gcv":
			scores, err = linear.GCV(total, grid, true)
		case "kfold":
			scores, err = linear.KFold(stats, grid, true)
		default:
			err = fmt.Errorf("model: unknown lambda selection %q (want gcv or kfold)", opt.Select)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		if !slices.ContainsFunc(scores, func(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }) {
			return nil, nil, nil, fmt.Errorf("model: no λ of the grid has a finite %s score (too few rows for the features: the degrees of freedom reach the row count); give --lambda or a grid of larger λ", opt.Select)
		}
		lambda = linear.Best(grid, scores)
	}
	if lin, err = linear.Fit(total, lambda, true); err != nil {
		return nil, nil, nil, err
	}
	return lin, grid, scores, nil
}
