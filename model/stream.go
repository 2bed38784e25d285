package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/linear"
)

// Batches yields batches of rows (features and targets); Read returns
// io.EOF at the end. data.CSVReader implements it. A Batches that also
// implements BatchReader (data.CSVReader and data.CSVFile do) is read
// through ReadBatch, which carries the rows' weights and several targets.
type Batches interface {
	Read(max int) (*mat.Dense, []float64, error)
}

// BatchReader is implemented by Batches whose rows may have sample
// weights (data.Batch.Weights) or several targets (data.Batch.Targets,
// multi-output regression). ReadBatch returns io.EOF at the end.
type BatchReader interface {
	ReadBatch(max int) (*data.Batch, error)
}

// readBatch reads the next batch of b, through ReadBatch if b has it.
func readBatch(b Batches, max int) (*data.Batch, error) {
	if br, ok := b.(BatchReader); ok {
		bt, err := br.ReadBatch(max)
		if err == nil && bt == nil {
			err = errors.New("model: ReadBatch returned no batch and no error")
		}
		return bt, err
	}
	x, y, err := b.Read(max)
	if err != nil {
		return nil, err
	}
	return &data.Batch{X: x, Y: y}, nil
}

// Opener opens a fresh pass over the rows; close releases it.
type Opener func() (b Batches, close func() error, err error)

