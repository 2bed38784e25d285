// Package zoo is the side-by-side study of every softmax-kernel estimator
// kernelkit has — trigonometric, positive (FAVOR+) with iid and orthogonal
// projections, hyperbolic, the angular and Gaussian hybrids, simplex
// (SimRF), optimal positive (OPRF, FAVOR++) and dense-exponential (SDERF,
// ADERF, FAVOR#) features — reproducing the headline comparisons of the
// papers that introduced the last three:
//
//   - the relative mean squared error of the pointwise estimate of
//     exp(xᵀy) against the input norm and the angle (SimRF paper Fig. 3,
//     CRT paper Fig. 2, DERF paper Fig. 1: positive features degrade
//     exponentially with the norm, OPRF and DERF much less);
//   - the error of approximated softmax attention on data rows used as
//     queries and keys (heterogeneous, non-centred statistics: where the
//     DERF fits differ from OPRF's), against exact attention;
//   - the speed of each map: features per second, the fit included.
//
// The data-fitted maps (oprf, sderf, aderf) are fitted to the inputs they
// estimate on, as the papers fit them: in the pointwise study, at each
// norm, to the x's and the y's of that norm's pairs as queries and keys
// (so SDERF and ADERF use the pairs' anisotropy, which isotropic
// statistics would hide: with those, both are OPRF); in attention, to each
// call's queries and keys. Norms are at most hrf.MaxNorm(); an estimate
// whose relative squared error overflows float64 makes Run return an
// error wrapping features.ErrOverflow, and a closed form that overflows is
// reported as "overflow" (PointRow.TheoryOverflow).
//
// kernelkit estimate --study zoo runs it.
package zoo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/prf"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/study/hrf"
)

// Estimator is one estimator of the study: a catalog map and the sampler
// of its projections.
type Estimator struct {
	// Name is the catalog name (trig, positive, simrf, oprf, …).
	Name string
	// Sampler draws the projections (simrf ignores it).
	Sampler sampler.Sampler
}

// Label is "name/sampler", e.g. "positive/orf"; simrf is "simrf".
func (e Estimator) Label() string {
	if e.Name == "simrf" {
		return e.Name
	}
	return e.Name + "/" + sampler.Or(e.Sampler).Name()
}

// DefaultEstimators returns the estimators of the study: FAVOR+ with iid
// and orthogonal rows and every other softmax estimator with orthogonal
// rows.
func DefaultEstimators() []Estimator {
	orf := sampler.Orthogonal{}
	return []Estimator{
		{"trig", orf}, {"positive", sampler.Gaussian{}}, {"positive", orf}, {"hyperbolic", orf},
		{"angular", orf}, {"gaussian", orf}, {"simrf", nil}, {"oprf", orf}, {"sderf", orf}, {"aderf", orf},
	}
}

// Config configures Run.
type Config struct {
	// Estimators (nil: DefaultEstimators).
	Estimators []Estimator
	// Dim is the input dimension of the pointwise study (default 16).
	Dim int
	// Features is the feature budget m of the pointwise study (default
	// Dim: the SimRF paper's m = d); hybrids are FLOP-matched to it.
	Features int
	// Norms are the input norms r of the pointwise study (default 0.25,
	// 0.5, 1, 1.5, 2, 2.5, 3), each at most hrf.MaxNorm() (18.82, where
	// exp(±r²) and the squared errors' scale exp(2r²) are representable).
	Norms []float64
	// Angles are the angles θ between x and y (default 0, π/4, π/2, 3π/4,
	// π).
	Angles []float64
	// Draws is the number of independent maps per point (default 500).
	Draws int
	// Data, if not nil, holds rows used as queries and keys of the
	// attention study (at least 2·Length rows; the columns are the head
	// dimension).
	Data *mat.Dense
	// Length is the number of queries and of keys of the attention study
	// (default 512).
	Length int
	// AttentionFeatures are the feature counts of the attention study
	// (default 16 and 64).
	AttentionFeatures []int
	// Scales are the mean norms of the queries and of the keys after
	// attention's d^(−1/4) scaling (default 0.5, 1, 1.5, 2). The rows are
	// only scaled, so their offset and anisotropy are kept.
	Scales []float64
	// KeySpreads are the key heterogeneities of the attention study: with
	// spread c the key column j is multiplied by c^(j/(d−1) − 1/2) before
	// the scaling (largest to smallest column scale c), so that keys and
	// queries follow different distributions, as trained W_q and W_k make
	// them; 1 keeps them alike (default 1 and 4).
	KeySpreads []float64
	// Seeds is the number of seeds of the attention study (default 5).
	Seeds int
	// TimingRows is the number of rows whose features the timing column
	// computes (default 4096).
	TimingRows int
	// Seed is the base seed.
	Seed uint64
}

