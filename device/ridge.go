package device

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

// RidgeOptions are the settings of the device ridge statistics.
type RidgeOptions struct {
	// BatchRows is the number of rows of one graph execution (default
	// DefaultBatchRows). Device memory holds one batch of inputs, targets
	// and features and, per fold, the D×D, D×K and D sums in float64.
	BatchRows int
}

// Accumulator returns the constructor of device ridge statistics for
// model.Options.Accumulator: model.Fit and model.FitStream then compute
// the features and their statistics on d, and solve on the host.
func (d *Device) Accumulator(o RidgeOptions) model.NewStatsAccumulator {
	return func(t features.Transformer, k, folds int) (model.StatsAccumulator, error) {
		return d.NewRidgeStats(t, k, folds, o)
	}
}

// RidgeStats accumulates the ridge statistics of a feature map's features
// on a device (a model.StatsAccumulator). Rows are taken in the order they
// are added, row i to fold i mod folds; each fold collects its rows into
// batches of BatchRows rows, and each batch is one graph execution: the
// features Z of the batch (the map's device form), then ZᵀZ, ZᵀY and Σz in
// the device's float type, converted to float64 and added to the fold's
// float64 sums, which stay on the device until Result. Rounding thus
// grows with the rows of one batch, not of the whole fit (as
// linear.Stats.AddFloat32 does on the CPU), and the batches are added in
// a fixed order, so the same rows give the same bits on every run on a
// given device whatever the sizes of the Add calls (the last, partial
// batch of each fold runs at Result). Σy and Σy² are summed on the host in
// float64. Host memory holds one batch per fold and, at Result, the
// statistics: it does not grow with the number of rows.
//
// A RidgeStats is not safe for concurrent use.
type RidgeStats struct {
	m     *Map
	k     int
	exec  *graph.Exec // x, y, mask, ZᵀZ, ZᵀY, Σz, params → ZᵀZ, ZᵀY, Σz
	folds []*foldStats
	ones  []float64
	rows  int   // rows added so far
	err   error // the first error, after which the accumulator refuses work
}

// foldStats is one fold's pending batch and device sums.
type foldStats struct {
	x, y        []float64 // pending rows (BatchRows×d, BatchRows×K)
	n           int       // pending rows
	rows        int       // rows accumulated into the sums
	zz, zy, sz  *tensors.Tensor
	sumY, sumY2 []float64
}

// NewRidgeStats returns device statistics for map t's features, k target
// columns and the given number of folds (at least 1). It is an error if t
// has no device form or the statistics or a batch are beyond the limits
// of package internal/limits.
func (d *Device) NewRidgeStats(t features.Transformer, k, folds int, o RidgeOptions) (*RidgeStats, error) {
	if k <= 0 || folds <= 0 {
		return nil, fmt.Errorf("device: ridge statistics need positive targets and folds, got %d and %d", k, folds)
	}
	batch := o.BatchRows
	if batch == 0 {
		batch = DefaultBatchRows
	}
	m, err := d.Map(t)
	if err != nil {
		return nil, err
	}
	if m, err = m.WithBatchRows(batch); err != nil {
		return nil, err
	}
	dim := m.Dim()
	if _, err := limits.Matrix("device: ridge statistics", dim, dim); err != nil {
		return nil, err
	}
	if _, err := limits.Matrix("device: ridge statistics", dim, k); err != nil {
		return nil, err
	}
	if _, err := limits.Matrix("device: target batch", batch, k); err != nil {
		return nil, err
	}
	f := m.form
	exec, err := graph.NewExec(d.backend, func(in []*graph.Node) []*graph.Node {
		x, y, mask := in[0], in[1], in[2]
		z, _ := f.build(x, in[6:], false)
		z = graph.Mul(z, graph.InsertAxes(mask, -1)) // padding rows count 0
		zz := graph.DotGeneral(z, []int{0}, nil, z, []int{0}, nil)
		zy := graph.DotGeneral(z, []int{0}, nil, y, []int{0}, nil)
		sz := graph.ReduceSum(z, 0)
		return []*graph.Node{
			graph.Add(in[3], graph.ConvertDType(zz, dtypes.Float64)),
			graph.Add(in[4], graph.ConvertDType(zy, dtypes.Float64)),
			graph.Add(in[5], graph.ConvertDType(sz, dtypes.Float64)),
		}
	})
	if err != nil {
		return nil, fmt.Errorf("device: ridge statistics of %s: %w", f.name, err)
	}
	exec.SetMaxCache(maxGraphs)
	r := &RidgeStats{m: m, k: k, exec: exec, folds: make([]*foldStats, folds), ones: make([]float64, batch)}
	for i := range r.ones {
		r.ones[i] = 1
	}
	for i := range r.folds {
		r.folds[i] = &foldStats{sumY: make([]float64, k), sumY2: make([]float64, k)}
	}
	return r, nil
}

