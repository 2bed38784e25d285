package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/calibrate"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/linear"
)

// Plan is what the census decides for the fit's later passes (see
// pipeline.go): the task, classes, class weights, scaler, folds and, for
// a calibration, where each class's rows begin in the stratified order.
// Its fields are exported and JSON-encodable so that a distributed fit
// can hand it to its workers, which prepare their batches with Prepare,
// add the statistics with AddStats and score them with Score, as Fit and
// FitStream do.
type Plan struct {
	Task Task
	// Classes is K of a classification, 0 for a regression.
	Classes int
	// Outputs is the number of target columns of the ridge fit (K for a
	// classification).
	Outputs int
	// Folds is the number of statistics partitions: 1, the k of k-fold
	// selection, or a calibration's folds.
	Folds int
	// Rows and Cols are the training rows and feature columns counted.
	Rows, Cols int
	// Multi reports several target columns (data.Batch.Targets), Weighted
	// sample weights (data.Batch.Weights) on the rows.
	Multi, Weighted bool
	// ClassWeights are the weights of the classes (nil without).
	ClassWeights []float64 `json:",omitempty"`
	Scaler       *data.Scaler
	// Strata, for a calibration, are the positions in the stratified order
	// where the rows of positive weight of each class begin, and (last)
	// the rows of weight zero: the p-th row of that order goes to fold
	// p mod Folds. nil without a calibration.
	Strata []int `json:",omitempty"`
	// ChunkRows and Float32 are Options.ChunkRows and Options.Float32, for
	// AddStats.
	ChunkRows int
	Float32   bool

	next []int // the next position of each class (a pass in row order)
}

