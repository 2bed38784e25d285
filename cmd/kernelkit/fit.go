package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/nn"
	"github.com/kernelkit/kernelkit/report"
)

// featureOptions are the flags that define a feature map (fit, transform).
type featureOptions struct {
	kernel, form, sampler string
	gamma                 float64
	gammaScale            bool // --gamma scale
	scaleOK               bool // the command supports --gamma scale (fit)
	features              int
	seed                  uint64
	float32               bool
	mapName               string // --map: a map of the registry instead of --kernel/--form

	// --temperature: τ, or auto (the default).
	temperature     float64
	temperatureAuto bool
}

// temperatureFlag is the --temperature flag: "auto" (the default:
// features.AutoTemperature, τ = d/2) or a positive finite number, τ of the
// softmax kernel exp(xᵀy/τ).
type temperatureFlag struct{ f *featureOptions }

func (t temperatureFlag) String() string {
	if t.f.temperatureAuto {
		return "auto"
	}
	return strconv.FormatFloat(t.f.temperature, 'g', -1, 64)
}
func (t temperatureFlag) Type() string { return "auto|float" }
func (t temperatureFlag) Set(s string) error {
	if s == "auto" {
		t.f.temperatureAuto = true
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf(`must be "auto" or %s`, positiveFloat)
	}
	t.f.temperature, t.f.temperatureAuto = v, false
	return nil
}

// Domain is the domain of the numeric values (besides "auto").
func (t temperatureFlag) Domain() domain { return positiveFloat }

// temperatureFor returns τ of the feature flags for the kernel kern and d
// input columns: 0 (none) for a kernel other than softmax, where
// --temperature is an error.
func (f *featureOptions) temperatureFor(fl *pflag.FlagSet, kern string, d int) (float64, error) {
	if !strings.EqualFold(kern, "softmax") {
		if fl.Changed("temperature") {
			return 0, fmt.Errorf("--temperature is τ of the softmax kernel exp(xᵀy/τ); the %s kernel has none", kern)
		}
		return 0, nil
	}
	if f.temperatureAuto {
		return features.AutoTemperature(d), nil
	}
	return f.temperature, nil
}

// gammaFlag is the --gamma flag: a finite number, or "scale" for
// scikit-learn's gamma='scale' (1/(d·Var X) of the training matrix).
type gammaFlag struct{ f *featureOptions }

