package main

import (
	"bytes"
	"fmt"
	"io"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/internal/atomicfile"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/nn"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/tasks"
	"github.com/kernelkit/kernelkit/train"
	_ "github.com/kernelkit/kernelkit/train/graphtrain" // the GoMLX engine: --device go and cuda
)

type trainOptions struct {
	device  string // --device
	job     train.Job
	adapter string
	plot    string
	json    bool
	cpuProf string
}

func newTrainCmd() *cobra.Command {
	o := &trainOptions{}
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train sequence classifiers: TNN, SKI-TNN, FD-TNN, Performer, Transformer, HRF",
		Long: "train trains a sequence classifier with the native CPU engine (--device cpu, the default:\n" +
			"hand-written forward and backward passes on BLAS, float32) or a GoMLX backend (--device go,\n" +
			"GoMLX's pure-Go backend, or cuda where linked in; one checkpoint format for all) on a\n" +
			"generated task or on LRA TSV files\n" +
			"(header Source<TAB>Target, e.g. the released ListOps basic_train.tsv), and reports the test\n" +
			"accuracy and training speed. --task listops generates the LRA ListOps task (operators MAX, MIN,\n" +
			"MED, SM; depth ≤ 10, 2-10 arguments, branching probability 0.25; lengths strictly inside\n" +
			"(--listops-min, --listops-max), by default (length/4, length)); --task recall an associative\n" +
			"recall task. --checkpoint resumes from and writes a checkpoint; --evaluate scores the\n" +
			"checkpoint's model on --test. Adapters: pre-train with --checkpoint A, then fine-tune with\n" +
			"--init-from A --adapter snnk|bottleneck --freeze. --model performer --feature-map simrf|oprf|sderf\n" +
			"picks the Performer's random features (docs/estimators.md). Before any data is generated or read, the\n" +
			"memory the run implies (data, parameters with their optimiser state, a step's activations)\n" +
			"is estimated and a run above --max-memory (a flag of every command, default 8GiB) is refused.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.bind(cmd.Flags())
	return cmd
}

