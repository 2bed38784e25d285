package model

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/nystrom"
)

// Job is the main job of `kernelkit fit`: the options of the fit, where
// the rows come from, and how the model is built and evaluated (RunJob).
type Job struct {
	// Model holds the options of the fit: task, feature map, λ and its
	// selection, standardisation. Its Progress is replaced by RunJob's
	// progress argument.
	Model Options
	// Device describes the execution device of Model.Accumulator, if any
	// (reported in the result; "" for kernelkit's CPU path).
	Device string
	// Train is the training set held in memory.
	Train *data.Dataset
	// Stream, used when Train is nil, opens passes over training rows
	// that are streamed (FitStreamColumns); Names are their feature
	// column names, Label the name of their target column and
	// TargetNames those of several target columns, recorded in the model
	// as Fit records a data set's. StreamCSVColumns makes them for
	// a CSV file.
	Stream      Opener
	Names       []string
	Label       string
	TargetNames []string
	// Test is the evaluation set; nil evaluates on Train.
	Test *data.Dataset
	// GramRows is the number of evaluation rows of the Gram-error
	// measurement (default 1000).
	GramRows int
	// GammaScale sets the bandwidth of the drawn map (Model.Features.Gamma)
	// to scikit-learn's gamma='scale', 1/(d·Var X) over all entries of the
	// training matrix after the scaler (ScaleGamma; one extra pass over
	// streamed rows). A given Model.Map keeps its own bandwidth.
	GammaScale bool
	// Exact fits exact kernel ridge regression (package krr) with the
	// kernel and γ of Model.Features instead of random features: in-memory
	// rows only, at most krr.MaxRows of them, λ = Model.Lambda > 0 (no
	// selection). The model's map is the kernel-columns map of the
	// training rows (krr.Columns), so it can be saved.
	Exact bool
	// MapName, if set, names the map to fit with, looked up in Registry
	// (which it needs: catalog.Default() holds every map of kernelkit) and
	// built by Registry.Map, so it must be
	// a symmetric map, once the training rows are known: MapOptions
	// gets InputDim, the number of feature columns, and Data, the training
	// rows after the scaler (Model.Standardize), from which data-dependent
	// maps (the Nyström maps) choose their landmarks — for streamed rows a
	// uniform sample of MapSample of them (nystrom.Reservoir, one extra
	// pass). With GammaScale, MapOptions.Gamma is the 'scale' value. The
	// map replaces Model.Map and Model.Features.
	MapName    string
	MapOptions features.Options
	Registry   *features.Registry
	// MapSample is the number of streamed rows sampled for MapOptions.Data
	// (default max(10000, 10·MapOptions.Features)).
	MapSample int
}

// JobResult is the record of one fit: the map (with its temperature τ of
// exp(xᵀy/τ), if any), the metrics on the test set
// (or the training set without one), the relative Gram error
// ‖K − ZZᵀ‖_F/‖K‖_F of the map on the first GramRows evaluation rows, and
// the time of fit plus prediction.
type JobResult struct {
	Map           string   `json:"map,omitempty"`
	Kernel        string   `json:"kernel"`
	Form          string   `json:"form"`
	Sampler       string   `json:"sampler"`
	Features      int      `json:"features"`
	Gamma         float64  `json:"gamma,omitempty"`
	Temperature   float64  `json:"temperature,omitempty"`
	Lambda        float64  `json:"lambda"`
	Task          string   `json:"task"`
	TrainRows     int      `json:"train_rows"`
	TestRows      int      `json:"test_rows"`
	TestAccuracy  *float64 `json:"test_accuracy,omitempty"`
	TestRMSE      *float64 `json:"test_rmse,omitempty"`
	TrainAccuracy *float64 `json:"train_accuracy,omitempty"`
	TrainRMSE     *float64 `json:"train_rmse,omitempty"`
	GramError     *float64 `json:"gram_error,omitempty"`
	GramNote      string   `json:"gram_note,omitempty"`
	GramRows      int      `json:"gram_rows"`
	Seconds       float64  `json:"seconds"`
	// BLAS names the BLAS the fit ran on (blas.Name()); Backend is the
	// same value under the key fit reported before issue 39, kept for
	// readers of older reports (deprecated: read "blas").
	BLAS    string `json:"blas"`
	Backend string `json:"backend"`
	Device  string `json:"device,omitempty"`
}

