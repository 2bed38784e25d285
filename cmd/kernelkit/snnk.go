package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/study/nnkernel"
)

type snnkOptions struct {
	which, plot                     string
	data                            []string
	features                        []int
	draws, seeds, hidden, m, epochs int
	seed                            uint64
	json                            bool
}

func newSNNK() *cobra.Command {
	o := &snnkOptions{}
	cmd := &cobra.Command{
		Use:   "snnk",
		Short: "Scalable neural network kernels: pointwise URF study, bundling, classification",
		Long: "snnk runs the experiments of the SNNK paper:\n" +
			"  --study pointwise  Sec. 4.1: d = 2000, w and x entries Unif(0,1)/√d, sin(wᵀx + 0.5) by URFs and\n" +
			"                     the ReLU-SNNK layer (½K₁), mean relative error over --draws against features\n" +
			"  --study bundle     a 2-layer cos/sin network bundled into one matrix: error against features\n" +
			"  --study classify   digits and letter: MLP baseline, its hidden layer replaced by ReLU-SNNK\n" +
			"                     and cos-SNNK (trained with GoMLX, pure-Go backend), and the fully bundled\n" +
			"                     closed-form model; parameters, test accuracy over --seeds, training time",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSNNK(cmd, o) },
	}
	o.bind(cmd.Flags())
	return cmd
}

func (o *snnkOptions) bind(fl *pflag.FlagSet) {
	fl.StringVar(&o.which, "study", "pointwise", "pointwise, bundle or classify")
	intsVar(fl, &o.features, "features", []int{8, 16, 32, 64, 128, 256, 512, 1024}, dim, "feature counts m (pointwise, bundle)")
	intVar(fl, &o.draws, "draws", 500, intRange(2, limits.MaxCount), "independent draws (pointwise)")
	fl.StringSliceVar(&o.data, "data", []string{"../shared/data/digits.csv", "letter"}, "CSV files or letter (classify)")
	intVar(fl, &o.hidden, "hidden", 64, dim, "hidden width (classify)")
	intVar(fl, &o.m, "m", 16, dim, "random features per SNNK tower (classify)")
	intVar(fl, &o.epochs, "epochs", 30, count, "training epochs (classify)")
	intVar(fl, &o.seeds, "seeds", 3, count, "seeds (classify)")
	seedVar(fl, &o.seed, "seed", 0, "base seed")
	fl.StringVar(&o.plot, "plot", "", "PNG plot (pointwise)")
	fl.BoolVar(&o.json, "json", false, "print JSON")
}

func (o *snnkOptions) validate() error {
	if err := positiveInts(o.features, "features"); err != nil {
		return err
	}
	if o.draws < 2 || o.seeds < 1 || o.hidden < 1 || o.m < 1 || o.epochs < 1 {
		return errors.New("need --draws ≥ 2 and positive --seeds, --hidden, --m, --epochs")
	}
	return nil
}

func runSNNK(cmd *cobra.Command, o *snnkOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	ctx, w := cmd.Context(), cmd.OutOrStdout()
	switch o.which {
	case "pointwise":
		cfg := nnkernel.PointwiseConfig{Features: o.features, Draws: o.draws, Seed: o.seed}
		if err := checkMemory(cmd, cfg.Memory()); err != nil {
			return err
		}
		update, finish := progress("pointwise")
		res, err := nnkernel.Pointwise(ctx, cfg, update)
		finish()
		if err != nil {
			return err
		}
		if o.json {
			return report.JSON(w, res.Rows)
		}
		if err := res.Table().Render(w); err != nil || o.plot == "" {
			return err
		}
		if err := res.Plot().Save(o.plot); err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "plot written to %s\n", o.plot)
		return err
	case "bundle":
		cfg := nnkernel.BundleConfig{Features: o.features, Seed: o.seed}
		if err := checkMemory(cmd, cfg.Memory()); err != nil {
			return err
		}
		res, err := nnkernel.Bundle(ctx, cfg, nil)
		if err != nil {
			return err
		}
		if o.json {
			return report.JSON(w, res.Rows)
		}
		return res.Render(w)
	case "classify":
		if len(o.data) == 0 {
			return errors.New("--data names no data set")
		}
		all := &nnkernel.ClassifyResult{}
		for _, path := range o.data {
			path = strings.TrimSpace(path)
			name := strings.TrimSuffix(filepath.Base(path), ".csv")
			train, test, err := openSplit(path, 0.3, o.seed)
			if err != nil {
				return err
			}
			cfg := nnkernel.ClassifyConfig{Name: name, Train: train, Test: test,
				Hidden: o.hidden, M: o.m, Epochs: o.epochs, Seeds: o.seeds, Seed: o.seed}
			if err := checkMemory(cmd, cfg.Memory()); err != nil {
				return err
			}
			update, finish := progress(name)
			res, err := nnkernel.Classify(ctx, cfg, update)
			finish()
			if err != nil {
				return err
			}
			all.Config, all.Rows = res.Config, append(all.Rows, res.Rows...)
		}
		if o.json {
			return report.JSON(w, all.Rows)
		}
		return all.Table().Render(w)
	}
	return fmt.Errorf("unknown --study %q (want pointwise, bundle or classify)", o.which)
}
