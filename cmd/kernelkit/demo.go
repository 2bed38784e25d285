package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/study/baseline"
)

type demoOptions struct {
	cfg  baseline.DemoConfig
	plot string
	json bool
}

func newDemo() *cobra.Command {
	o := &demoOptions{cfg: baseline.DefaultDemo()}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Letter benchmark: accuracy, Gram error and time over kernels, samplers and feature counts",
		Long: "demo runs on the embedded UCI letter data (first 16000 rows train, last 4000 test,\n" +
			"standardised on the training rows): for each kernel, sampler and feature count it fits a\n" +
			"ridge classifier (λ = 0.5) and reports test accuracy, the relative Gram error\n" +
			"‖K−K̂‖_F/‖K‖_F on the first 1000 test rows and the fit+predict time, then plots the\n" +
			"Gram error against the feature count (PNG).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	fl, c := cmd.Flags(), &o.cfg
	fl.StringSliceVar(&c.Kernels, "kernels", c.Kernels, "kernels: rbf, gaussian (softmax positive features), arccos0, arccos1")
	fl.StringSliceVar(&c.Samplers, "samplers", c.Samplers, "samplers")
	intsVar(fl, &c.Features, "features", c.Features, intRange(1, maxRidgeFeatures), "feature counts D")
	floatVar(fl, &c.Gamma, "gamma", c.Gamma, bandwidth, "RBF bandwidth γ")
	floatVar(fl, &c.Lambda, "lambda", c.Lambda, nonNegFloat, "ridge parameter λ")
	seedVar(fl, &c.Seed, "seed", 0, "random seed")
	onceVar(fl, &o.plot, "plot", "kernelkit-demo.png", "PNG plot of Gram error against D (empty: none)")
	fl.BoolVar(&o.json, "json", false, "print the results as a JSON array")
	return cmd
}

func (o *demoOptions) run(cmd *cobra.Command) error {
	if err := checkMemory(cmd, o.cfg.Memory()); err != nil {
		return err
	}
	update, finish := progress("demo")
	res, err := baseline.Demo(cmd.Context(), o.cfg, update)
	finish()
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if o.json {
		return report.JSON(w, res.Rows)
	}
	if err := res.Table().Render(w); err != nil || o.plot == "" {
		return err
	}
	if err := res.Plot().Save(o.plot); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nplot of Gram error against D written to %s\n", o.plot)
	return err
}