func (c *Config) defaults() {
	if c.Estimators == nil {
		c.Estimators = DefaultEstimators()
	}
	if c.Dim == 0 {
		c.Dim = 16
	}
	if c.Features == 0 {
		c.Features = c.Dim
	}
	if c.Norms == nil {
		c.Norms = DefaultNorms()
	}
	if c.Angles == nil {
		c.Angles = []float64{0, math.Pi / 4, math.Pi / 2, 3 * math.Pi / 4, math.Pi}
	}
	if c.Draws == 0 {
		c.Draws = 500
	}
	if c.Length == 0 {
		c.Length = 512
	}
	if c.AttentionFeatures == nil {
		c.AttentionFeatures = []int{16, 64}
	}
	if c.Scales == nil {
		c.Scales = []float64{0.5, 1, 1.5, 2}
	}
	if c.Seeds == 0 {
		c.Seeds = 5
	}
	if c.KeySpreads == nil {
		c.KeySpreads = []float64{1, 4}
	}
	if c.TimingRows == 0 {
		c.TimingRows = 4096
	}
}

// Validate checks the configuration (after defaults).
func (c Config) Validate() error {
	reg := catalog.Default()
	for _, e := range c.Estimators {
		en, err := reg.Lookup(e.Name)
		if err != nil {
			return fmt.Errorf("zoo: %w", err)
		}
		if en.Kernel != "softmax" || en.Name == "clustered" {
			return fmt.Errorf("zoo: %q is not a softmax-kernel estimator the study can build", e.Name)
		}
	}
	if err := limits.Dim("zoo: dimension", c.Dim); err != nil {
		return err
	}
	if err := limits.Dim("zoo: features", c.Features); err != nil {
		return err
	}
	for _, r := range c.Norms {
		if !(r > 0) || math.IsInf(r, 0) {
			return fmt.Errorf("zoo: norms must be positive and finite, got %v", r)
		}
		if r > hrf.MaxNorm() {
			return &overflowError{fmt.Sprintf("zoo: norm %v is beyond %v, the largest at which the errors of exp(xᵀy) are representable in float64 (see hrf.MaxNorm)",
				r, hrf.MaxNorm())}
		}
	}
	for _, s := range append(append([]float64(nil), c.Scales...), c.KeySpreads...) {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("zoo: scales and key spreads must be positive and finite, got %v", s)
		}
	}
	for _, th := range c.Angles {
		if !(th >= 0 && th <= math.Pi) {
			return fmt.Errorf("zoo: angles must lie in [0, π], got %v", th)
		}
	}
	if err := limits.Count("zoo: draws", c.Draws, 2); err != nil {
		return err
	}
	if c.Draws < 2 || c.Seeds < 1 || c.Length < 1 || c.TimingRows < 1 {
		return fmt.Errorf("zoo: need at least 2 draws, 1 seed, 1 row and 1 timing row (got %d, %d, %d, %d)", c.Draws, c.Seeds, c.Length, c.TimingRows)
	}
	if _, err := limits.Matrix("zoo: timing rows", c.TimingRows, c.Dim); err != nil {
		return err
	}
	for _, m := range c.AttentionFeatures {
		if err := limits.Dim("zoo: attention features", m); err != nil {
			return err
		}
	}
	if c.Data != nil {
		n, d := c.Data.Dims()
		if n < 2*c.Length {
			return fmt.Errorf("zoo: the attention study needs %d rows (queries and keys), the data has %d", 2*c.Length, n)
		}
		if err := limits.Dim("zoo: data columns", d); err != nil {
			return err
		}
	}
	return nil
}

// PointRow is the pointwise error of one estimator at one norm and angle.
type PointRow struct {
	Estimator string  `json:"estimator"`
	Dim       int     `json:"features"` // the map's feature dimension
	R         float64 `json:"r"`
	Theta     float64 `json:"theta"`
	True      float64 `json:"true"`
	// RelMSE is the mean squared error over the draws divided by
	// exp(xᵀy)²; RelMSESE its standard error.
	RelMSE   float64 `json:"rel_mse"`
	RelMSESE float64 `json:"rel_mse_se"`
	// Theory is the closed-form relative MSE of the estimator with iid
	// projections (the papers' figures), 0 where there is none (the
	// hybrids, simrf) or where it overflows float64.
	Theory float64 `json:"theory_rel_mse_iid,omitempty"`
	// TheoryOverflow is set where the closed form exists but is beyond
	// float64 (FAVOR+'s relative MSE grows like exp(‖x+y‖²)/m); the
	// tables print "overflow" there.
	TheoryOverflow bool `json:"theory_overflow,omitempty"`
}

