package kkbeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	// The runners of Runners, and the file systems of local paths and
	// gs:// (the Dataflow runner, heavier, is left to programs that want
	// it: see Runners).
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/exec/optimized"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	//lint:ignore SA1019 the direct runner is offered beside Prism, the recommended local runner.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/direct"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

// Runners lists the runner names a pipeline can name (RunOptions.Runner),
// which this package registers by importing their packages. The local
// ones run in this process: "direct" (Beam's direct runner) and "prism"
// (Beam's portable runner, started in process); the others submit the job
// to a cluster: "universal" or "portable" to any job service (--endpoint),
// "flink" and "spark" to theirs. A program that imports another runner's
// package (command kernelkit-beam imports Beam's Dataflow runner) appends
// its names, since Beam ends the process on an unregistered name.
var Runners = []string{"direct", "DirectRunner", "prism", "PrismRunner", "universal", "portable", "PortableRunner",
	"flink", "FlinkRunner", "spark", "SparkRunner"}

// local reports whether a runner runs in this process, where a local
// temporary directory is reachable by the workers.
func local(runner string) bool {
	switch runner {
	case "direct", "DirectRunner", "prism", "PrismRunner":
		return true
	}
	return false
}

// RunOptions are the options of a pipeline run shared by Fit and Predict.
type RunOptions struct {
	// Runner is the Beam runner (see Runners); default "prism". Runner
	// flags (--endpoint, --environment_type, --project, …) are Beam's
	// command-line flags.
	Runner string
	// StatsDir is where the workers leave the combined statistics of each
	// pass for the driver: any location of Beam's file systems that both
	// reach (gs://bucket/tmp on Dataflow). Default, for the local runners
	// only: a temporary directory, removed after the run.
	StatsDir string
	// BLAS selects the workers' BLAS backend (see UseBLAS): "auto",
	// "openblas" or "gonum", as kernelkit's --blas does; "" (default)
	// leaves each worker's as it is: pure Go on a fresh worker, the
	// calling program's with an in-process runner.
	BLAS string
	// Chunk is the number of rows per batch (default 2048).
	Chunk int
	// Fanout, if above 1, merges the second pass's statistics in a tree:
	// batches are spread over Fanout keys, combined per key, and the
	// Fanout partial statistics merged at the end (see the package
	// documentation's cost model). 0 or 1: one global combine.
	Fanout int
	// Reshuffle redistributes the parsed batches before the second pass,
	// so that the feature map and the D×D products run on all workers
	// even when there are fewer files than workers.
	Reshuffle bool
}

type run struct {
	opt     RunOptions
	dir     string
	cleanup func()
}

// start checks the options and prepares the statistics directory.
func (o RunOptions) start() (*run, error) {
	if o.Runner == "" {
		o.Runner = "prism"
	}
	if !slices.Contains(Runners, o.Runner) {
		return nil, fmt.Errorf("kkbeam: unknown runner %q (want one of %s)", o.Runner, strings.Join(Runners, ", "))
	}
	if o.Chunk < 0 || o.Fanout < 0 {
		return nil, fmt.Errorf("kkbeam: chunk %d and fanout %d must not be negative", o.Chunk, o.Fanout)
	}
	if err := checkBLAS(o.BLAS); err != nil {
		return nil, err
	}
	r := &run{opt: o, dir: strings.TrimSuffix(o.StatsDir, "/"), cleanup: func() {}}
	if r.dir == "" {
		if !local(o.Runner) {
			return nil, fmt.Errorf("kkbeam: the %s runner needs a statistics directory that its workers and this program both reach (e.g. gs://bucket/tmp)", o.Runner)
		}
		dir, err := os.MkdirTemp("", "kernelkit-beam-")
		if err != nil {
			return nil, err
		}
		r.dir = dir
		r.cleanup = func() {
			if err := os.RemoveAll(dir); err != nil {
				fmt.Fprintf(os.Stderr, "kernelkit-beam: removing %s: %v\n", dir, err)
			}
		}
	}
	return r, nil
}

// checkBLAS validates a BLAS backend name.
func checkBLAS(name string) error {
	switch name {
	case "", "auto", "openblas", "gonum":
		return nil
	}
	return fmt.Errorf("kkbeam: unknown BLAS backend %q (want auto, openblas or gonum)", name)
}

// path returns a file of this run in the statistics directory.
func (r *run) path(name string) string {
	return r.dir + "/" + name
}

