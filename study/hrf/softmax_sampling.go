package hrf

import (
	"context"
	"fmt"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
)

// This file holds the softmax sampling study (HRF Sec. 4.2): how well each
// estimator approximates the softmax distribution over random class
// embeddings for random queries.

// Sizes of the softmax sampling study.
const (
	// SoftmaxSamplingQueries is the number of query embeddings.
	SoftmaxSamplingQueries = 100
	// SoftmaxSamplingClasses is the number of class embeddings.
	SoftmaxSamplingClasses = 1000
)

// softmaxSamplingFeatures are the default feature budgets of the softmax study.
var softmaxSamplingFeatures = []int{64, 128, 256, 512}

// SoftmaxSamplingConfig configures SoftmaxSampling.
type SoftmaxSamplingConfig struct {
	// Estimators are catalog names of softmax-kernel estimators (nil:
	// DefaultEstimators); the clustered estimator is skipped.
	Estimators []string `json:"estimators"`
	// Sampler draws the projections (nil: sampler.Default()).
	Sampler sampler.Sampler `json:"-"`
	// Dim is the embedding dimension d.
	Dim int `json:"d"`
	// Norms are the norms r of the embeddings, each at most MaxNorm.
	Norms []float64 `json:"norms"`
	// Features are the feature budgets D (nil: 64, 128, 256, 512).
	Features []int `json:"features"`
	// Seed seeds the embeddings (Seed+1, Seed+2) and the maps (Seed+3).
	Seed uint64 `json:"seed"`
}

// Validate checks the configuration.
func (c SoftmaxSamplingConfig) Validate() error {
	if err := limits.Dim("hrf: the embedding dimension", c.Dim); err != nil {
		return err
	}
	if _, err := limits.Matrix("hrf: the class embeddings", SoftmaxSamplingClasses, c.Dim); err != nil {
		return err
	}
	if err := checkNorms(c.Norms); err != nil {
		return err
	}
	for _, D := range c.Features {
		if err := limits.Dim("hrf: the feature budget", D); err != nil {
			return err
		}
	}
	_, err := resolveEstimators(catalog.Default(), c.Estimators)
	return err
}

// SoftmaxSamplingRow is the softmax sampling quality of one estimator with budget
// D at one embedding norm.
type SoftmaxSamplingRow struct {
	Estimator string  `json:"estimator"`
	Features  int     `json:"features"`
	Dim       int     `json:"feature_dim"`
	Norm      float64 `json:"norm"`
	// W1, KS and Negative are the results of SoftmaxQuality.
	W1       float64 `json:"wasserstein1"`
	KS       float64 `json:"ks"`
	Negative float64 `json:"negative_fraction"`
}

// SoftmaxSamplingResult is the result of SoftmaxSampling.
type SoftmaxSamplingResult struct {
	// Rows are ordered by norm, estimator, then budget.
	Rows    []SoftmaxSamplingRow
	Dim     int
	Sampler string
}

// SoftmaxSampling measures how well each estimator approximates the
// softmax distribution over SoftmaxSamplingClasses random class embeddings for
// SoftmaxSamplingQueries random queries (HRF Sec. 4.2), all N(0, I) rows scaled to
// norm r: the Wasserstein-1 and Kolmogorov-Smirnov distances and the
// fraction of negative estimates (see SoftmaxQuality). The data-fitted
// estimators (oprf, sderf, aderf) are fitted to the queries and the class
// embeddings. Norms beyond MaxNorm are refused; an estimator whose
// estimates overflow gives an error wrapping features.ErrOverflow.
func SoftmaxSampling(ctx context.Context, cfg SoftmaxSamplingConfig, progress func(done, total int)) (*SoftmaxSamplingResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	reg := catalog.Default()
	all, err := resolveEstimators(reg, cfg.Estimators)
	if err != nil {
		return nil, err
	}
	var names []namedEstimator
	for _, nm := range all {
		if nm.entry != "clustered" {
			names = append(names, nm)
		}
	}
	budgets := cfg.Features
	if budgets == nil {
		budgets = softmaxSamplingFeatures
	}
	smp := sampler.Or(cfg.Sampler)
	d := cfg.Dim
	res := &SoftmaxSamplingResult{Dim: d, Sampler: smp.Name()}
	tick := progressFunc(progress, len(cfg.Norms)*len(names)*len(budgets))
	done := 0
	for _, r := range cfg.Norms {
		q, err := sampler.Gaussian{}.Sample(SoftmaxSamplingQueries, d, cfg.Seed+1)
		if err != nil {
			return nil, err
		}
		c, err := sampler.Gaussian{}.Sample(SoftmaxSamplingClasses, d, cfg.Seed+2)
		if err != nil {
			return nil, err
		}
		scaleRows(q, r)
		scaleRows(c, r)
		for _, nm := range names {
			for _, D := range budgets {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				p, err := reg.Pair(nm.entry, features.Options{InputDim: d, Features: D, Sampler: smp, Seed: cfg.Seed + 3, Norm: r})
				if err != nil {
					return nil, err
				}
				if p, err = fitted(p, q, c); err != nil {
					return nil, fmt.Errorf("hrf: %s at norm %v: %w", nm.label, r, err)
				}
				w1, ks, neg, err := SoftmaxQuality(p, q, c)
				if err != nil {
					return nil, fmt.Errorf("%s, D=%d, norm %v: %w", nm.label, D, r, err)
				}
				res.Rows = append(res.Rows, SoftmaxSamplingRow{Estimator: nm.label, Features: D, Dim: p.Dim(), Norm: r, W1: w1, KS: ks, Negative: neg})
				done++
				tick(done)
			}
		}
	}
	return res, nil
}

// Table returns one line per norm, estimator and budget.
func (r *SoftmaxSamplingResult) Table() *report.Table {
	t := &report.Table{
		Title: fmt.Sprintf("softmax sampling quality (HRF Sec. 4.2): %d queries, %d classes, d=%d, embeddings of norm r (%s)",
			SoftmaxSamplingQueries, SoftmaxSamplingClasses, r.Dim, r.Sampler),
		Header: []string{"r", "estimator", "D", "dim", "W1", "KS", "negative"},
	}
	for _, row := range r.Rows {
		t.Add(report.Fixed(row.Norm, 2), row.Estimator, row.Features, row.Dim,
			report.Fixed(row.W1, 4), report.Fixed(row.KS, 4), report.Fixed(row.Negative, 4))
	}
	return t
}
