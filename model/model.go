// Package model ties kernelkit's pieces into a fitted predictor —
// standardisation, a random feature map and a ridge model — and stores it
// in a versioned model file.
//
// Fit (rows in memory) and FitStream (rows read again in passes) are one
// pipeline (pipeline.go): a census of the rows (columns, labels, weights,
// the scaler's moments), the ridge statistics per fold, and for a
// calibration the out-of-fold scores, each computed in the same batches
// in the same order, so that the same rows and options give the same
// model file, byte for byte, whichever way the rows arrive.
//
// # Model file format (version 2)
//
// A model file is one JSON object (UTF-8) with the fields
//
//	format     "kernelkit-model" (anything else is rejected)
//	version    2 (version-1 files, which have no map_kind and always hold a
//	           features spec, are still read); a loader rejects versions it
//	           does not know
//	task       "classification" or "regression"
//	classes    number of classes K (classification), 0 otherwise
//	columns    feature column names, if known
//	label      name of the target column, if known
//	scaler     {"mean": [d], "scale": [d]} or null: x' = (x − mean)/scale
//	map_kind   the kind of the stored feature map: "features" for the maps
//	           of package features, "snnk-relu" for ReLU-SNNK towers; any
//	           kind with a decoder in package catalog's registry
//	features   the feature map's spec, as its Encoder writes it; for kind
//	           "features" the Spec of package features: kernel, form,
//	           gamma, features D, sampler name, seed, input_dim d, m,
//	           w (m·d values, row-major, bandwidth included), b (phases)
//	lambda     the ridge parameter used
//	jitter     extra ridge added for conditioning (0 normally)
//	weights    D·K values, row-major (D rows, K columns; K = outputs for
//	           regression)
//	intercept  K values
//	outputs    optional (regression): the number K of target columns of a
//	           multi-output model; absent means 1
//	targets    optional (regression): the names of the K target columns
//	calibration  optional (classification): {"classes": K, "sigmoids":
//	           [{"a": A, "b": B}, …]}, the Platt sigmoids of package
//	           calibrate (K of them, one for K = 2); files without it
//	           load as uncalibrated models
//
// Floats are written in Go's shortest round-trip form, so a loaded model
// reproduces the fitted one's predictions bit for bit. The projection is
// stored, not only its seed, so a model does not depend on the random
// number generator of the version that wrote it.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/calibrate"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/linear"
)

// FormatName and Version identify model files.
const (
	FormatName = "kernelkit-model"
	Version    = 2
)

// Task is the kind of supervised problem.
type Task string

// The tasks. Auto, for a fit only, decides from the training rows, as
// `kernelkit fit --task auto` does: classification when every label is
// an integer from 0 to 999, regression otherwise (or with several target
// columns). The fitted model records the task decided.
const (
	Classification Task = "classification"
	Regression     Task = "regression"
	Auto           Task = "auto"
)

