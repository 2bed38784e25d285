// Command kernelkit-beam fits kernelkit models on Apache Beam, over
// training sets sharded into many files, and predicts with them in batch.
//
//	kernelkit-beam fit --input 'shards/*.csv' --model m.kk [flags]
//	kernelkit-beam predict --model m.kk --input 'rows/*.csv' --out-dir preds/
//
// fit takes the flags of `kernelkit fit` (with --input, a glob, for
// --train) and prints the same report; --runner picks the Beam runner:
// prism (default) or direct run in this process, universal/portable,
// flink, spark and dataflow submit a job (see the kkbeam package
// documentation for the flags each needs). Beam's own flags (--endpoint,
// --environment_type, --worker_binary, --project, --region, …) are
// accepted as well.
//
// Errors are reported as one line on standard error with exit status 1.
// The model file is written atomically. The same binary is the Beam
// worker: started with --worker and no command, it runs the SDK harness.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/beam/kkbeam"
	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/atomicfile"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
)

func init() {
	kkbeam.Runners = append(kkbeam.Runners, "dataflow", "DataflowRunner")
}

const usage = `usage:
  kernelkit-beam fit --input GLOB [--model m.kk] [--test B.csv] [flags]
  kernelkit-beam predict --model m.kk --input GLOB --out-dir DIR [flags]
Run kernelkit-beam fit -h or predict -h for the flags.`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	interrupted := ctx.Err() != nil
	stop()
	if err != nil {
		if interrupted && errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		fmt.Fprintln(os.Stderr, "kernelkit:", oneLine(err.Error()))
		os.Exit(1)
	}
}

// oneLine returns msg on one line of at most 400 bytes.
func oneLine(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 400 {
		msg = strings.ToValidUTF8(msg[:400], "") + "…"
	}
	return msg
}

// run executes one command. Beam reads its own flags (--runner,
// --endpoint, …) from the process-wide flag set, which also carries them
// to workers: the command's flag set forwards them there.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		// A worker started by a runner's container: --worker and the
		// harness's flags, no command.
		if len(args) == 0 || !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "worker") }) {
			return errors.New("no command (want fit or predict; kernelkit-beam help lists them)")
		}
		if err := flag.CommandLine.Parse(args); err != nil {
			return err
		}
		beam.Init() // runs the harness and exits
		return errors.New("kernelkit-beam: the Beam harness returned")
	}
	fs := flag.NewFlagSet("kernelkit-beam "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line; -h prints usage
	var cmd func(context.Context, io.Writer, io.Writer) error
	switch args[0] {
	case "fit":
		o := &fitOptions{}
		o.bind(fs)
		cmd = o.run
	case "predict":
		o := &predictOptions{}
		o.bind(fs)
		cmd = o.run
	case "help":
		_, err := fmt.Fprintln(stdout, usage)
		return err
	default:
		return fmt.Errorf("unknown command %q (want fit or predict; kernelkit-beam help lists them)", args[0])
	}
	own := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { own[f.Name] = true })
	forwardBeamFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return printUsage(stdout, fs, own)
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	beamlog.LogLevel = "warn" // not Prism's progress lines
	beam.Init()
	return cmd(ctx, stdout, stderr)
}

// printUsage prints the command's own flags, then names Beam's.
func printUsage(w io.Writer, fs *flag.FlagSet, own map[string]bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage of %s:\n", fs.Name())
	fs.SetOutput(&b)
	var beamFlags []string
	fs.VisitAll(func(f *flag.Flag) {
		if !own[f.Name] {
			beamFlags = append(beamFlags, "--"+f.Name)
			return
		}
		name, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "  --%s %s\n    \t%s", f.Name, name, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteByte('\n')
	})
	fmt.Fprintf(&b, "Beam's runner and pipeline flags are accepted too: %s\n", strings.Join(beamFlags, " "))
	_, err := io.WriteString(w, b.String())
	return err
}

// forwardBeamFlags adds to fs every flag of the process-wide set (Beam's
// runner, job and pipeline options) that fs does not define, setting it
// there, so that Beam sees it set and exports it to the workers.
func forwardBeamFlags(fs *flag.FlagSet) {
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if fs.Lookup(f.Name) != nil {
			return
		}
		fw := forward{f}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			fs.Var(boolForward{fw}, f.Name, f.Usage)
			return
		}
		fs.Var(fw, f.Name, f.Usage)
	})
}

type forward struct{ f *flag.Flag }