func (o *trainOptions) bind(fl *pflag.FlagSet) {
	j := &o.job
	m := &j.Model
	fl.StringVar(&j.Task, "task", train.TaskListOps, "generated task: listops or recall")
	fl.StringVar(&m.Kind, "model", arch.KindTNN, "model: "+strings.Join(arch.Kinds, ", ")+" (hrf: Transformer with angular hybrid random feature attention)")
	intVar(fl, &m.Length, "length", 256, dim, "sequence length (longer sequences are truncated, shorter padded)")
	intVar(fl, &m.Width, "width", 32, dim, "model width")
	intVar(fl, &m.Depth, "depth", 2, intRange(1, arch.MaxDepth), "number of blocks")
	intVar(fl, &m.Heads, "heads", 2, dim, "attention heads (performer, transformer)")
	intVar(fl, &m.Hidden, "hidden", 0, dim.orZero("2·width"), "GLU / FFN hidden width")
	intVar(fl, &m.Expand, "expand", 1, dim, "GTU expansion ratio (TNN kinds)")
	intVar(fl, &m.RPEHidden, "rpe-hidden", 32, dim, "RPE MLP hidden units (tnn, fd-tnn)")
	intVar(fl, &m.RPELayers, "rpe-layers", 1, intRange(1, arch.MaxRPELayers), "RPE MLP hidden layers (tnn, fd-tnn)")
	fl.StringVar(&m.RPEAct, "rpe-act", "relu", "RPE MLP activation: relu, gelu or silu")
	floatVar(fl, &m.Lambda, "lambda", 0.99, unitOpen, "decay bias λ (tnn) and time-warp λ (ski-tnn)")
	intVar(fl, &m.SKIRank, "ski-rank", 0, intRange(2, limits.MaxDim).orZero("min(32, length)"), "SKI inducing points r (at most the length)")
	intVar(fl, &m.SKIFilter, "ski-filter", 16, dim, "SKI sparse filter width m")
	intVar(fl, &m.SKIGrid, "ski-grid", 33, intRange(3, limits.MaxDim), "grid points of the SKI piecewise linear RPE (odd)")
	intVar(fl, &m.Features, "features", 32, dim, "FAVOR+ random features per head")
	fl.StringVar(&m.FeatureMap, "feature-map", arch.FeatureFavor, "performer's feature family: favor+ (orthogonal FAVOR+), simrf (simplex-coupled directions), "+
		"oprf (FAVOR++) or sderf (FAVOR#); oprf and sderf fit their parameters to each sequence's and head's queries and keys every step, as constants to the gradient")
	intVar(fl, &m.HRFM, "hrf-m", 0, dim.orZero("FLOP-matched to --features, hybrid.MatchFLOPs"), "hrf: projections of each base estimator, positive and trigonometric")
	intVar(fl, &m.HRFN, "hrf-n", 0, dim.orZero("FLOP-matched"), "hrf: sgn projections of the angular λ; 4·m·(1+n) features per head")
	floatVar(fl, &m.QKNorm, "qk-norm", 0, domain{lo: -1, hi: 1e6}.orZero("1 for hrf, none otherwise"), "attention kinds: L2-normalise queries and keys so that the logits are r²·cos θ (−1: none)")
	intVar(fl, &j.Redraw, "redraw", 0, count.orZero("never"), "redraw the FAVOR+ / HRF features every this many steps")
	intVar(fl, &m.Chunk, "chunk", 64, dim, "chunk length of causal FAVOR+ and HRF attention")
	fl.BoolVar(&m.Causal, "causal", false, "causal token mixing (not ski-tnn)")
	fl.StringVar(&o.adapter, "adapter", "none", "adapters: none, bottleneck or snnk")
	intVar(fl, &m.AdapterSize, "adapter-size", 16, dim, "bottleneck width or SNNK random features")
	seedVar(fl, &m.AdapterSeed, "adapter-seed", 0, "seed of the SNNK adapter towers")
	fl.BoolVar(&m.FreezeBackbone, "freeze", false, "train only the adapters and the classifier")
	intVar(fl, &j.Steps, "steps", 200, intRange(0, limits.MaxCount), "optimiser steps (a resumed run continues up to this number)")
	intVar(fl, &j.Batch, "batch", 16, dim, "mini-batch size")
	floatVar(fl, &j.LR, "lr", 1e-3, positiveFloat, "peak learning rate (AdamW)")
	floatVar(fl, &j.WeightDecay, "weight-decay", 0.01, nonNegFloat, "AdamW weight decay")
	intVar(fl, &j.Warmup, "warmup", 20, intRange(0, limits.MaxCount), "linear warm-up steps before the cosine decay")
	seedVar(fl, &j.Seed, "seed", 1, "seed of the initialisation, random features and batch order")
	seedVar(fl, &j.DataSeed, "data-seed", 1, "seed of the generated data: the sets are consecutive rows of its one stream (train, then evaluation, then test), so other sizes with the same seed reuse rows")
	intVar(fl, &j.NTrain, "n-train", 2000, rows, "generated training samples")
	intVar(fl, &j.NEval, "n-eval", 200, rows, "generated evaluation samples")
	intVar(fl, &j.NTest, "n-test", 500, rows, "generated test samples")
	intVar(fl, &j.ListOpsMin, "listops-min", 0, dim.orZero("length/4 with --listops-max 0, else none"), "ListOps: keep lengths > this")
	intVar(fl, &j.ListOpsMax, "listops-max", 0, dim.orZero("the length"), "ListOps: keep lengths < this")
	intVar(fl, &j.Pairs, "pairs", 8, dim, "recall: key-value pairs per sequence")
	intVar(fl, &j.EvalEvery, "eval-every", 0, count.orZero("at the end"), "evaluate every this many steps")
	fl.StringVar(&j.TrainFile, "train", "", "training data, LRA TSV (instead of --task)")
	fl.StringVar(&j.EvalFile, "eval", "", "evaluation data, LRA TSV")
	fl.StringVar(&j.TestFile, "test", "", "test data, LRA TSV")
	fl.StringVar(&j.WriteData, "write-data", "", "directory to write the generated sets to as LRA TSV files (created if missing; --steps 0 trains nothing)")
	fl.StringVar(&j.Checkpoint, "checkpoint", "", "checkpoint file: resumed from when it exists, written during and after training")
	intVar(fl, &j.CheckpointEvery, "checkpoint-every", 0, count.orZero("at the end"), "write the checkpoint every this many steps")
	fl.StringVar(&j.InitFrom, "init-from", "", "checkpoint of a pre-trained model to fine-tune (embeddings and blocks)")
	fl.BoolVar(&j.EvaluateOnly, "evaluate", false, "evaluate the --checkpoint model on --test (or --eval) without training")
	fl.StringVar(&j.Export, "export", "", "write the trained model's inference file here after the run (kernelkit predict and serve read it; kernelkit export makes one from a checkpoint)")
	fl.StringVar(&j.Analog, "analog", "", "also evaluate a performer with its FAVOR+ projections on emulated analog crossbars: ideal or pcm (analog paper, Table I)")
	seedVar(fl, &j.AnalogSeed, "analog-seed", 1, "seed of the emulated PCM noise (--analog pcm)")
	intVar(fl, &j.AnalogCalibration, "analog-calibration", 64, dim, "training examples whose feature-map inputs calibrate the crossbars (--analog)")
	fl.StringVar(&o.device, "device", device.Host, "where the training runs: cpu (the native engine, on BLAS), go (GoMLX's pure-Go backend) or cuda (XLA on an NVIDIA GPU, in a build with -tags xla)")
	fl.StringVar(&j.Device, "backend", "", "the engine by its GoMLX name: cpu, "+nn.DefaultBackend+" or xla:cuda (--device cpu, go, cuda)")
	if err := fl.MarkDeprecated("backend", "use --device cpu|go|cuda"); err != nil {
		panic(err) // the flag is defined just above
	}
	fl.StringVar(&o.plot, "plot", "", "PNG plot of the training loss (and of the evaluation accuracy, as NAME-acc.png, with --eval-every)")
	fl.BoolVar(&o.json, "json", false, "print JSON")
	fl.StringVar(&o.cpuProf, "cpuprofile", "", "write a CPU profile (pprof) of the run to this file")
}