// Options configures Fit.
type Options struct {
	Task Task
	// Features configures the random feature map drawn for the fit; it is
	// used when Map is nil.
	Features features.Config
	// Map, if set, is the feature map to fit with (any map of the
	// contract, e.g. one from package catalog); its input dimension must
	// be the number of feature columns. Save needs it to implement
	// features.Encoder.
	Map features.Transformer
	// Lambda is the ridge parameter (≥ 0). With Select set it is ignored.
	Lambda float64
	// Select chooses λ from Grid: "" (use Lambda), "gcv" or "kfold".
	Select string
	// Grid is the λ grid for selection (default 10⁻⁴…10³, one per decade).
	Grid []float64
	// Folds is the number of folds for "kfold" and for Calibrate
	// (default 5), at most the number of rows. Without Calibrate row i
	// goes to fold i mod Folds; with it the folds are stratified by class
	// (see calibrate.go), and every class needs at least Folds rows of
	// positive weight. The per-fold statistics (two copies of each fold's
	// D×D matrix on the CPU) may hold at most limits.MaxElements values
	// (8 GiB) in all; more is an error before they are allocated.
	Folds int
	// Calibrate fits Platt sigmoids on out-of-fold decision scores
	// (classification; Fit and FitStream, the latter in a third pass over
	// the rows; see Model.Probabilities and the files calibrate.go and
	// pipeline.go): modelled on scikit-learn's
	// CalibratedClassifierCV(method='sigmoid', ensemble=False) with Folds
	// folds.
	Calibrate bool
	// Standardize fits a scaler on the training rows.
	Standardize bool
	// ChunkRows is the number of rows transformed and accumulated at a time
	// (default 2048); memory does not grow with the number of rows.
	ChunkRows int
	// Float32 computes each chunk's features and statistics in single
	// precision (features.Map.Transform32, linear.Stats.AddFloat32Serial),
	// at about twice the speed of the statistics stage, and adds the
	// chunks up in float64; the solve stays in float64. Set
	// Features.Float32 with it to project in single precision as well.
	Float32 bool
	// Progress, if set, is called with the number of rows done.
	Progress func(done, total int)
	// Accumulator, if set, makes the accumulator of the ridge statistics
	// (e.g. one that computes them on a GPU: package device); nil means
	// kernelkit's CPU accumulator (see Accumulate). Fit and FitStream call
	// it once, with the fitted map, the number of target columns and the
	// number of folds. It takes no weights and no calibration (whose
	// stratified folds it cannot be told): either is an error with it.
	Accumulator NewStatsAccumulator
	// SampleWeights, if set, weighs the rows of Fit's training set (one
	// finite, non-negative weight per row): the fit minimises
	// Σ w_i‖y_i − Wᵀz_i − b‖² + λ‖W‖². nil means the data set's own
	// weights (data.Dataset.Weights, a weight column), if any; setting
	// both is an error. FitStream takes the weights of the batches
	// (data.Batch.Weights). See weights.go for what the weights change.
	SampleWeights []float64
	// ClassWeight is "" (no class weights) or "balanced": class c weighs
	// n/(C·n_c), n the rows, C the number of classes present and n_c the
	// rows of class c (scikit-learn's class_weight='balanced'; counted in
	// the fit's first pass). Classification only.
	ClassWeight string
	// ClassWeights gives explicit weights by class index (classes it does
	// not name weigh 1); it excludes ClassWeight. Class weights multiply
	// the sample weights, as in scikit-learn.
	ClassWeights map[int]float64
}

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

// Model is a fitted kernel ridge model on random features.
type Model struct {
	Task    Task
	Classes int
	Columns []string
	Label   string
	// Targets names the target columns of a multi-output regression model
	// (Linear.W has one column per target); nil for one target.
	Targets []string
	Scaler  *data.Scaler
	Map     features.Transformer
	Linear  *linear.Model
	// Scores holds the λ-selection scores, aligned with Grid, if any.
	Grid, Scores []float64
	// Calibration, if set, turns the class scores into probabilities
	// (Probabilities); Fit sets it with Options.Calibrate.
	Calibration *calibrate.Platt
	// TrainRows is the number of training rows (not stored in model files).
	TrainRows int
}

// DefaultGrid is the λ grid used by selection when none is given.
var DefaultGrid = []float64{1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000}

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

// newMap returns opt.Map, checked against the input dimension d, or draws
// the map of opt.Features.
func (opt Options) newMap(d int) (features.Transformer, error) {
	if opt.Map == nil {
		return features.New(opt.Features, d)
	}
	if opt.Map.InputDim() != d {
		return nil, fmt.Errorf("model: feature map takes %d inputs, data has %d feature columns", opt.Map.InputDim(), d)
	}
	return opt.Map, nil
}

