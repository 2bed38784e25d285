// Package fitflags is the flag set of a kernel ridge fit, defined once
// for `kernelkit fit` and `kernelkit-beam fit` (and the feature-map flags
// of `kernelkit transform`): Options binds the flags on a pflag.FlagSet
// with their domains (internal/flagdomain), checks their combinations,
// and turns them and the training data into the model.Job that
// model.RunJob fits. Both programs therefore accept the same flags with
// the same meanings; a program that cannot do what an option asks refuses
// it in one line (kernelkit-beam: docs/beam.md).
package fitflags

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/flagdomain"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/model"
)

// MaxRidgeFeatures is the largest feature count of a ridge fit: its D×D
// statistics must fit limits.MaxElements.
const MaxRidgeFeatures = 1 << 15

// Features are the flags that define a feature map (fit, transform).
type Features struct {
	Kernel, Form, Sampler string
	Gamma                 float64
	GammaScale            bool // --gamma scale
	ScaleOK               bool // the command supports --gamma scale (fit)
	Features              int
	Seed                  uint64
	Float32               bool
	MapName               string // --map: a map of the registry instead of --kernel/--form

	// --temperature: τ, or auto (the default).
	Temperature     float64
	TemperatureAuto bool
}

// temperatureFlag is the --temperature flag: "auto" (the default:
// features.AutoTemperature, τ = d/2) or a positive finite number, τ of the
// softmax kernel exp(xᵀy/τ).
type temperatureFlag struct{ f *Features }

func (t temperatureFlag) String() string {
	if t.f.TemperatureAuto {
		return "auto"
	}
	return strconv.FormatFloat(t.f.Temperature, 'g', -1, 64)
}
func (t temperatureFlag) Type() string { return "auto|float" }
func (t temperatureFlag) Set(s string) error {
	if s == "auto" {
		t.f.TemperatureAuto = true
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf(`must be "auto" or %s`, flagdomain.PositiveFloat)
	}
	t.f.Temperature, t.f.TemperatureAuto = v, false
	return nil
}

// Domain is the domain of the numeric values (besides "auto").
func (t temperatureFlag) Domain() flagdomain.Domain { return flagdomain.PositiveFloat }

// TemperatureFor returns τ of the feature flags for the kernel kern and d
// input columns: 0 (none) for a kernel other than softmax, where
// --temperature is an error.
func (f *Features) TemperatureFor(fl *pflag.FlagSet, kern string, d int) (float64, error) {
	if !strings.EqualFold(kern, "softmax") {
		if fl.Changed("temperature") {
			return 0, fmt.Errorf("--temperature is τ of the softmax kernel exp(xᵀy/τ); the %s kernel has none", kern)
		}
		return 0, nil
	}
	if f.TemperatureAuto {
		return features.AutoTemperature(d), nil
	}
	return f.Temperature, nil
}

// gammaFlag is the --gamma flag: a finite number, or "scale" for
// scikit-learn's gamma='scale' (1/(d·Var X) of the training matrix).
type gammaFlag struct{ f *Features }