func (p forward) String() string {
	if p.f == nil {
		return ""
	}
	return p.f.Value.String()
}
func (p forward) Set(v string) error { return flag.CommandLine.Set(p.f.Name, v) }

type boolForward struct{ forward }

// pflagValue is a pflag value as a standard flag; its zero value prints
// empty, as package flag's usage needs.
type pflagValue struct{ v pflag.Value }

func (p pflagValue) String() string {
	if p.v == nil {
		return ""
	}
	return p.v.String()
}
func (p pflagValue) Set(s string) error { return p.v.Set(s) }

func (boolForward) IsBoolFlag() bool { return true }

// runFlags are the Beam run's flags, shared by fit and predict.
type runFlags struct {
	statsDir, blas, deadLetter string
	chunk                      int
}

func (r *runFlags) bind(fl *flag.FlagSet) {
	fl.StringVar(&r.statsDir, "stats-dir", "", "where workers leave each pass's statistics for this program: a location both reach (gs://bucket/tmp); default a local temporary directory (direct and prism only)")
	fl.StringVar(&r.blas, "blas", "auto", "BLAS backend of the driver and the workers: auto (OpenBLAS if installed, else pure Go), openblas or gonum")
	fl.StringVar(&r.deadLetter, "dead-letter", "", "write bad rows to this CSV file (file,line,error,text) and go on without them; without it a bad row fails the run with its file and line")
	fl.IntVar(&r.chunk, "chunk", 2048, "rows per batch")
}

func (r *runFlags) options() kkbeam.RunOptions {
	runner := *runners.Runner
	if runner == "" {
		runner = "prism"
	}
	return kkbeam.RunOptions{Runner: runner, StatsDir: r.statsDir, BLAS: r.blas, Chunk: r.chunk}
}

type fitOptions struct {
	kernel, form, sampler                 string
	gamma, lambda                         float64
	features, folds, fanout               int
	seed                                  uint64
	float32                               bool
	input, test, label, format, task, sel string
	modelPath                             string
	noStd, json, reshuffle, calibrate     bool
	grid                                  *[]float64
	gammaSet                              bool
	rf                                    runFlags
	flags                                 *flag.FlagSet
}

func (o *fitOptions) bind(fl *flag.FlagSet) {
	o.flags = fl
	fl.StringVar(&o.input, "input", "", "training files: a glob of CSV (header row, label by --label or last) or LIBSVM files")
	fl.StringVar(&o.test, "test", "", "test data (one local file, read in memory) to report accuracy or RMSE and the Gram error on")
	fl.StringVar(&o.label, "label", "", "name of the label column (default: last)")
	fl.StringVar(&o.format, "format", "auto", "data format: auto, csv or libsvm")
	fl.StringVar(&o.task, "task", "auto", "auto, classification or regression")
	fl.Float64Var(&o.lambda, "lambda", 0.5, "ridge parameter λ")
	fl.StringVar(&o.sel, "select", "", "choose λ from a grid: gcv or kfold")
	fl.IntVar(&o.folds, "folds", 5, "folds for --select kfold and --calibrate")
	fl.BoolVar(&o.calibrate, "calibrate", false, "fit Platt sigmoids on out-of-fold scores (--folds folds, stratified by class) in a third pipeline, as kernelkit fit --calibrate does (classification)")
	// pflag's slice parser behind a standard flag, as Beam reads the
	// standard flag set.
	grid := pflag.NewFlagSet("grid", pflag.ContinueOnError)
	o.grid = grid.Float64Slice("grid", nil, "")
	fl.Var(pflagValue{grid.Lookup("grid").Value}, "grid", "λ grid for --select, comma-separated (default 1e-4,…,1e3, one per decade)")
	fl.BoolVar(&o.noStd, "no-standardize", false, "do not standardise features")
	fl.StringVar(&o.modelPath, "model", "", "write the fitted model to this file")
	fl.BoolVar(&o.json, "json", false, "print one JSON object")
	fl.StringVar(&o.kernel, "kernel", "rbf", "kernel: rbf, softmax, arccos0, arccos1 or arccos2")
	fl.StringVar(&o.form, "form", "", "feature form (rbf: cos, sincos, positive, hyperbolic; softmax: positive, trig, hyperbolic)")
	fl.Float64Var(&o.gamma, "gamma", 0, "RBF bandwidth γ in exp(-γ‖x-y‖²) (default 1/d)")
	fl.IntVar(&o.features, "features", 512, "number of random features D")
	fl.StringVar(&o.sampler, "sampler", "iid", "projection sampler: iid, orf, sorf, halton or truncated")
	fl.Uint64Var(&o.seed, "seed", 0, "random seed")
	fl.BoolVar(&o.float32, "float32", false, "compute the projection in single precision")
	fl.IntVar(&o.fanout, "fanout", 0, "merge the D×D statistics in a tree of this many partial combines (0: one global combine)")
	fl.BoolVar(&o.reshuffle, "reshuffle", false, "spread the parsed batches over all workers before computing features (for fewer files than workers)")
	o.rf.bind(fl)
}

