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
// io.EOF at the end. data.CSVReader implements it.
type Batches interface {
	Read(max int) (*mat.Dense, []float64, error)
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
func FitStream(ctx context.Context, opt Options, open Opener, names []string) (*Model, error) {
	if !(opt.Lambda >= 0) || math.IsInf(opt.Lambda, 0) {
		return nil, fmt.Errorf("model: lambda must be non-negative and finite, got %v", opt.Lambda)
	}
	chunk := opt.ChunkRows
	if chunk <= 0 {
		chunk = 2048
	}
	folds, err := opt.folds()
	if err != nil {
		return nil, err
	}
	// Pass 1: dimensions, classes, scaler.
	var acc data.ScalerAccumulator
	rows, d, k := 0, 0, 1
	var two []float64 // the first label and the first one unlike it
	err = pass(open, chunk, func(x *mat.Dense, y []float64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, d = x.Dims()
		if y == nil {
			return errors.New("model: the data has no target column")
		}
		if opt.Task == Classification {
			for _, v := range y {
				if v < 0 || v != math.Trunc(v) || v > 1e6 {
					return fmt.Errorf("model: label %v is not a class index", v)
				}
				k = max(k, int(v)+1)
				if len(two) == 0 || (len(two) == 1 && v != two[0]) {
					two = append(two, v)
				}
			}
		}
		rows += len(y)
		if opt.Standardize {
			return acc.Add(x)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, errors.New("model: no training rows")
	}
	m := &Model{Task: opt.Task, Columns: names, TrainRows: rows}
	switch opt.Task {
	case Classification:
		if err := twoLabels(two); err != nil {
			return nil, err
		}
		if k < 2 {
			return nil, errors.New("model: classification needs at least 2 classes")
		}
		m.Classes = k
	case Regression:
	default:
		return nil, fmt.Errorf("model: unknown task %q (want classification or regression)", opt.Task)
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
	err = passAhead(open, batch, func(x *mat.Dense, y []float64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if m.Scaler != nil {
			var err error
			if x, err = m.Scaler.Transform(x); err != nil {
				return err
			}
		}
		n := len(y)
		var targets *mat.Dense
		if opt.Task == Classification {
			labels := make([]int, n)
			for i, v := range y {
				labels[i] = int(v)
			}
			var err error
			if targets, err = linear.OneHot(labels, k); err != nil {
				return err
			}
		} else {
			targets = mat.NewDense(n, 1, append([]float64(nil), y...))
		}
		// Row seen+i goes to fold (seen+i) mod folds, as in Fit.
		var progress func(int)
		if opt.Progress != nil {
			progress = func(done int) { opt.Progress(seen+done, rows) }
		}
		if err := acc2.Add(ctx, x, targets, progress); err != nil {
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

// streamBatch is the number of chunks FitStream's second pass reads at a
// time: a whole number of chunks for each lane of the accumulator, so that
// every lane has work in every batch.
const streamBatch = 4 * statLanes

// pass reads every batch of one opening of the rows.
func pass(open Opener, chunk int, fn func(x *mat.Dense, y []float64) error) (err error) {
	b, closeFn, err := open()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeFn()) }()
	for {
		x, y, err := b.Read(chunk)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(x, y); err != nil {
			return err
		}
	}
}

// passAhead is pass with the next batch read (parsed) on another
// goroutine while fn works on the current one, so that reading overlaps
// the feature and statistics work. The batches reach fn in order.
func passAhead(open Opener, chunk int, fn func(x *mat.Dense, y []float64) error) (err error) {
	b, closeFn, err := open()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeFn()) }()
	type batch struct {
		x   *mat.Dense
		y   []float64
		err error
	}
	next := make(chan batch, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(next)
		for {
			x, y, err := b.Read(chunk)
			select {
			case next <- batch{x, y, err}:
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
		if err := fn(bt.x, bt.y); err != nil {
			return err
		}
	}
	return nil
}
