package model

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/linear"
)

// The fit pipeline.
//
// Fit (rows in memory) and FitStream (rows read again for each pass) are
// one pipeline over a source of rows, which both feed in the same
// batches: fixed numbers of rows at fixed positions, whatever the
// batches of the underlying reader (see streamRows). Every number of the
// model is computed from these batches in one order, so the same rows and
// options give the same model file, byte for byte, from memory or from a
// stream.
//
//  1. The census (pass 1, batches of scalerBlock rows) checks the rows'
//     columns, labels, targets and weights, counts the classes and the
//     rows of positive weight of each, and accumulates the scaler's
//     moments block by block: each block's weighted mean and squared
//     deviations in two passes over its rows, merged in block order by
//     data.ScalerAccumulator (Chan, Golub and LeVeque). With at most
//     scalerBlock rows that is data.FitScalerWeighted on all of them.
//  2. The statistics (pass 2, batches of streamBatch chunks): each
//     batch is scaled and mapped, and its rows' ridge statistics added to
//     their folds chunk by chunk (see Accumulate); the folds are solved
//     by SolveStats.
//  3. With Options.Calibrate, the out-of-fold scores (pass 3, the same
//     batches): each row scored by the model of the other folds, and
//     package calibrate fits the sigmoids on these scores in row order.
//
// Each pass's state is exported (census.go, plan.go) so that a fit over
// rows split among workers — package kkbeam of the beam module — merges
// the same states: model.Census (pass 1, Merge), the plan the census
// decides (Census.Plan), each batch prepared by Plan.Prepare and added by
// Plan.AddStats (pass 2, linear.Stats.Merge), and the out-of-fold scores
// of Plan.Score fitted by Plan.Calibrate (pass 3).
//
// A calibration's folds are stratified by class (see calibrate.go): the
// p-th row of positive weight of the order "class by class, row order
// within a class" goes to fold p mod F. Row i of class c is the
// (Σ_{c'<c} n_c' + r)-th of that order, n_c' the rows of positive weight
// of class c' (counted by the census) and r the rows of positive weight
// of class c before row i (a running count), so a pass over a stream
// assigns every row its fold as it arrives; the rows of weight zero come
// after all of them, in row order. The calibration holds the rows'
// out-of-fold scores, labels and sample weights in memory, 8·n·(K+2)
// bytes for n rows and K classes.

// scalerBlock is the number of rows of the census's batches, the blocks
// of the scaler's moments. It is a constant, so that the scaler does not
// depend on how the rows are read; a streamed fit holds one block of
// rows at a time.
const scalerBlock = 16384

// Columns names the columns of the training rows, for the model file.
type Columns struct {
	// Names are the feature columns' names.
	Names []string
	// Label is the name of the target column (one target).
	Label string
	// Targets are the names of the target columns of a multi-output
	// regression (data.Batch.Targets).
	Targets []string
}

// rowSource is training rows read in passes.
type rowSource interface {
	// pass calls fn with the rows in row order, in batches of exactly
	// size rows but the last. With ahead set the next batch may be read
	// while fn works on the current one.
	pass(size int, ahead bool, fn func(b *data.Batch) error) error
}

// memRows is the rows of an in-memory data set as a rowSource: its
// batches are views of the rows.
type memRows struct {
	b data.Batch
}