// DataVarianceRow is the mean over query/key pairs of data rows of the
// log relative variance ln(Var/exp(xᵀy)²) of one estimator with iid
// projections, from its closed form (the DERF paper's Fig. 1 measure).
type DataVarianceRow struct {
	Estimator string  `json:"estimator"`
	Scale     float64 `json:"scale"`
	Spread    float64 `json:"key_spread"`
	MeanLog   float64 `json:"mean_log_rel_variance"`
}

// AttentionRow is the error of linear attention with one estimator.
type AttentionRow struct {
	Estimator string  `json:"estimator"`
	Features  int     `json:"features"`
	Scale     float64 `json:"scale"`
	Spread    float64 `json:"key_spread"`
	// RelError is the mean over seeds of ‖O − Ô‖_F/‖O‖_F; RelErrorSD its
	// standard deviation.
	RelError   float64 `json:"rel_error"`
	RelErrorSD float64 `json:"rel_error_sd"`
	NonFinite  int     `json:"non_finite"`
}

// TimingRow is the speed of one estimator.
type TimingRow struct {
	Estimator string `json:"estimator"`
	Features  int    `json:"features"`
	Rows      int    `json:"rows"`
	// PerSecond is rows·features/second for the query and the key
	// features of Rows rows each, the fit to their statistics included.
	PerSecond float64 `json:"features_per_second"`
	Seconds   float64 `json:"seconds"`
}

// Result is the result of Run.
type Result struct {
	Config    Config         `json:"-"`
	Points    []PointRow     `json:"points"`
	Attention []AttentionRow `json:"attention,omitempty"`
	// DataVariance holds the closed-form variances on the data pairs.
	DataVariance []DataVarianceRow `json:"data_variance,omitempty"`
	Timing       []TimingRow       `json:"timing"`
	Backend      string            `json:"backend"`
}

// Run runs the study; progress, if not nil, is called after each unit of
// work.
func Run(ctx context.Context, cfg Config, progress func(done, total int)) (*Result, error) {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, Backend: blas.Name()}
	total := len(cfg.Estimators) * (len(cfg.Norms)*cfg.Draws + 1)
	if cfg.Data != nil {
		total += len(cfg.Estimators) * len(cfg.AttentionFeatures) * len(cfg.Scales) * len(cfg.KeySpreads) * cfg.Seeds
	}
	done := 0
	tick := func() {
		done++
		if progress != nil {
			progress(done, total)
		}
	}
	var err error
	if res.Points, err = points(ctx, cfg, tick); err != nil {
		return nil, err
	}
	if cfg.Data != nil {
		if res.Attention, err = attentionRows(ctx, cfg, tick); err != nil {
			return nil, err
		}
		if res.DataVariance, err = dataVariance(cfg); err != nil {
			return nil, err
		}
	}
	if res.Timing, err = timing(ctx, cfg, tick); err != nil {
		return nil, err
	}
	return res, nil
}