// FitStream fits a model in two passes over rows that need not fit in
// memory: the first fits the scaler (data.ScalerAccumulator) and finds the
// classes, the second transforms each batch and accumulates linear.Stats.
// The second pass reads batches of a few chunks (Options.ChunkRows), the
// next batch parsed on another goroutine while the chunks of the current
// one are transformed and their statistics added exactly as Fit does (see
// Accumulate), so memory is O(chunk·(d + D) + folds·D²) whatever the
// number of rows. With the same rows and options it gives the same model as Fit: bit
// for bit without standardisation (when every batch but the last is full),
// and to rounding with it, as the streamed scaler rounds differently.
//
// Rows with weights (data.Batch.Weights, every batch or none), class
// weights and several targets (data.Batch.Targets, regression) are
// handled as Fit handles them (see weights.go); the first pass checks the
// weights, fits the scaler with them and counts the classes for
// "balanced". Options.SampleWeights is for Fit only: FitStream refuses it.
func FitStream(ctx context.Context, opt Options, open Opener, names []string) (*Model, error) {
	if !(opt.Lambda >= 0) || math.IsInf(opt.Lambda, 0) {
		return nil, fmt.Errorf("model: lambda must be non-negative and finite, got %v", opt.Lambda)
	}
	if opt.SampleWeights != nil {
		return nil, errors.New("model: Options.SampleWeights is for Fit; streamed rows carry their weights in their batches")
	}
	if err := opt.checkClassWeights(); err != nil {
		return nil, err
	}
	chunk := opt.ChunkRows
	if chunk <= 0 {
		chunk = 2048
	}
	folds, err := opt.folds()
	if err != nil {
		return nil, err
	}
	// Pass 1: dimensions, classes, weights, scaler.
	var acc data.ScalerAccumulator
	rows, d, k := 0, 0, 1
	var two []float64 // the first label and the first one unlike it
	var counts []int  // rows per class
	var pos []bool    // the class has a row of positive sample weight
	outputs := 0      // target columns: 1, or those of data.Batch.Targets
	weighted := false // the batches have weights
	var positive bool // some weight is positive
	err = pass(open, chunk, func(b *data.Batch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, d = b.X.Dims()
		n := b.X.RawMatrix().Rows
		out, err := batchOutputs(b, n, opt.Task)
		if err != nil {
			return err
		}
		if outputs != 0 && out != outputs {
			return fmt.Errorf("model: a batch has %d target columns, an earlier one %d", out, outputs)
		}
		outputs = out
		if rows > 0 && (b.Weights != nil) != weighted {
			return errors.New("model: some batches have weights and some do not")
		}
		weighted = b.Weights != nil
		if weighted {
			if len(b.Weights) != n {
				return fmt.Errorf("model: a batch of %d rows has %d weights", n, len(b.Weights))
			}
			if err := checkRowWeights(b.Weights, rows); err != nil {
				return err
			}
			positive = positive || positiveTotal(b.Weights) == nil
		}
		if opt.Task == Classification {
			for i, v := range b.Y {
				if v < 0 || v != math.Trunc(v) || v > 1e6 {
					return fmt.Errorf("model: label %v is not a class index", v)
				}
				k = max(k, int(v)+1)
				for len(pos) <= int(v) {
					pos = append(pos, false)
				}
				pos[int(v)] = pos[int(v)] || !weighted || b.Weights[i] > 0
				if len(two) == 0 || (len(two) == 1 && v != two[0]) {
					two = append(two, v)
				}
				if opt.ClassWeight == "balanced" {
					for len(counts) <= int(v) {
						counts = append(counts, 0)
					}
					counts[int(v)]++
				}
			}
		}
		rows += n
		if opt.Standardize {
			return acc.AddWeighted(b.X, b.Weights)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, errors.New("model: no training rows")
	}
	if weighted && !positive {
		return nil, errors.New("model: every row has weight zero")
	}
	if folds > rows {
		return nil, fmt.Errorf("model: k-fold needs folds ≤ rows, got %d folds for %d rows", folds, rows)
	}
	m := &Model{Task: opt.Task, Columns: names, TrainRows: rows}
	var cw []float64
	switch opt.Task {
	case Classification:
		if err := twoLabels(two); err != nil {
			return nil, err
		}
		if k < 2 {
			return nil, errors.New("model: classification needs at least 2 classes")
		}
		m.Classes = k
		counts = append(counts, make([]int, k-len(counts))...)
		if cw, err = opt.classWeightVector(counts); err != nil {
			return nil, err
		}
		if err := positiveClasses(pos, cw); err != nil {
			return nil, err
		}
	case Regression:
		k = outputs
	default:
		return nil, fmt.Errorf("model: unknown task %q (want classification or regression)", opt.Task)
	}
	if (weighted || cw != nil) && opt.Accumulator != nil {
		return nil, errAccumulatorWeights
	}
	if opt.Standardize {
		if m.Scaler, err = acc.Scaler(); err != nil {
			return nil, err
		}
	}
	if m.Map, err = opt.newMap(d); err != nil {
		return nil, err
	}
	// Pass 2: statistics, in batches of streamBatch chunks (a whole number
	// of chunks per lane), chunk by chunk as in Fit (see Accumulate).
	batch := chunk
	if chunk <= limits.MaxElements/streamBatch {
		batch = chunk * streamBatch
	}
	acc2, err := opt.newStats(m.Map, k, folds, min(batch, rows))
	if err != nil {
		return nil, err
	}
	seen := 0
	err = passAhead(open, batch, func(b *data.Batch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		x := b.X
		n := x.RawMatrix().Rows
		if seen+n > rows {
			return errors.New("model: the second pass has more rows than the first")
		}
		if (b.Weights != nil) != weighted || (b.Weights != nil && len(b.Weights) != n) {
			return errors.New("model: the second pass's weights differ from the first's")
		}
		if m.Scaler != nil {
			var err error
			if x, err = m.Scaler.Transform(x); err != nil {
				return err
			}
		}
		var targets *mat.Dense
		var labels []int
		switch {
		case opt.Task == Classification:
			if len(b.Y) != n {
				return errors.New("model: the second pass's labels differ from the first's")
			}
			labels = make([]int, n)
			for i, v := range b.Y {
				labels[i] = int(v)
			}
			var err error
			if targets, err = linear.OneHot(labels, k); err != nil {
				return err
			}
		case b.Targets != nil:
			if _, c := b.Targets.Dims(); c != k {
				return errors.New("model: the second pass's targets differ from the first's")
			}
			targets = mat.DenseCopyOf(b.Targets)
		default:
			if k != 1 || len(b.Y) != n {
				return errors.New("model: the second pass's targets differ from the first's")
			}
			targets = mat.NewDense(n, 1, append([]float64(nil), b.Y...))
		}
		// Row seen+i goes to fold (seen+i) mod folds, as in Fit.
		var progress func(int)
		if opt.Progress != nil {
			progress = func(done int) { opt.Progress(seen+done, rows) }
		}
		if err := addRows(ctx, acc2, x, targets, combineWeights(b.Weights, labels, cw), progress); err != nil {
			return err
		}
		seen += n
		return nil
	})
	if err != nil {
		return nil, err
	}
	stats, err := acc2.Result()
	if err != nil {
		return nil, err
	}
	if err := m.solve(opt, stats); err != nil {
		return nil, err
	}
	return m, nil
}

// batchOutputs checks the targets of a batch of n rows for the task and
// returns the number of target columns.
func batchOutputs(b *data.Batch, n int, task Task) (int, error) {
	if b.Targets != nil {
		if task == Classification {
			return 0, errors.New("model: classification takes one label column, the data has several target columns")
		}
		r, c := b.Targets.Dims()
		if r != n {
			return 0, fmt.Errorf("model: a batch of %d rows has %d rows of targets", n, r)
		}
		return c, nil
	}
	if b.Y == nil {
		return 0, errors.New("model: the data has no target column")
	}
	if len(b.Y) != n {
		return 0, fmt.Errorf("model: a batch of %d rows has %d targets", n, len(b.Y))
	}
	return 1, nil
}

// streamBatch is the number of chunks FitStream's second pass reads at a
// time: a whole number of chunks for each lane of the accumulator, so that
// every lane has work in every batch.
const streamBatch = 4 * statLanes

// pass reads every batch of one opening of the rows.
func pass(open Opener, chunk int, fn func(b *data.Batch) error) (err error) {
	b, closeFn, err := open()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeFn()) }()
	for {
		bt, err := readBatch(b, chunk)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(bt); err != nil {
			return err
		}
	}
}

// passAhead is pass with the next batch read (parsed) on another
// goroutine while fn works on the current one, so that reading overlaps
// the feature and statistics work. The batches reach fn in order.
func passAhead(open Opener, chunk int, fn func(b *data.Batch) error) (err error) {
	b, closeFn, err := open()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeFn()) }()
	type batch struct {
		b   *data.Batch
		err error
	}
	next := make(chan batch, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(next)
		for {
			bt, err := readBatch(b, chunk)
			select {
			case next <- batch{bt, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	})
	// Stop the reader before closeFn runs (deferred calls run last first).
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for bt := range next {
		if bt.err == io.EOF {
			return nil
		}
		if bt.err != nil {
			return bt.err
		}
		if err := fn(bt.b); err != nil {
			return err
		}
	}
	return nil
}
