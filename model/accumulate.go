package model

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/linear"
)

// StatsAccumulator adds up the ridge statistics (ZᵀZ, ZᵀY, …) of a feature
// map's features of batches of rows. Rows are counted across calls to Add
// in the order they are added; row i goes to fold i mod folds.
type StatsAccumulator interface {
	// Add adds the statistics of the rows of x, with targets (one row per
	// row of x), calling progress, if set, with the rows of this batch
	// done so far. It stops with ctx's error.
	Add(ctx context.Context, x, targets *mat.Dense, progress func(done int)) error
	// Result returns the statistics, one per fold. The accumulator must
	// not be used after.
	Result() ([]*linear.Stats, error)
}

// NewStatsAccumulator makes a StatsAccumulator for map t's features, k
// target columns and the given number of folds.
type NewStatsAccumulator func(t features.Transformer, k, folds int) (StatsAccumulator, error)

// newStats returns the accumulator opt selects: opt.Accumulator's, or the
// CPU accumulator for batches of at most maxRows rows.
func (opt Options) newStats(t features.Transformer, k, folds, maxRows int) (StatsAccumulator, error) {
	if opt.Accumulator != nil {
		if err := checkStatsMemory(1, folds, t.Dim(), k); err != nil {
			return nil, err
		}
		return opt.Accumulator(t, k, folds)
	}
	return newAccumulator(t, k, folds, opt.ChunkRows, maxRows, opt.Float32)
}

// Accumulate transforms the rows of x with t and accumulates the
// statistics of (z, targets) in chunks over all cores. With folds > 1 row i
// goes to fold i mod folds and one Stats per fold is returned.
//
// The rows are taken in chunks (chunk rows, default 2048) that go in turn
// to statLanes lanes: chunk c to lane c mod statLanes. Each lane has
// statistics of its own and adds its chunks to them in order, one chunk at
// a time — the chunk's features, then one SYRK for its ZᵀZ
// (linear.Stats.AddSerial) — and the lanes run at once, one goroutine
// each; at the end their statistics are added up in lane order. The lanes
// are a constant, not the number of cores, and every chunk's
// statistics are one BLAS call, so the result is the same bits on every
// run and every number of cores; it depends only on the rows, the chunk
// size and the BLAS backend (whose GEMM and SYRK round differently: across
// backends the statistics, and the weights fitted from them, agree to
// rounding, not bit for bit). Memory is statLanes·folds statistics of D×D
// plus one chunk of features per lane (two with folds > 1).
func Accumulate(ctx context.Context, t features.Transformer, x, targets *mat.Dense, folds, chunk int, progress func(done, total int)) ([]*linear.Stats, error) {
	n, _ := x.Dims()
	_, k := targets.Dims()
	a, err := newAccumulator(t, k, folds, chunk, n, false)
	if err != nil {
		return nil, err
	}
	var report func(int)
	if progress != nil {
		report = func(done int) { progress(done, n) }
	}
	if err := a.Add(ctx, x, targets, report); err != nil {
		return nil, err
	}
	return a.Result()
}

// statLanes is the number of chunks whose statistics are computed at once,
// each by a single-threaded SYRK into statistics of its own: on two cores
// the SYRK runs at the BLAS's one-core peak on both, which beats one
// parallel call split in tiles by about a third (issue 14: 78 against 59
// GFLOP/s at D = 2048, next to 81 for OpenBLAS's two-thread DGEMM). It is
// a constant so that the result does not depend on the number of cores;
// more lanes would keep more cores busy at the cost of a D×D matrix each.
const statLanes = 2

// accumulator adds the statistics of batches of rows chunk by chunk into
// its lanes (see Accumulate); the fit (pipeline.go) feeds it one batch
// after another, so its statistics are those of Accumulate on all the
// rows when the batches are whole numbers of chunks. With f32 set the features of a
// chunk are computed in single precision and its statistics by
// linear.Stats.AddFloat32Serial.
type accumulator struct {
	t        features.Transformer
	k, folds int
	chunk    int
	f32      bool
	lanes    [statLanes]*lane
	chunks   int // chunks added so far: the next goes to lane chunks mod statLanes
	rows     int // rows added so far; row i of all goes to fold i mod folds
	bufRows  int // rows the buffers hold
	dim      int
}

// lane is one lane's statistics and buffers.
type lane struct {
	stats []*linear.Stats
	z     []float64 // one chunk of features (float64 path, and the float32 path of maps without Transform32)
	z32   []float32 // one chunk of features (float32 path)
	fz    []float64 // the rows of one fold of a chunk (folds > 1)
	fz32  []float32
	fy    []float64
	fw    []float64 // the weights of the rows of one fold of a chunk
}

// transform32 is implemented by feature maps that write single-precision
// features directly (features.Map).
type transform32 interface {
	Transform32(dst blas32.General, x *mat.Dense) error
}

