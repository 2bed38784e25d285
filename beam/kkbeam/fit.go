package kkbeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"gonum.org/v1/gonum/mat"

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
	// Input is the glob of the training files: CSV with a header row or
	// Parquet (every file the same columns), or LIBSVM, in any scheme of
	// Beam's file systems.
	Input string
	// Format and Label select the format ("", "auto", "csv", "libsvm",
	// "parquet") and the label column of CSV and Parquet files (default
	// the last), as kernelkit fit's flags.
	Format, Label string
	// Weight names a column of row weights (finite, non-negative; not a
	// feature) and Targets several target columns of a multi-output
	// regression, instead of Label: kernelkit fit's --weight-column and
	// --targets, for CSV and Parquet files.
	Weight  string
	Targets []string
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
	// SampleMap, if set, builds a data-dependent map (Nyström) on a
	// sample of the training rows drawn by an extra pass after the census
	// (see SampleMap); it replaces MapFor, Model.Map and Model.Features.
	// It is refused with weights and Standardize: kernelkit fit --stream
	// standardises its sample by the rows' unweighted moments, which the
	// census does not keep.
	SampleMap *SampleMap
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
	Pass1      time.Duration // census: columns, labels, scaler
	Pass2      time.Duration // features and ridge statistics
	Solve      time.Duration // λ selection and the solve
	Pass3      time.Duration // out-of-fold scores and the sigmoid fits (calibration)
	StatsBytes int           // size of the encoded second-pass statistics
}

