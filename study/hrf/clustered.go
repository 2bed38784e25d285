package hrf

import (
	"context"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/cluster"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
)

// This file holds the clustered-data study (HRF App. H.1, data as in
// App. H.3): the clustered hybrid estimator against FAVOR+ and
// trigonometric features, by the MSE of SM(x, y) over random pairs of
// synthetic clustered data.

// Sizes of the clustered-data study (HRF App. H.3).
const (
	// ClusteredDim is the input dimension of the clustered data.
	ClusteredDim = 50
	// ClusteredPoints is the number of points of each cluster.
	ClusteredPoints = 1000
)

// clusteredFeatures are the default feature counts m of the clustered study.
var clusteredFeatures = []int{20, 50, 80, 100, 120, 150, 200}

// clusteredSigmas are the noise scales σ of the clustered study.
var clusteredSigmas = []float64{1, math.Sqrt(10)}

// ClusteredConfig configures Clustered.
type ClusteredConfig struct {
	// Sampler draws the projections (nil: sampler.Default()).
	Sampler sampler.Sampler `json:"-"`
	// Draws is the number of independent draws of each estimator.
	Draws int `json:"draws"`
	// Seed seeds the data, the k-means and the draws.
	Seed uint64 `json:"seed"`
	// Features are the feature counts m (nil: 20, 50, 80, 100, 120, 150,
	// 200).
	Features []int `json:"features"`
	// Pairs is the number of random (query, key) pairs (0: 2000).
	Pairs int `json:"pairs"`
}

// Validate checks the configuration.
func (c ClusteredConfig) Validate() error {
	if err := limits.Count("hrf: the number of draws", c.Draws, 1); err != nil {
		return err
	}
	if c.Pairs < 0 {
		return fmt.Errorf("hrf: the number of pairs must not be negative, got %d", c.Pairs)
	}
	if _, err := limits.Matrix("hrf: the pairs", c.Pairs, ClusteredDim); err != nil {
		return err
	}
	if _, err := limits.Matrix("hrf: the MSEs", len(clusteredSigmas)*len(c.Features), c.Draws); err != nil {
		return err
	}
	for _, m := range c.Features {
		if err := limits.Dim("hrf: the number of features", m); err != nil {
			return err
		}
	}
	return nil
}