// Add adds the rows of x with their targets, running a graph for each
// batch that fills up; progress, if set, gets the rows of this call taken
// so far. It stops between batches with ctx's error. Non-finite inputs
// and inputs outside the map's domain are errors; after an error the
// accumulator refuses further work.
func (r *RidgeStats) Add(ctx context.Context, x, targets *mat.Dense, progress func(done int)) error {
	if r.err != nil {
		return r.err
	}
	n, d := x.Dims()
	ny, k := targets.Dims()
	if d != r.m.form.in || k != r.k || n != ny {
		return fmt.Errorf("device: ridge statistics of %s: got %d×%d rows and %d×%d targets, want %d columns, %d targets and equal rows",
			r.m.form.name, n, d, ny, k, r.m.form.in, r.k)
	}
	batch := r.m.batch
	for i := 0; i < n; i++ {
		f := r.folds[(r.rows+i)%len(r.folds)]
		row := x.RawRowView(i)
		if err := r.m.form.check(i, row, nil); err != nil {
			return r.fail(err)
		}
		if f.x == nil {
			f.x, f.y = make([]float64, batch*d), make([]float64, batch*k)
		}
		copy(f.x[f.n*d:(f.n+1)*d], row)
		copy(f.y[f.n*k:(f.n+1)*k], targets.RawRowView(i))
		f.n++
		if f.n < batch {
			continue
		}
		if err := ctx.Err(); err != nil {
			return r.fail(err)
		}
		if err := r.flush(f); err != nil {
			return r.fail(err)
		}
		if progress != nil {
			progress(i + 1)
		}
	}
	r.rows += n
	if progress != nil {
		progress(n)
	}
	return nil
}

// flush runs the graph on a fold's pending rows.
func (r *RidgeStats) flush(f *foldStats) error {
	rows := f.n
	if rows == 0 {
		return nil
	}
	d, k, dim := r.m.form.in, r.k, r.m.form.dim
	pr := padRows(rows, r.m.batch)
	dt := r.m.dev.dtype
	if f.zz == nil {
		f.zz = tensors.FromShape(shapes.Make(dtypes.Float64, dim, dim))
		f.zy = tensors.FromShape(shapes.Make(dtypes.Float64, dim, k))
		f.sz = tensors.FromShape(shapes.Make(dtypes.Float64, dim))
	}
	xt, err := stageTensor(dt, f.x[:rows*d], pr, d)
	if err != nil {
		return err
	}
	yt, err := stageTensor(dt, f.y[:rows*k], pr, k)
	if err != nil {
		return errors.Join(err, releaseAll(xt))
	}
	mt, err := stageTensor(dt, r.ones[:rows], pr)
	if err != nil {
		return errors.Join(err, releaseAll(xt, yt))
	}
	args := []any{xt, yt, mt, f.zz, f.zy, f.sz}
	for _, p := range r.m.params {
		args = append(args, p)
	}
	outs, err := r.exec.Exec(args...)
	if err != nil {
		return errors.Join(fmt.Errorf("device: ridge statistics of %s on %s: %w", r.m.form.name, r.m.dev.Name(), err), releaseAll(xt, yt, mt))
	}
	if err := releaseAll(xt, yt, mt, f.zz, f.zy, f.sz); err != nil {
		return errors.Join(err, releaseAll(outs...))
	}
	f.zz, f.zy, f.sz = outs[0], outs[1], outs[2]
	for i := 0; i < rows; i++ {
		for j, v := range f.y[i*k : (i+1)*k] {
			f.sumY[j] += v
			f.sumY2[j] += v * v
		}
	}
	f.rows += rows
	f.n = 0
	return nil
}

// Result runs the last, partial batch of each fold, copies the sums to
// the host and returns one linear.Stats per fold. Non-finite sums
// (features or their products beyond the device's float range) are
// features.ErrOverflow. The accumulator must not be used after.
func (r *RidgeStats) Result() ([]*linear.Stats, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.err = errors.New("device: ridge statistics used after Result")
	dim, k := r.m.form.dim, r.k
	out := make([]*linear.Stats, len(r.folds))
	var zz, zy, sz []float64
	for fi, f := range r.folds {
		if err := r.flush(f); err != nil {
			return nil, errors.Join(err, r.release())
		}
		out[fi] = linear.NewStats(dim, k)
		if f.zz == nil {
			continue
		}
		if zz == nil {
			zz, zy, sz = make([]float64, dim*dim), make([]float64, dim*k), make([]float64, dim)
		}
		err := errors.Join(unstageInto(f.zz, zz), unstageInto(f.zy, zy), unstageInto(f.sz, sz))
		f.zz, f.zy, f.sz = nil, nil, nil
		if err != nil {
			return nil, errors.Join(err, r.release())
		}
		for _, arr := range [][]float64{zz, zy, sz} {
			for _, v := range arr {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, errors.Join(r.overflow(), r.release())
				}
			}
		}
		if err := out[fi].AddSums(f.rows, zz, zy, sz, f.sumY, f.sumY2); err != nil {
			return nil, errors.Join(err, r.release())
		}
	}
	return out, nil
}

// overflow is the error of non-finite statistics.
func (r *RidgeStats) overflow() error {
	return fmt.Errorf("device: ridge statistics of %s on %v: %w (features or their sums beyond the float range)", r.m.form.name, r.m.dev, features.ErrOverflow)
}

// fail records err, after which the accumulator refuses work, and frees
// the device sums.
func (r *RidgeStats) fail(err error) error {
	r.err = err
	return errors.Join(err, r.release())
}

// release frees the device sums.
func (r *RidgeStats) release() error {
	var errs []error
	for _, f := range r.folds {
		errs = append(errs, releaseAll(f.zz, f.zy, f.sz))
		f.zz, f.zy, f.sz = nil, nil, nil
	}
	return errors.Join(errs...)
}
