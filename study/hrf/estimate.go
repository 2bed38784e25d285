package hrf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/cluster"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
)

// This file holds the pointwise estimation studies of the softmax kernel
// SM(x, y) = exp(xᵀy) of the HRF paper: by angle (Fig. 2/5), on pairs of
// data rows (Table 1), on clustered data (App. H.1) and as softmax sampling
// quality (Sec. 4.2). The estimators are the maps of package catalog whose
// kernel is "softmax", looked up by name with a feature budget D: the plain
// maps use D features (trig and hyperbolic round an odd D up), the hybrids
// are FLOP-matched to D (hybrid.MatchFLOPs) and the clustered hybrid uses
// per-pair projections sized to D.

// DefaultEstimators returns the estimators the estimation studies
// compare when a configuration names none: trig, positive and angular.
func DefaultEstimators() []string { return []string{"trig", "positive", "angular"} }

// namedEstimator is an estimator of a study: the label of its rows (the name
// as given) and its canonical catalog name.
type namedEstimator struct {
	label, entry string
}

// resolveEstimators resolves estimator names to catalog maps of the softmax
// kernel; nil names mean DefaultEstimators.
func resolveEstimators(reg *features.Registry, names []string) ([]namedEstimator, error) {
	if len(names) == 0 {
		names = DefaultEstimators()
	}
	var known []string
	for _, n := range reg.Names() {
		if e, err := reg.Lookup(n); err == nil && e.Kernel == "softmax" {
			known = append(known, e.Name)
		}
	}
	out := make([]namedEstimator, len(names))
	for i, n := range names {
		e, err := reg.Lookup(n)
		if err != nil || e.Kernel != "softmax" {
			return nil, fmt.Errorf("hrf: unknown estimator %.40q (want %s)", n, strings.Join(known, ", "))
		}
		out[i] = namedEstimator{label: strings.TrimSpace(n), entry: e.Name}
	}
	return out, nil
}

// checkBudget validates the settings the estimation studies share.
func checkBudget(budget, draws, minDraws int) error {
	if err := limits.Dim("hrf: the feature budget", budget); err != nil {
		return err
	}
	return limits.Count("hrf: the number of draws", draws, minDraws)
}

// progressFunc returns a function that reports progress if progress is
// not nil.
func progressFunc(progress func(done, total int), total int) func(done int) {
	return func(done int) {
		if progress != nil {
			progress(done, total)
		}
	}
}

// meanSquaredError returns the mean squared difference of est and exact
// (+Inf when it is beyond float64).
func meanSquaredError(est, exact []float64) float64 {
	d := make([]float64, len(est))
	for i, v := range est {
		d[i] = v - exact[i]
	}
	r := rms(d)
	return r * r
}

// scaleRows scales every non-zero row of x to Euclidean norm r.
func scaleRows(x *mat.Dense, r float64) {
	n, _ := x.Dims()
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		nr := math.Sqrt(floats.Dot(row, row))
		if nr == 0 {
			continue
		}
		for j := range row {
			row[j] *= r / nr
		}
	}
}

// Sizes of the angle study.
const (
	// AnglesDim is the input dimension d of the angle study.
	AnglesDim = 64
	// AnglesSteps is the number of angles θ = 0, π/12, …, π.
	AnglesSteps = 13
)

// anglesRadii are the default common input norms r of the angle study.
var anglesRadii = []float64{1, 1.25, 1.5}

// AnglesConfig configures Angles.
type AnglesConfig struct {
	// Estimators are catalog names of softmax-kernel estimators (nil:
	// DefaultEstimators). The clustered estimator has no centres here and
	// is rejected.
	Estimators []string `json:"estimators"`
	// Sampler draws the projections (nil: sampler.Default()).
	Sampler sampler.Sampler `json:"-"`
	// Features is the feature budget D.
	Features int `json:"features"`
	// Draws is the number of independent draws of each map (at least 2).
	Draws int `json:"draws"`
	// Seed is the seed of the first draw; draw s uses Seed + s.
	Seed uint64 `json:"seed"`
	// Radii are the common norms r of x and y (nil: 1, 1.25, 1.5), each
	// at most MaxNorm.
	Radii []float64 `json:"radii"`
}

// radii returns the configured radii or the default ones.
func (c AnglesConfig) radii() []float64 {
	if c.Radii == nil {
		return anglesRadii
	}
	return c.Radii
}