// Plan checks the census against opt and returns the plan of the later
// passes: with Task Auto it decides the task (classification when every
// label is an integer from 0 to 999 and there is one target column).
func (c *Census) Plan(opt Options) (*Plan, error) {
	if opt.Task == Auto {
		opt.Task = Regression
		if c.classLike && !c.multi {
			opt.Task = Classification
		}
		if err := opt.checkClassWeights(); err != nil {
			return nil, err
		}
	}
	if opt.Task != c.task && c.task != Auto {
		return nil, fmt.Errorf("model: a census of a %s fit planned for %s", c.task, opt.Task)
	}
	folds, err := opt.fitFolds()
	if err != nil {
		return nil, err
	}
	if c.rows == 0 {
		return nil, errors.New("model: no training rows")
	}
	if c.weighted && !c.positive {
		return nil, errors.New("model: every row has weight zero")
	}
	if folds > c.rows {
		return nil, fmt.Errorf("model: k-fold needs folds ≤ rows, got %d folds for %d rows", folds, c.rows)
	}
	p := &Plan{Task: opt.Task, Outputs: c.outputs, Folds: folds, Rows: c.rows, Cols: c.cols, Multi: c.multi,
		Weighted: c.weighted, ChunkRows: opt.ChunkRows, Float32: opt.Float32}
	if opt.Task == Classification {
		if err := twoLabels(c.two); err != nil {
			return nil, err
		}
		if c.classes < 2 {
			return nil, errors.New("model: classification needs at least 2 classes")
		}
		p.Classes, p.Outputs = c.classes, c.classes
		if p.ClassWeights, err = opt.classWeightVector(c.counts); err != nil {
			return nil, err
		}
		pos := make([]bool, c.classes)
		for l, n := range c.positives {
			pos[l] = n > 0
		}
		if err := positiveClasses(pos, p.ClassWeights); err != nil {
			return nil, err
		}
		if opt.Calibrate {
			count := make([]int, c.classes)
			for l, n := range c.positives {
				if p.ClassWeights == nil || p.ClassWeights[l] > 0 {
					count[l] = n
				}
			}
			if p.Strata, err = strata(count, folds); err != nil {
				return nil, err
			}
		}
	}
	if (c.weighted || p.ClassWeights != nil) && opt.Accumulator != nil {
		return nil, errAccumulatorWeights
	}
	if c.standardize {
		if p.Scaler, err = c.scaler.Scaler(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Model returns the model the plan fits, without its map and ridge
// weights: task, classes, columns (named by cols), training rows and
// scaler.
func (p *Plan) Model(cols Columns) *Model {
	m := &Model{Task: p.Task, Classes: p.Classes, Columns: cols.Names, Label: cols.Label, TrainRows: p.Rows, Scaler: p.Scaler}
	if p.Multi {
		m.Label, m.Targets = "", cols.Targets
	}
	return m
}

// strata returns the stratified positions of the rows of a calibration
// with folds folds and count[c] rows of positive weight in class c: where
// each class's rows begin in the order "class by class, row order within
// a class", then the rows of weight zero. It is an error for a class to
// have fewer than folds such rows: some fold's complement, the training
// part of its out-of-fold model, would lack the class (scikit-learn's
// CalibratedClassifierCV refuses the same).
func strata(count []int, folds int) ([]int, error) {
	start := make([]int, len(count)+1)
	for c, n := range count {
		if n == 0 {
			return nil, fmt.Errorf("model: calibration: class %d has no rows of positive weight; its probability cannot be calibrated", c)
		}
		if n < folds {
			return nil, fmt.Errorf("model: calibration with %d folds needs at least %d rows of positive weight in each class, class %d has %d; use fewer folds (--folds) or more rows", folds, folds, c, n)
		}
		start[c+1] = start[c] + n
	}
	return start, nil
}

// reset starts a pass in row order (prepare with p.next).
func (p *Plan) reset() {
	p.next = append(p.next[:0], p.Strata...)
}

// Rows are the rows of a batch as the statistics and the out-of-fold
// scores take them (Plan.Prepare).
type Rows struct {
	N       int
	X       *mat.Dense // after the scaler
	Targets *mat.Dense // one-hot classes, or the regression targets
	Labels  []int      // class indices (classification)
	W       []float64  // row weights of the ridge statistics (nil: 1 each)
	Sample  []float64  // the rows' sample weights (nil without)
	// Fold holds the rows' folds for a calibration's stratified folds;
	// nil: row i of all the rows is in fold i mod Folds.
	Fold []int
}

// Prepare returns the rows of batch b, whose first row is row first of
// all the rows: scaled, their targets one-hot for a classification,
// weighted by their sample and class weights and, for a calibration,
// assigned to their stratified folds. For a calibration before[c] must
// be the rows of positive weight of class c among the rows before b (and
// before[K], if given, the rows of weight zero before b); a worker that
// reads a file in order counts them within the file and adds the counts
// of the files before it (Census.ClassRows of each).
func (p *Plan) Prepare(b *data.Batch, first int, before []int) (*Rows, error) {
	var next []int
	if p.Strata != nil {
		k := len(p.Strata) - 1
		if len(before) != k && len(before) != k+1 {
			return nil, fmt.Errorf("model: %d class counts before a batch, want %d", len(before), k)
		}
		next = slices.Clone(p.Strata)
		for c, n := range before {
			next[c] += n
		}
	}
	return p.prepare(b, first, next)
}

// prepare is Prepare with the next stratified position of each class in
// next (nil without a calibration), which it advances.
func (p *Plan) prepare(b *data.Batch, first int, next []int) (*Rows, error) {
	if b.X == nil {
		return nil, errors.New("model: a batch has no rows")
	}
	n, d := b.X.Dims()
	if first < 0 || first+n > p.Rows || d != p.Cols {
		return nil, errors.New("model: a later pass's rows differ from the first's")
	}
	if (b.Weights != nil) != p.Weighted || (b.Weights != nil && len(b.Weights) != n) {
		return nil, errors.New("model: a later pass's weights differ from the first's")
	}
	r := &Rows{N: n, X: b.X, Sample: b.Weights}
	if p.Scaler != nil {
		var err error
		if r.X, err = p.Scaler.Transform(b.X); err != nil {
			return nil, err
		}
	}
	switch {
	case p.Task == Classification:
		if len(b.Y) != n || b.Targets != nil {
			return nil, errors.New("model: a later pass's labels differ from the first's")
		}
		r.Labels = make([]int, n)
		for i, v := range b.Y {
			if v < 0 || v != math.Trunc(v) || int(v) >= p.Classes {
				return nil, errors.New("model: a later pass's labels differ from the first's")
			}
			r.Labels[i] = int(v)
		}
		var err error
		if r.Targets, err = linear.OneHot(r.Labels, p.Classes); err != nil {
			return nil, err
		}
	case b.Targets != nil:
		if rr, k := b.Targets.Dims(); rr != n || k != p.Outputs {
			return nil, errors.New("model: a later pass's targets differ from the first's")
		}
		r.Targets = mat.DenseCopyOf(b.Targets)
	default:
		if p.Outputs != 1 || len(b.Y) != n {
			return nil, errors.New("model: a later pass's targets differ from the first's")
		}
		r.Targets = mat.NewDense(n, 1, append([]float64(nil), b.Y...))
	}
	r.W = combineWeights(b.Weights, r.Labels, p.ClassWeights)
	if p.Strata != nil {
		r.Fold = make([]int, n)
		k := len(p.Strata) - 1
		for i, l := range r.Labels {
			if r.W != nil && !(r.W[i] > 0) {
				l = k
			}
			r.Fold[i] = next[l] % p.Folds
			next[l]++
		}
	}
	return r, nil
}

// NewStats returns empty ridge statistics of each fold for the features
// of map t, after checking their size against the limits of package
// internal/limits.
func (p *Plan) NewStats(t features.Transformer) ([]*linear.Stats, error) {
	dim := t.Dim()
	if _, err := limits.Matrix("model: ridge statistics", dim, dim); err != nil {
		return nil, err
	}
	if err := checkStatsMemory(1, p.Folds, dim, p.Outputs); err != nil {
		return nil, err
	}
	return statsSet(p.Folds, dim, p.Outputs), nil
}

// AddStats adds the ridge statistics of rows r (Prepare), whose first row
// is row first of all the rows, to stats (NewStats): the features of
// r.X under t, chunk by chunk (ChunkRows rows, default 2048), each
// chunk's rows of each fold in row order by one
// linear.Stats.AddWeightedSerial (AddWeightedFloat32Serial with Float32)
// — the arithmetic of the in-process fit's accumulator (Accumulate) on
// one lane. It runs on one core: a distributed fit's parallelism is its
// workers.
func (p *Plan) AddStats(stats []*linear.Stats, t features.Transformer, r *Rows, first int) error {
	if len(stats) != p.Folds {
		return fmt.Errorf("model: statistics of %d folds, the plan has %d", len(stats), p.Folds)
	}
	if r.N == 0 {
		return nil
	}
	chunk := Options{ChunkRows: p.ChunkRows}.chunkRows()
	dim := t.Dim()
	if _, err := limits.Matrix("model: feature chunk", min(chunk, r.N), dim); err != nil {
		return err
	}
	a := &accumulator{t: t, k: p.Outputs, folds: p.Folds, chunk: chunk, f32: p.Float32, bufRows: min(chunk, r.N), dim: dim}
	l := &lane{stats: stats}
	_, d := r.X.Dims()
	for lo := 0; lo < r.N; lo += chunk {
		hi := min(lo+chunk, r.N)
		var w []float64
		if r.W != nil {
			w = r.W[lo:hi]
		}
		var fold []int
		if r.Fold != nil {
			fold = r.Fold[lo:hi]
		}
		if err := a.addChunk(l, r.X.Slice(lo, hi, 0, d).(*mat.Dense), r.Targets.Slice(lo, hi, 0, p.Outputs).(*mat.Dense), w, fold, first+lo); err != nil {
			return err
		}
	}
	return nil
}

// FoldModels returns the ridge models, with the given λ, fitted on the
// statistics of every fold but one, for each fold of stats: the models of
// a calibration's out-of-fold scores.
func FoldModels(ctx context.Context, stats []*linear.Stats, lambda float64) ([]*linear.Model, error) {
	return foldModels(ctx, stats, lambda)
}

// ScoredRows are out-of-fold scores of consecutive rows, a part of the
// state of a calibration's third pass: rows First to First+N−1, N×K
// scores (Scores, row-major), the rows' classes and their sample weights
// (nil without).
type ScoredRows struct {
	First   int
	Scores  []float64
	Labels  []int
	Weights []float64
}

// Score returns the out-of-fold scores of rows r (Prepare), whose first
// row is row first of all the rows: row i scored by models[r.Fold[i]]
// (FoldModels), on all cores.
func (p *Plan) Score(ctx context.Context, t features.Transformer, models []*linear.Model, r *Rows, first int) (*ScoredRows, error) {
	if p.Strata == nil || len(models) != p.Folds {
		return nil, errors.New("model: out-of-fold scores need a calibration's plan and one model a fold")
	}
	if _, err := limits.Matrix("model: out-of-fold scores", r.N, p.Classes); err != nil {
		return nil, err
	}
	s := &ScoredRows{First: first, Scores: make([]float64, r.N*p.Classes), Labels: r.Labels, Weights: r.Sample}
	if r.N == 0 {
		return s, nil
	}
	if err := scoreFolds(ctx, t, r.X, models, r.Fold, first, mat.NewDense(r.N, p.Classes, s.Scores)); err != nil {
		return nil, err
	}
	return s, nil
}

// Calibrate fits the Platt sigmoids on the out-of-fold scores parts (in
// any order; each row of the plan's must be in exactly one), in row
// order, weighing the rows by their sample weights: the calibration Fit
// and FitStream compute from the same scores.
func (p *Plan) Calibrate(parts []*ScoredRows) (*calibrate.Platt, error) {
	k := p.Classes
	if _, err := limits.Matrix("model: out-of-fold scores", p.Rows, k); err != nil {
		return nil, err
	}
	parts = slices.Clone(parts)
	slices.SortFunc(parts, func(a, b *ScoredRows) int { return a.First - b.First })
	scores := mat.NewDense(p.Rows, k, nil)
	labels := make([]int, p.Rows)
	var sw []float64
	if p.Weighted {
		sw = make([]float64, p.Rows)
	}
	at := 0
	for _, s := range parts {
		n := len(s.Labels)
		if s.First != at || at+n > p.Rows || len(s.Scores) != n*k || (sw != nil) != (s.Weights != nil) || (s.Weights != nil && len(s.Weights) != n) {
			return nil, fmt.Errorf("model: out-of-fold scores of rows %d to %d do not continue rows 0 to %d of %d", s.First, s.First+n-1, at-1, p.Rows)
		}
		copy(scores.RawMatrix().Data[at*k:], s.Scores)
		copy(labels[at:], s.Labels)
		if sw != nil {
			copy(sw[at:], s.Weights)
		}
		at += n
	}
	if at != p.Rows {
		return nil, fmt.Errorf("model: out-of-fold scores of %d rows, the first pass has %d", at, p.Rows)
	}
	return fitSigmoids(scores, labels, sw)
}

// fitSigmoids fits the calibration on the out-of-fold scores of all the
// rows in row order, their classes and sample weights (nil: 1 each).
func fitSigmoids(scores *mat.Dense, labels []int, sw []float64) (*calibrate.Platt, error) {
	cal, err := calibrate.FitWeighted(scores, labels, sw)
	if err != nil {
		return nil, fmt.Errorf("model: calibration: %w", err)
	}
	return cal, nil
}
