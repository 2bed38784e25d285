// Command kernelkit-beam fits kernelkit models on Apache Beam, over
// training sets sharded into many files, and predicts with them in batch.
//
//	kernelkit-beam fit --train 'shards/*.csv' --model m.kk [flags]
//	kernelkit-beam predict --model m.kk --input 'rows/*.csv' --out-dir preds/
//
// fit takes the flags of `kernelkit fit`, bound from the same definition
// (internal/fitflags), with --train (or --input) a glob of the training
// files (CSV, Parquet or LIBSVM), and prints the same report; an option a
// Beam fit cannot do (--stream, --exact, --device, --gamma scale, a
// data-dependent --map of weighted, standardised rows) is refused in one
// line, and docs/beam.md tables them.
// --runner picks the Beam runner:
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
	"sync"
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
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/atomicfile"
	"github.com/kernelkit/kernelkit/internal/fitflags"
	"github.com/kernelkit/kernelkit/internal/flagdomain"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/report"
)

func init() {
	kkbeam.Runners = append(kkbeam.Runners, "dataflow", "DataflowRunner")
}

const usage = `usage:
  kernelkit-beam fit --train GLOB [--model m.kk] [--test B.csv] [flags]
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

// quietLogs sets Beam's log level once: Prism's goroutines of an earlier
// run in this process (tests) may still read it.
var quietLogs sync.Once

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
	fs := pflag.NewFlagSet("kernelkit-beam "+args[0], pflag.ContinueOnError)
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
	own := fs.FlagUsages()
	beamFlags := forwardBeamFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			_, err := fmt.Fprintf(stdout, "Usage of %s:\n%sBeam's runner and pipeline flags are accepted too: %s\n", fs.Name(), own, strings.Join(beamFlags, " "))
			return err
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	quietLogs.Do(func() { beamlog.LogLevel = "warn" }) // not Prism's progress lines
	beam.Init()
	return cmd(ctx, stdout, stderr)
}

// forwardBeamFlags adds to fs every flag of the process-wide set (Beam's
// runner, job and pipeline options) that fs does not define, setting it
// there, so that Beam sees it set and exports it to the workers. It
// returns their names.
func forwardBeamFlags(fs *pflag.FlagSet) []string {
	var names []string
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if fs.Lookup(f.Name) != nil {
			return
		}
		names = append(names, "--"+f.Name)
		fw := forward{f: f, kind: "string"}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			fw.kind = "bool"
		}
		fs.Var(fw, f.Name, f.Usage)
		if fw.kind == "bool" {
			fs.Lookup(f.Name).NoOptDefVal = "true"
		}
	})
	return names
}

// forward is a flag of the process-wide set seen from a pflag set.
type forward struct {
	f    *flag.Flag
	kind string
}

func (p forward) String() string     { return p.f.Value.String() }
func (p forward) Type() string       { return p.kind }
func (p forward) Set(v string) error { return flag.CommandLine.Set(p.f.Name, v) }

// runFlags are the Beam run's flags, shared by fit and predict.
type runFlags struct {
	statsDir, blas, deadLetter string
	chunk                      int
}

func (r *runFlags) bind(fl *pflag.FlagSet) {
	fl.StringVar(&r.statsDir, "stats-dir", "", "where workers leave each pass's statistics for this program: a location both reach (gs://bucket/tmp); default a local temporary directory (direct and prism only)")
	fl.StringVar(&r.blas, "blas", "auto", "BLAS backend of the driver and the workers: auto (OpenBLAS if installed, else pure Go), openblas or gonum")
	fl.StringVar(&r.deadLetter, "dead-letter", "", "write bad rows to this CSV file (file,line,error,text) and go on without them; without it a bad row fails the run with its file and line")
	flagdomain.IntVar(fl, &r.chunk, "chunk", 2048, flagdomain.IntRange(1, maxChunk), "rows per batch")
}

func (r *runFlags) options() kkbeam.RunOptions {
	runner := *runners.Runner
	if runner == "" {
		runner = "prism"
	}
	return kkbeam.RunOptions{Runner: runner, StatsDir: r.statsDir, BLAS: r.blas, Chunk: r.chunk}
}

// maxChunk is the most rows of a batch.
const maxChunk = 1 << 20

// fitOptions are kernelkit fit's flags (fitflags.Options, --train a glob
// of the training files) and the Beam run's.
type fitOptions struct {
	fitflags.Options
	input     string // --input: --train's other name
	grid      []float64
	fanout    int
	reshuffle bool
	rf        runFlags
	flags     *pflag.FlagSet
}

func (o *fitOptions) bind(fl *pflag.FlagSet) {
	o.flags = fl
	o.Bind(fl)
	fl.Lookup("train").Usage = "training files: a glob of CSV (header row, label by --label or last), Parquet or LIBSVM files, in any of Beam's file systems"
	fl.Lookup("test").Usage = "test data (one local file, read in memory) to report accuracy or RMSE and the Gram error on"
	fl.StringVar(&o.input, "input", "", "the same as --train (a glob of the training files)")
	flagdomain.FloatsVar(fl, &o.grid, "grid", nil, flagdomain.NonNegFloat, "λ grid for --select, comma-separated (default 1e-4,…,1e3, one per decade)")
	flagdomain.IntVar(fl, &o.fanout, "fanout", 0, flagdomain.IntRange(1, limits.MaxCount).OrZero("one global combine"), "merge the D×D statistics in a tree of this many partial combines")
	fl.BoolVar(&o.reshuffle, "reshuffle", false, "spread the parsed batches over all workers before computing features (for fewer files than workers)")
	o.rf.bind(fl)
}

// refuse returns the one-line refusal of the first option a Beam fit
// cannot do, or nil. Each names what kkbeam lacks (docs/beam.md).
func (o *fitOptions) refuse() error {
	switch {
	case o.Stream:
		return errors.New("--stream: a Beam fit always streams its files through the workers in passes; drop --stream")
	case o.Exact:
		return errors.New("--exact solves the n×n kernel system on one machine; a Beam fit fits random features (use kernelkit fit --exact)")
	case o.Device != device.Host:
		return fmt.Errorf("--device %.20s: Beam's workers accumulate on their own CPUs (a device accumulator belongs to one process); drop --device", o.Device)
	case o.Feat.GammaScale:
		return errors.New("--gamma scale: kkbeam draws the feature map after the census pass, which has no pass for Var X of the standardised rows; give --gamma a number")
	}
	return nil
}

// fitOptions returns kkbeam's options of the flags: the model options of
// kernelkit fit's model.Job (fitflags.Options.Job: λ, selection, folds,
// standardisation, calibration, class weights, and --float32 for the
// statistics as well as the projection) and the map of --kernel … or
// --map, drawn on the driver for the data's width.
func (o *fitOptions) fitOptions() (kkbeam.FitOptions, error) {
	if o.input != "" {
		if o.Train != "" {
			return kkbeam.FitOptions{}, errors.New("--input is --train's other name; give one")
		}
		o.Train = o.input
	}
	if o.Train == "" {
		return kkbeam.FitOptions{}, errors.New("--train (or --input) is required")
	}
	if err := o.Check(); err != nil {
		return kkbeam.FitOptions{}, err
	}
	if err := o.refuse(); err != nil {
		return kkbeam.FitOptions{}, err
	}
	job := o.Job()
	mo := job.Model
	var err error
	if mo.Task, err = model.ParseTask(o.Task, nil); err != nil {
		return kkbeam.FitOptions{}, err
	}
	mo.Grid = o.grid
	ro := o.rf.options()
	ro.Fanout, ro.Reshuffle = o.fanout, o.reshuffle
	return kkbeam.FitOptions{Input: o.Train, Format: o.Format, Label: o.Label, Weight: o.WeightColumn, Targets: o.Targets,
		Model: mo, MapFor: o.mapFor, SampleMap: o.sampleMap(), DeadLetter: o.rf.deadLetter, Run: ro}, nil
}

// mapFor returns the feature map of the flags for d input columns (γ = 1/d
// unless --gamma is given), drawn once here from the seed: kernelkit fit's
// --kernel/--form map, or the registry's --map (data-independent maps;
// the Nyström maps are built on a sample of the rows: sampleMap).
func (o *fitOptions) mapFor(d int) (features.Transformer, error) {
	if o.Feat.MapName == "" {
		c, err := o.Feat.Config(o.flags, d)
		if err != nil {
			return nil, err
		}
		return features.New(c, d)
	}
	opt, err := o.Feat.MapOptions(o.flags, d)
	if err != nil {
		return nil, err
	}
	t, err := catalog.Default().Map(o.Feat.MapName, opt)
	if err != nil {
		return nil, fmt.Errorf("--map %s: %w (a Beam fit draws its map on the driver, which holds no training rows for a data-dependent map)", o.Feat.MapName, err)
	}
	return t, nil
}

// sampleMap returns the sample of a data-dependent --map (the Nyström
// maps, catalog's entries named nystrom…, whose landmarks are training
// rows), or nil: kernelkit fit --stream's sample, a reservoir of
// max(10000, 10·features) rows drawn from --seed (model.Job.MapSample's
// default), standardised as the fit's rows; the map is built on it with
// the options of the flags, as kernelkit fit builds it.
func (o *fitOptions) sampleMap() *kkbeam.SampleMap {
	if !strings.HasPrefix(o.Feat.MapName, "nystrom") {
		return nil
	}
	return &kkbeam.SampleMap{Size: max(10000, 10*o.Feat.Features), Seed: o.Feat.Seed, Build: func(x *mat.Dense) (features.Transformer, error) {
		_, d := x.Dims()
		opt, err := o.Feat.MapOptions(o.flags, d)
		if err != nil {
			return nil, err
		}
		opt.Data = x
		return catalog.Default().Map(o.Feat.MapName, opt)
	}}
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
	fo, err := o.fitOptions()
	if err != nil {
		return err
	}
	ro := fo.Run
	if err := kkbeam.UseBLAS(ro.BLAS); err != nil {
		return err
	}
	res, err := kkbeam.Fit(ctx, fo)
	if err != nil {
		return err
	}
	m := res.Model
	r, err := fitReport(m, o.Test, data.OpenOptions{Format: o.Format, Targets: o.Targets, Weight: o.WeightColumn}, res)
	if err != nil {
		return err
	}
	r.Map = o.Feat.MapName
	if o.Model != "" {
		if err := atomicfile.Write(o.Model, m.Save); err != nil {
			return err
		}
	}
	info := beamInfo{Runner: ro.Runner, Files: res.Files, BadRows: res.Bad, Pass1Seconds: res.Pass1.Seconds(),
		Pass2Seconds: res.Pass2.Seconds(), SolveSeconds: res.Solve.Seconds(), Pass3Seconds: res.Pass3.Seconds(), StatsBytes: res.StatsBytes}
	if o.JSON {
		return report.JSON(stdout, struct {
			*model.JobResult
			Beam beamInfo `json:"beam"`
		}{r, info})
	}
	text := r.Text()
	text += fmt.Sprintf("beam            %s runner, %d files, %d bad rows; pass 1 %.3f s, pass 2 %.3f s, solve %.3f s",
		info.Runner, info.Files, info.BadRows, info.Pass1Seconds, info.Pass2Seconds, info.SolveSeconds)
	if o.Calibrate {
		text += fmt.Sprintf(", pass 3 (calibration) %.3f s", info.Pass3Seconds)
	}
	text += "\n"
	if o.rf.deadLetter != "" {
		text += fmt.Sprintf("bad rows written to %s\n", o.rf.deadLetter)
	}
	if o.Model != "" {
		text += "model written to " + o.Model + "\n"
	}
	_, err = io.WriteString(stdout, text)
	return err
}

// fitReport builds kernelkit fit's report of a Beam fit: the map, λ and
// rows, and with a test file its accuracy or RMSE and the Gram error on
// its first 1000 rows. The training rows are not in memory, so without a
// test file there are no metrics. Seconds is the whole fit.
func fitReport(m *model.Model, test string, open data.OpenOptions, res *kkbeam.FitResult) (*model.JobResult, error) {
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
	open.Label, open.Columns, open.Width = m.Label, m.Columns, m.Map.InputDim()
	ds, err := data.Open(test, open)
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

func (o *predictOptions) bind(fl *pflag.FlagSet) {
	fl.StringVar(&o.modelPath, "model", "", "model file written by fit --model")
	fl.StringVar(&o.input, "input", "", "rows to predict: a glob of CSV, Parquet or LIBSVM files")
	fl.StringVar(&o.format, "format", "auto", "data format: auto, csv, libsvm or parquet")
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
