package baseline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/report"
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

// DemoConfig configures Demo.
type DemoConfig struct {
	// Kernels are the demo's kernels: "rbf" (RFF cos), "gaussian" (the
	// Gaussian kernel through softmax features, hyperbolic form),
	// "arccos0" and "arccos1".
	Kernels []string `json:"kernels"`
	// Samplers name the projection samplers (sampler.ByName).
	Samplers []string `json:"samplers"`
	// Features are the feature counts D, run in increasing order.
	Features []int `json:"features"`
	// Gamma is the RBF bandwidth γ, Lambda the ridge parameter λ.
	Gamma  float64 `json:"gamma"`
	Lambda float64 `json:"lambda"`
	Seed   uint64  `json:"seed"`
	// Name, Train and Test are the data set; nil Train and Test mean the
	// embedded letter data split at row 16000 (Name "letter").
	Name        string        `json:"name"`
	Train, Test *data.Dataset `json:"-"`
}

// DefaultDemo returns the configuration of the README's demo: four
// kernels, samplers iid, orf and sorf, D = 128…1024, γ = 1/16, λ = 0.5 on
// the letter data.
func DefaultDemo() DemoConfig {
	return DemoConfig{Kernels: []string{"rbf", "gaussian", "arccos0", "arccos1"},
		Samplers: []string{"iid", "orf", "sorf"}, Features: []int{128, 256, 512, 1024},
		Gamma: 1.0 / 16, Lambda: 0.5, Name: "letter"}
}

// DemoResult holds the rows of Demo, kernel by kernel, then sampler by
// sampler, then by increasing D, and the configuration that made them.
type DemoResult struct {
	Config  DemoConfig
	Classes int
	Rows    []*model.JobResult
}

// Demo fits a ridge classifier (standardised inputs) for each kernel,
// sampler and feature count of cfg, and records test accuracy, the
// relative Gram error ‖K−K̂‖_F/‖K‖_F on the first 1000 test rows and the
// fit+predict time: how fast each estimator converges to its kernel with
// D (RFF, Rahimi & Recht 2007; ORF and SORF, Yu et al. 2016; arc-cosine
// features, Cho & Saul 2009). progress, if not nil, gets the fits done.
func Demo(ctx context.Context, cfg DemoConfig, progress func(done, total int)) (*DemoResult, error) {
	ks := make([]demoKernel, len(cfg.Kernels))
	for i, k := range cfg.Kernels {
		dk, ok := demoKernels[strings.TrimSpace(k)]
		if !ok {
			return nil, fmt.Errorf("baseline: unknown demo kernel %.40q (want rbf, gaussian, arccos0, arccos1)", k)
		}
		ks[i] = dk
	}
	ss := make([]sampler.Sampler, len(cfg.Samplers))
	for i, name := range cfg.Samplers {
		s, err := sampler.ByName(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		ss[i] = s
	}
	cfg.Features = slices.Sorted(slices.Values(cfg.Features))
	for _, d := range cfg.Features {
		if d <= 0 {
			return nil, fmt.Errorf("baseline: demo feature count %d is not positive", d)
		}
	}
	if len(ks) == 0 || len(ss) == 0 || len(cfg.Features) == 0 {
		return nil, errors.New("baseline: the demo needs at least one kernel, sampler and feature count")
	}
	if !(cfg.Gamma > 0) || math.IsInf(cfg.Gamma, 0) {
		return nil, fmt.Errorf("baseline: demo gamma must be positive and finite, got %v", cfg.Gamma)
	}
	if !(cfg.Lambda >= 0) || math.IsInf(cfg.Lambda, 0) {
		return nil, fmt.Errorf("baseline: demo lambda must be non-negative and finite, got %v", cfg.Lambda)
	}
	if cfg.Train == nil || cfg.Test == nil {
		var err error
		if cfg.Train, cfg.Test, err = data.Letter().SplitAt(16000); err != nil {
			return nil, err
		}
		cfg.Name = "letter"
	}
	_, classes, err := cfg.Train.Labels()
	if err != nil {
		return nil, err
	}
	res := &DemoResult{Config: cfg, Classes: classes}
	total := len(ks) * len(ss) * len(cfg.Features)
	for _, k := range ks {
		for _, s := range ss {
			for _, d := range cfg.Features {
				opt := model.Options{Task: model.Classification, Lambda: cfg.Lambda, Standardize: true,
					Features: features.Config{Kernel: k.kernel, Form: k.form, Gamma: cfg.Gamma, Features: d, Sampler: s, Seed: cfg.Seed}}
				r, _, err := model.RunJob(ctx, model.Job{Model: opt, Train: cfg.Train, Test: cfg.Test}, nil)
				if err != nil {
					return nil, fmt.Errorf("%s, %s, D=%d: %w", k.label, s.Name(), d, err)
				}
				res.Rows = append(res.Rows, r)
				if progress != nil {
					progress(len(res.Rows), total)
				}
			}
		}
	}
	return res, nil
}

// Table returns the demo's table: one row per fit, under a title naming
// the data, the parameters and the BLAS backend.
func (r *DemoResult) Table() *report.Table {
	c := r.Config
	t := &report.Table{
		Title: fmt.Sprintf("kernelkit demo: %s (%d train, %d test, d=%d, %d classes), γ=%g, λ=%g, seed %d\nBLAS backend: %s",
			c.Name, c.Train.Rows(), c.Test.Rows(), c.Train.Cols(), r.Classes, c.Gamma, c.Lambda, c.Seed, blas.Name()),
		Header: []string{"kernel", "form", "sampler", "D", "test acc", "Gram err", "seconds"},
	}
	for _, row := range r.Rows {
		ge, acc := "n/a", "n/a"
		if row.GramError != nil {
			ge = report.Fixed(*row.GramError, 4)
		}
		if row.TestAccuracy != nil {
			acc = report.Fixed(*row.TestAccuracy, 4)
		}
		t.Add(row.Kernel, row.Form, row.Sampler, row.Features, acc, ge, report.Fixed(row.Seconds, 3))
	}
	return t
}

// Plot returns the plot of the Gram error against D on log-log axes, one
// line per kernel and sampler.
func (r *DemoResult) Plot() *report.Plot {
	c := r.Config
	p := &report.Plot{
		Title:  "kernelkit demo: " + c.Name + ", Gram error vs features",
		XLabel: "features D (log scale)", YLabel: "relative Gram error |K - K^|_F / |K|_F (log scale)",
		LogX: true, LogY: true, Headroom: 30, LegendLeft: true,
	}
	for _, d := range c.Features {
		p.XTicks = append(p.XTicks, float64(d))
	}
	i := 0
	for _, k := range c.Kernels {
		for range c.Samplers {
			sr := report.Series{Name: demoKernels[strings.TrimSpace(k)].label + " / " + r.Rows[i].Sampler}
			for _, row := range r.Rows[i : i+len(c.Features)] {
				sr.X = append(sr.X, float64(row.Features))
				sr.Y = append(sr.Y, 0) // dropped on the log axis when missing
				if row.GramError != nil {
					sr.Y[len(sr.Y)-1] = *row.GramError
				}
			}
			i += len(c.Features)
			p.Series = append(p.Series, sr)
		}
	}
	return p
}
