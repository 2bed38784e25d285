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

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
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
// statistics accumulated chunk by chunk on all cores (one linear.Stats per
// worker, merged at the end). It stops early with ctx's error.
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
func Accumulate(ctx context.Context, t features.Transformer, x, targets *mat.Dense, folds, chunk int, progress func(done, total int)) ([]*linear.Stats, error) {
	n, _ := x.Dims()
	_, k := targets.Dims()
	if chunk <= 0 {
		chunk = 2048
	}
	if folds < 1 {
		folds = 1
	}
	workers := parallel.Workers((n + chunk - 1) / chunk)
	per := make([][]*linear.Stats, workers)
	for w := range per {
		per[w] = make([]*linear.Stats, folds)
		for f := range per[w] {
			per[w][f] = linear.NewStats(t.Dim(), k)
		}
	}
	errs := make([]error, workers)
	bufs := make([][]float64, workers)
	var done int
	var mu = make(chan struct{}, 1)
	parallel.Chunks(n, chunk, func(w, lo, hi int) {
		if errs[w] != nil || ctx.Err() != nil {
			return
		}
		xc := x.Slice(lo, hi, 0, t.InputDim()).(*mat.Dense)
		if len(bufs[w]) < chunk*t.Dim() {
			bufs[w] = make([]float64, chunk*t.Dim())
		}
		z := mat.NewDense(hi-lo, t.Dim(), bufs[w][:(hi-lo)*t.Dim()])
		if err := t.Transform(z, xc); err != nil {
			errs[w] = err
			return
		}
		yc := targets.Slice(lo, hi, 0, k).(*mat.Dense)
		if folds == 1 {
			errs[w] = per[w][0].Add(z, yc)
		} else {
			for i := lo; i < hi; i++ {
				f := i % folds
				if err := per[w][f].Add(z.Slice(i-lo, i-lo+1, 0, t.Dim()).(*mat.Dense), yc.Slice(i-lo, i-lo+1, 0, k).(*mat.Dense)); err != nil {
					errs[w] = err
					return
				}
			}
		}
		if progress != nil {
			mu <- struct{}{}
			done += hi - lo
			progress(done, n)
			<-mu
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := per[0]
	for _, ws := range per[1:] {
		for f := range ws {
			if err := out[f].Merge(ws[f]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
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
// version and shapes. The feature map is decoded by the registry of
// package catalog.
func Load(r io.Reader) (*Model, error) {
	return LoadWith(r, catalog.Default())
}

// LoadWith is Load with a caller's registry of map decoders.
func LoadWith(r io.Reader, reg *features.Registry) (*Model, error) {
	var f file
	dec := json.NewDecoder(r)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("model: file is empty or truncated")
		}
		return nil, fmt.Errorf("model: not a kernelkit model file: %w", err)
	}
	if f.Format != FormatName {
		return nil, fmt.Errorf("model: not a kernelkit model file (format %q)", f.Format)
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
	mp, err := reg.Decode(kind, f.Features)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	k := 1
	switch f.Task {
	case Classification:
		if f.Classes < 2 {
			return nil, fmt.Errorf("model: classification model with %d classes", f.Classes)
		}
		k = f.Classes
	case Regression:
	default:
		return nil, fmt.Errorf("model: unknown task %q", f.Task)
	}
	dim := mp.Dim()
	if len(f.Weights) != dim*k || len(f.Intercept) != k {
		return nil, fmt.Errorf("model: weights have %d values and intercept %d, want %d×%d and %d", len(f.Weights), len(f.Intercept), dim, k, k)
	}
	if f.Scaler != nil && (len(f.Scaler.Mean) != mp.InputDim() || len(f.Scaler.Scale) != mp.InputDim()) {
		return nil, errors.New("model: scaler does not match the feature map's input dimension")
	}
	for _, arr := range [][]float64{f.Weights, f.Intercept} {
		for _, v := range arr {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errors.New("model: non-finite weight in model file")
			}
		}
	}
	if f.Scaler != nil {
		for _, v := range f.Scaler.Scale {
			if !(v > 0) || math.IsInf(v, 0) {
				return nil, errors.New("model: scaler has a non-positive or non-finite scale")
			}
		}
	}
	return &Model{Task: f.Task, Classes: f.Classes, Columns: f.Columns, Label: f.Label, Scaler: f.Scaler, Map: mp,
		Linear: &linear.Model{W: mat.NewDense(dim, k, f.Weights), B: f.Intercept, Lambda: f.Lambda, Jitter: f.Jitter}}, nil
}