// mapFor returns the feature map of the flags for d input columns (γ = 1/d
// unless --gamma is given), drawn once here from the seed.
func (o *fitOptions) mapFor(d int) (features.Transformer, error) {
	s, err := sampler.ByName(o.sampler)
	if err != nil {
		return nil, err
	}
	g := o.gamma
	if !o.gammaSet {
		g = 1 / float64(d)
	} else if !(g > 0) {
		return nil, fmt.Errorf("--gamma must be positive, got %v", g)
	}
	if o.features <= 0 {
		return nil, fmt.Errorf("--features must be positive, got %d", o.features)
	}
	return features.New(features.Config{Kernel: o.kernel, Form: o.form, Gamma: g, Features: o.features,
		Sampler: s, Seed: o.seed, Float32: o.float32}, d)
}

// beamInfo is the record of the Beam run added to kernelkit fit's report.
type beamInfo struct {
	Runner       string  `json:"runner"`
	Files        int     `json:"files"`
	BadRows      int64   `json:"bad_rows"`
	Pass1Seconds float64 `json:"pass1_seconds"`
	Pass2Seconds float64 `json:"pass2_seconds"`
	SolveSeconds float64 `json:"solve_seconds"`
	Pass3Seconds float64 `json:"pass3_seconds,omitempty"`
	StatsBytes   int     `json:"stats_bytes"`
}

func (o *fitOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	o.flags.Visit(func(f *flag.Flag) {
		if f.Name == "gamma" {
			o.gammaSet = true
		}
	})
	if o.input == "" {
		return errors.New("--input is required")
	}
	if o.lambda < 0 {
		return fmt.Errorf("--lambda must be non-negative, got %v", o.lambda)
	}
	var task model.Task
	if o.task != "auto" {
		t, err := model.ParseTask(o.task, nil)
		if err != nil {
			return err
		}
		task = t
	}
	ro := o.rf.options()
	ro.Fanout, ro.Reshuffle = o.fanout, o.reshuffle
	if err := kkbeam.UseBLAS(ro.BLAS); err != nil {
		return err
	}
	res, err := kkbeam.Fit(ctx, kkbeam.FitOptions{Input: o.input, Format: o.format, Label: o.label,
		Model:  model.Options{Task: task, Lambda: o.lambda, Select: o.sel, Grid: *o.grid, Folds: o.folds, Standardize: !o.noStd, Calibrate: o.calibrate},
		MapFor: o.mapFor, DeadLetter: o.rf.deadLetter, Run: ro})
	if err != nil {
		return err
	}
	m := res.Model
	r, err := fitReport(m, o.test, o.format, res)
	if err != nil {
		return err
	}
	if o.modelPath != "" {
		if err := atomicfile.Write(o.modelPath, m.Save); err != nil {
			return err
		}
	}
	info := beamInfo{Runner: ro.Runner, Files: res.Files, BadRows: res.Bad, Pass1Seconds: res.Pass1.Seconds(),
		Pass2Seconds: res.Pass2.Seconds(), SolveSeconds: res.Solve.Seconds(), Pass3Seconds: res.Pass3.Seconds(), StatsBytes: res.StatsBytes}
	if o.json {
		return report.JSON(stdout, struct {
			*model.JobResult
			Beam beamInfo `json:"beam"`
		}{r, info})
	}
	text := r.Text()
	text += fmt.Sprintf("beam            %s runner, %d files, %d bad rows; pass 1 %.3f s, pass 2 %.3f s, solve %.3f s",
		info.Runner, info.Files, info.BadRows, info.Pass1Seconds, info.Pass2Seconds, info.SolveSeconds)
	if o.calibrate {
		text += fmt.Sprintf(", pass 3 (calibration) %.3f s", info.Pass3Seconds)
	}
	text += "\n"
	if o.rf.deadLetter != "" {
		text += fmt.Sprintf("bad rows written to %s\n", o.rf.deadLetter)
	}
	if o.modelPath != "" {
		text += "model written to " + o.modelPath + "\n"
	}
	_, err = io.WriteString(stdout, text)
	return err
}

