package main

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/study/hrf"
)

type estimateOptions struct {
	study, data, sampler, plot string
	estimators                 []string
	norms                      []float64
	features, draws, pairs, d  int
	seed                       uint64
	json                       bool
}

func newEstimate() *cobra.Command {
	o := &estimateOptions{}
	cmd := &cobra.Command{
		Use:   "estimate",
		Short: "Pointwise softmax-kernel estimation studies (hybrid random features)",
		Long: "estimate measures softmax-kernel estimators SM(x,y) = exp(xᵀy) pointwise:\n" +
			"  --study angle      same-length inputs (d = 64, r = 1, 1.25, 1.5), angle 0..π: true value,\n" +
			"                     5th-95th percentile and relative error of trig and positive (128\n" +
			"                     features) and FLOP-matched hybrids (HRF Fig. 2/5)\n" +
			"  --study data       --data F.csv: random pairs of rows (standardised, scaled to norm --norms),\n" +
			"                     MSE over pairs, mean and std over --draws independent maps (HRF Table 1)\n" +
			"  --study clustered  synthetic clustered data (HRF App. H.1): clustered HRF vs FAVOR+ and trig\n" +
			"  --study softmax    softmax sampling quality (HRF Sec. 4.2): Wasserstein-1, KS, negatives\n" +
			"  --study zoo        every softmax estimator side by side (SimRF, OPRF/FAVOR++, SDERF/ADERF/FAVOR#\n" +
			"                     papers): relative MSE against norm (--norms) and angle at d = --d (16), m = d,\n" +
			"                     linear attention on the rows of --data as queries and keys, features per second\n" +
			"Estimators are the softmax-kernel maps of the catalog: trig, positive, hyperbolic, angular,\n" +
			"gaussian (HRF Eq. 20), bipolar (HRF App. F), clustered, simrf, oprf, sderf and aderf.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.study, "study", "", "angle, data, clustered, softmax or zoo (default: data with --data, else angle)")
	fl.StringVar(&o.data, "data", "", "CSV data set for --study data (label column dropped)")
	fl.StringSliceVar(&o.estimators, "estimator", hrf.DefaultEstimators(), "estimators: trig, positive, hyperbolic, angular, gaussian, bipolar, clustered, simrf, oprf, sderf, aderf")
	fl.StringVar(&o.sampler, "sampler", "iid", "projection sampler: iid, orf, sorf, halton, truncated")
	intVar(fl, &o.features, "features", 0, dim.orZero("128 for angle, 512 for data and softmax"), "feature budget D")
	intVar(fl, &o.draws, "draws", 0, count.orZero("1000 for angle, 50 otherwise, 20 for clustered"), "independent draws of each map")
	intVar(fl, &o.pairs, "pairs", 100, count, "random pairs of rows for --study data")
	floatsVar(fl, &o.norms, "norms", []float64{1}, positiveFloat, "row norms after standardisation (data) or embedding norms (softmax)")
	intVar(fl, &o.d, "d", 64, dim, "dimension for --study softmax")
	seedVar(fl, &o.seed, "seed", 0, "random seed")
	fl.StringVar(&o.plot, "plot", "", "PNG plot (angle: relative error vs θ; clustered: MSE vs m)")
	fl.BoolVar(&o.json, "json", false, "print JSON")
	return cmd
}

// defaults fills the study and the feature and draw counts the user left
// unset, which depend on the study.
func (o *estimateOptions) defaults(cmd *cobra.Command) {
	if o.study == "" {
		o.study = "angle"
		if o.data != "" {
			o.study = "data"
		}
	}
	fl := cmd.Flags()
	if o.study == "zoo" {
		o.zooDefaults(fl.Changed)
		return
	}
	if !fl.Changed("features") {
		o.features = 512
		if o.study == "angle" {
			o.features = 128
		}
	}
	if !fl.Changed("draws") {
		switch o.study {
		case "angle":
			o.draws = 1000
		case "clustered":
			o.draws = 20
		default:
			o.draws = 50
		}
	}
}

func (o *estimateOptions) validate() error {
	if o.features <= 0 {
		return fmt.Errorf("--features must be positive, got %d", o.features)
	}
	if o.draws < 2 {
		return fmt.Errorf("--draws must be at least 2, got %d", o.draws)
	}
	for _, r := range o.norms {
		if !(r > 0) || math.IsInf(r, 0) {
			return fmt.Errorf("bad value %v in --norms (want positive numbers)", r)
		}
	}
	switch o.study {
	case "angle", "clustered":
	case "data":
		if o.data == "" {
			return errors.New("--study data needs --data")
		}
		if o.pairs <= 0 {
			return fmt.Errorf("--pairs must be positive, got %d", o.pairs)
		}
	case "zoo":
		if o.d <= 0 {
			return fmt.Errorf("--d must be positive, got %d", o.d)
		}
	case "softmax":
		if o.d <= 0 {
			return fmt.Errorf("--d must be positive, got %d", o.d)
		}
	default:
		return fmt.Errorf("unknown --study %.40q (want angle, data, clustered, softmax or zoo)", o.study)
	}
	return nil
}

func (o *estimateOptions) run(cmd *cobra.Command) error {
	o.defaults(cmd)
	if err := o.validate(); err != nil {
		return err
	}
	smp, err := sampler.ByName(o.sampler)
	if err != nil {
		return err
	}
	update, finish := progress("estimate")
	out, rows, plot, err := o.compute(cmd, smp, update)
	finish()
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if o.json {
		return report.JSON(w, rows)
	}
	if err := out.Render(w); err != nil || o.plot == "" || plot == nil {
		return err
	}
	if err := plot.Save(o.plot); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "plot written to %s\n", o.plot)
	return err
}