// ClusteredRow is the MSE of one estimator with m features on one data
// configuration, over the draws.
type ClusteredRow struct {
	// Config names the data: "σ=1" or "σ=3.16".
	Config    string `json:"config"`
	Features  int    `json:"features"`
	Estimator string `json:"estimator"`
	// MSE is the mean over draws of the MSE over pairs; Min and Max are
	// its extremes over draws.
	MSE float64 `json:"mse"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// ClusteredResult is the result of Clustered.
type ClusteredResult struct {
	// Rows are ordered by σ, then m, then estimator.
	Rows  []ClusteredRow
	Pairs int
	Draws int
}

// Clustered compares, on synthetic clustered data (HRF App. H.1,
// data as in App. H.3, see ClusteredData), the clustered hybrid estimator
// ("hybrid-cluster": k-means with k = 2 on queries and keys, real diagonal
// A of Eq. 88, zero-one λ, m/2 projections per cluster pair) with FAVOR+
// ("positive") and trigonometric features of m features, by the MSE of
// SM(x, y) over random pairs, for σ = 1 and σ = √10.
func Clustered(ctx context.Context, cfg ClusteredConfig, progress func(done, total int)) (*ClusteredResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ms := cfg.Features
	if ms == nil {
		ms = clusteredFeatures
	}
	npairs := cfg.Pairs
	if npairs == 0 {
		npairs = 2000
	}
	smp := sampler.Or(cfg.Sampler)
	reg := catalog.Default()
	const d = ClusteredDim
	estimators := []string{"hybrid-cluster", "positive", "trig"}
	res := &ClusteredResult{Pairs: npairs, Draws: cfg.Draws}
	tick := progressFunc(progress, len(clusteredSigmas)*len(ms)*len(estimators)*cfg.Draws)
	done := 0
	for _, sigma := range clusteredSigmas {
		x, y, err := ClusteredData(sigma, cfg.Seed)
		if err != nil {
			return nil, err
		}
		qc, _, err := cluster.KMeans(x, 2, cfg.Seed, 100)
		if err != nil {
			return nil, err
		}
		kc, _, err := cluster.KMeans(y, 2, cfg.Seed+1, 100)
		if err != nil {
			return nil, err
		}
		g := rng.New(cfg.Seed + 7)
		nx, _ := x.Dims()
		ny, _ := y.Dims()
		xa := mat.NewDense(npairs, d, nil)
		yb := mat.NewDense(npairs, d, nil)
		exact := make([]float64, npairs)
		for i := 0; i < npairs; i++ {
			copy(xa.RawRowView(i), x.RawRowView(g.IntN(nx)))
			copy(yb.RawRowView(i), y.RawRowView(g.IntN(ny)))
			exact[i] = math.Exp(floats.Dot(xa.RawRowView(i), yb.RawRowView(i)))
		}
		label := fmt.Sprintf("σ=%.3g", sigma)
		for _, m := range ms {
			for _, nm := range estimators {
				mses := make([]float64, 0, cfg.Draws)
				for s := 0; s < cfg.Draws; s++ {
					if err := ctx.Err(); err != nil {
						return nil, err
					}
					seed := cfg.Seed + uint64(s)
					var p features.Pair
					if nm == "hybrid-cluster" {
						p, err = hybrid.NewClustered(qc, kc, hybrid.ClusterOptions{M: max(1, m/2), Sampler: smp, Seed: seed})
					} else {
						p, err = reg.Pair(nm, features.Options{InputDim: d, Features: m, Sampler: smp, Seed: seed})
					}
					if err != nil {
						return nil, err
					}
					e, err := features.PairEstimates(p, xa, yb)
					if err != nil {
						return nil, err
					}
					mses = append(mses, meanSquaredError(e, exact))
					done++
					tick(done)
				}
				sort.Float64s(mses)
				res.Rows = append(res.Rows, ClusteredRow{Config: label, Features: m, Estimator: nm,
					MSE: stat.Mean(mses, nil), Min: mses[0], Max: mses[len(mses)-1]})
			}
		}
	}
	return res, nil
}

// ClusteredData returns synthetic clustered data after HRF App. H.3: two
// query clusters around rotations O₁X₀, O₂X₀ and two key clusters around
// O₃Y₀, O₄Y₀ in R^50 (X₀, Y₀ random of norm 1, O random orthogonal),
// ClusteredPoints points each, Gaussian noise of norm about 0.1σ
// (per-coordinate standard deviation 0.1σ/√50). The paper does not give
// the scale of X₀ against σ; this choice keeps SM(x, y) in [e⁻¹·², e¹·²].
// Queries x and keys y have 2·ClusteredPoints rows each.
func ClusteredData(sigma float64, seed uint64) (x, y *mat.Dense, err error) {
	const d, per = ClusteredDim, ClusteredPoints
	unit := func(s uint64) (*mat.Dense, error) {
		v, err := sampler.Gaussian{}.Sample(1, d, s)
		if err != nil {
			return nil, err
		}
		v.Scale(1/mat.Norm(v, 2), v)
		return v, nil
	}
	gen := func(base *mat.Dense, s uint64) (*mat.Dense, error) {
		out := mat.NewDense(2*per, d, nil)
		for c := 0; c < 2; c++ {
			o, err := sampler.Orthogonal{}.Sample(d, d, s+uint64(c))
			if err != nil {
				return nil, err
			}
			for i := 0; i < d; i++ { // unit rows: a rotation
				row := o.RawRowView(i)
				nr := math.Sqrt(floats.Dot(row, row))
				for j := range row {
					row[j] /= nr
				}
			}
			var mean mat.Dense
			mean.Mul(base, o.T())
			noise, err := sampler.Gaussian{}.Sample(per, d, s+10+uint64(c))
			if err != nil {
				return nil, err
			}
			sd := 0.1 * sigma / math.Sqrt(d)
			for i := 0; i < per; i++ {
				row := out.RawRowView(c*per + i)
				for j := range row {
					row[j] = mean.At(0, j) + sd*noise.At(i, j)
				}
			}
		}
		return out, nil
	}
	x0, err := unit(seed)
	if err != nil {
		return nil, nil, err
	}
	y0, err := unit(seed + 1)
	if err != nil {
		return nil, nil, err
	}
	if x, err = gen(x0, seed+100); err != nil {
		return nil, nil, err
	}
	if y, err = gen(y0, seed+200); err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// Table returns one line per data configuration, m and estimator.
func (r *ClusteredResult) Table() *report.Table {
	t := &report.Table{
		Title: fmt.Sprintf("clustered data (HRF App. H.1): 2+2 Gaussian clusters of %d points in R^%d (centres of norm 1, noise norm 0.1σ), k-means k=2, real diagonal A (Eq. 88), zero-one λ; MSE over %d pairs, %d draws",
			ClusteredPoints, ClusteredDim, r.Pairs, r.Draws),
		Header: []string{"data", "m", "estimator", "mean MSE", "[min, max]"},
	}
	for _, row := range r.Rows {
		t.Add(row.Config, row.Features, row.Estimator, fmt.Sprintf("%.4e", row.MSE), fmt.Sprintf("[%.4f, %.4f]", row.Min, row.Max))
	}
	return t
}

// Plot returns the mean MSE against m, one line per data configuration and
// estimator, on a log scale.
func (r *ClusteredResult) Plot() *report.Plot {
	p := &report.Plot{
		Title:    "clustered data: MSE vs features",
		XLabel:   "features m",
		YLabel:   "mean MSE (log scale)",
		LogY:     true,
		Headroom: 30,
	}
	index := map[string]int{}
	for _, row := range r.Rows {
		k := row.Config + " " + row.Estimator
		i, ok := index[k]
		if !ok {
			i = len(p.Series)
			index[k] = i
			p.Series = append(p.Series, report.Series{Name: k, Points: true})
		}
		p.Series[i].X = append(p.Series[i].X, float64(row.Features))
		p.Series[i].Y = append(p.Series[i].Y, row.MSE)
	}
	return p
}
