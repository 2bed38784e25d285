package model

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/calibrate"
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
// opt.Calibrate, calibration, over the rows of src.
func fitRows(ctx context.Context, opt Options, src rowSource, cols Columns) (*Model, error) {
	if !(opt.Lambda >= 0) || math.IsInf(opt.Lambda, 0) {
		return nil, fmt.Errorf("model: lambda must be non-negative and finite, got %v", opt.Lambda)
	}
	if opt.Task != Classification && opt.Task != Regression && opt.Task != Auto {
		return nil, fmt.Errorf("model: unknown task %q (want classification, regression or auto)", opt.Task)
	}
	// With Auto, the options are checked as a classification's first and
	// again once the census has decided the task.
	pre := opt
	if pre.Task == Auto {
		pre.Task = Classification
	}
	if err := pre.checkClassWeights(); err != nil {
		return nil, err
	}
	folds, err := pre.fitFolds()
	if err != nil {
		return nil, err
	}
	// Pass 1: the census.
	c := &census{task: opt.Task, standardize: opt.Standardize, classLike: true}
	err = src.pass(scalerBlock, false, func(b *data.Batch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return c.add(b)
	})
	if err != nil {
		return nil, err
	}
	if opt.Task == Auto {
		c.task = Regression
		if c.classLike && !c.multi {
			c.task = Classification
		}
		opt.Task = c.task
		if err := opt.checkClassWeights(); err != nil {
			return nil, err
		}
		if folds, err = opt.fitFolds(); err != nil {
			return nil, err
		}
	}
	p, err := c.plan(opt, folds)
	if err != nil {
		return nil, err
	}
	m := &Model{Task: opt.Task, Classes: p.classes, Columns: cols.Names, Label: cols.Label, TrainRows: c.rows, Scaler: p.scaler}
	if c.multi {
		m.Label, m.Targets = "", cols.Targets
	}
	if m.Map, err = opt.newMap(c.cols); err != nil {
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
	if opt.Accumulator != nil && p.fold != nil {
		acc, err = newFoldAccumulators(opt, m.Map, p.outputs, folds)
	} else {
		acc, err = opt.newStats(m.Map, p.outputs, folds, min(batch, c.rows))
	}
	if err != nil {
		return nil, err
	}
	seen := 0
	err = src.pass(batch, true, func(b *data.Batch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := p.rows(b, seen, c)
		if err != nil {
			return err
		}
		var progress func(int)
		if opt.Progress != nil {
			progress = func(done int) { opt.Progress(seen+done, c.rows) }
		}
		if err := addRows(ctx, acc, r.x, r.targets, r.w, r.fold, progress); err != nil {
			return err
		}
		seen += r.n
		return nil
	})
	if err == nil && seen != c.rows {
		err = fmt.Errorf("model: the second pass has %d rows, the first %d", seen, c.rows)
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
		if err := m.calibrate(ctx, src, batch, p, c, stats); err != nil {
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

// census is the state of the first pass: what the rows are, checked as
// they arrive, and the scaler's moments.
type census struct {
	task        Task
	standardize bool
	rows, cols  int
	outputs     int  // target columns of every batch
	multi       bool // the batches have data.Batch.Targets
	weighted    bool // the batches have weights
	positive    bool // some sample weight is positive
	classLike   bool // every label so far is an integer from 0 to 999 (Auto)
	classes     int  // the largest label + 1 (classification)
	two         []float64
	counts      []int // rows of each class
	positives   []int // rows of positive sample weight of each class
	scaler      data.ScalerAccumulator
}

// add checks and counts the rows of b, the next batch.
func (c *census) add(b *data.Batch) error {
	if b.X == nil {
		return errors.New("model: a batch has no rows")
	}
	n, d := b.X.Dims()
	if n == 0 {
		return nil
	}
	out, err := batchOutputs(b, n, c.task)
	if err != nil {
		return err
	}
	if c.rows > 0 {
		switch {
		case d != c.cols:
			return fmt.Errorf("model: a batch has %d feature columns, an earlier one %d", d, c.cols)
		case out != c.outputs || (b.Targets != nil) != c.multi:
			return fmt.Errorf("model: a batch has %d target columns, an earlier one %d", out, c.outputs)
		case (b.Weights != nil) != c.weighted:
			return errors.New("model: some batches have weights and some do not")
		}
	}
	c.cols, c.outputs, c.multi, c.weighted = d, out, b.Targets != nil, b.Weights != nil
	if c.weighted {
		if len(b.Weights) != n {
			return fmt.Errorf("model: a batch of %d rows has %d weights", n, len(b.Weights))
		}
		if err := checkRowWeights(b.Weights, c.rows); err != nil {
			return err
		}
		c.positive = c.positive || positiveTotal(b.Weights) == nil
	}
	if c.task == Auto && c.classLike {
		for _, v := range b.Y {
			if v < 0 || v != math.Trunc(v) || v >= 1000 {
				c.classLike = false
				break
			}
		}
	}
	if c.task == Classification || (c.task == Auto && c.classLike && b.Targets == nil) {
		for i, v := range b.Y {
			if v < 0 || v != math.Trunc(v) || v >= limits.MaxClasses {
				return fmt.Errorf("model: label %v of row %d is not a class index (an integer from 0 to %d)", v, c.rows+i, limits.MaxClasses-1)
			}
			l := int(v)
			if l >= len(c.counts) {
				c.counts = append(c.counts, make([]int, l+1-len(c.counts))...)
				c.positives = append(c.positives, make([]int, l+1-len(c.positives))...)
			}
			c.counts[l]++
			if !c.weighted || b.Weights[i] > 0 {
				c.positives[l]++
			}
			if len(c.two) == 0 || (len(c.two) == 1 && v != c.two[0]) {
				c.two = append(c.two, v)
			}
		}
		c.classes = len(c.counts)
	}
	c.rows += n
	if c.standardize {
		return c.scaler.AddWeighted(b.X, b.Weights)
	}
	return nil
}

// fitPlan is what the census decides for the later passes.
type fitPlan struct {
	classes int       // K of a classification, 0 for a regression
	outputs int       // target columns of the ridge fit
	cw      []float64 // class weights, nil without
	scaler  *data.Scaler
	fold    *folder // the stratified folds of a calibration, nil without
}

// plan checks the census against opt (folds statistics partitions) and
// returns the plan of the later passes.
func (c *census) plan(opt Options, folds int) (*fitPlan, error) {
	if c.rows == 0 {
		return nil, errors.New("model: no training rows")
	}
	if c.weighted && !c.positive {
		return nil, errors.New("model: every row has weight zero")
	}
	if folds > c.rows {
		return nil, fmt.Errorf("model: k-fold needs folds ≤ rows, got %d folds for %d rows", folds, c.rows)
	}
	p := &fitPlan{outputs: c.outputs}
	if c.task == Classification {
		if err := twoLabels(c.two); err != nil {
			return nil, err
		}
		if c.classes < 2 {
			return nil, errors.New("model: classification needs at least 2 classes")
		}
		p.classes, p.outputs = c.classes, c.classes
		var err error
		if p.cw, err = opt.classWeightVector(c.counts); err != nil {
			return nil, err
		}
		pos := make([]bool, c.classes)
		for l, n := range c.positives {
			pos[l] = n > 0
		}
		if err := positiveClasses(pos, p.cw); err != nil {
			return nil, err
		}
		if opt.Calibrate {
			count := make([]int, c.classes)
			for l, n := range c.positives {
				if p.cw == nil || p.cw[l] > 0 {
					count[l] = n
				}
			}
			if p.fold, err = newFolder(count, folds); err != nil {
				return nil, err
			}
		}
	}
	if (c.weighted || p.cw != nil) && opt.Accumulator != nil {
		return nil, errAccumulatorWeights
	}
	if c.standardize {
		var err error
		if p.scaler, err = c.scaler.Scaler(); err != nil {
			return nil, err
		}
	}
	return p, nil
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

// batchRows are the rows of a batch as the statistics and the
// out-of-fold scores take them.
type batchRows struct {
	n       int
	x       *mat.Dense // after the scaler
	targets *mat.Dense
	labels  []int     // class indices (classification)
	w       []float64 // row weights of the ridge statistics (nil: 1 each)
	fold    []int     // the rows' folds (nil: row i in fold i mod folds)
}

// rows returns the rows of batch b, whose first row is row first, checked
// against the census c; with a calibration it assigns their folds.
func (p *fitPlan) rows(b *data.Batch, first int, c *census) (*batchRows, error) {
	if b.X == nil {
		return nil, errors.New("model: a batch has no rows")
	}
	n, d := b.X.Dims()
	if first+n > c.rows || d != c.cols {
		return nil, errors.New("model: a later pass's rows differ from the first's")
	}
	if (b.Weights != nil) != c.weighted || (b.Weights != nil && len(b.Weights) != n) {
		return nil, errors.New("model: a later pass's weights differ from the first's")
	}
	r := &batchRows{n: n, x: b.X}
	if p.scaler != nil {
		var err error
		if r.x, err = p.scaler.Transform(b.X); err != nil {
			return nil, err
		}
	}
	switch {
	case c.task == Classification:
		if len(b.Y) != n || b.Targets != nil {
			return nil, errors.New("model: a later pass's labels differ from the first's")
		}
		r.labels = make([]int, n)
		for i, v := range b.Y {
			if v < 0 || v != math.Trunc(v) || int(v) >= p.classes {
				return nil, errors.New("model: a later pass's labels differ from the first's")
			}
			r.labels[i] = int(v)
		}
		var err error
		if r.targets, err = linear.OneHot(r.labels, p.classes); err != nil {
			return nil, err
		}
	case b.Targets != nil:
		if rr, k := b.Targets.Dims(); rr != n || k != p.outputs {
			return nil, errors.New("model: a later pass's targets differ from the first's")
		}
		r.targets = mat.DenseCopyOf(b.Targets)
	default:
		if p.outputs != 1 || len(b.Y) != n {
			return nil, errors.New("model: a later pass's targets differ from the first's")
		}
		r.targets = mat.NewDense(n, 1, append([]float64(nil), b.Y...))
	}
	r.w = combineWeights(b.Weights, r.labels, p.cw)
	if p.fold != nil {
		r.fold = make([]int, n)
		p.fold.assign(r.labels, r.w, r.fold)
	}
	return r, nil
}

// folder assigns the rows of a calibration to their stratified folds as
// they arrive (see pipeline.go and calibrate.go).
type folder struct {
	folds int
	start []int // the first position of each class's rows of positive weight; start[k]: of the rows of weight zero
	next  []int // the position of the next row of each class (next[k]: of weight zero)
}

// newFolder returns the folder of folds folds for classes with count[c]
// rows of positive weight each. It is an error for a class to have fewer
// than folds such rows: some fold's complement, the training part of its
// out-of-fold model, would lack the class (scikit-learn's
// CalibratedClassifierCV refuses the same).
func newFolder(count []int, folds int) (*folder, error) {
	k := len(count)
	f := &folder{folds: folds, start: make([]int, k+1)}
	for c, n := range count {
		if n == 0 {
			return nil, fmt.Errorf("model: calibration: class %d has no rows of positive weight; its probability cannot be calibrated", c)
		}
		if n < folds {
			return nil, fmt.Errorf("model: calibration with %d folds needs at least %d rows of positive weight in each class, class %d has %d; use fewer folds (--folds) or more rows", folds, folds, c, n)
		}
		f.start[c+1] = f.start[c] + n
	}
	f.reset()
	return f, nil
}

// reset starts a new pass.
func (f *folder) reset() { f.next = append(f.next[:0], f.start...) }

// assign writes into fold the folds of the next rows, of class labels[i]
// and ridge weight w[i] (w nil: every row weighs).
func (f *folder) assign(labels []int, w []float64, fold []int) {
	k := len(f.start) - 1
	for i, l := range labels {
		if w != nil && !(w[i] > 0) {
			l = k
		}
		fold[i] = f.next[l] % f.folds
		f.next[l]++
	}
}

// calibrate fits m.Calibration on the out-of-fold scores of the rows of
// src (the third pass, in batches of batch rows), from the per-fold
// statistics stats with the λ of m.Linear; the sigmoid fits weigh the
// rows by their sample weights (not the class weights).
func (m *Model) calibrate(ctx context.Context, src rowSource, batch int, p *fitPlan, c *census, stats []*linear.Stats) error {
	models, err := foldModels(ctx, stats, m.Linear.Lambda)
	if err != nil {
		return err
	}
	if _, err := limits.Matrix("model: out-of-fold scores", c.rows, p.classes); err != nil {
		return err
	}
	scores := mat.NewDense(c.rows, p.classes, nil)
	labels := make([]int, c.rows)
	var sw []float64
	if c.weighted {
		sw = make([]float64, c.rows)
	}
	p.fold.reset()
	seen := 0
	err = src.pass(batch, true, func(b *data.Batch) error {
		r, err := p.rows(b, seen, c)
		if err != nil {
			return err
		}
		s := scores.Slice(seen, seen+r.n, 0, p.classes).(*mat.Dense)
		if err := scoreFolds(ctx, m.Map, r.x, models, r.fold, seen, s); err != nil {
			return err
		}
		copy(labels[seen:], r.labels)
		if sw != nil {
			copy(sw[seen:], b.Weights)
		}
		seen += r.n
		return nil
	})
	if err == nil && seen != c.rows {
		err = fmt.Errorf("model: the third pass has %d rows, the first %d", seen, c.rows)
	}
	if err != nil {
		return err
	}
	cal, err := calibrate.FitWeighted(scores, labels, sw)
	if err != nil {
		return fmt.Errorf("model: calibration: %w", err)
	}
	m.Calibration = cal
	return nil
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