// newAccumulator prepares statistics for t's features and k targets,
// with batches of at most maxRows rows, after checking the sizes against
// the limits of package internal/limits.
func newAccumulator(t features.Transformer, k, folds, chunk, maxRows int, f32 bool) (*accumulator, error) {
	if chunk <= 0 {
		chunk = 2048
	}
	if folds < 1 {
		folds = 1
	}
	dim := t.Dim()
	rows := max(min(chunk, maxRows), 1)
	if _, err := limits.Matrix("model: feature chunk", rows, dim); err != nil {
		return nil, err
	}
	if _, err := limits.Matrix("model: ridge statistics", dim, dim); err != nil {
		return nil, err
	}
	if err := checkStatsMemory(statLanes, folds, dim, k); err != nil {
		return nil, err
	}
	a := &accumulator{t: t, k: k, folds: folds, chunk: chunk, f32: f32, bufRows: rows, dim: dim}
	for l := range a.lanes {
		a.lanes[l] = &lane{stats: statsSet(folds, dim, k)}
	}
	return a, nil
}

// checkStatsMemory returns an error, stating the memory they would need,
// when sets sets of per-fold statistics (linear.NewStats: D² + D·K + D +
// 2K values each) of folds folds, dim features and k targets would hold
// more than maxStatsValues values (limits.MaxElements, 8 GiB) in all. It
// runs before they are allocated, so that a fold count out of proportion
// (k-fold with a million folds) fails at once instead of exhausting
// memory.
func checkStatsMemory(sets, folds, dim, k int) error {
	each, err := statsValues(dim, k)
	if err == nil {
		var n int
		if n, err = limits.Mul(sets, folds); err == nil {
			if n, err = limits.Mul(n, each); err == nil && n <= maxStatsValues {
				return nil
			}
		}
	}
	need := float64(sets) * float64(folds) * (float64(dim)*float64(dim+k+1) + 2*float64(k)) * 8
	return fmt.Errorf("model: the ridge statistics of %d folds (D = %d features, %d target columns, %d copies of each fold) would need %s (limit %s); use fewer folds or features",
		folds, dim, k, sets, limits.Bytes(need), limits.Bytes(float64(maxStatsValues)*8))
}

// statsValues returns the number of float64 values of one linear.Stats of
// dim features and k targets.
func statsValues(dim, k int) (int, error) {
	n, err := limits.Mul(dim, dim+k+1)
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt-2*k { // k ≤ dim·(dim+k+1), so 2k does not overflow
		return 0, errors.New("size overflows")
	}
	return n + 2*k, nil
}

// maxStatsValues is the most float64 values that the per-fold statistics
// of a fit may hold in all (limits.MaxElements); tests lower it.
var maxStatsValues = limits.MaxElements

// statsSet returns empty statistics for each of folds folds.
func statsSet(folds, dim, k int) []*linear.Stats {
	set := make([]*linear.Stats, folds)
	for f := range set {
		set[f] = linear.NewStats(dim, k)
	}
	return set
}

// Result adds the lanes' statistics up, in lane order, and returns them
// (one Stats per fold); the accumulator must not be used after.
func (a *accumulator) Result() ([]*linear.Stats, error) {
	total := a.lanes[0].stats
	for _, l := range a.lanes[1:] {
		for f, s := range l.stats {
			if err := total[f].Merge(s); err != nil {
				return nil, err
			}
		}
	}
	return total, nil
}

// Add accumulates the rows of x and targets, calling progress, if set,
// with the rows of this batch done so far after each chunk. It stops with
// ctx's error between chunks.
func (a *accumulator) Add(ctx context.Context, x, targets *mat.Dense, progress func(done int)) error {
	return a.add(ctx, x, targets, nil, nil, progress)
}

// add is Add with row weights w (nil: unweighted, as Add) and the rows'
// folds fold (nil: row i of all the rows added in fold i mod folds, as
// Add); each chunk's statistics are added with the chunk's weights by
// linear.Stats.AddWeightedSerial (AddWeightedFloat32Serial), each fold's
// rows in row order, in the same lanes and order, so the result is as
// deterministic as Add's.
func (a *accumulator) add(ctx context.Context, x, targets *mat.Dense, w []float64, fold []int, progress func(done int)) error {
	n, d := x.Dims()
	if r := min(a.chunk, n); r > a.bufRows {
		if _, err := limits.Matrix("model: feature chunk", r, a.dim); err != nil {
			return err
		}
		a.bufRows = r
		for _, l := range a.lanes {
			l.z, l.z32, l.fz, l.fz32 = nil, nil, nil, nil
		}
	}
	nchunks := (n + a.chunk - 1) / a.chunk
	errs := make([]error, nchunks)
	var failed atomic.Bool
	var mu sync.Mutex
	done := 0
	parallel.Tasks(statLanes, func(_, li int) {
		l := a.lanes[li]
		// This batch's chunks c with (a.chunks + c) mod statLanes = li.
		for c := (li - a.chunks%statLanes + statLanes) % statLanes; c < nchunks; c += statLanes {
			if failed.Load() {
				return
			}
			if err := ctx.Err(); err != nil {
				errs[c] = err
				failed.Store(true)
				return
			}
			lo, hi := c*a.chunk, min((c+1)*a.chunk, n)
			var wc []float64
			if w != nil {
				wc = w[lo:hi]
			}
			var fc []int
			if fold != nil {
				fc = fold[lo:hi]
			}
			if err := a.addChunk(l, x.Slice(lo, hi, 0, d).(*mat.Dense), targets.Slice(lo, hi, 0, a.k).(*mat.Dense), wc, fc, a.rows+lo); err != nil {
				errs[c] = err
				failed.Store(true)
				return
			}
			if progress != nil {
				mu.Lock()
				done += hi - lo
				progress(done)
				mu.Unlock()
			}
		}
	})
	if err := firstError(errs); err != nil {
		return err
	}
	a.chunks += nchunks
	a.rows += n
	return nil
}