// Validate checks the configuration.
func (c AnglesConfig) Validate() error {
	if err := checkBudget(c.Features, c.Draws, 2); err != nil {
		return err
	}
	if err := checkNorms(c.radii()); err != nil {
		return err
	}
	if _, err := limits.Matrix("hrf: the estimates", len(c.radii())*AnglesSteps, c.Draws); err != nil {
		return err
	}
	names, err := resolveEstimators(catalog.Default(), c.Estimators)
	if err != nil {
		return err
	}
	for _, nm := range names {
		if nm.entry == "clustered" {
			return errors.New("hrf: the angle study has no clusters for the clustered estimator")
		}
	}
	return nil
}

// AnglesRow is the estimate of SM(x, y) for one estimator at one pair of
// inputs of norm R at angle Theta, over the draws of the map.
type AnglesRow struct {
	R         float64 `json:"r"`
	Theta     float64 `json:"theta"`
	Estimator string  `json:"estimator"`
	// Dim is the feature dimension of the estimator.
	Dim int `json:"feature_dim"`
	// True is SM(x, y) = exp(r² cos θ).
	True float64 `json:"true"`
	// P5 and P95 are the 5th and 95th percentiles of the estimates.
	P5  float64 `json:"p5"`
	P95 float64 `json:"p95"`
	// RelError is the relative error √MSE / SM(x, y).
	RelError float64 `json:"rel_error"`
}

// AnglesResult is the result of Angles.
type AnglesResult struct {
	// Rows are ordered by estimator, then radius, then angle.
	Rows []AnglesRow
	// Estimators are the estimator names as given, in the order of Rows.
	Estimators []string
	// Radii are the norms r of the rows, in their order.
	Radii    []float64
	Sampler  string
	Features int
	Draws    int
}

// Angles measures the pointwise estimation of SM(x, y) = exp(xᵀy)
// for inputs of the same norm r (Radii; 1, 1.25, 1.5 by default) in R^64
// at angles θ from 0 to π (HRF Fig. 2/5): the true value, the 5th-95th
// percentile of the estimates over Draws independent maps and the
// relative error √MSE/SM. The plain maps use D features, the hybrids are
// FLOP-matched to D, the bipolar hybrid is tuned to the median radius
// (1.25 by default). The data-fitted estimators (oprf, sderf, aderf) are
// fitted, for each radius, to the AnglesSteps inputs x and y of that
// radius (their means and second moments). An estimate or error that is
// not finite gives an error wrapping features.ErrOverflow.
func Angles(ctx context.Context, cfg AnglesConfig, progress func(done, total int)) (*AnglesResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	reg := catalog.Default()
	names, err := resolveEstimators(reg, cfg.Estimators)
	if err != nil {
		return nil, err
	}
	smp := sampler.Or(cfg.Sampler)
	radii := cfg.radii()
	const d = AnglesDim
	// Same-length vectors at angle θ in a fixed plane spanned by u and v.
	u := make([]float64, d)
	v := make([]float64, d)
	for k := 0; k < d; k++ {
		u[k] = math.Sin(float64(k+1) * 1.3)
		v[k] = math.Cos(float64(k+1) * 0.7)
	}
	orthonormalise(u, v)
	var x, y []float64
	var meta [][2]float64
	for _, r := range radii {
		for i := 0; i < AnglesSteps; i++ {
			th := math.Pi * float64(i) / float64(AnglesSteps-1)
			for k := 0; k < d; k++ {
				x = append(x, r*u[k])
				y = append(y, r*(math.Cos(th)*u[k]+math.Sin(th)*v[k]))
			}
			meta = append(meta, [2]float64{r, th})
		}
	}
	n := len(meta)
	xm, ym := mat.NewDense(n, d, x), mat.NewDense(n, d, y)
	sorted := append([]float64(nil), radii...)
	sort.Float64s(sorted)
	tune := sorted[len(sorted)/2]
	res := &AnglesResult{Radii: radii, Sampler: smp.Name(), Features: cfg.Features, Draws: cfg.Draws}
	tick := progressFunc(progress, len(names)*cfg.Draws)
	done := 0
	for _, name := range names {
		res.Estimators = append(res.Estimators, name.label)
		est := make([][]float64, n)
		dim := 0
		for s := 0; s < cfg.Draws; s++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			p, err := reg.Pair(name.entry, features.Options{InputDim: d, Features: cfg.Features, Sampler: smp,
				Seed: cfg.Seed + uint64(s), Norm: tune})
			if err != nil {
				return nil, err
			}
			dim = p.Dim()
			for g, r := range radii {
				lo, hi := g*AnglesSteps, (g+1)*AnglesSteps
				xg, yg := xm.Slice(lo, hi, 0, d).(*mat.Dense), ym.Slice(lo, hi, 0, d).(*mat.Dense)
				pg, err := fitted(p, xg, yg)
				if err != nil {
					return nil, fmt.Errorf("hrf: %s at norm %v: %w", name.label, r, err)
				}
				e, err := estimates(pg, xg, yg, name.label, r)
				if err != nil {
					return nil, err
				}
				for i, v := range e {
					est[lo+i] = append(est[lo+i], v)
				}
			}
			done++
			tick(done)
		}
		for i := range meta {
			tv := math.Exp(floats.Dot(xm.RawRowView(i), ym.RawRowView(i)))
			sort.Float64s(est[i])
			rel := make([]float64, len(est[i]))
			for k, v := range est[i] {
				rel[k] = (v - tv) / tv
			}
			row := AnglesRow{R: meta[i][0], Theta: meta[i][1], Estimator: name.label, Dim: dim, True: tv,
				P5:       stat.Quantile(0.05, stat.Empirical, est[i], nil),
				P95:      stat.Quantile(0.95, stat.Empirical, est[i], nil),
				RelError: rms(rel)}
			if math.IsInf(row.RelError, 0) || math.IsNaN(row.RelError) {
				return nil, overflowErr(name.label, row.R, fmt.Sprintf("the relative error at θ = %.3gπ", row.Theta/math.Pi))
			}
			res.Rows = append(res.Rows, row)
		}
	}
	return res, nil
}