func (g gammaFlag) String() string {
	if g.f.gammaScale {
		return "scale"
	}
	return strconv.FormatFloat(g.f.gamma, 'g', -1, 64)
}
func (g gammaFlag) Type() string { return "float|scale" }
func (g gammaFlag) Set(s string) error {
	if s == "scale" {
		g.f.gammaScale = true
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !bandwidth.contains(v) {
		return fmt.Errorf(`must be "scale" or %s`, bandwidth)
	}
	g.f.gamma, g.f.gammaScale = v, false
	return nil
}

// Domain is the domain of the numeric values (besides "scale").
func (g gammaFlag) Domain() domain { return bandwidth }

// maxRidgeFeatures is the largest feature count of a ridge fit: its D×D
// statistics must fit limits.MaxElements.
const maxRidgeFeatures = 1 << 15

// bind binds the flags, with features, the domain of --features.
func (f *featureOptions) bind(fl *pflag.FlagSet, features domain) {
	fl.StringVar(&f.kernel, "kernel", "rbf", "kernel: rbf, softmax, arccos0, arccos1 or arccos2")
	fl.StringVar(&f.form, "form", "", "feature form (rbf: cos, sincos, positive, hyperbolic; softmax: positive, trig, hyperbolic)")
	f.temperatureAuto = true
	fl.Var(temperatureFlag{f}, "temperature", usageWith("temperature τ of the softmax kernel exp(xᵀy/τ) (softmax maps only: --kernel softmax and the --map maps of the softmax kernel, kernelkit maps lists them): 'auto' = d/2 for d input columns, which makes exp(xᵀy/τ) the Gaussian kernel of rbf's default γ = 1/d up to the rows' norms, so xᵀy/τ stays of order 1 on standardised rows (best mean accuracy of the measured τ on the letter data, ahead of the Performer's √d: docs/estimators.md), or a positive finite number (1: the unscaled exp(xᵀy))", positiveFloat))
	fl.Var(gammaFlag{f}, "gamma", "RBF bandwidth γ in exp(-γ‖x-y‖²), or 'scale' (fit: 1/(d·Var X) of the standardised training matrix, scikit-learn's gamma='scale') (default 1/d)")
	intVar(fl, &f.features, "features", 512, features, "number of random features D")
	fl.StringVar(&f.sampler, "sampler", "iid", "projection sampler: iid, orf, sorf, halton, truncated or simplex")
	seedVar(fl, &f.seed, "seed", 0, "random seed")
	fl.StringVar(&f.mapName, "map", "", "a symmetric map of the registry by name instead of --kernel/--form (e.g. nystrom/kmeans, arccos1, poly2, rbf/sincos), built with --features, --gamma, --sampler, --seed, --float32 and, for data-dependent maps, the (standardised) training rows; kernelkit maps lists them")
	fl.BoolVar(&f.float32, "float32", false, "single precision: the projection, and in fit the features and each chunk's ridge statistics (summed and solved in float64; about twice as fast)")
}

// mapOptions returns the registry options of --map for d input columns
// (γ as in config; Data is left to the caller). --map with --kernel or
// --form is an error.
func (f *featureOptions) mapOptions(fl *pflag.FlagSet, d int) (features.Options, error) {
	if err := checkMap(f.mapName); err != nil {
		return features.Options{}, err
	}
	if fl.Changed("kernel") || fl.Changed("form") {
		return features.Options{}, errors.New("--map names the whole feature map; drop --kernel and --form")
	}
	c, err := f.config(fl, d)
	if err != nil {
		return features.Options{}, err
	}
	o := features.Options{InputDim: d, Features: c.Features, Gamma: c.Gamma, Sampler: c.Sampler, Seed: c.Seed, Float32: c.Float32}
	if e, err := catalog.Default().Lookup(f.mapName); err == nil {
		if o.Temperature, err = f.temperatureFor(fl, e.Kernel, d); err != nil {
			return features.Options{}, err
		}
	}
	if e, err := catalog.Default().Lookup(f.mapName); err == nil && !usesGamma(e.Kernel) {
		o.Gamma = 0 // not a parameter of this map: not reported as one
	}
	return o, nil
}

// usesGamma reports whether the kernel has the bandwidth --gamma sets:
// exp(−γ‖x−y‖²) (rbf) and (γxᵀy + 1)^p (poly2, poly3). The softmax,
// arc-cosine and χ² kernels have none.
func usesGamma(kernel string) bool { return kernel == "rbf" || kernel == "poly2" || kernel == "poly3" }

// config returns the map of the flags for d input columns (γ = 1/d unless
// --gamma is given).
func (f *featureOptions) config(fl *pflag.FlagSet, d int) (features.Config, error) {
	s, err := catalog.SamplerByName(f.sampler)
	if err != nil {
		return features.Config{}, err
	}
	kern := f.kernel
	if f.mapName != "" {
		if e, err := catalog.Default().Lookup(f.mapName); err == nil {
			kern = e.Kernel
		}
	}
	if (fl.Changed("gamma") || f.gammaScale) && !usesGamma(kern) {
		return features.Config{}, fmt.Errorf("--gamma is the bandwidth of the rbf and polynomial kernels; the %s kernel has none", kern)
	}
	g := f.gamma
	if f.gammaScale {
		if !f.scaleOK {
			return features.Config{}, errors.New("--gamma scale is available in fit only (it is computed from the training rows)")
		}
		g = 1 / float64(d) // replaced by the fit (model.Job.GammaScale)
	} else if !fl.Changed("gamma") {
		g = 1 / float64(d)
	} else if !(g > 0) {
		return features.Config{}, fmt.Errorf("--gamma must be positive, got %v", g)
	}
	if f.features <= 0 {
		return features.Config{}, fmt.Errorf("--features must be positive, got %d", f.features)
	}
	tau, err := f.temperatureFor(fl, kern, d)
	if err != nil {
		return features.Config{}, err
	}
	if f.mapName != "" {
		tau = 0 // the map's, in mapOptions
	}
	return features.Config{Kernel: f.kernel, Form: f.form, Gamma: g, Temperature: tau, Features: f.features,
		Sampler: s, Seed: f.seed, Float32: f.float32}, nil
}

type fitOptions struct {
	feat                                         featureOptions
	train, test, label, format, model, task, sel string
	lambda                                       float64
	folds                                        int
	json, noStd, stream, exact                   bool
	calibrate                                    bool   // --calibrate
	device                                       string // --device
	weightCol                                    string
	classWeight                                  classWeightFlag
	targets                                      []string
}

// classWeightFlag is the --class-weight flag: "balanced", or explicit
// weights by class index, "0=2,3=0.5" (classes not named weigh 1).
type classWeightFlag struct {
	balanced bool
	weights  map[int]float64
}

func (c *classWeightFlag) String() string {
	if c.balanced {
		return "balanced"
	}
	keys := make([]int, 0, len(c.weights))
	for k := range c.weights {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.Itoa(k) + "=" + strconv.FormatFloat(c.weights[k], 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

func (c *classWeightFlag) Type() string { return "balanced|class=weight,..." }

func (c *classWeightFlag) Set(s string) error {
	if c.balanced || c.weights != nil {
		return errors.New("given twice")
	}
	if s == "balanced" {
		c.balanced = true
		return nil
	}
	w := map[int]float64{}
	for _, pair := range strings.Split(s, ",") {
		ks, vs, ok := strings.Cut(strings.TrimSpace(pair), "=")
		k, kerr := strconv.Atoi(strings.TrimSpace(ks))
		v, verr := strconv.ParseFloat(strings.TrimSpace(vs), 64)
		switch {
		case !ok || kerr != nil || k < 0:
			return fmt.Errorf(`%.40q is not class=weight with a class index from 0 (or "balanced")`, pair)
		case verr != nil || !(v >= 0) || math.IsInf(v, 0):
			return fmt.Errorf("weight %.40q of class %d is not a finite non-negative number", vs, k)
		}
		if _, dup := w[k]; dup {
			return fmt.Errorf("class %d given twice", k)
		}
		w[k] = v
	}
	c.weights = w
	return nil
}

// set reports whether the flag was given.
func (c *classWeightFlag) set() bool { return c.balanced || c.weights != nil }

func newFit() *cobra.Command {
	o := &fitOptions{}
	cmd := &cobra.Command{
		Use:   "fit --train A.csv [--test B.csv] [flags]",
		Short: "Fit a kernel ridge model on random features",
		Long: "fit reads a training set (CSV with a header row, label column by --label or last; or LIBSVM),\n" +
			"standardises it, maps it to random features and fits ridge regression or classification.\n" +
			"With --test it reports test accuracy (or RMSE) and the relative Gram error on the first\n" +
			"min(1000, n) test rows; --model saves the fitted model. --exact fits exact kernel ridge\n" +
			"(the dual solve the random features converge to) on up to 32768 rows; --gamma scale takes\n" +
			"γ = 1/(d·Var X) from the standardised training matrix, as scikit-learn's gamma='scale'.\n" +
			"--map NAME fits with any symmetric map of the registry instead of --kernel/--form, e.g.\n" +
			"nystrom/kmeans (Nyström features on k-means landmarks of the standardised training rows).\n" +
			"--weight-column NAME weighs each training row by that CSV column (not a feature; a test file's\n" +
			"is dropped), --class-weight balanced|class=weight,... weighs the classes (times the row\n" +
			"weights), and --targets a,b,c fits one regression per target column (multi-output).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.bind(cmd.Flags())
	return cmd
}

func (o *fitOptions) bind(fl *pflag.FlagSet) {
	o.feat.bind(fl, intRange(1, maxRidgeFeatures))
	onceVar(fl, &o.train, "train", "", "training data (CSV or LIBSVM)")
	onceVar(fl, &o.test, "test", "", "test data, same format")
	onceVar(fl, &o.label, "label", "", "name of the label column (default: last)")
	fl.StringVar(&o.format, "format", "auto", "data format: auto, csv, libsvm or parquet")
	fl.StringVar(&o.task, "task", "auto", "auto, classification or regression")
	floatVar(fl, &o.lambda, "lambda", 0.5, nonNegFloat, "ridge parameter λ")
	fl.StringVar(&o.sel, "select", "", "choose λ from a grid: gcv or kfold")
	intVar(fl, &o.folds, "folds", 5, intRange(2, limits.MaxCount), "folds for --select kfold and --calibrate")
	fl.BoolVar(&o.noStd, "no-standardize", false, "do not standardise features")
	fl.BoolVar(&o.stream, "stream", false, "read the training CSV or LIBSVM file in streaming passes (two, three with --calibrate; memory independent of the row count, but for the out-of-fold scores of --calibrate), giving the model file of the in-memory fit byte for byte")
	fl.BoolVar(&o.exact, "exact", false, "fit exact kernel ridge (dual Cholesky solve, O(n³) time, n² memory; at most 32768 training rows) instead of random features")
	fl.BoolVar(&o.calibrate, "calibrate", false, "fit Platt sigmoids on out-of-fold scores (--folds folds, stratified by class: each class needs at least that many rows of positive weight) so that predict --scores also writes class probabilities (classification; with --stream a third pass over the training rows)")
	o.feat.scaleOK = true
	onceVar(fl, &o.weightCol, "weight-column", "", "CSV column of per-row sample weights (finite, ≥ 0; not a feature, and dropped from a --test file)")
	fl.Var(&o.classWeight, "class-weight", "class weights: balanced (n/(classes·count of the class), scikit-learn's) or class=weight,... by class index (others weigh 1); they multiply the sample weights")
	fl.StringSliceVar(&o.targets, "targets", nil, "several target columns for multi-output regression (a,b,c; instead of --label)")
	onceVar(fl, &o.model, "model", "", "write the fitted model to this file")
	fl.BoolVar(&o.json, "json", false, "print one JSON object")
	fl.StringVar(&o.device, "device", device.Host, deviceUsage("the features and ridge statistics (the solve stays on the CPU)"))
}

func (o *fitOptions) run(cmd *cobra.Command) error {
	if o.train == "" {
		return errors.New("--train is required")
	}
	if o.feat.mapName != "" {
		if err := checkMap(o.feat.mapName); err != nil {
			return err
		}
	}
	if o.lambda < 0 {
		return fmt.Errorf("--lambda must be non-negative, got %v", o.lambda)
	}
	if o.exact && o.stream {
		return errors.New("--exact needs the training rows in memory; drop --stream")
	}
	if o.exact && o.sel != "" {
		return errors.New("--exact has no λ selection; give --lambda")
	}
	if len(o.targets) > 0 && o.label != "" {
		return errors.New("--targets names the target columns; drop --label")
	}
	multi := len(o.targets) > 1
	if o.exact && o.calibrate {
		return errors.New("--exact has no out-of-fold scores to calibrate; drop --calibrate")
	}
	if o.exact && (o.weightCol != "" || o.classWeight.set() || multi) {
		return errors.New("--exact fits one unweighted target; drop --weight-column, --class-weight and --targets")
	}
	cfg := model.Job{Model: model.Options{Lambda: o.lambda, Select: o.sel, Folds: o.folds, Standardize: !o.noStd, Float32: o.feat.float32, Calibrate: o.calibrate},
		GammaScale: o.feat.gammaScale, Exact: o.exact}
	if o.classWeight.balanced {
		cfg.Model.ClassWeight = "balanced"
	}
	cfg.Model.ClassWeights = o.classWeight.weights
	var err error
	if o.device != device.Host {
		if o.exact {
			return errors.New("--exact runs on the CPU; drop --device")
		}
		dev, err := openDevice(o.device, o.feat.float32)
		if err != nil {
			return err
		}
		cfg.Model.Accumulator = dev.Accumulator(device.RidgeOptions{})
		cfg.Device = dev.String()
	}
	label := o.label
	width := 0 // of the streamed rows
	if o.stream {
		if o.test == "" {
			return errors.New("--stream needs --test (the training rows are not kept in memory)")
		}
		var cols model.Columns
		cfg.Stream, cols, width, err = model.StreamFile(o.train, o.format, data.CSVOptions{Label: o.label, Targets: o.targets, Weight: o.weightCol})
		cfg.Names, cfg.Label, cfg.TargetNames = cols.Names, cols.Label, cols.Targets
	} else if cfg.Train, err = data.Open(o.train, data.OpenOptions{Format: o.format, Label: o.label, Targets: o.targets, Weight: o.weightCol}); err == nil {
		cfg.Names, label = cfg.Train.Names, cfg.Train.Label
	}
	if err != nil {
		return err
	}
	if cfg.Train != nil {
		width = cfg.Train.Cols()
	}
	if cfg.Model.Task, err = model.ParseTask(o.task, cfg.Train); err != nil {
		return err
	}
	if multi {
		if o.task != "auto" && cfg.Model.Task != model.Regression {
			return fmt.Errorf("--targets fits a multi-output regression, not --task %s", o.task)
		}
		cfg.Model.Task = model.Regression
	}
	if cfg.Model.Features, err = o.feat.config(cmd.Flags(), width); err != nil {
		return err
	}
	if o.feat.mapName != "" {
		if o.exact {
			return errors.New("--exact fits the kernel itself; drop --map")
		}
		cfg.MapName, cfg.Registry = o.feat.mapName, catalog.Default()
		if cfg.MapOptions, err = o.feat.mapOptions(cmd.Flags(), width); err != nil {
			return err
		}
	}
	if o.test != "" {
		opt := data.OpenOptions{Format: o.format, Label: label, Columns: cfg.Names, Width: width, Targets: o.targets, Weight: o.weightCol}
		if cfg.Test, err = data.Open(o.test, opt); err != nil {
			return err
		}
	}
	if err := fitMemory(cfg, width, len(o.targets)).Check(memoryBudget(cmd), "--max-memory"); err != nil {
		return err
	}
	update, finish := progress("fit")
	r, m, err := model.RunJob(cmd.Context(), cfg, update)
	finish()
	if err != nil {
		return err
	}
	var perTarget []float64
	if multi {
		eval := cfg.Test
		if eval == nil {
			eval = cfg.Train
		}
		ev, err := m.Evaluate(eval, 0)
		if err != nil {
			return err
		}
		perTarget = ev.RMSEs
	}
	if o.model != "" {
		if err := writeOut(cmd, o.model, m.Save); err != nil {
			return err
		}
	}
	if o.json {
		return report.JSON(cmd.OutOrStdout(), struct {
			*model.JobResult
			RMSEPerTarget []float64 `json:"rmse_per_target,omitempty"`
		}{r, perTarget})
	}
	text := r.Text()
	if perTarget != nil {
		parts := make([]string, len(perTarget))
		for i, v := range perTarget {
			parts[i] = fmt.Sprintf("%s %.4g", o.targets[i], v)
		}
		text += "RMSE per target " + strings.Join(parts, ", ") + "\n"
	}
	if o.model != "" {
		text += "model written to " + o.model + "\n"
	}
	_, err = io.WriteString(cmd.OutOrStdout(), text)
	return err
}

// deviceUsage is the usage of a --device flag for what.
func deviceUsage(what string) string {
	return "device for " + what + ": cpu (kernelkit's own code), go (GoMLX's pure-Go backend: the device graphs on the CPU) " +
		"or cuda (an NVIDIA GPU through XLA, float32, in a program built with CGO_ENABLED=1 -tags xla)"
}

// openDevice opens the device of a --device flag other than cpu, in
// float32 with --float32 (cuda always computes in float32).
func openDevice(name string, float32 bool) (*device.Device, error) {
	if name == device.CUDA && !slices.Contains(nn.Backends(), "xla") {
		return nil, errors.New("--device cuda: this program has no XLA backend (build with CGO_ENABLED=1 go build -tags xla ./cmd/kernelkit)")
	}
	d, err := device.Open(name)
	if err != nil && name == device.CUDA {
		return nil, fmt.Errorf("--device cuda: no usable GPU (plugin setup: scripts/gpu_run.sh): %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("--device: %w", err)
	}
	if float32 {
		d = d.WithFloat32()
	}
	return d, nil
}

// fitMemory estimates the memory of a fit of width input columns: the
// training and test rows held, and the fit's own arrays
// (model.Memory), with at most 1000 classes (the most a classification's
// labels give) or the target columns; an exact fit holds the n × n
// kernel matrix and its Cholesky factor.
func fitMemory(cfg model.Job, width, targets int) limits.Estimate {
	var e limits.Estimate
	for _, ds := range []*data.Dataset{cfg.Train, cfg.Test} {
		if ds != nil {
			e.Add("data", ds.Rows(), ds.Cols()+1)
		}
	}
	if cfg.Exact {
		if cfg.Train != nil {
			e.Add("kernel matrix and its factor", 2, cfg.Train.Rows(), cfg.Train.Rows())
		}
		return e
	}
	dim := cfg.Model.Features.Features
	if cfg.MapName != "" {
		dim = cfg.MapOptions.Features
	}
	e.Merge(model.Memory(cfg.Model, dim, width, max(targets, 1000)))
	return e
}
