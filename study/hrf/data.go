package hrf

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/cluster"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
)

// This file holds the data study (HRF Table 1): the MSE of each estimator
// of SM(x, y) on random pairs of standardised data rows scaled to norm r.

// DataConfig configures Data.
type DataConfig struct {
	// X holds the data rows (no label column); at least 2.
	X *mat.Dense `json:"-"`
	// Estimators are catalog names of softmax-kernel estimators (nil:
	// DefaultEstimators).
	Estimators []string `json:"estimators"`
	// Sampler draws the projections (nil: sampler.Default()).
	Sampler sampler.Sampler `json:"-"`
	// Features is the feature budget D.
	Features int `json:"features"`
	// Draws is the number of independent draws of each map (at least 2).
	Draws int `json:"draws"`
	// Pairs is the number of random pairs of distinct rows.
	Pairs int `json:"pairs"`
	// Norms are the norms r the standardised rows are scaled to, each at
	// most MaxNorm.
	Norms []float64 `json:"norms"`
	// Seed seeds the pairs and the k-means of the clustered estimator;
	// draw s of a map uses Seed + 1 + s.
	Seed uint64 `json:"seed"`
}

// Validate checks the configuration.
func (c DataConfig) Validate() error {
	if c.X == nil {
		return errors.New("hrf: no data rows given")
	}
	n, d := c.X.Dims()
	if n < 2 {
		return fmt.Errorf("hrf: the data study needs at least 2 rows, got %d", n)
	}
	if err := checkBudget(c.Features, c.Draws, 2); err != nil {
		return err
	}
	if c.Pairs <= 0 {
		return fmt.Errorf("hrf: the number of pairs must be positive, got %d", c.Pairs)
	}
	if _, err := limits.Matrix("hrf: the pairs", c.Pairs, d); err != nil {
		return err
	}
	if err := checkNorms(c.Norms); err != nil {
		return err
	}
	_, err := resolveEstimators(catalog.Default(), c.Estimators)
	return err
}

// DataRow is the MSE of one estimator on the pairs of rows scaled to one
// norm, over the draws of the map.
type DataRow struct {
	Estimator string  `json:"estimator"`
	Sampler   string  `json:"sampler"`
	Features  int     `json:"features"`
	Dim       int     `json:"feature_dim"`
	Norm      float64 `json:"norm"`
	Pairs     int     `json:"pairs"`
	Draws     int     `json:"draws"`
	// MSE and MSEStd are the mean and standard deviation over draws of the
	// MSE over pairs.
	MSE    float64 `json:"mse"`
	MSEStd float64 `json:"mse_std"`
	// MeanAngle is the mean angle between the rows of a pair.
	MeanAngle float64 `json:"mean_angle"`
}

// DataResult is the result of Data.
type DataResult struct {
	// Rows are ordered by norm, then estimator.
	Rows     []DataRow
	Sampler  string
	Features int
	Draws    int
	Pairs    int
}

