// Package model ties kernelkit's pieces into a fitted predictor —
// standardisation, a random feature map and a ridge model — and stores it
// in a versioned model file.
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
//	weights    D·K values, row-major (D rows, K columns; K = 1 for regression)
//	intercept  K values
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
	"sync/atomic"
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"

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

// The tasks.
const (
	Classification Task = "classification"
	Regression     Task = "regression"
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
	// Folds is the number of folds for "kfold" (default 5).
	Folds int
	// Standardize fits a scaler on the training rows.
	Standardize bool
	// ChunkRows is the number of rows transformed and accumulated at a time
	// (default 2048); memory does not grow with the number of rows.
	ChunkRows int
	// Progress, if set, is called with the number of rows done.
	Progress func(done, total int)
}

// Model is a fitted kernel ridge model on random features.
type Model struct {
	Task    Task
	Classes int
	Columns []string
	Label   string
	Scaler  *data.Scaler
	Map     features.Transformer
	Linear  *linear.Model
	// Scores holds the λ-selection scores, aligned with Grid, if any.
	Grid, Scores []float64
	// TrainRows is the number of training rows (not stored in model files).
	TrainRows int
}

// DefaultGrid is the λ grid used by selection when none is given.
var DefaultGrid = []float64{1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000}

// Fit fits a model on the training set. Rows are transformed and their
// statistics accumulated chunk by chunk on all cores and added up in chunk
// order (see Accumulate), so the same data, options and seed give the same
// model bits on every run. It stops early with ctx's error.
func Fit(ctx context.Context, opt Options, train *data.Dataset) (*Model, error) {
	if train == nil || train.Rows() == 0 {
		return nil, errors.New("model: no training rows")
	}
	if !(opt.Lambda >= 0) || math.IsInf(opt.Lambda, 0) {
		return nil, fmt.Errorf("model: lambda must be non-negative and finite, got %v", opt.Lambda)
	}
	m := &Model{Task: opt.Task, Columns: train.Names, Label: train.Label, TrainRows: train.Rows()}
	var targets *mat.Dense
	switch opt.Task {
	case Classification:
		labels, k, err := train.Labels()
		if err != nil {
			return nil, err
		}
		if err := twoLabels(train.Y); err != nil {
			return nil, err
		}
		if k < 2 {
			return nil, errors.New("model: classification needs at least 2 classes")
		}
		m.Classes = k
		if targets, err = linear.OneHot(labels, k); err != nil {
			return nil, err
		}
	case Regression:
		if train.Y == nil {
			return nil, errors.New("model: regression needs a target column")
		}
		targets = mat.NewDense(len(train.Y), 1, append([]float64(nil), train.Y...))
	default:
		return nil, fmt.Errorf("model: unknown task %q (want classification or regression)", opt.Task)
	}
	x := train.X
	if opt.Standardize {
		s, err := data.FitScaler(x)
		if err != nil {
			return nil, err
		}
		m.Scaler = s
		if x, err = s.Transform(x); err != nil {
			return nil, err
		}
	}
	mp, err := opt.newMap(train.Cols())
	if err != nil {
		return nil, err
	}
	m.Map = mp
	folds, err := opt.folds()
	if err != nil {
		return nil, err
	}
	if folds > train.Rows() {
		return nil, fmt.Errorf("model: k-fold needs folds ≤ rows, got %d folds for %d rows", folds, train.Rows())
	}
	stats, err := Accumulate(ctx, mp, x, targets, folds, opt.ChunkRows, opt.Progress)
	if err != nil {
		return nil, err
	}
	if err := m.solve(opt, stats); err != nil {
		return nil, err
	}
	return m, nil
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
// or the k of k-fold cross-validation (default 5).
func (opt Options) folds() (int, error) {
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

// solve chooses λ (opt.Lambda, or the grid value with the best GCV or
// k-fold score) and fits the ridge model on the merged statistics.
func (m *Model) solve(opt Options, stats []*linear.Stats) error {
	lambda := opt.Lambda
	if opt.Select != "" {
		grid := opt.Grid
		if len(grid) == 0 {
			grid = DefaultGrid
		}
		var scores []float64
		var err error
		if opt.Select == "gcv" {
			scores, err = linear.GCV(stats[0], grid, true)
		} else {
			scores, err = linear.KFold(stats, grid, true)
		}
		if err != nil {
			return err
		}
		lambda = linear.Best(grid, scores)
		m.Grid, m.Scores = grid, scores
	}
	total := stats[0].Clone()
	for _, s := range stats[1:] {
		if err := total.Merge(s); err != nil {
			return err
		}
	}
	var err error
	m.Linear, err = linear.Fit(total, lambda, true)
	return err
}

// Accumulate transforms the rows of x with t and accumulates the
// statistics of (z, targets) in chunks over all cores. With folds > 1 row i
// goes to fold i mod folds and one Stats per fold is returned.
//
// Each chunk of rows (chunk of them, default 2048) is transformed and
// summarised into statistics of its own, and the chunks' statistics are
// added into the result one at a time in chunk order (parallel.Ordered), so
// the result is the same bits on every run and every number of cores; it
// depends only on the rows, the chunk size and the BLAS backend (whose
// GEMM and SYRK round differently: across backends the statistics, and
// the weights fitted from them, agree to rounding, not bit for bit).
// Memory is (workers + 1)·folds statistics of D×D plus one chunk of
// features per worker.
func Accumulate(ctx context.Context, t features.Transformer, x, targets *mat.Dense, folds, chunk int, progress func(done, total int)) ([]*linear.Stats, error) {
	n, _ := x.Dims()
	_, k := targets.Dims()
	a, err := newAccumulator(t, k, folds, chunk, n)
	if err != nil {
		return nil, err
	}
	var report func(int)
	if progress != nil {
		report = func(done int) { progress(done, n) }
	}
	if err := a.add(ctx, x, targets, report); err != nil {
		return nil, err
	}
	return a.total, nil
}

// accumulator adds the statistics of batches of rows chunk by chunk, in
// chunk order, into total (see Accumulate); FitStream feeds it one batch
// after another, so its statistics are those of Accumulate on all the rows
// when the batches are whole numbers of chunks.
type accumulator struct {
	t            features.Transformer
	k, folds     int
	chunk        int
	total        []*linear.Stats
	part         [][]*linear.Stats // per worker: the pending chunk's statistics
	bufs         [][]float64       // per worker: the chunk's features
	errs         []error           // per worker: the pending chunk's error
	rows         int               // rows added so far; row i of all goes to fold i mod folds
	bufRows, dim int
}

// newAccumulator prepares statistics for t's features and k targets,
// with batches of at most maxRows rows, after checking the sizes against
// the limits of package internal/limits.
func newAccumulator(t features.Transformer, k, folds, chunk, maxRows int) (*accumulator, error) {
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
	workers := parallel.Workers((maxRows + rows - 1) / rows)
	a := &accumulator{t: t, k: k, folds: folds, chunk: chunk, total: statsSet(folds, dim, k),
		part: make([][]*linear.Stats, workers), bufs: make([][]float64, workers),
		errs: make([]error, workers), bufRows: rows, dim: dim}
	for w := range a.part {
		a.part[w] = statsSet(folds, dim, k)
	}
	return a, nil
}

// statsSet returns empty statistics for each of folds folds.
func statsSet(folds, dim, k int) []*linear.Stats {
	set := make([]*linear.Stats, folds)
	for f := range set {
		set[f] = linear.NewStats(dim, k)
	}
	return set
}

// add accumulates the rows of x and targets, calling progress, if set,
// with the rows of this batch done so far after each chunk. Batches of
// more than the maxRows given to newAccumulator, or a larger GOMAXPROCS,
// allocate more per-worker memory.
func (a *accumulator) add(ctx context.Context, x, targets *mat.Dense, progress func(done int)) error {
	n, _ := x.Dims()
	dim, k, folds := a.dim, a.k, a.folds
	if r := min(a.chunk, n); r > a.bufRows {
		if _, err := limits.Matrix("model: feature chunk", r, dim); err != nil {
			return err
		}
		a.bufRows = r
		clear(a.bufs)
	}
	for w := len(a.part); w < parallel.Workers((n+a.chunk-1)/a.chunk); w++ {
		a.part = append(a.part, statsSet(folds, dim, k))
		a.bufs = append(a.bufs, nil)
		a.errs = append(a.errs, nil)
	}
	var failed atomic.Bool
	var firstErr error // set by commit, which runs one chunk at a time
	var done int
	parallel.Ordered(n, a.chunk, func(w, lo, hi int) {
		a.errs[w] = nil
		if failed.Load() || ctx.Err() != nil {
			a.errs[w] = errSkipped
			return
		}
		part := a.part[w]
		for _, s := range part {
			s.Reset()
		}
		if len(a.bufs[w]) < a.bufRows*dim {
			a.bufs[w] = make([]float64, a.bufRows*dim)
		}
		z := mat.NewDense(hi-lo, dim, a.bufs[w][:(hi-lo)*dim])
		xc := x.Slice(lo, hi, 0, a.t.InputDim()).(*mat.Dense)
		if err := a.t.Transform(z, xc); err != nil {
			a.errs[w] = err
			failed.Store(true)
			return
		}
		yc := targets.Slice(lo, hi, 0, k).(*mat.Dense)
		if folds == 1 {
			a.errs[w] = part[0].Add(z, yc)
		} else {
			for i := lo; i < hi; i++ {
				f := (a.rows + i) % folds
				if err := part[f].Add(z.Slice(i-lo, i-lo+1, 0, dim).(*mat.Dense), yc.Slice(i-lo, i-lo+1, 0, k).(*mat.Dense)); err != nil {
					a.errs[w] = err
					break
				}
			}
		}
		if a.errs[w] != nil {
			failed.Store(true)
		}
	}, func(w, lo, hi int) {
		if firstErr != nil || ctx.Err() != nil {
			return
		}
		if a.errs[w] == errSkipped {
			// Another chunk failed (its commit reports it) or ctx is done.
			return
		}
		if a.errs[w] != nil {
			firstErr = a.errs[w]
			return
		}
		for f, s := range a.part[w] {
			if err := a.total[f].Merge(s); err != nil {
				firstErr = err
				return
			}
		}
		done += hi - lo
		if progress != nil {
			progress(done)
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if firstErr != nil {
		return firstErr
	}
	a.rows += n
	return nil
}

// errSkipped marks a chunk that Accumulate skipped after a failure or a
// cancellation.
var errSkipped = errors.New("model: chunk skipped")

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
// regression prediction in column 0) for raw rows x.
func (m *Model) Predict(x *mat.Dense) (*mat.Dense, error) {
	z, err := m.Features(x)
	if err != nil {
		return nil, err
	}
	return m.Linear.Predict(z)
}

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
		Weights: m.Linear.W.RawMatrix().Data, Intercept: m.Linear.B}
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
	default:
		return nil, fmt.Errorf("model: unknown task %.40q", f.Task)
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
	return &Model{Task: f.Task, Classes: f.Classes, Columns: f.Columns, Label: f.Label, Scaler: f.Scaler, Map: mp,
		Linear: &linear.Model{W: mat.NewDense(dim, k, f.Weights), B: f.Intercept, Lambda: f.Lambda, Jitter: f.Jitter}}, nil
}