// pairsAt returns the pairs of norm r at the angles: x = r·u, y =
// r·(cos θ·u + sin θ·v) for fixed orthonormal u, v.
func pairsAt(d int, r float64, angles []float64) (x, y *mat.Dense) {
	u, v := make([]float64, d), make([]float64, d)
	for k := range u {
		u[k] = math.Sin(float64(k+1) * 1.3)
		v[k] = math.Cos(float64(k+1) * 0.7)
	}
	nu := math.Sqrt(dot(u, u))
	for k := range u {
		u[k] /= nu
	}
	p := dot(u, v)
	for k := range v {
		v[k] -= p * u[k]
	}
	nv := math.Sqrt(dot(v, v))
	for k := range v {
		v[k] /= nv
	}
	x, y = mat.NewDense(len(angles), d, nil), mat.NewDense(len(angles), d, nil)
	for i, th := range angles {
		for k := 0; k < d; k++ {
			x.Set(i, k, r*u[k])
			y.Set(i, k, r*(math.Cos(th)*u[k]+math.Sin(th)*v[k]))
		}
	}
	return x, y
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// points measures the pointwise relative MSE ((v − t)/t)², t = exp(xᵀy).
// The data-fitted maps (oprf, sderf, aderf) are fitted at each norm to the
// inputs of that norm — the x's and the y's of its pairs, as queries and
// keys (prf.NewStats) — and their closed forms use the same fit. An
// estimate or a relative squared error beyond float64 gives an error
// wrapping features.ErrOverflow; a closed form beyond it is marked
// TheoryOverflow.
func points(ctx context.Context, cfg Config, tick func()) ([]PointRow, error) {
	reg := catalog.Default()
	var rows []PointRow
	for _, e := range cfg.Estimators {
		for _, r := range cfg.Norms {
			x, y := pairsAt(cfg.Dim, r, cfg.Angles)
			errs := make([][]float64, len(cfg.Angles))
			dim := 0
			for s := 0; s < cfg.Draws; s++ {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				p, err := reg.Pair(e.Name, features.Options{InputDim: cfg.Dim, Features: cfg.Features, Sampler: e.Sampler,
					Seed: cfg.Seed + uint64(s), Norm: r})
				if err != nil {
					return nil, err
				}
				if ad, ok := adaptive(p); ok {
					if p, err = ad.Adapt(x, y); err != nil {
						return nil, fmt.Errorf("zoo: %s at norm %v: %w", e.Label(), r, err)
					}
				}
				dim = p.Dim()
				est, err := features.PairEstimates(p, x, y)
				if errors.Is(err, features.ErrOverflow) {
					return nil, &overflowError{fmt.Sprintf("zoo: %s at norm %v: a feature overflows float64 (use smaller norms or another estimator)", e.Label(), r)}
				}
				if err != nil {
					return nil, fmt.Errorf("zoo: %s at norm %v: %w", e.Label(), r, err)
				}
				for i, v := range est {
					t := math.Exp(dot(x.RawRowView(i), y.RawRowView(i)))
					q := (v - t) / t
					if q2 := q * q; !math.IsInf(q2, 0) && !math.IsNaN(q2) {
						errs[i] = append(errs[i], q2)
						continue
					}
					return nil, &overflowError{fmt.Sprintf("zoo: %s at norm %v, θ = %.3gπ: the estimate's relative squared error overflows float64 (use smaller norms or another estimator)",
						e.Label(), r, cfg.Angles[i]/math.Pi)}
				}
				tick()
			}
			th, err := theory(e.Name, cfg.Features, x, y)
			if err != nil {
				return nil, err
			}
			for i, ang := range cfg.Angles {
				m, sd := meanStd(errs[i])
				if math.IsInf(m, 0) || math.IsNaN(m) || math.IsInf(sd, 0) || math.IsNaN(sd) {
					return nil, &overflowError{fmt.Sprintf("zoo: %s at norm %v, θ = %.3gπ: the mean relative squared error or its spread overflows float64",
						e.Label(), r, ang/math.Pi)}
				}
				xi, yi := x.RawRowView(i), y.RawRowView(i)
				row := PointRow{Estimator: e.Label(), Dim: dim, R: r, Theta: ang,
					True: math.Exp(dot(xi, yi)), RelMSE: m, RelMSESE: sd / math.Sqrt(float64(cfg.Draws))}
				if th != nil {
					v := th(xi, yi)
					if math.IsInf(v, 0) || math.IsNaN(v) {
						row.TheoryOverflow = true
					} else {
						row.Theory = v
					}
				}
				rows = append(rows, row)
			}
		}
	}
	return rows, nil
}

// theory returns the closed-form relative MSE MSE/exp(2xᵀy) of estimator
// name with iid projections and m features at the pairs (x_i, y_i) (the
// fitted maps fitted to the rows of x and y, as in points), or nil. The
// fitted maps' closed forms are computed as ratios (RelativeVariance),
// the others divide the MSE by exp(2xᵀy) and overflow beyond xᵀy ≈ 355.
func theory(name string, m int, x, y *mat.Dense) (func(x, y []float64) float64, error) {
	e, err := catalog.Default().Lookup(name)
	if err != nil {
		return nil, err
	}
	rel := func(mse func(x, y []float64, m int) float64, m int) func(x, y []float64) float64 {
		return func(x, y []float64) float64 {
			t := math.Exp(dot(x, y))
			return mse(x, y, m) / t / t
		}
	}
	switch e.Name {
	case "trig":
		return rel(features.TrigMSE, (m+1)/2), nil
	case "hyperbolic":
		return rel(features.HyperbolicMSE, (m+1)/2), nil
	case "positive":
		return rel(features.PositiveMSE, m), nil
	case prf.OPRF, prf.SDERF, prf.ADERF:
		st, err := prf.NewStats(x, y)
		if err != nil {
			return nil, err
		}
		cfg := prf.Config{Family: e.Name, Features: m, Sampler: sampler.Gaussian{}}
		if e.Name == prf.ADERF {
			p, err := prf.NewPair(cfg, st)
			if err != nil {
				return nil, err
			}
			return p.RelativeVariance, nil
		}
		mp, err := prf.New(cfg, st)
		if err != nil {
			return nil, err
		}
		return mp.RelativeVariance, nil
	}
	return nil, nil
}

// prfVariance returns the closed-form variance of a prf family fitted to
// st, with iid projections.
func prfVariance(name string, m int, st *prf.Stats) (func(x, y []float64) float64, error) {
	cfg := prf.Config{Family: name, Features: m, Sampler: sampler.Gaussian{}}
	if name == prf.ADERF {
		p, err := prf.NewPair(cfg, st)
		if err != nil {
			return nil, err
		}
		return p.Variance, nil
	}
	mp, err := prf.New(cfg, st)
	if err != nil {
		return nil, err
	}
	return mp.Variance, nil
}

// dataVariance computes the mean log relative variance over the pairs of
// the first 128 query rows and 128 key rows of the attention study's data
// (scaled as there, then by d^(−1/4) as attention does) for FAVOR+ and
// the fitted families, fitted to those rows, with iid projections and
// Features features.
func dataVariance(cfg Config) ([]DataVarianceRow, error) {
	_, d := cfg.Data.Dims()
	n := min(128, cfg.Length)
	var rows []DataVarianceRow
	for _, spread := range cfg.KeySpreads {
		for _, sc := range cfg.Scales {
			f := math.Pow(float64(d), -0.25)
			q := scaledRows(cfg.Data, 0, n, sc, 1)
			k := scaledRows(cfg.Data, cfg.Length, n, sc, spread)
			q.Scale(f, q)
			k.Scale(f, k)
			st, err := prf.NewStats(q, k)
			if err != nil {
				return nil, err
			}
			vars := []struct {
				name string
				v    func(x, y []float64) float64
			}{{"positive/iid", func(x, y []float64) float64 { return features.PositiveMSE(x, y, cfg.Features) }}}
			for _, fam := range []string{prf.OPRF, prf.SDERF, prf.ADERF} {
				v, err := prfVariance(fam, cfg.Features, st)
				if err != nil {
					return nil, err
				}
				vars = append(vars, struct {
					name string
					v    func(x, y []float64) float64
				}{fam + "/iid", v})
			}
			for _, e := range vars {
				var sum float64
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						x, y := q.RawRowView(i), k.RawRowView(j)
						sum += math.Log(e.v(x, y)) - 2*dot(x, y)
					}
				}
				rows = append(rows, DataVarianceRow{Estimator: e.name, Scale: sc, Spread: spread, MeanLog: sum / float64(n*n)})
			}
		}
	}
	return rows, nil
}

