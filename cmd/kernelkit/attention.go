package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/study/performer"
)

type attentionOptions struct {
	lengths, features               []int
	variants, samplers              []string
	d, seeds, maxExact              int
	batch, heads                    int
	seed                            uint64
	causal, replicate, timing, json bool
	qPath, kPath, vPath, plot       string
	device                          string
	variantsSet                     bool
}

func newAttention() *cobra.Command {
	o := &attentionOptions{}
	cmd := &cobra.Command{
		Use:   "attention",
		Short: "Linear attention with random features against exact softmax attention",
		Long: "attention compares linear attention D⁻¹(Q'(K'ᵀV)) with positive (FAVOR+), hyperbolic,\n" +
			"trigonometric and ReLU features against exact softmax(QKᵀ/√d)V on random N(0,1) Q, K, V\n" +
			"(or on --q/--k/--v CSV files, header row, one row per token): output MSE (mean over entries\n" +
			"of the squared difference, then mean ± std over seeds), relative Frobenius error and time.\n" +
			"--replicate runs the Performer setup of the analog paper's Supplementary Note 3 (L = 4096,\n" +
			"d = 16, features 16..192, 15 seeds, iid and orthogonal, positive and trigonometric).\n" +
			"--timing measures time and allocated memory of exact and linear attention over L.\n" +
			"--device go|cuda computes exact and FAVOR+ attention (positive features, orthogonal projections,\n" +
			"each of --features) on [--batch, --heads, L, --d] inputs both on the CPU and on that device (GoMLX's\n" +
			"pure-Go backend, or an NVIDIA GPU in a build with -tags xla) and reports both times and the largest\n" +
			"difference of the outputs; --max-exact bounds exact attention.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	fl := cmd.Flags()
	intsVar(fl, &o.lengths, "lengths", []int{1024}, dim, "sequence lengths L")
	intVar(fl, &o.d, "d", 16, dim, "head dimension d")
	intsVar(fl, &o.features, "features", []int{16, 64, 256}, dim, "feature counts")
	fl.StringSliceVar(&o.variants, "variants", []string{"positive", "hyperbolic", "trig", "relu"}, "feature maps of the catalog: positive, hyperbolic, trig, relu, angular, gaussian, bipolar (hybrids FLOP-matched to m), simrf, oprf, sderf, aderf (the fitted ones refitted to each non-causal call)")
	fl.StringSliceVar(&o.samplers, "samplers", []string{"orf"}, "projection samplers")
	intVar(fl, &o.seeds, "seeds", 5, count, "seeds (independent Q, K, V and projections)")
	seedVar(fl, &o.seed, "seed", 0, "base seed")
	fl.BoolVar(&o.causal, "causal", false, "causal (unidirectional) attention")
	fl.BoolVar(&o.replicate, "replicate", false, "the analog paper's Supplementary Note 3 Performer setup")
	fl.BoolVar(&o.timing, "timing", false, "time and memory of exact vs linear attention over --lengths")
	intVar(fl, &o.maxExact, "max-exact", 32768, dim, "longest L for exact attention in --timing and --device")
	fl.StringVar(&o.qPath, "q", "", "queries CSV (with --k and --v)")
	fl.StringVar(&o.kPath, "k", "", "keys CSV")
	fl.StringVar(&o.vPath, "v", "", "values CSV")
	fl.StringVar(&o.plot, "plot", "", "PNG plot of output MSE against features")
	fl.BoolVar(&o.json, "json", false, "print JSON")
	fl.StringVar(&o.device, "device", device.Host, deviceUsage("exact and FAVOR+ attention (go and cuda are compared with the CPU)"))
	intVar(fl, &o.batch, "batch", 1, dim, "batch size B of the --device comparison")
	intVar(fl, &o.heads, "heads", 1, dim, "heads H of the --device comparison")
	return cmd
}

// openSeqDevice opens the device of a --device flag of attention and
// toeplitz: nil for "cpu" (the host path), else openDevice's device (the
// same one-line errors as fit and transform: a CUDA device in a program
// without XLA says how to build one).
func openSeqDevice(name string) (*device.Device, error) {
	if name == device.Host {
		return nil, nil
	}
	return openDevice(name, false)
}

// defaults applies the settings of --timing and --replicate to the flags
// the user left unset.
func (o *attentionOptions) defaults(cmd *cobra.Command) {
	changed := cmd.Flags().Changed
	if o.timing {
		if !changed("lengths") {
			o.lengths = performer.TimingLengths()
		}
		if !changed("d") {
			o.d = 64
		}
		return
	}
	if o.replicate {
		rep := performer.Replication()
		if !changed("lengths") {
			o.lengths = rep.Lengths
		}
		if !changed("features") {
			o.features = rep.Features
		}
		if !changed("seeds") {
			o.seeds = rep.Seeds
		}
		if !changed("variants") {
			o.variants = rep.Variants
		}
		if !changed("samplers") {
			o.samplers = nil
			for _, s := range rep.Samplers {
				o.samplers = append(o.samplers, s.Name())
			}
		}
		if !changed("plot") {
			o.plot = "kernelkit-attention.png"
		}
	}
}

func (o *attentionOptions) validate(fl *pflag.FlagSet) error {
	for _, f := range []struct {
		name string
		vals []int
	}{{"lengths", o.lengths}, {"features", o.features}} {
		for _, v := range f.vals {
			if v <= 0 {
				return fmt.Errorf("bad value %d in --%s (want positive integers)", v, f.name)
			}
		}
	}
	if o.d <= 0 {
		return fmt.Errorf("--d must be positive, got %d", o.d)
	}
	if o.seeds <= 0 {
		return fmt.Errorf("--seeds must be positive, got %d", o.seeds)
	}
	if (o.qPath == "") != (o.kPath == "") || (o.qPath == "") != (o.vPath == "") {
		return errors.New("--q, --k and --v go together")
	}
	if o.qPath != "" && (fl.Changed("lengths") || fl.Changed("d")) {
		return errors.New("--q/--k/--v give the length and dimension of the inputs; drop --lengths and --d")
	}
	if o.batch <= 0 || o.heads <= 0 {
		return fmt.Errorf("--batch and --heads must be positive, got %d and %d", o.batch, o.heads)
	}
	if o.device != device.Host {
		switch {
		case o.replicate:
			return fmt.Errorf("--device %s does not run --replicate (the device runs FAVOR+ only)", o.device)
		case o.qPath != "":
			return fmt.Errorf("--device %s runs on random inputs, not --q/--k/--v", o.device)
		case o.variantsSet && !onlyFavor(o.variants):
			return fmt.Errorf("--device %s runs the positive (FAVOR+) map only, not --variants %v", o.device, o.variants)
		case !onlyORF(o.samplers):
			return fmt.Errorf("--device %s draws orthogonal projections (orf) only, not --samplers %v", o.device, o.samplers)
		}
	} else if o.batch != 1 || o.heads != 1 {
		return errors.New("--batch and --heads go with --device go or cuda")
	}
	return nil
}

func (o *attentionOptions) run(cmd *cobra.Command) error {
	o.defaults(cmd)
	o.variantsSet = cmd.Flags().Changed("variants")
	if err := o.validate(cmd.Flags()); err != nil {
		return err
	}
	dev, err := openSeqDevice(o.device)
	if err != nil {
		return err
	}
	if dev != nil {
		return o.runDevice(cmd, dev)
	}
	if o.timing {
		return o.runTiming(cmd)
	}
	cfg := performer.MSEConfig{Lengths: o.lengths, Dim: o.d, Features: o.features, Variants: o.variants,
		Seeds: o.seeds, Seed: o.seed, Causal: o.causal}
	for _, name := range o.samplers {
		s, err := catalog.SamplerByName(name)
		if err != nil {
			return err
		}
		cfg.Samplers = append(cfg.Samplers, s)
	}
	if o.qPath != "" {
		var err error
		if cfg.Q, err = readMatrix(o.qPath); err != nil {
			return err
		}
		if cfg.K, err = readMatrix(o.kPath); err != nil {
			return err
		}
		if cfg.V, err = readMatrix(o.vPath); err != nil {
			return err
		}
	}
	if err := checkMemory(cmd, cfg.Memory()); err != nil {
		return err
	}
	update, finish := progress("attention")
	res, err := performer.MSE(cmd.Context(), cfg, update)
	finish()
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if o.json {
		return report.JSON(w, res.Rows)
	}
	if err := res.Table().Render(w); err != nil {
		return err
	}
	if o.replicate {
		if err := res.RenderComparison(w); err != nil {
			return err
		}
	}
	if o.plot == "" {
		return nil
	}
	if err := res.Plot().Save(o.plot); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nplot of output MSE against features written to %s\n", o.plot)
	return err
}

func (o *attentionOptions) runTiming(cmd *cobra.Command) error {
	cfg := performer.TimingConfig{Lengths: o.lengths, Dim: o.d, MaxExact: o.maxExact, Causal: o.causal}
	if err := checkMemory(cmd, cfg.Memory()); err != nil {
		return err
	}
	update, finish := progress("timing")
	res, err := performer.Timing(cmd.Context(), cfg, update)
	finish()
	if err != nil {
		return err
	}
	if o.json {
		return report.JSON(cmd.OutOrStdout(), res.Rows)
	}
	return res.Render(cmd.OutOrStdout())
}

// onlyFavor reports whether every name is the catalog's positive (FAVOR+)
// map, by any of its names.
func onlyFavor(names []string) bool {
	for _, n := range names {
		if e, err := catalog.Default().Lookup(n); err != nil || e.Name != "positive" {
			return false
		}
	}
	return len(names) > 0
}

// onlyORF reports whether every name is the orthogonal sampler.
func onlyORF(names []string) bool {
	for _, n := range names {
		if s, err := sampler.ByName(n); err != nil || s.Name() != (sampler.Orthogonal{}).Name() {
			return false
		}
	}
	return len(names) > 0
}

// runDevice compares attention on the CPU and on dev over the lengths and
// feature counts.
func (o *attentionOptions) runDevice(cmd *cobra.Command, dev *device.Device) error {
	dcfg := performer.DeviceConfig{Device: dev, Lengths: o.lengths,
		Batch: o.batch, Heads: o.heads, Dim: o.d, Features: o.features, Causal: o.causal, MaxExact: o.maxExact, Seed: o.seed}
	if err := checkMemory(cmd, dcfg.Memory()); err != nil {
		return err
	}
	update, finish := progress("attention on " + dev.Name())
	res, err := performer.CompareDevice(cmd.Context(), dcfg, update)
	finish()
	if err != nil {
		return err
	}
	if o.json {
		return report.JSON(cmd.OutOrStdout(), res.Rows)
	}
	return res.Render(cmd.OutOrStdout())
}

// readMatrix reads a CSV file with a header row and no label column.
func readMatrix(path string) (*mat.Dense, error) {
	ds, err := readData(path, "csv", "", true)
	if err != nil {
		return nil, err
	}
	return ds.X, nil
}