// folds returns the number of statistics partitions opt.Select needs: 1,
// or the k of k-fold cross-validation (default 5). It is the count of a
// fit that sees each row once (a distributed fit), so it refuses
// Calibrate; Fit and FitStream count with fitFolds.
func (opt Options) folds() (int, error) {
	if opt.Calibrate {
		return 0, errStreamCalibrate
	}
	switch opt.Select {
	case "", "gcv":
		return 1, nil
	case "kfold":
		k := opt.Folds
		if k == 0 {
			k = 5
		}
		if k < 2 {
			return 0, fmt.Errorf("model: k-fold needs at least 2 folds, got %d", k)
		}
		return k, nil
	}
	return 0, fmt.Errorf("model: unknown lambda selection %q (want gcv or kfold)", opt.Select)
}

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

// StatsFolds returns the number of per-fold statistics that a fit which
// sees each row once (a distributed fit) accumulates for opt: 1, or the
// folds of k-fold selection (Folds, default 5). Row i goes to fold
// i mod StatsFolds. Calibrate is refused: its stratified folds and
// out-of-fold scores take the census and a third pass of Fit and
// FitStream (pipeline.go).
func (opt Options) StatsFolds() (int, error) {
	return opt.folds()
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

// Features returns the feature matrix of raw rows x (scaled first if the
// model has a scaler).
func (m *Model) Features(x *mat.Dense) (*mat.Dense, error) {
	_, d := x.Dims()
	if d != m.Map.InputDim() {
		return nil, fmt.Errorf("model: data has %d feature columns, model expects %d", d, m.Map.InputDim())
	}
	if m.Scaler != nil {
		var err error
		if x, err = m.Scaler.Transform(x); err != nil {
			return nil, err
		}
	}
	return features.Apply(m.Map, x)
}

// Predict returns the n×K raw model outputs (class scores, or the
// regression prediction in column 0) for raw rows x. The rows are mapped
// and multiplied by the weights in blocks of predictBlock rows on all
// cores, so the features of all rows are never held at once.
func (m *Model) Predict(x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	if d != m.Map.InputDim() {
		return nil, fmt.Errorf("model: data has %d feature columns, model expects %d", d, m.Map.InputDim())
	}
	dim, k := m.Linear.W.Dims()
	if dim != m.Map.Dim() {
		return nil, fmt.Errorf("model: weights have %d rows, the feature map %d features", dim, m.Map.Dim())
	}
	if m.Scaler != nil {
		var err error
		if x, err = m.Scaler.Transform(x); err != nil {
			return nil, err
		}
	}
	out := mat.NewDense(n, k, nil)
	rows := min(predictBlock, n)
	bufs := make([][]float64, parallel.Workers((n+rows-1)/rows))
	errs := make([]error, (n+rows-1)/rows)
	parallel.Chunks(n, rows, func(w, lo, hi int) {
		if bufs[w] == nil {
			bufs[w] = make([]float64, rows*dim)
		}
		z := mat.NewDense(hi-lo, dim, bufs[w][:(hi-lo)*dim])
		if err := m.Map.Transform(z, x.Slice(lo, hi, 0, d).(*mat.Dense)); err != nil {
			errs[lo/rows] = err
			return
		}
		errs[lo/rows] = m.Linear.PredictTo(out.Slice(lo, hi, 0, k).(*mat.Dense), z)
	})
	if err := firstError(errs); err != nil {
		return nil, err
	}
	return out, nil
}

// predictBlock is the number of rows Predict maps at a time.
const predictBlock = 256

// Classify returns predicted class indices (classification models only).
func (m *Model) Classify(x *mat.Dense) ([]int, error) {
	if m.Task != Classification {
		return nil, errors.New("model: Classify on a regression model")
	}
	s, err := m.Predict(x)
	if err != nil {
		return nil, err
	}
	return linear.Argmax(s), nil
}

type file struct {
	Format    string          `json:"format"`
	Version   int             `json:"version"`
	Task      Task            `json:"task"`
	Classes   int             `json:"classes"`
	Columns   []string        `json:"columns,omitempty"`
	Label     string          `json:"label,omitempty"`
	Scaler    *data.Scaler    `json:"scaler"`
	MapKind   string          `json:"map_kind,omitempty"`
	Features  json.RawMessage `json:"features"`
	Lambda    float64         `json:"lambda"`
	Jitter    float64         `json:"jitter"`
	Weights   []float64       `json:"weights"`
	Intercept []float64       `json:"intercept"`
	// Outputs and Targets are optional (multi-output regression): the
	// number of target columns (absent: 1) and their names.
	Outputs int      `json:"outputs,omitempty"`
	Targets []string `json:"targets,omitempty"`
	// Calibration is optional (classification models fitted with
	// Options.Calibrate).
	Calibration *calibrate.Platt `json:"calibration,omitempty"`
}

// Save writes the model in the current format (version 2). The feature map
// must implement features.Encoder.
func (m *Model) Save(w io.Writer) error {
	kind, spec, err := features.Encode(m.Map)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	f := file{Format: FormatName, Version: Version, Task: m.Task, Classes: m.Classes,
		Columns: m.Columns, Label: m.Label, Scaler: m.Scaler, MapKind: kind, Features: spec,
		Lambda: m.Linear.Lambda, Jitter: m.Linear.Jitter,
		Weights: m.Linear.W.RawMatrix().Data, Intercept: m.Linear.B, Calibration: m.Calibration}
	if _, k := m.Linear.W.Dims(); m.Task == Regression && k > 1 {
		f.Outputs, f.Targets = k, m.Targets
	}
	enc := json.NewEncoder(w)
	return enc.Encode(&f)
}

// Load reads a model file (version 1 or 2), validating its format,
// version, every dimension and size, and that nothing but white space
// follows the JSON object. The feature map is decoded by the registry of
// package catalog.
//
// The limits of package internal/limits apply: input and feature
// dimensions at most 2²⁴, at most 2²⁰ classes, and the weight matrix
// (features × classes) and the stored projection at most 2³⁰ values each,
// so that a model that loads can predict without an overflow.
func Load(r io.Reader) (*Model, error) {
	return LoadWith(r, catalog.Default())
}

// LoadWith is Load with a caller's registry of map decoders.
func LoadWith(r io.Reader, reg *features.Registry) (*Model, error) {
	m, err := load(r, reg)
	if err != nil {
		return nil, clipError(err)
	}
	return m, nil
}

// maxErrorBytes bounds the length of a Load error message: JSON errors can
// quote a literal of the file (a number of any length).
const maxErrorBytes = 200

// clippedError is an error whose message is cut to maxErrorBytes; it
// unwraps to the original.
type clippedError struct {
	msg string
	err error
}

func (e *clippedError) Error() string { return e.msg }
func (e *clippedError) Unwrap() error { return e.err }

// clipError returns err with its message cut to maxErrorBytes (on a rune
// boundary), or err itself if it is short enough.
func clipError(err error) error {
	msg := err.Error()
	if len(msg) <= maxErrorBytes {
		return err
	}
	cut := maxErrorBytes - len("…")
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return &clippedError{msg: msg[:cut] + "…", err: err}
}

// trailing returns an error if anything but JSON white space follows the
// value dec has decoded from r.
func trailing(dec *json.Decoder, r io.Reader) error {
	rest := io.MultiReader(dec.Buffered(), r)
	off := dec.InputOffset()
	var buf [4096]byte
	for {
		n, err := rest.Read(buf[:])
		for i, c := range buf[:n] {
			switch c {
			case ' ', '\t', '\r', '\n':
				continue
			}
			return fmt.Errorf("model: unexpected data after the model object at byte %d", off+int64(i))
		}
		off += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("model: reading after the model object: %w", err)
		}
	}
}