func (g gammaFlag) String() string {
	if g.f.GammaScale {
		return "scale"
	}
	return strconv.FormatFloat(g.f.Gamma, 'g', -1, 64)
}
func (g gammaFlag) Type() string { return "float|scale" }
func (g gammaFlag) Set(s string) error {
	if s == "scale" {
		g.f.GammaScale = true
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !flagdomain.Bandwidth.Contains(v) {
		return fmt.Errorf(`must be "scale" or %s`, flagdomain.Bandwidth)
	}
	g.f.Gamma, g.f.GammaScale = v, false
	return nil
}

// Domain is the domain of the numeric values (besides "scale").
func (g gammaFlag) Domain() flagdomain.Domain { return flagdomain.Bandwidth }

// Bind binds the flags, with features, the domain of --features.
func (f *Features) Bind(fl *pflag.FlagSet, features flagdomain.Domain) {
	fl.StringVar(&f.Kernel, "kernel", "rbf", "kernel: rbf, softmax, arccos0, arccos1 or arccos2")
	fl.StringVar(&f.Form, "form", "", "feature form (rbf: cos, sincos, positive, hyperbolic; softmax: positive, trig, hyperbolic)")
	f.TemperatureAuto = true
	fl.Var(temperatureFlag{f}, "temperature", flagdomain.UsageWith("temperature τ of the softmax kernel exp(xᵀy/τ) (softmax maps only: --kernel softmax and the --map maps of the softmax kernel, kernelkit maps lists them): 'auto' = d/2 for d input columns, which makes exp(xᵀy/τ) the Gaussian kernel of rbf's default γ = 1/d up to the rows' norms, so xᵀy/τ stays of order 1 on standardised rows (best mean accuracy of the measured τ on the letter data, ahead of the Performer's √d: docs/estimators.md), or a positive finite number (1: the unscaled exp(xᵀy))", flagdomain.PositiveFloat))
	fl.Var(gammaFlag{f}, "gamma", "RBF bandwidth γ in exp(-γ‖x-y‖²), or 'scale' (fit: 1/(d·Var X) of the standardised training matrix, scikit-learn's gamma='scale') (default 1/d)")
	flagdomain.IntVar(fl, &f.Features, "features", 512, features, "number of random features D")
	fl.StringVar(&f.Sampler, "sampler", "iid", "projection sampler: iid, orf, sorf, halton, truncated or simplex")
	flagdomain.SeedVar(fl, &f.Seed, "seed", 0, "random seed")
	fl.StringVar(&f.MapName, "map", "", "a symmetric map of the registry by name instead of --kernel/--form (e.g. nystrom/kmeans, arccos1, poly2, rbf/sincos), built with --features, --gamma, --sampler, --seed, --float32 and, for data-dependent maps, the (standardised) training rows; kernelkit maps lists them")
	fl.BoolVar(&f.Float32, "float32", false, "single precision: the projection, and in fit the features and each chunk's ridge statistics (summed and solved in float64; about twice as fast)")
}

// CheckMap returns an error unless name is a symmetric map of the
// registry (catalog.Default), without the list of maps, which `kernelkit
// maps` prints, so that the error stays one short line.
func CheckMap(name string) error {
	e, err := catalog.Default().Lookup(name)
	if err != nil {
		return fmt.Errorf("unknown map %.40q; `kernelkit maps` names them", name)
	}
	if e.Asymmetric {
		return fmt.Errorf("map %q is an asymmetric query/key pair, not a feature map for --map; `kernelkit maps` names them", e.Name)
	}
	return nil
}

// MapOptions returns the registry options of --map for d input columns
// (γ as in Config; Data is left to the caller). --map with --kernel or
// --form is an error.
func (f *Features) MapOptions(fl *pflag.FlagSet, d int) (features.Options, error) {
	if err := CheckMap(f.MapName); err != nil {
		return features.Options{}, err
	}
	if fl.Changed("kernel") || fl.Changed("form") {
		return features.Options{}, errors.New("--map names the whole feature map; drop --kernel and --form")
	}
	c, err := f.Config(fl, d)
	if err != nil {
		return features.Options{}, err
	}
	o := features.Options{InputDim: d, Features: c.Features, Gamma: c.Gamma, Sampler: c.Sampler, Seed: c.Seed, Float32: c.Float32}
	if e, err := catalog.Default().Lookup(f.MapName); err == nil {
		if o.Temperature, err = f.TemperatureFor(fl, e.Kernel, d); err != nil {
			return features.Options{}, err
		}
	}
	if e, err := catalog.Default().Lookup(f.MapName); err == nil && !UsesGamma(e.Kernel) {
		o.Gamma = 0 // not a parameter of this map: not reported as one
	}
	return o, nil
}

// UsesGamma reports whether the kernel has the bandwidth --gamma sets:
// exp(−γ‖x−y‖²) (rbf) and (γxᵀy + 1)^p (poly2, poly3). The softmax,
// arc-cosine and χ² kernels have none.
func UsesGamma(kernel string) bool { return kernel == "rbf" || kernel == "poly2" || kernel == "poly3" }

// Config returns the map of the flags for d input columns (γ = 1/d unless
// --gamma is given).
func (f *Features) Config(fl *pflag.FlagSet, d int) (features.Config, error) {
	s, err := catalog.SamplerByName(f.Sampler)
	if err != nil {
		return features.Config{}, err
	}
	kern := f.Kernel
	if f.MapName != "" {
		if e, err := catalog.Default().Lookup(f.MapName); err == nil {
			kern = e.Kernel
		}
	}
	if (fl.Changed("gamma") || f.GammaScale) && !UsesGamma(kern) {
		return features.Config{}, fmt.Errorf("--gamma is the bandwidth of the rbf and polynomial kernels; the %s kernel has none", kern)
	}
	g := f.Gamma
	if f.GammaScale {
		if !f.ScaleOK {
			return features.Config{}, errors.New("--gamma scale is available in fit only (it is computed from the training rows)")
		}
		g = 1 / float64(d) // replaced by the fit (model.Job.GammaScale)
	} else if !fl.Changed("gamma") {
		g = 1 / float64(d)
	} else if !(g > 0) {
		return features.Config{}, fmt.Errorf("--gamma must be positive, got %v", g)
	}
	if f.Features <= 0 {
		return features.Config{}, fmt.Errorf("--features must be positive, got %d", f.Features)
	}
	tau, err := f.TemperatureFor(fl, kern, d)
	if err != nil {
		return features.Config{}, err
	}
	if f.MapName != "" {
		tau = 0 // the map's, in MapOptions
	}
	return features.Config{Kernel: f.Kernel, Form: f.Form, Gamma: g, Temperature: tau, Features: f.Features,
		Sampler: s, Seed: f.Seed, Float32: f.Float32}, nil
}

// DeviceUsage is the usage of a --device flag for what.
func DeviceUsage(what string) string {
	return "device for " + what + ": cpu (kernelkit's own code), go (GoMLX's pure-Go backend: the device graphs on the CPU) " +
		"or cuda (an NVIDIA GPU through XLA, float32, in a program built with CGO_ENABLED=1 -tags xla)"
}

// Options are the flags of a fit.
type Options struct {
	Feat                                         Features
	Train, Test, Label, Format, Model, Task, Sel string
	Lambda                                       float64
	Folds                                        int
	JSON, NoStd, Stream, Exact                   bool
	Calibrate                                    bool   // --calibrate
	Device                                       string // --device
	WeightColumn                                 string
	ClassWeight                                  ClassWeight
	Targets                                      []string
}

// ClassWeight is the --class-weight flag: "balanced", or explicit
// weights by class index, "0=2,3=0.5" (classes not named weigh 1).
type ClassWeight struct {
	Balanced bool
	Weights  map[int]float64
}

func (c *ClassWeight) String() string {
	if c.Balanced {
		return "balanced"
	}
	keys := make([]int, 0, len(c.Weights))
	for k := range c.Weights {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.Itoa(k) + "=" + strconv.FormatFloat(c.Weights[k], 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// Type names the flag's values.
func (c *ClassWeight) Type() string { return "balanced|class=weight,..." }

// Set parses the flag (once).
func (c *ClassWeight) Set(s string) error {
	if c.Balanced || c.Weights != nil {
		return errors.New("given twice")
	}
	if s == "balanced" {
		c.Balanced = true
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
	c.Weights = w
	return nil
}

// IsSet reports whether the flag was given.
func (c *ClassWeight) IsSet() bool { return c.Balanced || c.Weights != nil }

// Bind binds the flags of a fit.
func (o *Options) Bind(fl *pflag.FlagSet) {
	o.Feat.Bind(fl, flagdomain.IntRange(1, MaxRidgeFeatures))
	flagdomain.OnceVar(fl, &o.Train, "train", "", "training data (CSV or LIBSVM)")
	flagdomain.OnceVar(fl, &o.Test, "test", "", "test data, same format")
	flagdomain.OnceVar(fl, &o.Label, "label", "", "name of the label column (default: last)")
	fl.StringVar(&o.Format, "format", "auto", "data format: auto, csv, libsvm or parquet")
	fl.StringVar(&o.Task, "task", "auto", "auto, classification or regression")
	flagdomain.FloatVar(fl, &o.Lambda, "lambda", 0.5, flagdomain.NonNegFloat, "ridge parameter λ")
	fl.StringVar(&o.Sel, "select", "", "choose λ from a grid: gcv or kfold")
	flagdomain.IntVar(fl, &o.Folds, "folds", 5, flagdomain.IntRange(2, limits.MaxCount), "folds for --select kfold and --calibrate")
	fl.BoolVar(&o.NoStd, "no-standardize", false, "do not standardise features")
	fl.BoolVar(&o.Stream, "stream", false, "read the training CSV or LIBSVM file in streaming passes (two, three with --calibrate; memory independent of the row count, but for the out-of-fold scores of --calibrate), giving the model file of the in-memory fit byte for byte")
	fl.BoolVar(&o.Exact, "exact", false, "fit exact kernel ridge (dual Cholesky solve, O(n³) time, n² memory; at most 32768 training rows) instead of random features")
	fl.BoolVar(&o.Calibrate, "calibrate", false, "fit Platt sigmoids on out-of-fold scores (--folds folds, stratified by class: each class needs at least that many rows of positive weight) so that predict --scores also writes class probabilities (classification; with --stream a third pass over the training rows)")
	o.Feat.ScaleOK = true
	flagdomain.OnceVar(fl, &o.WeightColumn, "weight-column", "", "CSV column of per-row sample weights (finite, ≥ 0; not a feature, and dropped from a --test file)")
	fl.Var(&o.ClassWeight, "class-weight", "class weights: balanced (n/(classes·count of the class), scikit-learn's) or class=weight,... by class index (others weigh 1); they multiply the sample weights")
	fl.StringSliceVar(&o.Targets, "targets", nil, "several target columns for multi-output regression (a,b,c; instead of --label)")
	flagdomain.OnceVar(fl, &o.Model, "model", "", "write the fitted model to this file")
	fl.BoolVar(&o.JSON, "json", false, "print one JSON object")
	fl.StringVar(&o.Device, "device", device.Host, DeviceUsage("the features and ridge statistics (the solve stays on the CPU)"))
}

// Multi reports a multi-output regression (--targets with several columns).
func (o *Options) Multi() bool { return len(o.Targets) > 1 }

// Check refuses the combinations of flags that no fit can run, before
// anything is read: without --train, an unknown --map, --exact with an
// option it has no meaning for, --targets with --label.
func (o *Options) Check() error {
	if o.Train == "" {
		return errors.New("--train is required")
	}
	if o.Feat.MapName != "" {
		if err := CheckMap(o.Feat.MapName); err != nil {
			return err
		}
	}
	if o.Lambda < 0 {
		return fmt.Errorf("--lambda must be non-negative, got %v", o.Lambda)
	}
	if o.Exact && o.Stream {
		return errors.New("--exact needs the training rows in memory; drop --stream")
	}
	if o.Exact && o.Sel != "" {
		return errors.New("--exact has no λ selection; give --lambda")
	}
	if len(o.Targets) > 0 && o.Label != "" {
		return errors.New("--targets names the target columns; drop --label")
	}
	if o.Exact && o.Calibrate {
		return errors.New("--exact has no out-of-fold scores to calibrate; drop --calibrate")
	}
	if o.Exact && (o.WeightColumn != "" || o.ClassWeight.IsSet() || o.Multi()) {
		return errors.New("--exact fits one unweighted target; drop --weight-column, --class-weight and --targets")
	}
	if o.Exact && o.Device != device.Host {
		return errors.New("--exact runs on the CPU; drop --device")
	}
	return nil
}

// Job returns the job of the flags before any data is read: the model's
// options (λ and its selection, folds, standardisation, --float32 for the
// features and the statistics, calibration, class weights), --gamma scale
// and --exact. Open and Complete add the data and the feature map.
func (o *Options) Job() model.Job {
	j := model.Job{Model: model.Options{Lambda: o.Lambda, Select: o.Sel, Folds: o.Folds, Standardize: !o.NoStd, Float32: o.Feat.Float32, Calibrate: o.Calibrate},
		GammaScale: o.Feat.GammaScale, Exact: o.Exact}
	if o.ClassWeight.Balanced {
		j.Model.ClassWeight = "balanced"
	}
	j.Model.ClassWeights = o.ClassWeight.Weights
	return j
}

// Open reads the training rows of --train into j: in memory, or with
// --stream as the opener of passes over the file (which needs --test).
// It returns the number of input columns.
func (o *Options) Open(j *model.Job) (width int, err error) {
	if o.Stream {
		if o.Test == "" {
			return 0, errors.New("--stream needs --test (the training rows are not kept in memory)")
		}
		var cols model.Columns
		j.Stream, cols, width, err = model.StreamFile(o.Train, o.Format, data.CSVOptions{Label: o.Label, Targets: o.Targets, Weight: o.WeightColumn})
		j.Names, j.Label, j.TargetNames = cols.Names, cols.Label, cols.Targets
		return width, err
	}
	if j.Train, err = data.Open(o.Train, data.OpenOptions{Format: o.Format, Label: o.Label, Targets: o.Targets, Weight: o.WeightColumn}); err != nil {
		return 0, err
	}
	j.Names = j.Train.Names
	return j.Train.Cols(), nil
}

// Complete sets the task (--task, or from the in-memory labels), the
// feature map (--kernel … or --map) for width input columns and the --test
// rows of a job that Open filled.
func (o *Options) Complete(fl *pflag.FlagSet, j *model.Job, width int) error {
	var err error
	if j.Model.Task, err = model.ParseTask(o.Task, j.Train); err != nil {
		return err
	}
	if o.Multi() {
		if o.Task != "auto" && j.Model.Task != model.Regression {
			return fmt.Errorf("--targets fits a multi-output regression, not --task %s", o.Task)
		}
		j.Model.Task = model.Regression
	}
	if j.Model.Features, err = o.Feat.Config(fl, width); err != nil {
		return err
	}
	if o.Feat.MapName != "" {
		if o.Exact {
			return errors.New("--exact fits the kernel itself; drop --map")
		}
		j.MapName, j.Registry = o.Feat.MapName, catalog.Default()
		if j.MapOptions, err = o.Feat.MapOptions(fl, width); err != nil {
			return err
		}
	}
	if o.Test != "" {
		label := o.Label
		if j.Train != nil {
			label = j.Train.Label
		}
		opt := data.OpenOptions{Format: o.Format, Label: label, Columns: j.Names, Width: width, Targets: o.Targets, Weight: o.WeightColumn}
		if j.Test, err = data.Open(o.Test, opt); err != nil {
			return err
		}
	}
	return nil
}