// compute runs the chosen study and returns its text rendering, the rows
// for JSON and the plot (nil for the studies without one).
func (o *estimateOptions) compute(cmd *cobra.Command, smp sampler.Sampler, update func(done, total int)) (out interface{ Render(io.Writer) error }, rows any, plot *report.Plot, err error) {
	ctx := cmd.Context()
	switch o.study {
	case "angle":
		res, err := hrf.Angles(ctx, hrf.AnglesConfig{Estimators: o.estimators, Sampler: smp,
			Features: o.features, Draws: o.draws, Seed: o.seed}, update)
		if err != nil {
			return nil, nil, nil, err
		}
		return res, res.Rows, res.Plot(), nil
	case "data":
		ds, err := readData(o.data, "auto", "", false)
		if err != nil {
			return nil, nil, nil, err
		}
		res, err := hrf.Data(ctx, hrf.DataConfig{X: ds.X, Estimators: o.estimators, Sampler: smp,
			Features: o.features, Draws: o.draws, Pairs: o.pairs, Norms: o.norms, Seed: o.seed}, update)
		if err != nil {
			return nil, nil, nil, err
		}
		if len(res.Rows) == 1 {
			return res.Table(), res.Rows[0], nil, nil // one row prints as an object
		}
		return res.Table(), res.Rows, nil, nil
	case "zoo":
		return o.zoo(cmd, update)
	case "clustered":
		res, err := hrf.Clustered(ctx, hrf.ClusteredConfig{Sampler: smp, Draws: o.draws, Seed: o.seed}, update)
		if err != nil {
			return nil, nil, nil, err
		}
		return res.Table(), res.Rows, res.Plot(), nil
	default: // "softmax", checked by validate
		res, err := hrf.SoftmaxSampling(ctx, hrf.SoftmaxSamplingConfig{Estimators: o.estimators, Sampler: smp,
			Dim: o.d, Norms: o.norms, Seed: o.seed}, update)
		if err != nil {
			return nil, nil, nil, err
		}
		return res.Table(), res.Rows, nil, nil
	}
}