// scaledRows returns rows lo … lo+n−1 of data, their column j multiplied
// by spread^(j/(d−1) − 1/2), then scaled by one factor so that their mean
// norm is s·d^(1/4) (mean norm s after attention's d^(−1/4) scaling). The
// offset and the anisotropy of the data are kept.
func scaledRows(data *mat.Dense, lo, n int, s, spread float64) *mat.Dense {
	_, d := data.Dims()
	out := mat.DenseCopyOf(data.Slice(lo, lo+n, 0, d))
	if spread != 1 && d > 1 {
		for i := 0; i < n; i++ {
			row := out.RawRowView(i)
			for j := range row {
				row[j] *= math.Pow(spread, float64(j)/float64(d-1)-0.5)
			}
		}
	}
	var mean float64
	for i := 0; i < n; i++ {
		r := out.RawRowView(i)
		mean += math.Sqrt(dot(r, r)) / float64(n)
	}
	if mean > 0 {
		out.Scale(s*math.Pow(float64(d), 0.25)/mean, out)
	}
	return out
}

// attentionRows measures linear attention on data rows: queries are rows
// 0 … L−1, keys rows L … 2L−1 (each set scaled to the mean norm of the
// scale), values N(0, 1) from the seed; the projections change with the
// seed.
func attentionRows(ctx context.Context, cfg Config, tick func()) ([]AttentionRow, error) {
	reg := catalog.Default()
	_, d := cfg.Data.Dims()
	l := cfg.Length
	var rows []AttentionRow
	for _, spread := range cfg.KeySpreads {
		for _, sc := range cfg.Scales {
			q := scaledRows(cfg.Data, 0, l, sc, 1)
			k := scaledRows(cfg.Data, l, l, sc, spread)
			type ref struct{ v, exact *mat.Dense }
			refs := make([]ref, cfg.Seeds)
			for s := range refs {
				v, err := sampler.Gaussian{}.Sample(l, d, cfg.Seed*7919+uint64(s)+1)
				if err != nil {
					return nil, err
				}
				ex, err := attention.Exact{}.Apply(q, k, v)
				if err != nil {
					return nil, err
				}
				refs[s] = ref{v, ex}
			}
			for _, e := range cfg.Estimators {
				for _, m := range cfg.AttentionFeatures {
					row := AttentionRow{Estimator: e.Label(), Features: m, Scale: sc, Spread: spread}
					var rels []float64
					for s, r := range refs {
						if err := ctx.Err(); err != nil {
							return nil, err
						}
						p, err := reg.Pair(e.Name, features.Options{InputDim: d, Features: m, Sampler: e.Sampler, Seed: cfg.Seed + uint64(s)})
						if err != nil {
							return nil, err
						}
						out, err := (&attention.Linear{Pair: p}).Apply(q, k, r.v)
						if err != nil {
							return nil, fmt.Errorf("zoo: %s at scale %v: %w", e.Label(), sc, err)
						}
						var diff mat.Dense
						diff.Sub(out, r.exact)
						for _, v := range out.RawMatrix().Data {
							if math.IsNaN(v) || math.IsInf(v, 0) {
								row.NonFinite++
							}
						}
						rels = append(rels, mat.Norm(&diff, 2)/mat.Norm(r.exact, 2))
						tick()
					}
					row.RelError, row.RelErrorSD = stat.MeanStdDev(rels, nil)
					if len(rels) == 1 {
						row.RelErrorSD = 0
					}
					rows = append(rows, row)
				}
			}
		}
	}
	return rows, nil
}