// RunJob fits a model (Fit, or FitStreamColumns for streamed rows) and
// evaluates it with Evaluate. Seconds covers the fit and the
// prediction of the evaluation rows; the Gram error is measured after.
// progress, if not nil, gets the training rows done. A Gram error out of
// reach (an exact kernel beyond float64, say) is a note, not an error.
func RunJob(ctx context.Context, cfg Job, progress func(done, total int)) (*JobResult, *Model, error) {
	opt := cfg.Model
	opt.Progress = progress
	eval := cfg.Test
	if eval == nil {
		eval = cfg.Train
	}
	if eval == nil {
		return nil, nil, errors.New("model: a fit on streamed rows needs a test set (the training rows are not kept)")
	}
	if cfg.GammaScale {
		var g float64
		var err error
		if cfg.Train != nil {
			g, err = ScaleGamma(cfg.Train.X, opt.Standardize)
		} else if cfg.Stream != nil {
			g, err = ScaleGammaStream(cfg.Stream, opt.Standardize, GammaBlock)
		}
		if err != nil {
			return nil, nil, err
		}
		opt.Features.Gamma = g
	}
	if cfg.Exact {
		if cfg.MapName != "" {
			return nil, nil, errors.New("model: an exact fit uses the kernel itself, not a feature map")
		}
		return fitExact(ctx, cfg, opt, eval)
	}
	var mapGamma float64
	if cfg.MapName != "" {
		mo := cfg.MapOptions
		if cfg.GammaScale {
			mo.Gamma = opt.Features.Gamma
		}
		mp, err := fitMap(cfg, mo, opt)
		if err != nil {
			return nil, nil, err
		}
		opt.Map, mapGamma = mp, mo.Gamma
	}
	start := time.Now()
	var m *Model
	var err error
	switch {
	case cfg.Train != nil:
		m, err = Fit(ctx, opt, cfg.Train)
	case cfg.Stream != nil:
		m, err = FitStreamColumns(ctx, opt, cfg.Stream, Columns{Names: cfg.Names, Label: cfg.Label, Targets: cfg.TargetNames})
	default:
		err = errors.New("model: no training rows")
	}
	if err != nil {
		return nil, nil, err
	}
	ev, err := m.Evaluate(eval, 0)
	if err != nil {
		return nil, nil, err
	}
	r := &JobResult{Lambda: m.Linear.Lambda, Task: string(m.Task), TrainRows: m.TrainRows,
		Seconds: time.Since(start).Seconds(), BLAS: blas.Name(), Backend: blas.Name(), Device: cfg.Device}
	inner, tau := features.Untemper(m.Map)
	if tau != 1 {
		r.Temperature = tau
	}
	if mp, ok := inner.(*features.Map); ok {
		s := mp.Spec()
		r.Kernel, r.Form, r.Sampler, r.Features, r.Gamma = s.Kernel, s.Form, s.Sampler, s.Features, s.Gamma
	}
	if cfg.MapName != "" {
		r.Map, r.Features = cfg.MapName, m.Map.Dim()
		if r.Gamma == 0 {
			r.Gamma = mapGamma
		}
	}
	if cfg.Test != nil {
		r.TestRows = cfg.Test.Rows()
	}
	if ev.Labelled {
		acc, rmse := &r.TrainAccuracy, &r.TrainRMSE
		if cfg.Test != nil {
			acc, rmse = &r.TestAccuracy, &r.TestRMSE
		}
		if m.Task == Classification {
			*acc = &ev.Accuracy
		} else {
			*rmse = &ev.RMSE
		}
	}
	n := cfg.GramRows
	if n <= 0 {
		n = 1000
	}
	n = min(n, eval.Rows())
	g, err := m.Evaluate(&data.Dataset{X: eval.X.Slice(0, n, 0, eval.Cols()).(*mat.Dense)}, n)
	if err != nil {
		return nil, nil, err
	}
	if g.GramRows == 0 {
		r.GramNote = g.GramNote
	} else {
		r.GramError, r.GramRows = &g.GramError, g.GramRows
	}
	return r, m, nil
}