// Fit fits a kernel ridge model on the files matching opt.Input in Beam
// pipelines whose combiners carry model's pass states (see model.Census
// and model.Plan), as model.FitStream makes its passes on one machine:
// the first pipeline combines the census of the rows (Prep: a
// model.Census and the rows of each file and class); the driver fixes
// the task, the classes and the scaler (model.Census.Plan) and draws the
// feature map once; the second pipeline, whose combiner carries the plan
// and the map's spec, prepares each batch (model.Plan.Prepare), maps it
// to features and combines the ridge statistics of each fold
// (model.Plan.AddStats); the driver selects λ by GCV or k-fold on them
// and solves. With Options.Calibrate a third pipeline scores each row by
// the model of the other folds (model.Plan.Score) and the driver fits
// the sigmoids on the scores in row order (model.Plan.Calibrate).
//
// Rows are ordered by file name, then line: with the same rows, options
// and seed, the model is model.Fit's on the files' concatenation (the
// k-fold and stratified fold assignments included) up to the rounding of
// sums taken in another order (see the package documentation for the
// bound). Options.SampleWeights and Options.Accumulator are refused: the
// rows' weights are a column of the files (FitOptions.Weight), and an
// accumulator is a function of this process that the workers cannot
// call.
func Fit(ctx context.Context, opt FitOptions) (*FitResult, error) {
	mo := opt.Model
	if mo.Task == "" {
		mo.Task = model.Auto
	}
	switch {
	case mo.SampleWeights != nil:
		return nil, errors.New("kkbeam: Options.SampleWeights weigh the rows of an in-memory data set; a Beam fit reads its rows' weights from a column of its files (FitOptions.Weight)")
	case mo.Accumulator != nil:
		return nil, errors.New("kkbeam: Options.Accumulator is a function of this process, which Beam's workers cannot call; they accumulate on their CPUs")
	}
	if _, err := model.NewCensus(mo); err != nil {
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
	res := &FitResult{Files: len(paths)}

	// Pass 1.
	t0 := time.Now()
	src := Source{Format: opt.Format, Label: opt.Label, Weight: opt.Weight, Targets: opt.Targets, Chunk: opt.Run.Chunk}
	prepPath := r.path("prep.json")
	p, s := beam.NewPipelineWithRoot()
	batches, bads := beam.ParDo2(s, &readFn{Src: src}, readable(s, paths))
	beam.ParDo0(s, &writePrepFn{Path: prepPath}, beam.Combine(s, &prepFn{Task: mo.Task, Standardize: mo.Standardize}, batches))
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
	plan, err := prep.Census.Plan(mo)
	if err != nil {
		return nil, err
	}
	mo.Task = plan.Task
	res.Folds = plan.Folds
	var cols model.Columns
	if prep.Header != nil {
		cols.Names, cols.Label, cols.Targets = prep.Header.Columns, prep.Header.Label, prep.Header.Targets
	}
	m := plan.Model(cols)
	d := plan.Cols
	if err := limits.Dim("kkbeam: number of feature columns", d); err != nil {
		return nil, err
	}
	src2 := src
	if prep.Header != nil {
		h := prep.Header
		src2.Columns, src2.Label, src2.Weight, src2.Targets = h.Columns, h.Label, h.Weight, h.Targets
	}
	src2.Width = d
	src2.CountClasses = plan.Strata != nil
	switch {
	case opt.SampleMap != nil:
		m.Map, err = r.sampleMap(ctx, opt.SampleMap, prep, plan, paths, src2)
	case opt.MapFor != nil:
		m.Map, err = opt.MapFor(d)
	case mo.Map != nil:
		m.Map = mo.Map
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
	if _, err := plan.NewStats(m.Map); err != nil {
		return nil, err
	}
	res.Pass1 = time.Since(t0)

	// Pass 2.
	t1 := time.Now()
	rows := rowsFn{Map: mc, Plan: plan, Offsets: map[string]int64{}, BLAS: opt.Run.BLAS}
	var at int64
	for _, f := range slices.Sorted(maps.Keys(prep.Files)) {
		rows.Offsets[f] = at
		at += prep.Files[f]
	}
	if plan.Strata != nil {
		rows.Before = map[string][]int64{}
		total := make([]int64, plan.Classes)
		for _, f := range slices.Sorted(maps.Keys(prep.Files)) {
			rows.Before[f] = slices.Clone(total)
			for l, n := range prep.FileClasses[f] {
				if l < len(total) {
					total[l] += n
				}
			}
		}
	}
	statsPath := r.path("stats.bin")
	p, s = beam.NewPipelineWithRoot()
	batches, _ = beam.ParDo2(s, &readFn{Src: src2}, readable(s, paths))
	if opt.Run.Reshuffle {
		batches = beam.Reshuffle(s, batches)
	}
	fn := &statsFn{rowsFn: rows}
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
	if st.Rows != prep.Rows || st.Bad != prep.Bad || len(st.Folds) != plan.Folds {
		return nil, fmt.Errorf("kkbeam: the second pass read %d rows (%d bad) in %d folds, the first %d (%d bad) in %d: did the input change?",
			st.Rows, st.Bad, len(st.Folds), prep.Rows, prep.Bad, plan.Folds)
	}
	res.Pass2 = time.Since(t1)

	t2 := time.Now()
	if err := Solve(m, mo, st.Folds); err != nil {
		return nil, err
	}
	res.Solve = time.Since(t2)
	res.Model = m
	if !mo.Calibrate {
		return res, nil
	}

	// Pass 3: the out-of-fold scores of a calibration.
	t3 := time.Now()
	models, err := model.FoldModels(ctx, st.Folds, m.Linear.Lambda)
	if err != nil {
		return nil, err
	}
	sf := &scoresFn{rowsFn: rows}
	for _, lm := range models {
		rr, cc := lm.W.Dims()
		sf.Models = append(sf.Models, FoldModel{D: rr, K: cc, W: mat.DenseCopyOf(lm.W).RawMatrix().Data, B: lm.B, Lambda: lm.Lambda})
	}
	scoresPath := r.path("scores.bin")
	p, s = beam.NewPipelineWithRoot()
	batches, _ = beam.ParDo2(s, &readFn{Src: src2}, readable(s, paths))
	if opt.Run.Reshuffle {
		batches = beam.Reshuffle(s, batches)
	}
	beam.ParDo0(s, &writeScoresFn{Path: scoresPath}, beam.Combine(s, sf, batches))
	if err := r.execute(ctx, p); err != nil {
		return nil, err
	}
	if b, err = readAll(ctx, scoresPath); err != nil {
		return nil, err
	}
	sc, err := DecodeScores(b)
	if err != nil {
		return nil, err
	}
	if sc.Bad != prep.Bad {
		return nil, fmt.Errorf("kkbeam: the third pass skipped %d bad rows, the first %d: did the input change?", sc.Bad, prep.Bad)
	}
	if m.Calibration, err = plan.Calibrate(sc.Parts); err != nil {
		return nil, err
	}
	res.Pass3 = time.Since(t3)
	return res, nil
}

// sampleMap runs the sample pass of sm over the files paths (their good
// rows counted by the census prep) and builds the map on the sample,
// standardised by the plan's scaler.
func (r *run) sampleMap(ctx context.Context, sm *SampleMap, prep *Prep, plan *model.Plan, paths []string, src Source) (features.Transformer, error) {
	if plan.Weighted && plan.Scaler != nil {
		return nil, errors.New("kkbeam: a data-dependent map of weighted, standardised rows: kernelkit fit --stream standardises its sample by the rows' unweighted moments, which a Beam census does not keep; drop the weights or the standardisation")
	}
	if sm.Build == nil || sm.Size <= 0 {
		return nil, fmt.Errorf("kkbeam: a sample map of %d rows without a builder", sm.Size)
	}
	fn, size, err := planSample(prep.Files, sm.Size, sm.Seed^streamSampleSeed)
	if err != nil {
		return nil, err
	}
	samplePath := r.path("sample.json")
	p, s := beam.NewPipelineWithRoot()
	batches, _ := beam.ParDo2(s, &readFn{Src: src}, readable(s, paths))
	beam.ParDo0(s, &writeSampleFn{Path: samplePath}, beam.Combine(s, fn, batches))
	if err := r.execute(ctx, p); err != nil {
		return nil, err
	}
	b, err := readAll(ctx, samplePath)
	if err != nil {
		return nil, err
	}
	smp, err := DecodeSample(b)
	if err != nil {
		return nil, err
	}
	x, err := smp.matrix(size, plan.Cols)
	if err != nil {
		return nil, err
	}
	if plan.Scaler != nil {
		if x, err = plan.Scaler.Transform(x); err != nil {
			return nil, err
		}
	}
	return sm.Build(x)
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
	case p.Err != nil:
		return p.Err
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