// modelFlags are the flags that shape the model (arch.ModelConfig), which
// --evaluate reads from the checkpoint instead.
var modelFlags = []string{"model", "length", "width", "depth", "heads", "hidden", "expand", "rpe-hidden", "rpe-layers",
	"rpe-act", "lambda", "ski-rank", "ski-filter", "ski-grid", "features", "feature-map", "hrf-m", "hrf-n", "qk-norm",
	"chunk", "causal", "adapter", "adapter-size", "adapter-seed", "freeze"}

func (o *trainOptions) run(cmd *cobra.Command) error {
	j := &o.job
	j.Model.Vocab, j.Model.Classes = tasks.VocabSize, tasks.Classes
	switch o.adapter {
	case "none", "":
		j.Model.Adapter = arch.AdapterNone
	default:
		j.Model.Adapter = o.adapter
	}
	j.MaxMemory = memoryBudget(cmd)
	if err := o.engine(cmd.Flags()); err != nil {
		return err
	}
	if j.EvaluateOnly {
		// The model comes from the checkpoint: its shape flags would be ignored.
		for _, name := range modelFlags {
			if cmd.Flags().Changed(name) {
				return fmt.Errorf("--evaluate scores the checkpoint's model as it was trained; drop --%s", name)
			}
		}
	}
	j.Warn = func(msg string) error { return notice(cmd, "warning: %s", msg) }
	update, finish := progress("train " + j.Model.Kind)
	j.Progress = func(p train.Progress) { update(p.Step, p.Steps) }
	if j.EvalEvery > 0 {
		j.Evaluated = func(step int, acc, loss float64) {
			fmt.Fprintf(cmd.ErrOrStderr(), "eval step %d: accuracy %.4f, loss %.4f\n", step, acc, loss)
		}
	}
	var prof bytes.Buffer
	if o.cpuProf != "" {
		if err := pprof.StartCPUProfile(&prof); err != nil {
			return err
		}
	}
	rep, err := j.Run(cmd.Context())
	finish()
	if o.cpuProf != "" {
		pprof.StopCPUProfile()
		if perr := atomicfile.Write(o.cpuProf, func(w io.Writer) error { _, err := w.Write(prof.Bytes()); return err }); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return err
	}
	if o.plot != "" && rep.Result != nil && len(rep.Result.Loss) > 0 {
		acc := ""
		if len(rep.Result.EvalStep) > 1 {
			acc = strings.TrimSuffix(o.plot, ".png") + "-acc.png"
		}
		name := fmt.Sprintf("%s (n=%d, d=%d, depth %d)", rep.Kind, rep.Length, rep.Width, rep.Depth)
		window := max(1, min(20, len(rep.Result.Loss)/10))
		if err := train.SavePlot(o.plot, acc, rep.Task, []train.Curve{{Name: name, Res: rep.Result}}, window); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	if o.json {
		return report.JSON(w, rep)
	}
	if err := rep.Render(w); err != nil {
		return err
	}
	if o.plot != "" {
		_, err = fmt.Fprintf(w, "plot written to %s\n", o.plot)
	}
	return err
}

// engine sets the job's engine from --device (cpu, go, cuda) or the
// deprecated --backend (cpu, go, xla:cuda); both at once must agree.
func (o *trainOptions) engine(fl *pflag.FlagSet) error {
	var fromDevice string
	switch o.device {
	case device.Host:
		fromDevice = train.DeviceCPU
	case device.Go:
		fromDevice = nn.DefaultBackend
	case device.CUDA:
		fromDevice = "xla:cuda"
	default:
		return fmt.Errorf("unknown --device %.40q (want cpu, go or cuda)", o.device)
	}
	if !fl.Changed("backend") {
		o.job.Device = fromDevice
		return nil
	}
	if fl.Changed("device") && o.job.Device != fromDevice {
		return fmt.Errorf("--backend %.40q and --device %s name different engines; drop --backend", o.job.Device, o.device)
	}
	return nil
}