// timing measures features per second: the query and key features of
// TimingRows N(0, 1/√d) rows each, with the fit of the adaptive maps,
// best of three runs.
func timing(ctx context.Context, cfg Config, tick func()) ([]TimingRow, error) {
	reg := catalog.Default()
	n, d := cfg.TimingRows, cfg.Dim
	x, err := sampler.Gaussian{}.Sample(n, d, cfg.Seed+11)
	if err != nil {
		return nil, err
	}
	y, err := sampler.Gaussian{}.Sample(n, d, cfg.Seed+12)
	if err != nil {
		return nil, err
	}
	f := math.Pow(float64(d), -0.25)
	x.Scale(f, x)
	y.Scale(f, y)
	var rows []TimingRow
	for _, e := range cfg.Estimators {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := reg.Pair(e.Name, features.Options{InputDim: d, Features: cfg.Features, Sampler: e.Sampler, Seed: cfg.Seed})
		if err != nil {
			return nil, err
		}
		dst := mat.NewDense(n, p.Dim(), nil)
		best := math.Inf(1)
		for range 3 {
			t0 := time.Now()
			pp := p
			if ad, ok := adaptive(p); ok {
				if pp, err = ad.Adapt(x, y); err != nil {
					return nil, err
				}
			}
			if err := pp.Query(dst, x); err != nil {
				return nil, err
			}
			if err := pp.Key(dst, y); err != nil {
				return nil, err
			}
			best = math.Min(best, time.Since(t0).Seconds())
		}
		rows = append(rows, TimingRow{Estimator: e.Label(), Features: p.Dim(), Rows: n, Seconds: best,
			PerSecond: float64(2*n*p.Dim()) / best})
		tick()
	}
	return rows, nil
}

// adaptive returns the features.Adaptive of a pair or of its map.
func adaptive(p features.Pair) (features.Adaptive, bool) {
	if t, ok := features.AsTransformer(p); ok {
		a, ok := t.(features.Adaptive)
		return a, ok
	}
	a, ok := p.(features.Adaptive)
	return a, ok
}

// meanOver returns the mean over the angles of the relative MSE (or,
// with theory, of the closed form) of estimator label at norm n, and the
// map's dimension; overflow reports a closed form beyond float64 at one
// of the angles (the mean is then meaningless).
func (r *Result) meanOver(label string, n float64, theory bool) (mean float64, dim int, overflow bool) {
	var vals []float64
	for _, p := range r.Points {
		if p.Estimator == label && p.R == n {
			if theory {
				vals = append(vals, p.Theory)
				overflow = overflow || p.TheoryOverflow
			} else {
				vals = append(vals, p.RelMSE)
			}
			dim = p.Dim
		}
	}
	for _, v := range vals {
		mean += v / float64(len(vals)) // divided first: no overflow in the sum
	}
	return mean, dim, overflow
}

// hasTheory reports whether estimator label has a closed form (finite or
// overflowing) at norm n.
func (r *Result) hasTheory(label string, n float64) bool {
	for _, p := range r.Points {
		if p.Estimator == label && p.R == n && (p.Theory > 0 || p.TheoryOverflow) {
			return true
		}
	}
	return false
}

// overflowError is an error whose message is its own and which wraps
// features.ErrOverflow (errors.Is finds it).
type overflowError struct{ msg string }