// addChunk adds the statistics of one chunk of rows, with weights w (nil:
// unweighted), to lane l; the chunk's first row is row first of all the
// rows added, and its row i goes to fold fold[i] (fold nil: fold
// (first+i) mod folds).
func (a *accumulator) addChunk(l *lane, x, y *mat.Dense, w []float64, fold []int, first int) error {
	rows, _ := x.Dims()
	dim := a.dim
	var z *mat.Dense
	var z32 blas32.General
	if a.f32 {
		if len(l.z32) < a.bufRows*dim {
			l.z32 = make([]float32, a.bufRows*dim)
		}
		z32 = blas32.General{Rows: rows, Cols: dim, Stride: dim, Data: l.z32[:rows*dim]}
		if err := a.features32(l, z32, x); err != nil {
			return err
		}
	} else {
		if len(l.z) < a.bufRows*dim {
			l.z = make([]float64, a.bufRows*dim)
		}
		z = mat.NewDense(rows, dim, l.z[:rows*dim])
		if err := a.t.Transform(z, x); err != nil {
			return err
		}
	}
	if a.folds == 1 {
		if a.f32 {
			return l.stats[0].AddWeightedFloat32Serial(z32, y, w)
		}
		return l.stats[0].AddWeightedSerial(z, y, w)
	}
	// Row first+i goes to fold fold[i], or (first+i) mod folds: gather
	// each fold's rows of the chunk, in row order, and add them.
	inFold := func(i, f int) bool { return (first+i)%a.folds == f }
	fr := rows/a.folds + 1
	if fold != nil {
		inFold = func(i, f int) bool { return fold[i] == f }
		size := make([]int, a.folds)
		fr = 0
		for _, f := range fold {
			if f < 0 || f >= a.folds {
				return fmt.Errorf("model: row in fold %d of %d", f, a.folds)
			}
			size[f]++
			fr = max(fr, size[f])
		}
	}
	if len(l.fy) < fr*a.k {
		l.fy = make([]float64, fr*a.k)
	}
	if w != nil && len(l.fw) < fr {
		l.fw = make([]float64, fr)
	}
	if a.f32 && len(l.fz32) < fr*dim {
		l.fz32 = make([]float32, fr*dim)
	}
	if !a.f32 && len(l.fz) < fr*dim {
		l.fz = make([]float64, fr*dim)
	}
	for f := 0; f < a.folds; f++ {
		m := 0
		for i := range rows {
			if !inFold(i, f) {
				continue
			}
			copy(l.fy[m*a.k:(m+1)*a.k], y.RawRowView(i))
			if w != nil {
				l.fw[m] = w[i]
			}
			if a.f32 {
				copy(l.fz32[m*dim:(m+1)*dim], z32.Data[i*dim:(i+1)*dim])
			} else {
				copy(l.fz[m*dim:(m+1)*dim], z.RawRowView(i))
			}
			m++
		}
		if m == 0 {
			continue
		}
		fy := mat.NewDense(m, a.k, l.fy[:m*a.k])
		var fw []float64
		if w != nil {
			fw = l.fw[:m]
		}
		var err error
		if a.f32 {
			err = l.stats[f].AddWeightedFloat32Serial(blas32.General{Rows: m, Cols: dim, Stride: dim, Data: l.fz32[:m*dim]}, fy, fw)
		} else {
			err = l.stats[f].AddWeightedSerial(mat.NewDense(m, dim, l.fz[:m*dim]), fy, fw)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// features32 writes the single-precision features of the rows of x into
// z: directly for maps with Transform32, else by converting the float64
// features.
func (a *accumulator) features32(l *lane, z blas32.General, x *mat.Dense) error {
	if t32, ok := a.t.(transform32); ok {
		return t32.Transform32(z, x)
	}
	rows, _ := x.Dims()
	if len(l.z) < a.bufRows*a.dim {
		l.z = make([]float64, a.bufRows*a.dim)
	}
	z64 := mat.NewDense(rows, a.dim, l.z[:rows*a.dim])
	if err := a.t.Transform(z64, x); err != nil {
		return err
	}
	for i := 0; i < rows; i++ {
		for j, v := range z64.RawRowView(i) {
			z.Data[i*z.Stride+j] = float32(v)
		}
	}
	return nil
}

// firstError returns the first non-nil error of errs, or nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
