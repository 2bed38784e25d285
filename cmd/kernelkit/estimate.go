package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/study/hrf"
	"github.com/kernelkit/kernelkit/study/zoo"
)

type estimateOptions struct {
	study, data, sampler, plot string
	estimators                 []string
	norms                      []float64
	temperature                float64 // --temperature τ
	tempered                   bool    // the norms were divided by √τ
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
			"gaussian (HRF Eq. 20), bipolar (HRF App. F), clustered, simrf, oprf, sderf and aderf; oprf,\n" +
			"sderf and aderf are fitted to the inputs of each experiment (their means and second moments).\n" +
			"--norms (angle: the radii, default 1, 1.25, 1.5) must lie in (0, 18.82]: beyond, the errors of\n" +
			"exp(xᵀy) are not representable in float64. A flag the chosen study does not read is refused.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.study, "study", "", "angle, data, clustered, softmax or zoo (default: data with --data, else angle)")
	fl.StringVar(&o.data, "data", "", "CSV data set for --study data (label column dropped)")
	fl.StringSliceVar(&o.estimators, "estimator", hrf.DefaultEstimators(), "estimators: trig, positive, hyperbolic, angular, gaussian, bipolar, clustered, simrf, oprf, sderf, aderf")
	fl.StringVar(&o.sampler, "sampler", "iid", "projection sampler: iid, orf, sorf, halton, truncated or simplex (SimRF's coupling)")
	intVar(fl, &o.features, "features", 128, dim, "feature budget D (unset: 128 for angle, 512 for data and softmax)")
	intVar(fl, &o.draws, "draws", 1000, count, "independent draws of each map (unset: 1000 for angle, 50 otherwise, 20 for clustered)")
	intVar(fl, &o.pairs, "pairs", 100, count, "random pairs of rows for --study data")
	floatsVar(fl, &o.norms, "norms", []float64{1}, positiveFloat, "row norms after standardisation (data) or embedding norms (softmax)")
	floatVar(fl, &o.temperature, "temperature", 1, positiveFloat, "τ of the softmax kernel exp(xᵀy/τ) (angle, data, softmax, zoo): the estimators see x/√τ and y/√τ, so every study runs at the norms r/√τ, which the output shows (1: exp(xᵀy))")
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

// studyFlags are the flags each study reads (besides --study, --seed and
// --json). A flag given on the command line that the chosen study does not
// read is refused rather than silently ignored.
var studyFlags = map[string][]string{
	"angle":     {"estimator", "sampler", "features", "draws", "norms", "temperature", "plot"},
	"data":      {"data", "estimator", "sampler", "features", "draws", "pairs", "norms", "temperature"},
	"clustered": {"sampler", "features", "draws", "pairs", "plot"},
	"softmax":   {"estimator", "sampler", "features", "d", "norms", "temperature"},
	"zoo":       {"data", "estimator", "sampler", "features", "draws", "norms", "temperature", "d", "plot"},
}

// checkStudyFlags refuses the flags set on the command line that the
// study does not read, and --sampler without --estimator in the zoo (its
// default estimators carry their own samplers).
func (o *estimateOptions) checkStudyFlags(changed func(string) bool) error {
	used, ok := studyFlags[o.study]
	if !ok {
		return nil // validate names the unknown study
	}
	for _, name := range []string{"data", "estimator", "sampler", "features", "draws", "pairs", "norms", "temperature", "d", "plot"} {
		if !changed(name) {
			continue
		}
		found := false
		for _, u := range used {
			found = found || u == name
		}
		if !found {
			return fmt.Errorf("--%s is not used by --study %s (it reads --%s)", name, o.study, strings.Join(used, ", --"))
		}
	}
	if o.study == "zoo" && changed("sampler") && !changed("estimator") {
		return errors.New("--sampler applies to the estimators of --estimator in --study zoo (its default estimators carry their own samplers)")
	}
	return nil
}

// estimateSampler returns the sampler named by --sampler: those of
// sampler.ByName and simplex (prf.Simplex, the SimRF coupling, rows
// marginally N(0, I)), which every estimator of the studies accepts, as
// the library does.
func estimateSampler(name string) (sampler.Sampler, error) {
	s, err := catalog.SamplerByName(name)
	if err != nil {
		return nil, fmt.Errorf("--sampler: %w", err)
	}
	return s, nil
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
		if r > hrf.MaxNorm() {
			return fmt.Errorf("--norms %v is out of range: the errors of exp(xᵀy) are representable in float64 only for norms in (0, %v]", r, hrf.MaxNorm())
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
	if err := o.checkStudyFlags(cmd.Flags().Changed); err != nil {
		return err
	}
	if cmd.Flags().Changed("temperature") {
		if err := o.temper(cmd); err != nil {
			return err
		}
	}
	if err := o.validate(); err != nil {
		return err
	}
	smp, err := estimateSampler(o.sampler)
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
		if err := report.JSON(w, rows); err != nil || o.plot == "" || plot == nil {
			return err
		}
		return plot.Save(o.plot) // no message: stdout holds the JSON
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
	changed := cmd.Flags().Changed
	switch o.study {
	case "angle":
		cfg := hrf.AnglesConfig{Estimators: o.estimators, Sampler: smp, Features: o.features, Draws: o.draws, Seed: o.seed}
		if err := checkMemory(cmd, hrf.MapMemory(len(o.estimators), o.features, 64, 2)); err != nil {
			return nil, nil, nil, err
		}
		if changed("norms") || o.tempered {
			cfg.Radii = o.norms
		}
		res, err := hrf.Angles(ctx, cfg, update)
		if err != nil {
			return nil, nil, nil, err
		}
		return res, res.Rows, res.Plot(), nil
	case "data":
		ds, err := readData(o.data, "auto", "", false)
		if err != nil {
			return nil, nil, nil, err
		}
		if err := checkMemory(cmd, hrf.MapMemory(len(o.estimators), o.features, ds.Cols(), 2*o.pairs)); err != nil {
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
		cfg := hrf.ClusteredConfig{Sampler: smp, Draws: o.draws, Seed: o.seed}
		if changed("features") {
			cfg.Features = []int{o.features}
		}
		if err := checkMemory(cmd, hrf.MapMemory(1, o.features, 64, 2*o.pairs)); err != nil {
			return nil, nil, nil, err
		}
		if changed("pairs") {
			cfg.Pairs = o.pairs
		}
		res, err := hrf.Clustered(ctx, cfg, update)
		if err != nil {
			return nil, nil, nil, err
		}
		return res.Table(), res.Rows, res.Plot(), nil
	default: // "softmax", checked by validate
		cfg := hrf.SoftmaxSamplingConfig{Estimators: o.estimators, Sampler: smp, Dim: o.d, Norms: o.norms, Seed: o.seed}
		if changed("features") {
			cfg.Features = []int{o.features} // else the study's budgets 64, 128, 256, 512
		}
		if err := checkMemory(cmd, hrf.MapMemory(len(o.estimators), max(o.features, 512), o.d, 2)); err != nil {
			return nil, nil, nil, err
		}
		res, err := hrf.SoftmaxSampling(ctx, cfg, update)
		if err != nil {
			return nil, nil, nil, err
		}
		return res.Table(), res.Rows, nil, nil
	}
}

// temper applies --temperature τ: exp(xᵀy/τ) = exp(x'ᵀy') with x' = x/√τ,
// so each study runs at the norms r/√τ (of --norms, or the study's
// defaults), which a notice states and the output shows.
func (o *estimateOptions) temper(cmd *cobra.Command) error {
	if !cmd.Flags().Changed("norms") {
		switch o.study {
		case "angle":
			o.norms = hrf.AnglesConfig{}.Norms()
		case "zoo":
			o.norms = zoo.DefaultNorms()
		}
	}
	s := math.Sqrt(o.temperature)
	scaled := make([]float64, len(o.norms))
	for i, r := range o.norms {
		scaled[i] = r / s
	}
	o.norms, o.tempered = scaled, true
	return notice(cmd, "notice: --temperature %g: the estimates are of exp(xᵀy/τ), exp(x'ᵀy') at x' = x/√τ; the studies run at the norms r/√τ = %v", o.temperature, scaled)
}