func (e *overflowError) Error() string { return e.msg }

func (e *overflowError) Unwrap() error { return features.ErrOverflow }

// meanStd returns the mean and sample standard deviation of v, computed on
// the values divided by their largest magnitude so that values near
// MaxFloat64 do not overflow in the squares.
func meanStd(v []float64) (mean, sd float64) {
	var mx float64
	for _, x := range v {
		mx = math.Max(mx, math.Abs(x))
	}
	if mx == 0 || math.IsInf(mx, 0) || math.IsNaN(mx) {
		return mx, mx
	}
	sc := make([]float64, len(v))
	for i, x := range v {
		sc[i] = x / mx
	}
	mean, sd = stat.MeanStdDev(sc, nil)
	if len(v) < 2 {
		sd = 0
	}
	return mean * mx, sd * mx
}

// NormTable returns the relative MSE against the norm: one row per
// estimator, one column per norm, each the mean over the angles of the
// empirical MSE/exp(xᵀy)²; and, for the estimators with a closed form,
// a row of the closed form with iid projections.
func (r *Result) NormTable() *report.Table {
	c := r.Config
	t := &report.Table{Title: fmt.Sprintf("relative MSE of exp(xᵀy), d = %d, m = %d (hybrids FLOP-matched), %d draws, mean over θ ∈ %s;\n"+
		"\"theory\" rows: closed form with iid projections (FAVOR+, trig and hyperbolic: HRF Lemma 2.2; OPRF: CRT Thm 3.2; DERF: Thm 4.1)",
		c.Dim, c.Features, c.Draws, angleList(c.Angles))}
	t.Header = append(t.Header, "estimator", "D")
	for _, n := range c.Norms {
		t.Header = append(t.Header, "r="+report.F(n, 3))
	}
	seen := map[string]bool{}
	for _, e := range c.Estimators {
		cells := []any{e.Label()}
		for j, n := range c.Norms {
			m, dim, _ := r.meanOver(e.Label(), n, false)
			if j == 0 {
				cells = append(cells, dim)
			}
			cells = append(cells, fmt.Sprintf("%.3g", m))
		}
		t.Add(cells...)
		if r.hasTheory(e.Label(), c.Norms[0]) && !seen[e.Name] {
			seen[e.Name] = true
			cells := []any{e.Name + " theory", ""}
			for _, n := range c.Norms {
				m, _, over := r.meanOver(e.Label(), n, true)
				if over {
					cells = append(cells, "overflow")
				} else {
					cells = append(cells, fmt.Sprintf("%.3g", m))
				}
			}
			t.Add(cells...)
		}
	}
	return t
}

// DataVarianceTable returns the closed-form log variances on the data.
func (r *Result) DataVarianceTable() *report.Table {
	c := r.Config
	t := &report.Table{Title: fmt.Sprintf("closed-form variance on data pairs (128 × 128 rows, after attention's d^(−1/4) scaling), iid projections, m = %d:\n"+
		"mean over pairs of ln(Var/exp(xᵀy)²), lower is better; the fitted maps fitted to those rows", c.Features)}
	t.Header = []string{"estimator", "key spread"}
	for _, s := range c.Scales {
		t.Header = append(t.Header, "scale "+report.F(s, 3))
	}
	var names []string
	for _, row := range r.DataVariance {
		if row.Scale == c.Scales[0] && row.Spread == c.KeySpreads[0] {
			names = append(names, row.Estimator)
		}
	}
	for _, spread := range c.KeySpreads {
		for _, nm := range names {
			cells := []any{nm, report.F(spread, 3)}
			for _, s := range c.Scales {
				for _, row := range r.DataVariance {
					if row.Estimator == nm && row.Scale == s && row.Spread == spread {
						cells = append(cells, fmt.Sprintf("%.3f", row.MeanLog))
					}
				}
			}
			t.Add(cells...)
		}
	}
	return t
}

// AngleTable returns the relative MSE against the angle at the norm of
// Norms closest to 1.5.
func (r *Result) AngleTable() *report.Table {
	c := r.Config
	rn := c.Norms[0]
	for _, n := range c.Norms {
		if math.Abs(n-1.5) < math.Abs(rn-1.5) {
			rn = n
		}
	}
	t := &report.Table{Title: fmt.Sprintf("relative MSE of exp(xᵀy) against the angle θ at r = %s (± one standard error in the last digit shown)", report.F(rn, 3))}
	t.Header = append(t.Header, "estimator")
	for _, th := range c.Angles {
		t.Header = append(t.Header, "θ="+report.Fixed(th/math.Pi, 2)+"π")
	}
	for _, e := range c.Estimators {
		cells := []any{e.Label()}
		for _, p := range r.Points {
			if p.Estimator == e.Label() && p.R == rn {
				cells = append(cells, fmt.Sprintf("%.3g±%.1g", p.RelMSE, p.RelMSESE))
			}
		}
		t.Add(cells...)
	}
	return t
}