func (m memRows) pass(size int, _ bool, fn func(b *data.Batch) error) error {
	n, d := m.b.X.Dims()
	for lo := 0; lo < n; lo += size {
		hi := min(lo+size, n)
		b := &data.Batch{X: m.b.X.Slice(lo, hi, 0, d).(*mat.Dense)}
		if m.b.Y != nil {
			b.Y = m.b.Y[lo:hi]
		}
		if m.b.Targets != nil {
			_, k := m.b.Targets.Dims()
			b.Targets = m.b.Targets.Slice(lo, hi, 0, k).(*mat.Dense)
		}
		if m.b.Weights != nil {
			b.Weights = m.b.Weights[lo:hi]
		}
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

// streamRows is the rows of an Opener as a rowSource.
type streamRows struct {
	open Opener
}

func (s streamRows) pass(size int, ahead bool, fn func(b *data.Batch) error) error {
	if ahead {
		return passAhead(s.open, size, fn)
	}
	return pass(s.open, size, fn)
}

// Fit fits a model on the training set. Rows are transformed and their
// statistics accumulated chunk by chunk on all cores and added up in chunk
// order (see Accumulate), so the same data, options and seed give the same
// model bits on every run, and the same as FitStream on the same rows
// (see the pipeline in pipeline.go). It stops early with ctx's error.
func Fit(ctx context.Context, opt Options, train *data.Dataset) (*Model, error) {
	if train == nil || train.Rows() == 0 {
		return nil, errors.New("model: no training rows")
	}
	n := train.Rows()
	rows := data.Batch{X: train.X, Y: train.Y, Targets: train.Targets}
	switch opt.Task {
	case Classification:
		if train.Targets != nil {
			return nil, errors.New("model: classification takes one label column, the data has several target columns")
		}
		if train.Y == nil {
			return nil, errors.New("model: the data set has no label column")
		}
	case Regression:
		if train.Targets != nil {
			if r, _ := train.Targets.Dims(); r != n {
				return nil, fmt.Errorf("model: %d rows of targets for %d rows", r, n)
			}
			if train.Y != nil {
				return nil, errors.New("model: the data set has a target column and several target columns")
			}
		} else if train.Y == nil {
			return nil, errors.New("model: regression needs a target column")
		}
	}
	if train.Y != nil && len(train.Y) != n {
		return nil, fmt.Errorf("model: %d targets for %d rows", len(train.Y), n)
	}
	rows.Weights = opt.SampleWeights
	if rows.Weights != nil && train.Weights != nil {
		return nil, fmt.Errorf("model: the data set has a weight column (%.40q) and Options.SampleWeights is set; give one", train.WeightColumn)
	}
	if rows.Weights == nil {
		rows.Weights = train.Weights
	}
	if rows.Weights != nil && len(rows.Weights) != n {
		return nil, fmt.Errorf("model: %d sample weights for %d rows", len(rows.Weights), n)
	}
	opt.SampleWeights = nil
	return fitRows(ctx, opt, memRows{rows}, Columns{Names: train.Names, Label: train.Label, Targets: train.TargetNames})
}

// FitStream fits a model in passes over rows that need not fit in
// memory, the columns named names; see FitStreamColumns.
func FitStream(ctx context.Context, opt Options, open Opener, names []string) (*Model, error) {
	return FitStreamColumns(ctx, opt, open, Columns{Names: names})
}

// FitStreamColumns fits a model in passes over rows that need not fit in
// memory, whose columns cols names: the census (columns, labels, weights,
// scaler), the statistics and, with Options.Calibrate, the out-of-fold
// scores (see pipeline.go). Each pass reads batches of a few chunks
// (Options.ChunkRows), the next batch parsed on another goroutine while
// the chunks of the current one are transformed and their statistics
// added, so memory is O(block·d + chunk·D + folds·D²) whatever the number
// of rows (plus 8·(K+2) bytes a row for a calibration). With the same
// rows, columns and options it gives the model Fit gives, bit for bit,
// whatever the sizes of the batches the Batches return.
//
// Rows with weights (data.Batch.Weights, every batch or none), class
// weights and several targets (data.Batch.Targets, regression) are
// handled as Fit handles them (see weights.go). Options.SampleWeights is
// for Fit only: FitStreamColumns refuses it.
func FitStreamColumns(ctx context.Context, opt Options, open Opener, cols Columns) (*Model, error) {
	if opt.SampleWeights != nil {
		return nil, errors.New("model: Options.SampleWeights is for Fit; streamed rows carry their weights in their batches")
	}
	return fitRows(ctx, opt, streamRows{open}, cols)
}

// fitRows is the pipeline: census, statistics, solve and, with
// opt.Calibrate, calibration, over the rows of src. Its passes are the
// exported states of census.go and plan.go, which a distributed fit
// (package kkbeam of the beam module) merges across workers.
func fitRows(ctx context.Context, opt Options, src rowSource, cols Columns) (*Model, error) {
	// Pass 1: the census.
	c, err := NewCensus(opt)
	if err != nil {
		return nil, err
	}
	err = src.pass(scalerBlock, false, func(b *data.Batch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return c.Add(b)
	})
	if err != nil {
		return nil, err
	}
	p, err := c.Plan(opt)
	if err != nil {
		return nil, err
	}
	opt.Task = p.Task
	m := p.Model(cols)
	if m.Map, err = opt.newMap(p.Cols); err != nil {
		return nil, err
	}
	// Pass 2: the statistics, in batches of streamBatch chunks (a whole
	// number of chunks per lane), chunk by chunk (see Accumulate).
	chunk := opt.chunkRows()
	batch := chunk
	if chunk <= limits.MaxElements/streamBatch {
		batch = chunk * streamBatch
	}
	var acc StatsAccumulator
	if opt.Accumulator != nil && p.Strata != nil {
		acc, err = newFoldAccumulators(opt, m.Map, p.Outputs, p.Folds)
	} else {
		acc, err = opt.newStats(m.Map, p.Outputs, p.Folds, min(batch, p.Rows))
	}
	if err != nil {
		return nil, err
	}
	p.reset()
	seen := 0
	err = src.pass(batch, true, func(b *data.Batch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := p.prepare(b, seen, p.next)
		if err != nil {
			return err
		}
		var progress func(int)
		if opt.Progress != nil {
			progress = func(done int) { opt.Progress(seen+done, p.Rows) }
		}
		if err := addRows(ctx, acc, r.X, r.Targets, r.W, r.Fold, progress); err != nil {
			return err
		}
		seen += r.N
		return nil
	})
	if err == nil && seen != p.Rows {
		err = fmt.Errorf("model: the second pass has %d rows, the first %d", seen, p.Rows)
	}
	if err != nil {
		return nil, err
	}
	stats, err := acc.Result()
	if err != nil {
		return nil, err
	}
	if err := m.solve(opt, stats); err != nil {
		return nil, err
	}
	if opt.Calibrate {
		if err := m.calibrate(ctx, src, batch, p, stats); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// chunkRows returns the rows of a chunk: opt.ChunkRows, default 2048.
func (opt Options) chunkRows() int {
	if opt.ChunkRows <= 0 {
		return 2048
	}
	return opt.ChunkRows
}

// errAccumulatorFolds is the error of rows with folds of their own (a
// calibration's) added to an accumulator that cannot take them.
var errAccumulatorFolds = errors.New("model: calibration's stratified folds need kernelkit's CPU accumulator or one accumulator a fold (foldAccumulators)")

// foldAccumulators is one accumulator of one fold for each fold: a
// StatsAccumulator that takes the rows' folds (addFolds), made of
// accumulators that put row i in fold i mod folds (Options.Accumulator, a
// device), for a calibration's stratified folds.
type foldAccumulators struct {
	each []StatsAccumulator
	rows int // rows added so far (Add: row i in fold i mod folds)
}

// newFoldAccumulators makes opt.Accumulator's accumulator of one fold for
// each of folds folds, after checking their memory.
func newFoldAccumulators(opt Options, t features.Transformer, k, folds int) (*foldAccumulators, error) {
	if err := checkStatsMemory(1, folds, t.Dim(), k); err != nil {
		return nil, err
	}
	f := &foldAccumulators{each: make([]StatsAccumulator, folds)}
	for i := range f.each {
		var err error
		if f.each[i], err = opt.Accumulator(t, k, 1); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Add adds the rows of x, row i of all the rows added in fold i mod folds.
func (f *foldAccumulators) Add(ctx context.Context, x, targets *mat.Dense, progress func(done int)) error {
	n, _ := x.Dims()
	fold := make([]int, n)
	for i := range fold {
		fold[i] = (f.rows + i) % len(f.each)
	}
	return f.addFolds(ctx, x, targets, fold, progress)
}

// addFolds adds each fold's rows of x (fold[i] the fold of row i), in row
// order, to that fold's accumulator.
func (f *foldAccumulators) addFolds(ctx context.Context, x, targets *mat.Dense, fold []int, progress func(done int)) error {
	n, d := x.Dims()
	_, k := targets.Dims()
	done := 0
	for g, acc := range f.each {
		var idx []int
		for i, h := range fold {
			if h == g {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			continue
		}
		fx, fy := mat.NewDense(len(idx), d, nil), mat.NewDense(len(idx), k, nil)
		for j, i := range idx {
			copy(fx.RawRowView(j), x.RawRowView(i))
			copy(fy.RawRowView(j), targets.RawRowView(i))
		}
		var report func(int)
		if progress != nil {
			report = func(m int) { progress(done + m) }
		}
		if err := acc.Add(ctx, fx, fy, report); err != nil {
			return err
		}
		done += len(idx)
	}
	f.rows += n
	return nil
}

// Result returns the statistics of each fold, in fold order.
func (f *foldAccumulators) Result() ([]*linear.Stats, error) {
	out := make([]*linear.Stats, len(f.each))
	for g, acc := range f.each {
		s, err := acc.Result()
		if err != nil {
			return nil, err
		}
		if len(s) != 1 {
			return nil, fmt.Errorf("model: an accumulator of one fold returned %d", len(s))
		}
		out[g] = s[0]
	}
	return out, nil
}

// calibrate fits m.Calibration on the out-of-fold scores of the rows of
// src (the third pass, in batches of batch rows), from the per-fold
// statistics stats with the λ of m.Linear; the sigmoid fits weigh the
// rows by their sample weights (not the class weights).
func (m *Model) calibrate(ctx context.Context, src rowSource, batch int, p *Plan, stats []*linear.Stats) error {
	models, err := foldModels(ctx, stats, m.Linear.Lambda)
	if err != nil {
		return err
	}
	if _, err := limits.Matrix("model: out-of-fold scores", p.Rows, p.Classes); err != nil {
		return err
	}
	scores := mat.NewDense(p.Rows, p.Classes, nil)
	labels := make([]int, p.Rows)
	var sw []float64
	if p.Weighted {
		sw = make([]float64, p.Rows)
	}
	p.reset()
	seen := 0
	err = src.pass(batch, true, func(b *data.Batch) error {
		r, err := p.prepare(b, seen, p.next)
		if err != nil {
			return err
		}
		s := scores.Slice(seen, seen+r.N, 0, p.Classes).(*mat.Dense)
		if err := scoreFolds(ctx, m.Map, r.X, models, r.Fold, seen, s); err != nil {
			return err
		}
		copy(labels[seen:], r.Labels)
		if sw != nil {
			copy(sw[seen:], b.Weights)
		}
		seen += r.N
		return nil
	})
	if err == nil && seen != p.Rows {
		err = fmt.Errorf("model: the third pass has %d rows, the first %d", seen, p.Rows)
	}
	if err != nil {
		return err
	}
	m.Calibration, err = fitSigmoids(scores, labels, sw)
	return err
}

// twoLabels returns an error when every training label is the same value:
// such a file has nothing to separate, and a "model" of it would predict
// that label whatever the input.
func twoLabels(y []float64) error {
	for _, v := range y {
		if v != y[0] {
			return nil
		}
	}
	if len(y) == 0 {
		return errors.New("model: no training labels")
	}
	return fmt.Errorf("model: every training label is %v; classification needs at least 2 distinct labels", y[0])
}