// Data measures the estimation of SM(x, y) on random pairs of
// distinct data rows (HRF Table 1): the columns are standardised and each
// row scaled to norm r; for each estimator the MSE over the pairs is
// averaged over Draws independent maps (mean and standard deviation). The
// clustered estimator uses k-means centres (k = 2) of the scaled rows for
// both queries and keys; the data-fitted estimators (oprf, sderf, aderf)
// are fitted to the pairs' first rows as queries and second rows as keys
// (their means and second moments, DERF paper Sec. 4), not to isotropic
// statistics. Norms beyond MaxNorm are refused, and an estimator whose
// estimates or MSE overflow float64 gives an error wrapping
// features.ErrOverflow.
func Data(ctx context.Context, cfg DataConfig, progress func(done, total int)) (*DataResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	reg := catalog.Default()
	names, err := resolveEstimators(reg, cfg.Estimators)
	if err != nil {
		return nil, err
	}
	smp := sampler.Or(cfg.Sampler)
	_, d := cfg.X.Dims()
	pairs := cfg.Pairs
	ia, ib := cfg.pairIndices()
	res := &DataResult{Sampler: smp.Name(), Features: cfg.Features, Draws: cfg.Draws, Pairs: pairs}
	tick := progressFunc(progress, len(cfg.Norms)*len(names)*cfg.Draws)
	done := 0
	for _, r := range cfg.Norms {
		z, err := standardise(cfg.X, r)
		if err != nil {
			return nil, err
		}
		xa, xb := pairRows(z, ia, ib)
		exact := make([]float64, pairs)
		var angle float64
		for i := range ia {
			exact[i] = math.Exp(floats.Dot(xa.RawRowView(i), xb.RawRowView(i)))
			angle += kernel.Angle(xa.RawRowView(i), xb.RawRowView(i)) / float64(pairs)
		}
		var centres *mat.Dense
		for _, nm := range names {
			if nm.entry == "clustered" && centres == nil {
				if centres, _, err = cluster.KMeans(z, 2, cfg.Seed, 50); err != nil {
					return nil, err
				}
			}
		}
		for _, nm := range names {
			row := DataRow{Estimator: nm.label, Sampler: smp.Name(), Features: cfg.Features, Norm: r, Pairs: pairs,
				Draws: cfg.Draws, MeanAngle: angle}
			mses := make([]float64, 0, cfg.Draws)
			for s := 0; s < cfg.Draws; s++ {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				p, err := reg.Pair(nm.entry, features.Options{InputDim: d, Features: cfg.Features, Sampler: smp,
					Seed: cfg.Seed + 1 + uint64(s), Norm: r, QueryCentres: centres, KeyCentres: centres})
				if err != nil {
					return nil, err
				}
				if p, err = fitted(p, xa, xb); err != nil {
					return nil, fmt.Errorf("hrf: %s at norm %v: %w", nm.label, r, err)
				}
				row.Dim = p.Dim()
				e, err := estimates(p, xa, xb, nm.label, r)
				if err != nil {
					return nil, err
				}
				mse := meanSquaredError(e, exact)
				if math.IsInf(mse, 0) || math.IsNaN(mse) {
					return nil, overflowErr(nm.label, r, "the mean squared error")
				}
				mses = append(mses, mse)
				done++
				tick(done)
			}
			row.MSE, row.MSEStd = meanStd(mses)
			res.Rows = append(res.Rows, row)
		}
	}
	return res, nil
}

// pairIndices returns the rows ia[i], ib[i] of the Pairs random pairs of
// distinct rows, drawn from Seed.
func (c DataConfig) pairIndices() (ia, ib []int) {
	n, _ := c.X.Dims()
	g := rng.New(c.Seed)
	ia = make([]int, c.Pairs)
	ib = make([]int, c.Pairs)
	for i := range ia {
		ia[i] = g.IntN(n)
		ib[i] = g.IntN(n - 1)
		if ib[i] >= ia[i] {
			ib[i]++
		}
	}
	return ia, ib
}

// pairRows returns the queries x_i = z[ia[i]] and the keys y_i = z[ib[i]]
// of the pairs.
func pairRows(z *mat.Dense, ia, ib []int) (xa, xb *mat.Dense) {
	_, d := z.Dims()
	xa = mat.NewDense(len(ia), d, nil)
	xb = mat.NewDense(len(ia), d, nil)
	for i := range ia {
		copy(xa.RawRowView(i), z.RawRowView(ia[i]))
		copy(xb.RawRowView(i), z.RawRowView(ib[i]))
	}
	return xa, xb
}

// standardise standardises the columns of x and scales each
// non-zero row to norm r.
func standardise(x *mat.Dense, r float64) (*mat.Dense, error) {
	s, err := data.FitScaler(x)
	if err != nil {
		return nil, err
	}
	z, err := s.Transform(x)
	if err != nil {
		return nil, err
	}
	scaleRows(z, r)
	return z, nil
}

// Table returns one line per norm and estimator: mean angle, feature
// dimension, MSE and its standard deviation over draws.
func (r *DataResult) Table() *report.Table {
	t := &report.Table{
		Title: fmt.Sprintf("softmax-kernel MSE on %d random pairs of rows (standardised, scaled to norm r), %d draws, budget D=%d, %s",
			r.Pairs, r.Draws, r.Features, r.Sampler),
		Header: []string{"r", "mean θ/π", "estimator", "dim", "MSE", "± std"},
	}
	for _, row := range r.Rows {
		t.Add(report.Fixed(row.Norm, 2), report.Fixed(row.MeanAngle/math.Pi, 3), row.Estimator, row.Dim,
			fmt.Sprintf("%.4e", row.MSE), fmt.Sprintf("%.2e", row.MSEStd))
	}
	return t
}
