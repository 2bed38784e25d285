package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
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
// Memory is O(batch·D + D²) whatever the number of rows. With the same
// rows and options it gives the same model as Fit, to rounding.
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
	// Pass 2: statistics.
	stats := make([]*linear.Stats, folds)
	for f := range stats {
		stats[f] = linear.NewStats(m.Map.Dim(), k)
	}
	seen := 0
	err = pass(open, chunk, func(x *mat.Dense, y []float64) error {
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
		if folds == 1 {
			st, err := Accumulate(ctx, m.Map, x, targets, 1, chunk, nil)
			if err != nil {
				return err
			}
			if err := stats[0].Merge(st[0]); err != nil {
				return err
			}
		} else {
			// Row seen+i goes to fold (seen+i) mod folds, as in Fit.
			z, err := features.Apply(m.Map, x)
			if err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				f := (seen + i) % folds
				if err := stats[f].Add(z.Slice(i, i+1, 0, m.Map.Dim()).(*mat.Dense), targets.Slice(i, i+1, 0, k).(*mat.Dense)); err != nil {
					return err
				}
			}
		}
		seen += n
		if opt.Progress != nil {
			opt.Progress(seen, rows)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := m.solve(opt, stats); err != nil {
		return nil, err
	}
	return m, nil
}

// pass reads every batch of one opening of the rows.
func pass(open Opener, chunk int, fn func(x *mat.Dense, y []float64) error) error {
	b, closeFn, err := open()
	if err != nil {
		return err
	}
	defer closeFn()
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
