package hrf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
)

// This file holds the angle study (HRF Fig. 2 and 5): the MSE of each
// estimator of SM(x, y) for pairs of inputs of common norm r at angles
// θ = 0, π/12, …, π.

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
// Norms returns the radii the study runs at: Radii, or the defaults
// 1, 1.25 and 1.5.
func (c AnglesConfig) Norms() []float64 {
	return append([]float64(nil), c.radii()...)
}

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