func load(r io.Reader, reg *features.Registry) (*Model, error) {
	var f file
	dec := json.NewDecoder(r)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("model: file is empty or truncated")
		}
		return nil, fmt.Errorf("model: not a kernelkit model file: %w", err)
	}
	if err := trailing(dec, r); err != nil {
		return nil, err
	}
	if f.Format != FormatName {
		return nil, fmt.Errorf("model: not a kernelkit model file (format %.40q)", f.Format)
	}
	if f.Version != 1 && f.Version != Version {
		return nil, fmt.Errorf("model: file format version %d, this kernelkit reads versions 1 and %d", f.Version, Version)
	}
	kind := f.MapKind
	if f.Version == 1 {
		if kind != "" {
			return nil, errors.New("model: version-1 file with a map_kind field")
		}
		kind = features.SpecKind
	}
	if kind == "" {
		return nil, errors.New("model: file has no map_kind")
	}
	if len(f.Features) == 0 {
		return nil, errors.New("model: file has no feature map")
	}
	k := 1
	switch f.Task {
	case Classification:
		if f.Classes < 2 || f.Classes > limits.MaxClasses {
			return nil, fmt.Errorf("model: classification model with %d classes (want 2 to %d)", f.Classes, limits.MaxClasses)
		}
		k = f.Classes
	case Regression:
		if f.Classes != 0 {
			return nil, fmt.Errorf("model: regression model with %d classes (want 0)", f.Classes)
		}
		if f.Outputs < 0 || f.Outputs > limits.MaxClasses {
			return nil, fmt.Errorf("model: regression model with %d outputs (want 1 to %d)", f.Outputs, limits.MaxClasses)
		}
		k = max(f.Outputs, 1)
		if f.Targets != nil && len(f.Targets) != k {
			return nil, fmt.Errorf("model: %d target names for %d outputs", len(f.Targets), k)
		}
	default:
		return nil, fmt.Errorf("model: unknown task %.40q", f.Task)
	}
	if f.Task != Regression && (f.Outputs != 0 || f.Targets != nil) {
		return nil, errors.New("model: outputs and targets are fields of regression models")
	}
	mp, err := reg.Decode(kind, f.Features)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	dim, in := mp.Dim(), mp.InputDim()
	if err := limits.Dim("model: feature dimension", dim); err != nil {
		return nil, err
	}
	if err := limits.Dim("model: input dimension", in); err != nil {
		return nil, err
	}
	nw, err := limits.Matrix("model: weight matrix", dim, k)
	if err != nil {
		return nil, err
	}
	if len(f.Weights) != nw || len(f.Intercept) != k {
		return nil, fmt.Errorf("model: weights have %d values and intercept %d, want %d×%d and %d", len(f.Weights), len(f.Intercept), dim, k, k)
	}
	if f.Columns != nil && len(f.Columns) != in {
		return nil, fmt.Errorf("model: file has %d column names for a feature map of %d inputs", len(f.Columns), in)
	}
	if f.Scaler != nil && (len(f.Scaler.Mean) != in || len(f.Scaler.Scale) != in) {
		return nil, fmt.Errorf("model: scaler has %d means and %d scales, the feature map takes %d inputs", len(f.Scaler.Mean), len(f.Scaler.Scale), in)
	}
	for _, arr := range [][]float64{f.Weights, f.Intercept} {
		for _, v := range arr {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errors.New("model: non-finite weight in model file")
			}
		}
	}
	if f.Scaler != nil {
		for j, v := range f.Scaler.Scale {
			if !(v > 0) || math.IsInf(v, 0) || math.IsNaN(f.Scaler.Mean[j]) || math.IsInf(f.Scaler.Mean[j], 0) {
				return nil, errors.New("model: scaler has a non-finite mean or a non-positive or non-finite scale")
			}
		}
	}
	if !(f.Lambda >= 0) || math.IsInf(f.Lambda, 0) || !(f.Jitter >= 0) || math.IsInf(f.Jitter, 0) {
		return nil, fmt.Errorf("model: lambda %v and jitter %v must be non-negative and finite", f.Lambda, f.Jitter)
	}
	if err := checkCalibration(f.Calibration, f.Task, f.Classes); err != nil {
		return nil, err
	}
	return &Model{Task: f.Task, Classes: f.Classes, Columns: f.Columns, Label: f.Label, Targets: f.Targets, Scaler: f.Scaler, Map: mp, Calibration: f.Calibration,
		Linear: &linear.Model{W: mat.NewDense(dim, k, f.Weights), B: f.Intercept, Lambda: f.Lambda, Jitter: f.Jitter}}, nil
}
