package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kernelkit/kernelkit/backend"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/sampler"
)

// demoKernel is one row group of the demo: a kernel and feature form.
type demoKernel struct {
	label, kernel, form string
}

var demoKernels = map[string]demoKernel{
	"rbf":      {"RBF (RFF cos)", "rbf", "cos"},
	"gaussian": {"Gaussian via softmax (positive)", "rbf", "hyperbolic"},
	"arccos0":  {"arc-cosine 0", "arccos0", ""},
	"arccos1":  {"arc-cosine 1", "arccos1", ""},
}

func newDemo() *cobra.Command {
	var kernels, samplers, counts, plotPath string
	var gamma, lambda float64
	var seed uint64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Letter benchmark: accuracy, Gram error and time over kernels, samplers and feature counts",
		Long: "demo runs on the embedded UCI letter data (first 16000 rows train, last 4000 test,\n" +
			"standardised on the training rows): for each kernel, sampler and feature count it fits a\n" +
			"ridge classifier (λ = 0.5) and reports test accuracy, the relative Gram error\n" +
			"‖K−K̂‖_F/‖K‖_F on the first 1000 test rows and the fit+predict time, then plots the\n" +
			"Gram error against the feature count (PNG).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var ks []demoKernel
			for _, k := range strings.Split(kernels, ",") {
				dk, ok := demoKernels[strings.TrimSpace(k)]
				if !ok {
					return fmt.Errorf("unknown demo kernel %q (want rbf, gaussian, arccos0, arccos1)", k)
				}
				ks = append(ks, dk)
			}
			ss, err := parseSamplers(samplers)
			if err != nil {
				return err
			}
			var ds []int
			for _, c := range strings.Split(counts, ",") {
				v, err := strconv.Atoi(strings.TrimSpace(c))
				if err != nil || v <= 0 {
					return fmt.Errorf("bad feature count %q in --features", c)
				}
				ds = append(ds, v)
			}
			sort.Ints(ds)
			if !(gamma > 0) {
				return fmt.Errorf("--gamma must be positive, got %v", gamma)
			}
			if !(lambda >= 0) {
				return fmt.Errorf("--lambda must be non-negative, got %v", lambda)
			}
			train, test, err := data.Letter().SplitAt(16000)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if !asJSON {
				fmt.Fprintf(w, "kernelkit demo: letter (16000 train, 4000 test, d=16, 26 classes), γ=%g, λ=%g, seed %d\nBLAS backend: %s\n\n", gamma, lambda, seed, backend.Name())
			}
			total := len(ks) * len(ss) * len(ds)
			bar := newBar(total, "demo")
			var results []*result
			for _, k := range ks {
				for _, s := range ss {
					for _, d := range ds {
						opt := model.Options{Task: model.Classification, Lambda: lambda, Standardize: true,
							Features: features.Config{Kernel: k.kernel, Form: k.form, Gamma: gamma, Features: d, Sampler: s, Seed: seed}}
						r, _, err := evaluate(context.Background(), opt, train, test)
						if err != nil {
							return fmt.Errorf("%s, %s, D=%d: %w", k.label, s.Name(), d, err)
						}
						results = append(results, r)
						_ = bar.Add(1)
					}
				}
			}
			_ = bar.Finish()
			if asJSON {
				return json.NewEncoder(w).Encode(results)
			}
			printTable(w, ks, results)
			if plotPath != "" {
				if err := plotDemo(plotPath, ks, ss, ds, results); err != nil {
					return err
				}
				fmt.Fprintf(w, "\nplot of Gram error against D written to %s\n", plotPath)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&kernels, "kernels", "rbf,gaussian,arccos0,arccos1", "kernels: rbf, gaussian (softmax positive features), arccos0, arccos1")
	fl.StringVar(&samplers, "samplers", "iid,orf,sorf", "samplers")
	fl.StringVar(&counts, "features", "128,256,512,1024", "feature counts D")
	fl.Float64Var(&gamma, "gamma", 1.0/16, "RBF bandwidth γ")
	fl.Float64Var(&lambda, "lambda", 0.5, "ridge parameter λ")
	fl.Uint64Var(&seed, "seed", 0, "random seed")
	fl.StringVar(&plotPath, "plot", "kernelkit-demo.png", "PNG plot of Gram error against D (empty: none)")
	fl.BoolVar(&asJSON, "json", false, "print the results as a JSON array")
	return cmd
}

func printTable(w io.Writer, ks []demoKernel, rs []*result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kernel\tform\tsampler\tD\ttest acc\tGram err\tseconds\t")
	for _, r := range rs {
		ge := "n/a"
		if r.GramError != nil {
			ge = fmt.Sprintf("%.4f", *r.GramError)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.4f\t%s\t%.3f\t\n", r.Kernel, r.Form, r.Sampler, r.Features, *r.TestAccuracy, ge, r.Seconds)
	}
	tw.Flush()
}

func plotDemo(path string, ks []demoKernel, ss []sampler.Sampler, ds []int, rs []*result) error {
	p := plot.New()
	p.Title.Text = "kernelkit demo: letter, Gram error vs features"
	p.X.Label.Text = "features D (log scale)"
	p.Y.Label.Text = "relative Gram error |K - K^|_F / |K|_F (log scale)"
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	var xt []plot.Tick
	for _, d := range ds {
		xt = append(xt, plot.Tick{Value: float64(d), Label: strconv.Itoa(d)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = true
	var lines []any
	i := 0
	for _, k := range ks {
		for _, s := range ss {
			var pts plotter.XYs
			for _, r := range rs[i : i+len(ds)] {
				if r.GramError != nil && *r.GramError > 0 {
					pts = append(pts, plotter.XY{X: float64(r.Features), Y: *r.GramError})
				}
			}
			i += len(ds)
			lines = append(lines, k.label+" / "+s.Name(), pts)
		}
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	// Leave the top of the plot to the legend.
	p.Y.Max *= 30
	return p.Save(9*vg.Inch, 6*vg.Inch, path)
}