// AttentionTable returns the relative error of linear attention.
func (r *Result) AttentionTable() *report.Table {
	c := r.Config
	d := 0
	if c.Data != nil {
		_, d = c.Data.Dims()
	}
	t := &report.Table{Title: fmt.Sprintf("linear attention on data rows (L = %d queries, %d keys, d = %d): ‖O − Ô‖_F/‖O‖_F, mean ± sd over %d seeds; scale = mean ‖q‖/d^(1/4)",
		c.Length, c.Length, d, c.Seeds)}
	t.Header = []string{"estimator", "m", "key spread"}
	for _, s := range c.Scales {
		t.Header = append(t.Header, "scale "+report.F(s, 3))
	}
	for _, spread := range c.KeySpreads {
		for _, e := range c.Estimators {
			for _, m := range c.AttentionFeatures {
				cells := []any{e.Label(), m, report.F(spread, 3)}
				for _, s := range c.Scales {
					for _, a := range r.Attention {
						if a.Estimator == e.Label() && a.Features == m && a.Scale == s && a.Spread == spread {
							cell := fmt.Sprintf("%.3f ± %.3f", a.RelError, a.RelErrorSD)
							if a.NonFinite > 0 {
								cell += fmt.Sprintf(" (%d non-finite)", a.NonFinite)
							}
							cells = append(cells, cell)
						}
					}
				}
				t.Add(cells...)
			}
		}
	}
	return t
}

// TimingTable returns the features per second.
func (r *Result) TimingTable() *report.Table {
	t := &report.Table{Title: fmt.Sprintf("speed: query and key features of %d rows each (d = %d), the fit included, best of 3, backend %s",
		r.Config.TimingRows, r.Config.Dim, r.Backend)}
	t.Header = []string{"estimator", "D", "seconds", "features/s"}
	for _, row := range r.Timing {
		t.Add(row.Estimator, row.Features, fmt.Sprintf("%.4f", row.Seconds), fmt.Sprintf("%.3g", row.PerSecond))
	}
	return t
}

// Render writes every table.
func (r *Result) Render(w io.Writer) error {
	tables := []*report.Table{r.NormTable(), r.AngleTable()}
	if r.Attention != nil {
		tables = append(tables, r.AttentionTable(), r.DataVarianceTable())
	}
	tables = append(tables, r.TimingTable())
	for i, t := range tables {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if err := t.Render(w); err != nil {
			return err
		}
	}
	return nil
}

// Plot returns the relative MSE against the norm (geometric mean over the
// angles), one line per estimator, on a log scale.
func (r *Result) Plot() *report.Plot {
	c := r.Config
	p := &report.Plot{
		Title:      fmt.Sprintf("softmax-kernel estimators: relative MSE vs input norm (d = %d, m = %d)", c.Dim, c.Features),
		XLabel:     "input norm r = ‖x‖ = ‖y‖",
		YLabel:     "MSE / exp(xᵀy)², mean over angles (log scale)",
		LogY:       true,
		LegendLeft: true,
		Headroom:   30,
	}
	seen := map[string]bool{}
	for _, e := range c.Estimators {
		s := report.Series{Name: e.Label(), Points: true}
		th := report.Series{Name: e.Name + " (closed form, iid)"}
		for _, n := range c.Norms {
			m, _, _ := r.meanOver(e.Label(), n, false)
			s.X = append(s.X, n)
			s.Y = append(s.Y, m)
			if v, _, over := r.meanOver(e.Label(), n, true); v > 0 && !over {
				th.X = append(th.X, n)
				th.Y = append(th.Y, v)
			}
		}
		p.Series = append(p.Series, s)
		if len(th.X) > 0 && !seen[e.Name] {
			seen[e.Name] = true
			p.Series = append(p.Series, th)
		}
	}
	return p
}

func angleList(a []float64) string {
	s := "{"
	for i, th := range a {
		if i > 0 {
			s += ", "
		}
		s += report.Fixed(th/math.Pi, 2) + "π"
	}
	return s + "}"
}

// DefaultNorms returns the norms of the pointwise study when Config.Norms
// is nil: 0.25, 0.5, 1, 1.5, 2, 2.5 and 3.
func DefaultNorms() []float64 { return []float64{0.25, 0.5, 1, 1.5, 2, 2.5, 3} }