// fitMap builds the map cfg.MapName with options mo (see
// Job.MapName) on the training rows after the scaler.
func fitMap(cfg Job, mo features.Options, opt Options) (features.Transformer, error) {
	reg := cfg.Registry
	if reg == nil {
		return nil, fmt.Errorf("model: Job.MapName %.40q needs Job.Registry (catalog.Default() holds every map of kernelkit)", cfg.MapName)
	}
	switch {
	case cfg.Train != nil:
		if cfg.Train.Rows() == 0 {
			return nil, errors.New("model: no training rows")
		}
		mo.InputDim, mo.Data = cfg.Train.Cols(), cfg.Train.X
		if opt.Standardize {
			s, err := data.FitScaler(cfg.Train.X)
			if err != nil {
				return nil, err
			}
			if mo.Data, err = s.Transform(cfg.Train.X); err != nil {
				return nil, err
			}
		}
	case cfg.Stream != nil:
		size := cfg.MapSample
		if size <= 0 {
			size = max(10000, 10*mo.Features)
		}
		var err error
		if mo.Data, err = sampleStream(cfg.Stream, size, opt.ChunkRows, mo.Seed^StreamSampleSeed, opt.Standardize); err != nil {
			return nil, err
		}
		_, mo.InputDim = mo.Data.Dims() // the rows' width (streamed LIBSVM columns have no names)
	default:
		return nil, errors.New("model: no training rows")
	}
	mp, err := reg.Map(cfg.MapName, mo)
	if err != nil {
		return nil, err
	}
	return mp, nil
}

// StreamSampleSeed is xored into a data-fitted map's seed for the
// reservoir that samples a streamed fit's rows, which separates the
// reservoir's draws from the map's ("sample" in ASCII). A distributed fit
// that replays the reservoir (package kkbeam) uses it too.
const StreamSampleSeed uint64 = 0x73616d706c65