// fitReport builds kernelkit fit's report of a Beam fit: the map, λ and
// rows, and with a test file its accuracy or RMSE and the Gram error on
// its first 1000 rows. The training rows are not in memory, so without a
// test file there are no metrics. Seconds is the whole fit.
func fitReport(m *model.Model, test, format string, res *kkbeam.FitResult) (*model.JobResult, error) {
	r := &model.JobResult{Lambda: m.Linear.Lambda, Task: string(m.Task), TrainRows: m.TrainRows,
		Seconds: (res.Pass1 + res.Pass2 + res.Solve + res.Pass3).Seconds(), BLAS: blas.Name(), Backend: blas.Name()}
	if mp, ok := m.Map.(*features.Map); ok {
		s := mp.Spec()
		r.Kernel, r.Form, r.Sampler, r.Features, r.Gamma = s.Kernel, s.Form, s.Sampler, s.Features, s.Gamma
	}
	if test == "" {
		r.GramNote = "no --test rows (the training rows stay on the workers)"
		return r, nil
	}
	ds, err := data.Open(test, data.OpenOptions{Format: format, Label: m.Label, Columns: m.Columns, Width: m.Map.InputDim()})
	if err != nil {
		return nil, err
	}
	ev, err := m.Evaluate(ds, 0)
	if err != nil {
		return nil, err
	}
	r.TestRows = ds.Rows()
	if ev.Labelled {
		if m.Task == model.Classification {
			r.TestAccuracy = &ev.Accuracy
		} else {
			r.TestRMSE = &ev.RMSE
		}
	}
	n := min(1000, ds.Rows())
	g, err := m.Evaluate(&data.Dataset{X: ds.X.Slice(0, n, 0, ds.Cols()).(*mat.Dense)}, n)
	if err != nil {
		return nil, err
	}
	if g.GramRows == 0 {
		r.GramNote = g.GramNote
	} else {
		r.GramError, r.GramRows = &g.GramError, g.GramRows
	}
	return r, nil
}

type predictOptions struct {
	modelPath, input, format, label, outDir string
	scores                                  bool
	rf                                      runFlags
}

func (o *predictOptions) bind(fl *flag.FlagSet) {
	fl.StringVar(&o.modelPath, "model", "", "model file written by fit --model")
	fl.StringVar(&o.input, "input", "", "rows to predict: a glob of CSV or LIBSVM files")
	fl.StringVar(&o.format, "format", "auto", "data format: auto, csv or libsvm")
	fl.StringVar(&o.label, "label", "", "name of the label column, if any (default: the model's)")
	fl.StringVar(&o.outDir, "out-dir", "", "directory of the predictions: one FILE.pred.csv (file,line,prediction) per input file")
	fl.BoolVar(&o.scores, "scores", false, "also write the class scores")
	o.rf.bind(fl)
}

func (o *predictOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	if o.modelPath == "" || o.input == "" || o.outDir == "" {
		return errors.New("--model, --input and --out-dir are required")
	}
	ro := o.rf.options()
	if err := kkbeam.UseBLAS(ro.BLAS); err != nil {
		return err
	}
	if !strings.Contains(o.outDir, "://") {
		if err := os.MkdirAll(o.outDir, 0o755); err != nil {
			return err
		}
	}
	res, err := kkbeam.Predict(ctx, kkbeam.PredictOptions{Input: o.input, Model: o.modelPath, Format: o.format, Label: o.label,
		OutDir: o.outDir, Scores: o.scores, DeadLetter: o.rf.deadLetter, Run: ro})
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "predictions of %d rows from %d files written to %s (%.3f s)\n", res.Rows, res.Files, o.outDir, res.Seconds)
	if o.rf.deadLetter != "" {
		fmt.Fprintf(&b, "%d bad rows written to %s\n", res.Bad, o.rf.deadLetter)
	}
	if _, err := stdout.Write(b.Bytes()); err != nil {
		return err
	}
	if res.Labelled == 0 {
		return nil
	}
	m, err := loadTask(o.modelPath)
	if err != nil {
		return err
	}
	if m == model.Classification {
		_, err = fmt.Fprintf(stderr, "accuracy %.4f on %d rows\n", res.Accuracy, res.Labelled)
	} else {
		_, err = fmt.Fprintf(stderr, "RMSE %.6g on %d rows\n", res.RMSE, res.Labelled)
	}
	return err
}

// loadTask returns the task of the model file at path.
func loadTask(path string) (model.Task, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	m, err := model.LoadWith(f, catalog.Default())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	return m.Task, nil
}