// orthonormalise makes u a unit vector and v the unit vector of its
// component orthogonal to u (one Gram-Schmidt step).
func orthonormalise(u, v []float64) {
	nu := math.Sqrt(floats.Dot(u, u))
	for i := range u {
		u[i] /= nu
	}
	p := floats.Dot(u, v)
	for i := range v {
		v[i] -= p * u[i]
	}
	nv := math.Sqrt(floats.Dot(v, v))
	for i := range v {
		v[i] /= nv
	}
}

// perEstimator returns the number of rows per estimator.
func (r *AnglesResult) perEstimator() int {
	if len(r.Estimators) == 0 {
		return 0
	}
	return len(r.Rows) / len(r.Estimators)
}

// Table returns the relative errors as a table: one line per (r, θ), one
// column per estimator, and the best estimator of the line.
func (r *AnglesResult) Table() *report.Table {
	t := &report.Table{
		Title: fmt.Sprintf("pointwise softmax-kernel estimation, d=%d, same-length inputs, %d draws, budget %d features (%s); hybrids FLOP-matched",
			AnglesDim, r.Draws, r.Features, r.Sampler),
		Header: []string{"r", "θ/π", "SM(x,y)"},
	}
	for _, nm := range r.Estimators {
		t.Header = append(t.Header, nm+" rel.err")
	}
	t.Header = append(t.Header, "best")
	n := r.perEstimator()
	for i := 0; i < n; i++ {
		row := r.Rows[i]
		cells := []any{report.Fixed(row.R, 2), report.Fixed(row.Theta/math.Pi, 3), fmt.Sprintf("%.4g", row.True)}
		best, bv := "", math.Inf(1)
		for k, nm := range r.Estimators {
			e := r.Rows[k*n+i].RelError
			cells = append(cells, report.Fixed(e, 4))
			if e < bv {
				best, bv = nm, e
			}
		}
		t.Add(append(cells, best)...)
	}
	return t
}

// Render writes the table and, per estimator, its feature dimension and
// largest relative error.
func (r *AnglesResult) Render(w io.Writer) error {
	if err := r.Table().Render(w); err != nil {
		return err
	}
	n := r.perEstimator()
	for k, nm := range r.Estimators {
		m := 0.0
		for _, row := range r.Rows[k*n : (k+1)*n] {
			m = math.Max(m, row.RelError)
		}
		if _, err := fmt.Fprintf(w, "%s: feature dimension %d, max relative error %.4f\n", nm, r.Rows[k*n].Dim, m); err != nil {
			return err
		}
	}
	return nil
}

// Plot returns the relative error against θ/π, one line per estimator and
// radius, on a log scale (exact zeros, below 1e-12, are left out).
func (r *AnglesResult) Plot() *report.Plot {
	p := &report.Plot{
		Title:      "softmax kernel: empirical relative error vs angle",
		XLabel:     "θ / π",
		YLabel:     "relative error √MSE / SM(x,y) (log scale; exact zeros omitted)",
		LogY:       true,
		LegendLeft: true,
		Headroom:   30,
	}
	n := r.perEstimator()
	for k, nm := range r.Estimators {
		for _, rad := range r.Radii {
			s := report.Series{Name: fmt.Sprintf("%s, r=%.2f", nm, rad), Points: true}
			for _, row := range r.Rows[k*n : (k+1)*n] {
				if row.R == rad && row.RelError > 1e-12 {
					s.X = append(s.X, row.Theta/math.Pi)
					s.Y = append(s.Y, row.RelError)
				}
			}
			p.Series = append(p.Series, s)
		}
	}
	return p
}

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