// sampleStream returns a uniform sample of size rows of a pass of
// streamed rows (nystrom.Reservoir), standardised by the scaler of the
// whole pass when standardize is set — accumulated over batches of chunk
// rows, as FitStream accumulates its own.
func sampleStream(open Opener, size, chunk int, seed uint64, standardize bool) (*mat.Dense, error) {
	if chunk <= 0 {
		chunk = 2048
	}
	rv, err := nystrom.NewReservoir(size, seed)
	if err != nil {
		return nil, err
	}
	b, closeFn, err := open()
	if err != nil {
		return nil, err
	}
	var acc data.ScalerAccumulator
	for {
		x, _, rerr := b.Read(chunk)
		if x != nil {
			err := rv.Add(x)
			if err == nil && standardize {
				err = acc.Add(x)
			}
			if err != nil {
				return nil, errors.Join(err, closeFn())
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return nil, errors.Join(rerr, closeFn())
		}
	}
	if err := closeFn(); err != nil {
		return nil, err
	}
	sample := rv.Sample()
	if sample == nil {
		return nil, errors.New("model: no training rows")
	}
	if !standardize {
		return sample, nil
	}
	s, err := acc.Scaler()
	if err != nil {
		return nil, err
	}
	return s.Transform(sample)
}

// Text returns the result as the lines fit prints: map, metrics, Gram
// error and time.
func (r *JobResult) Text() string {
	var b strings.Builder
	where := "blas " + r.BLAS
	if r.Device != "" {
		where = "device " + r.Device + ", host " + where
	}
	tau := ""
	if r.Temperature != 0 {
		tau = fmt.Sprintf(", τ=%g", r.Temperature)
	}
	if r.Map != "" {
		fmt.Fprintf(&b, "map %s, D=%d%s, λ=%g, %d training rows, %s\n",
			r.Map, r.Features, tau, r.Lambda, r.TrainRows, where)
	} else {
		fmt.Fprintf(&b, "kernel %s/%s, sampler %s, D=%d%s, λ=%g, %d training rows, %s\n",
			r.Kernel, r.Form, r.Sampler, r.Features, tau, r.Lambda, r.TrainRows, where)
	}
	if r.TestAccuracy != nil {
		fmt.Fprintf(&b, "test accuracy   %.4f (%d rows)\n", *r.TestAccuracy, r.TestRows)
	}
	if r.TestRMSE != nil {
		fmt.Fprintf(&b, "test RMSE       %.4g (%d rows)\n", *r.TestRMSE, r.TestRows)
	}
	if r.TrainAccuracy != nil {
		fmt.Fprintf(&b, "train accuracy  %.4f\n", *r.TrainAccuracy)
	}
	if r.TrainRMSE != nil {
		fmt.Fprintf(&b, "train RMSE      %.4g\n", *r.TrainRMSE)
	}
	if r.GramError != nil {
		fmt.Fprintf(&b, "Gram error      %.4f (first %d rows)\n", *r.GramError, r.GramRows)
	} else {
		fmt.Fprintf(&b, "Gram error      not available: %s\n", r.GramNote)
	}
	fmt.Fprintf(&b, "fit+predict     %.3f s\n", r.Seconds)
	return b.String()
}

// ParseTask returns the task named by s: "classification" (or
// "classify"), "regression" (or "regress"), or "auto": classification when
// every label of d is a non-negative integer below 1000, regression
// otherwise. For streamed rows (d nil) auto is Auto: the fit's
// first pass decides by the same rule.
func ParseTask(s string, d *data.Dataset) (Task, error) {
	switch s {
	case "auto":
		if d == nil {
			return Auto, nil
		}
		for _, y := range d.Y {
			if y < 0 || y != math.Trunc(y) || y >= 1000 {
				return Regression, nil
			}
		}
		return Classification, nil
	case "classification", "classify":
		return Classification, nil
	case "regression", "regress":
		return Regression, nil
	}
	return "", fmt.Errorf("unknown task %.40q (want auto, classification or regression)", s)
}

// StreamCSV returns the opener of passes over the CSV file at path (label
// column as in opt) for Job.Stream, and its feature column names.
func StreamCSV(path string, opt data.CSVOptions) (Opener, []string, error) {
	open, cols, err := StreamCSVColumns(path, opt)
	return open, cols.Names, err
}

// StreamCSVColumns returns the opener of passes over the CSV file at path
// (label, weight and target columns as in opt) for Job.Stream, and
// the names of its columns: the features', the label's (opt.Label, the
// one name of opt.Targets, or the last column of the header, as
// data.Open names it) and the targets' (opt.Targets, when several).
func StreamCSVColumns(path string, opt data.CSVOptions) (Opener, Columns, error) {
	f, err := data.OpenCSV(path, opt)
	if err != nil {
		return nil, Columns{}, err
	}
	cols := Columns{Names: f.Names()}
	if err := f.Close(); err != nil {
		return nil, Columns{}, err
	}
	switch {
	case len(opt.Targets) > 1:
		cols.Targets = opt.Targets
	case len(opt.Targets) == 1:
		cols.Label = opt.Targets[0]
	case opt.Label != "":
		cols.Label = opt.Label
	case !opt.NoLabel:
		if cols.Label, err = lastColumn(path); err != nil {
			return nil, Columns{}, err
		}
	}
	open := func() (Batches, func() error, error) {
		f, err := data.OpenCSV(path, opt)
		if err != nil {
			return nil, nil, err
		}
		return f, f.Close, nil
	}
	return open, cols, nil
}

// lastColumn returns the name of the last column of the header of the CSV
// file at path (spaces around it trimmed, a byte-order mark skipped), the
// default label of data.CSVOptions.
func lastColumn(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	r := csv.NewReader(bufio.NewReader(f))
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || len(header) == 0 {
		return "", fmt.Errorf("%s: CSV header: %v", path, err)
	}
	if len(header) == 1 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	return strings.TrimSpace(header[len(header)-1]), nil
}
