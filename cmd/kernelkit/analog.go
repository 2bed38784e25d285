package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/analog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/study/aimc"
)

type analogOptions struct {
	data, kernels, samplers []string
	ratios                  []int
	seeds                   int
	lambda, tInference      float64
	seed                    uint64
	noRidge, noAttention    bool
	noCost, json            bool
	costL, costD, costM     int
	plot                    string
}

func newAnalog() *cobra.Command {
	o := &analogOptions{}
	cmd := &cobra.Command{
		Use:   "analog",
		Short: "Kernel approximation on emulated analog in-memory hardware",
		Long: "analog runs the studies of the analog paper on emulated PCM crossbars: ridge classification\n" +
			"with RBF and arc-cosine-0 features for log2(D/d) = 1..5 and iid (3σ-truncated), ORF and SORF\n" +
			"projections, models trained on exact features and evaluated on emulated ones (accuracy and\n" +
			"Gram error, fp64 against hardware); the FAVOR+ attention error; and the Table VIII cost model.\n" +
			"--data takes CSV files (letter is embedded and used by default: first 16000 rows train;\n" +
			"other sets are split in two random halves).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAnalog(cmd, o) },
	}
	o.bind(cmd.Flags())
	return cmd
}

func (o *analogOptions) bind(fl *pflag.FlagSet) {
	fl.StringSliceVar(&o.data, "data", []string{"letter"}, "CSV files, or letter for the embedded set")
	fl.StringSliceVar(&o.kernels, "kernels", []string{"rbf", "arccos0"}, "kernels: rbf (sin/cos features, γ = 1/d), arccos0")
	fl.StringSliceVar(&o.samplers, "samplers", []string{"iid", "orf", "sorf"}, "samplers (iid draws 3σ-truncated Gaussians)")
	intsVar(fl, &o.ratios, "ratios", []int{1, 2, 3, 4, 5}, intRange(1, 24), "log2(D/d) values (D = d·2^ratio ≤ 2²⁴)")
	intVar(fl, &o.seeds, "seeds", 3, count, "seeds per configuration")
	floatVar(fl, &o.lambda, "lambda", 0.5, nonNegFloat, "ridge parameter")
	floatVar(fl, &o.tInference, "t-inference", 3600, tInference, "time between programming and inference (drift, read noise)")
	seedVar(fl, &o.seed, "seed", 0, "base seed")
	fl.BoolVar(&o.noRidge, "no-ridge", false, "skip the ridge-classification study")
	fl.BoolVar(&o.noAttention, "no-attention", false, "skip the attention study")
	fl.BoolVar(&o.noCost, "no-cost", false, "skip the cost model")
	intVar(fl, &o.costL, "L", 0, dim.orZero("no extra case"), "extra cost-model case: sequence length (with --cost-d and --cost-m)")
	intVar(fl, &o.costD, "cost-d", 0, dim.orZero("no extra case"), "extra cost-model case: model dimension d")
	intVar(fl, &o.costM, "cost-m", 0, dim.orZero("no extra case"), "extra cost-model case: mapping dimension m")
	fl.StringVar(&o.plot, "plot", "", "PNG plot of the Gram error against log2(D/d)")
	fl.BoolVar(&o.json, "json", false, "print JSON")
}

func (o *analogOptions) validate() error {
	if o.seeds <= 0 {
		return fmt.Errorf("--seeds must be positive, got %d", o.seeds)
	}
	if !(o.lambda >= 0) {
		return fmt.Errorf("--lambda must be non-negative, got %v", o.lambda)
	}
	if n := countPositive(o.costL, o.costD, o.costM); n != 0 && n != 3 {
		return fmt.Errorf("an extra cost-model case needs all of --L, --cost-d and --cost-m (got %d, %d, %d)", o.costL, o.costD, o.costM)
	}
	return positiveInts(o.ratios, "ratios")
}

func runAnalog(cmd *cobra.Command, o *analogOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	ctx := cmd.Context()
	hw := analog.PCM(o.seed)
	hw.TInference = o.tInference
	rep := &aimc.Report{Hardware: hw}
	if !o.noAttention { // refused before the ridge study runs, not after
		if err := checkMemory(cmd, aimc.AttentionConfig{Hardware: hw, Seed: o.seed}.Memory()); err != nil {
			return err
		}
	}
	if !o.noRidge {
		var smps []sampler.Sampler
		for _, name := range o.samplers {
			s, err := sampler.ByName(strings.TrimSpace(name))
			if err != nil {
				return err
			}
			smps = append(smps, s)
		}
		for _, path := range o.data {
			path = strings.TrimSpace(path)
			name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
			train, test, err := openSplit(path, 0.5, o.seed)
			if err != nil {
				return err
			}
			cfg := aimc.RidgeConfig{Name: name, Train: train, Test: test,
				Kernels: o.kernels, Samplers: smps, Ratios: o.ratios, Seeds: o.seeds, Lambda: o.lambda, Hardware: hw, Seed: o.seed}
			if err := checkMemory(cmd, cfg.Memory()); err != nil {
				return err
			}
			update, finish := progress(name)
			rows, err := aimc.Ridge(ctx, cfg, update)
			finish()
			if err != nil {
				return err
			}
			rep.Ridge = append(rep.Ridge, rows...)
		}
	}
	var err error
	if !o.noAttention {
		if rep.Attention, err = aimc.Attention(ctx, aimc.AttentionConfig{Hardware: hw, Seed: o.seed}, nil); err != nil {
			return err
		}
	}
	if !o.noCost {
		rep.CostCases = aimc.CostCases()
		if o.costL > 0 && o.costD > 0 && o.costM > 0 {
			rep.CostCases = append(rep.CostCases, [3]int{o.costL, o.costD, o.costM})
		}
		if rep.Cost, err = aimc.Cost(rep.CostCases); err != nil {
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
	if o.plot == "" || len(rep.Ridge) == 0 {
		return nil
	}
	if err := rep.Plot().Save(o.plot); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nplot of Gram error against log2(D/d) written to %s\n", o.plot)
	return err
}

// openSplit returns the train and test sets of a --data entry: "letter" is
// the embedded set split at row 16000 as in the papers; a file is split at
// random with the test fraction given.
func openSplit(path string, testFrac float64, seed uint64) (train, test *data.Dataset, err error) {
	if path == "letter" {
		return data.Letter().SplitAt(16000)
	}
	ds, err := data.Open(path, data.OpenOptions{})
	if err != nil {
		return nil, nil, err
	}
	return ds.Split(testFrac, seed)
}

// positiveInts checks the values of an integer-list flag.
func positiveInts(v []int, flag string) error {
	for _, x := range v {
		if x <= 0 {
			return fmt.Errorf("bad value %d in --%s (want positive integers)", x, flag)
		}
	}
	return nil
}

// countPositive counts the positive values.
func countPositive(v ...int) int {
	n := 0
	for _, x := range v {
		if x > 0 {
			n++
		}
	}
	return n
}