// execute runs p on the runner.
func (r *run) execute(ctx context.Context, p *beam.Pipeline) error {
	if _, err := beam.Run(ctx, r.opt.Runner, p); err != nil {
		return &JobError{Runner: r.opt.Runner, Err: err}
	}
	return nil
}

// JobError is a failed Beam job. Its message is the innermost cause of
// the runner's report (a DoFn's error, typically), without the execution
// plan Beam prints around it; Unwrap gives the whole report.
type JobError struct {
	Runner string
	Err    error
}

// Error returns the runner, then the innermost cause.
func (e *JobError) Error() string {
	msg := e.Err.Error()
	if i := strings.LastIndex(msg, "caused by:\n"); i >= 0 {
		msg = msg[i+len("caused by:\n"):]
		if j := strings.LastIndex(msg, "failed:\n"); j >= 0 {
			msg = msg[j+len("failed:\n"):]
		}
	}
	return fmt.Sprintf("kkbeam: %s pipeline failed: %s", e.Runner, strings.TrimSpace(msg))
}

// Unwrap returns the runner's whole report.
func (e *JobError) Unwrap() error { return e.Err }

// List returns the files matching glob, sorted by name, through Beam's
// file systems; no match is an error.
func List(ctx context.Context, glob string) (_ []string, err error) {
	if strings.TrimSpace(glob) == "" {
		return nil, errors.New("kkbeam: no input files given")
	}
	fs, err := filesystem.New(ctx, glob)
	if err != nil {
		return nil, err
	}
	defer closeFS(fs, &err)
	paths, err := fs.List(ctx, glob)
	if err != nil {
		return nil, fmt.Errorf("kkbeam: listing %s: %w", glob, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("kkbeam: no file matches %s", glob)
	}
	slices.Sort(paths)
	return paths, nil
}

// closeFS closes a Beam file system handle, keeping the first error.
func closeFS(fs filesystem.Interface, err *error) {
	if cerr := fs.Close(); *err == nil && cerr != nil {
		*err = cerr
	}
}

// readAll reads a file through Beam's file systems.
func readAll(ctx context.Context, path string) (_ []byte, err error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer closeFS(fs, &err)
	rc, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(rc)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	return b, err
}

// readable returns the PCollection of the files to read: Beam's fileio
// matches them (checking each exists) and opens them, decompressing by
// extension.
func readable(s beam.Scope, paths []string) beam.PCollection {
	names := beam.CreateList(s, paths)
	return fileio.ReadMatches(s, fileio.MatchAll(s, names, fileio.MatchEmptyDisallow()))
}

// writeDeadLetters writes the bad rows to path (see writeBadFn).
func writeDeadLetters(s beam.Scope, path string, bads beam.PCollection) {
	s = s.Scope("deadLetters")
	beam.ParDo0(s, &writeBadFn{Path: path}, beam.GroupByKey(s, beam.AddFixedKey(s, bads)))
}

// FitOptions configures Fit.
type FitOptions struct {
	// Input is the glob of the training files: CSV with a header row
	// (every file the same columns) or LIBSVM, in any scheme of Beam's
	// file systems.
	Input string
	// Format and Label select the format ("", "auto", "csv", "libsvm") and
	// the CSV label column (default the last), as kernelkit fit's flags.
	Format, Label string
	// Model holds the options of the fit as model.Fit takes them: Task
	// ("" chooses as kernelkit fit --task auto: classification when every
	// label is an integer in [0, 1000)), Lambda, Select, Grid, Folds,
	// Standardize, and the map (Map, or Features drawn at the data's
	// width). ChunkRows and Progress are not used.
	Model model.Options
	// MapFor, if set, returns the feature map for d input columns; it
	// replaces Model.Map and Model.Features (kernelkit fit uses it for
	// the default γ = 1/d).
	MapFor func(d int) (features.Transformer, error)
	// DeadLetter, if set, is the file that receives the bad rows (CSV:
	// file,line,error,text), which are then left out of the fit. Without
	// it a bad row fails the fit with its file and line.
	DeadLetter string
	Run        RunOptions
}

// FitResult is a fitted model and the record of its run.
type FitResult struct {
	Model *model.Model
	// Files, Rows and Bad count the input files, the training rows and
	// the bad rows set aside.
	Files      int
	Rows, Bad  int64
	Folds      int
	Pass1      time.Duration // scaler and label statistics
	Pass2      time.Duration // features and ridge statistics
	Solve      time.Duration // λ selection and the solve
	StatsBytes int           // size of the encoded second-pass statistics
}

// Fit fits a kernel ridge model on the files matching opt.Input in two
// Beam pipelines, as model.FitStream does on one machine: the first
// combines the row count, the columns, the label summary and the scaler
// moments (Prep); the driver then fixes the task, the classes and the
// scaler and draws the feature map once; the second pipeline, whose
// combiner carries the map's spec, maps each batch to features and
// combines the ridge statistics (Stats, one per fold for k-fold); the
// driver selects λ by GCV or k-fold on them and solves.
//
// Rows are ordered by file name, then line: with the same rows, options
// and seed, the model is model.Fit's on the files' concatenation (the
// k-fold assignment included) up to the rounding of sums taken in another
// order.
func Fit(ctx context.Context, opt FitOptions) (*FitResult, error) {
	mo := opt.Model
	if !(mo.Lambda >= 0) || math.IsInf(mo.Lambda, 0) {
		return nil, fmt.Errorf("model: lambda must be non-negative and finite, got %v", mo.Lambda)
	}
	folds, err := mo.StatsFolds()
	if err != nil {
		return nil, err
	}
	r, err := opt.Run.start()
	if err != nil {
		return nil, err
	}
	defer r.cleanup()
	paths, err := List(ctx, opt.Input)
	if err != nil {
		return nil, err
	}
	res := &FitResult{Files: len(paths), Folds: folds}

	// Pass 1.
	t0 := time.Now()
	src := Source{Format: opt.Format, Label: opt.Label, Chunk: opt.Run.Chunk}
	prepPath := r.path("prep.json")
	p, s := beam.NewPipelineWithRoot()
	batches, bads := beam.ParDo2(s, &readFn{Src: src}, readable(s, paths))
	beam.ParDo0(s, &writePrepFn{Path: prepPath}, beam.Combine(s, &prepFn{}, batches))
	if opt.DeadLetter != "" {
		writeDeadLetters(s, opt.DeadLetter, bads)
	}
	if err := r.execute(ctx, p); err != nil {
		return nil, err
	}
	b, err := readAll(ctx, prepPath)
	if err != nil {
		return nil, err
	}
	prep, err := DecodePrep(b)
	if err != nil {
		return nil, err
	}
	res.Rows, res.Bad = prep.Rows, prep.Bad
	if err := prep.check(opt.DeadLetter != ""); err != nil {
		return nil, err
	}
	if opt.DeadLetter != "" && prep.Bad == 0 {
		if err := writeAtomic(ctx, opt.DeadLetter, func(w io.Writer) error { return writeBadRows(w, nil) }); err != nil {
			return nil, err
		}
	}
	m := &model.Model{Task: mo.Task, TrainRows: int(prep.Rows)}
	if prep.Header != nil {
		m.Columns, m.Label = prep.Header.Columns, prep.Header.Label
	}
	if m.Task == "" {
		m.Task = model.Regression
		if prep.Labels.ClassLike {
			m.Task = model.Classification
		}
	}
	switch m.Task {
	case model.Classification:
		l := prep.Labels
		if l.NotClass != nil {
			return nil, l.NotClass
		}
		if !l.Two {
			return nil, fmt.Errorf("model: every training label is %v; classification needs at least 2 distinct labels", l.First)
		}
		m.Classes = int(l.Max) + 1
	case model.Regression:
	default:
		return nil, fmt.Errorf("model: unknown task %q (want classification or regression)", m.Task)
	}
	if folds > int(min(prep.Rows, math.MaxInt32)) {
		return nil, fmt.Errorf("model: k-fold needs folds ≤ rows, got %d folds for %d rows", folds, prep.Rows)
	}
	d := prep.Width
	if err := limits.Dim("kkbeam: number of feature columns", d); err != nil {
		return nil, err
	}
	if mo.Standardize {
		if m.Scaler, err = prep.Moments.Scaler(d); err != nil {
			return nil, err
		}
	}
	switch {
	case opt.MapFor != nil:
		m.Map, err = opt.MapFor(d)
	case mo.Map != nil:
		m.Map = mo.Map
		if mo.Map.InputDim() != d {
			err = fmt.Errorf("model: feature map takes %d inputs, data has %d feature columns", mo.Map.InputDim(), d)
		}
	default:
		m.Map, err = features.New(mo.Features, d)
	}
	if err != nil {
		return nil, err
	}
	if m.Map.InputDim() != d {
		return nil, fmt.Errorf("model: feature map takes %d inputs, data has %d feature columns", m.Map.InputDim(), d)
	}
	mc, err := NewMapConfig(m.Map)
	if err != nil {
		return nil, err
	}
	if _, err := limits.Matrix("model: ridge statistics", m.Map.Dim(), m.Map.Dim()); err != nil {
		return nil, err
	}
	if _, err := limits.Matrix("model: ridge statistics", m.Map.Dim(), max(m.Classes, 1)); err != nil {
		return nil, err
	}
	res.Pass1 = time.Since(t0)

	// Pass 2.
	t1 := time.Now()
	offsets := map[string]int64{}
	if folds > 1 {
		var at int64
		for _, f := range slices.Sorted(maps.Keys(prep.Files)) {
			offsets[f] = at
			at += prep.Files[f]
		}
	}
	src2 := src
	if prep.Header != nil {
		src2.Columns, src2.Label = prep.Header.Columns, prep.Header.Label
	}
	src2.Width = d
	statsPath := r.path("stats.bin")
	p, s = beam.NewPipelineWithRoot()
	batches, _ = beam.ParDo2(s, &readFn{Src: src2}, readable(s, paths))
	if opt.Run.Reshuffle {
		batches = beam.Reshuffle(s, batches)
	}
	fn := &statsFn{Map: mc, Scaler: m.Scaler, Classes: m.Classes, Folds: folds, Offsets: offsets, BLAS: opt.Run.BLAS}
	var total beam.PCollection
	if opt.Run.Fanout > 1 {
		keyed := beam.ParDo(s, &fanoutFn{Fanout: opt.Run.Fanout}, batches)
		partial := beam.DropKey(s, beam.CombinePerKey(s, fn, keyed))
		total = beam.Combine(s, &mergeFn{}, partial)
	} else {
		total = beam.Combine(s, fn, batches)
	}
	beam.ParDo0(s, &writeStatsFn{Path: statsPath}, total)
	if err := r.execute(ctx, p); err != nil {
		return nil, err
	}
	if b, err = readAll(ctx, statsPath); err != nil {
		return nil, err
	}
	res.StatsBytes = len(b)
	st, err := DecodeStats(b)
	if err != nil {
		return nil, err
	}
	if st.Rows != prep.Rows || st.Bad != prep.Bad || len(st.Folds) != folds {
		return nil, fmt.Errorf("kkbeam: the second pass read %d rows (%d bad) in %d folds, the first %d (%d bad) in %d: did the input change?",
			st.Rows, st.Bad, len(st.Folds), prep.Rows, prep.Bad, folds)
	}
	res.Pass2 = time.Since(t1)

	t2 := time.Now()
	if err := Solve(m, mo, st.Folds); err != nil {
		return nil, err
	}
	res.Solve = time.Since(t2)
	res.Model = m
	return res, nil
}

// check returns the first problem the first pass found: an error of a
// whole file, columns that differ between files, bad rows (unless they
// go to a dead-letter file), no rows, or no label column.
func (p *Prep) check(deadLetter bool) error {
	switch {
	case p.FileErr != nil:
		return p.FileErr
	case p.Mismatch != "":
		return fmt.Errorf("kkbeam: the files' columns differ: %s", p.Mismatch)
	case p.Bad > 0 && !deadLetter:
		return badRowsError(p.FirstBad, p.Bad)
	case p.Rows == 0:
		return errors.New("model: no training rows")
	case p.Unlabeled != "":
		return fmt.Errorf("%s: model: the data has no target column", p.Unlabeled)
	}
	return nil
}

// Solve chooses λ (opt.Lambda, or the grid value of opt.Grid — default
// model.DefaultGrid — with the best GCV or k-fold score) from the fold
// statistics and fits m.Linear on their sum, with an intercept, by
// model.SolveStats, as model.Fit does; it sets m.Grid and m.Scores when it
// selects.
func Solve(m *model.Model, opt model.Options, stats []*linear.Stats) error {
	lin, grid, scores, err := model.SolveStats(opt, stats)
	if err != nil {
		return err
	}
	m.Linear, m.Grid, m.Scores = lin, grid, scores
	return nil
}
