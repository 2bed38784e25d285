package performer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
)

// This file holds the linear-attention studies: the output error of linear
// attention D⁻¹(Q'(K'ᵀV)) against exact softmax attention
// softmax(QKᵀ/√d)V (Performer, Choromanski et al. 2021; the analog paper's
// Supplementary Note 3), and the time and memory of both over the sequence
// length. The feature maps are the maps of package catalog by name, built
// with a feature count m (the hybrids FLOP-matched to m).

// MSEConfig configures MSE.
type MSEConfig struct {
	// Lengths are the sequence lengths L of random inputs; ignored when Q,
	// K and V are given.
	Lengths []int `json:"lengths"`
	// Dim is the head dimension d of random inputs; ignored when Q, K and
	// V are given.
	Dim int `json:"d"`
	// Features are the feature counts m.
	Features []int `json:"features"`
	// Variants are catalog names of the feature maps (e.g. positive,
	// hyperbolic, trig, relu, angular, gaussian); rows carry the name as
	// given.
	Variants []string `json:"variants"`
	// Samplers draw the projections (nil: sampler.Default()).
	Samplers []sampler.Sampler `json:"-"`
	// Seeds is the number of seeds: independent Q, K, V (unless given) and
	// projections.
	Seeds int `json:"seeds"`
	// Seed is the base seed.
	Seed uint64 `json:"seed"`
	// Causal selects unidirectional attention.
	Causal bool `json:"causal"`
	// Q, K and V, if given (all three), are the inputs of every seed;
	// only the projections change between seeds.
	Q, K, V *mat.Dense `json:"-"`
}

// Replication returns the configuration of the Performer setup of
// the analog paper's Supplementary Note 3: L = 4096, d = 16, m = 16, 32,
// 64, …, 192, 15 seeds, iid and orthogonal projections, positive and
// trigonometric features.
func Replication() MSEConfig {
	return MSEConfig{Lengths: []int{4096}, Dim: 16, Features: []int{16, 32, 64, 96, 128, 160, 192},
		Variants: []string{"positive", "trig"}, Samplers: []sampler.Sampler{sampler.Gaussian{}, sampler.Orthogonal{}},
		Seeds: 15}
}

// inputs returns the lengths and dimension the study runs.
func (c MSEConfig) inputs() (ls []int, d int) {
	if c.Q != nil {
		l, d := c.Q.Dims()
		return []int{l}, d
	}
	return c.Lengths, c.Dim
}

// Validate checks the configuration.
func (c MSEConfig) Validate() error {
	if (c.Q == nil) != (c.K == nil) || (c.Q == nil) != (c.V == nil) {
		return errors.New("performer: Q, K and V go together")
	}
	if c.Q == nil && len(c.Lengths) == 0 {
		return errors.New("performer: no sequence lengths given")
	}
	if len(c.Features) == 0 {
		return errors.New("performer: no feature counts given")
	}
	if len(c.Variants) == 0 {
		return errors.New("performer: no feature maps given")
	}
	if err := limits.Count("performer: the number of seeds", c.Seeds, 1); err != nil {
		return err
	}
	ls, d := c.inputs()
	if err := limits.Dim("performer: the head dimension", d); err != nil {
		return err
	}
	for _, l := range ls {
		if l <= 0 {
			return fmt.Errorf("performer: sequence lengths must be positive, got %d", l)
		}
		// Each seed holds Q, K, V and the exact output.
		held, err := limits.Mul(4*c.Seeds, l)
		if err != nil {
			return fmt.Errorf("performer: the inputs: %w", err)
		}
		if _, err := limits.Matrix("performer: the inputs of all seeds", held, d); err != nil {
			return err
		}
	}
	for _, m := range c.Features {
		if err := limits.Dim("performer: the number of features", m); err != nil {
			return err
		}
	}
	reg := catalog.Default()
	for _, v := range c.Variants {
		if _, err := reg.Lookup(v); err != nil {
			return fmt.Errorf("performer: unknown variant %.40q (want one of %s)", v, strings.Join(reg.Names(), ", "))
		}
	}
	return nil
}

// MSERow is the error of one feature map, sampler and feature
// count at one length, aggregated over seeds.
type MSERow struct {
	L        int    `json:"L"`
	D        int    `json:"d"`
	Variant  string `json:"variant"`
	Sampler  string `json:"sampler"`
	Features int    `json:"features"`
	Causal   bool   `json:"causal"`
	Seeds    int    `json:"seeds"`
	// MSE and MSEStd are the mean and standard deviation over seeds of the
	// output MSE (mean over finite entries of the squared difference);
	// MSEs holds the value of each seed.
	MSE    float64   `json:"mse"`
	MSEStd float64   `json:"mse_std"`
	MSEs   []float64 `json:"mse_per_seed,omitempty"`
	// RelError is the mean over seeds of ‖O − Ô‖_F / ‖O‖_F.
	RelError float64 `json:"rel_error"`
	// ExactSecs and LinearSecs are the mean times of exact and linear
	// attention.
	ExactSecs  float64 `json:"exact_seconds"`
	LinearSecs float64 `json:"linear_seconds"`
	// NonFinite counts output entries that are NaN or ±Inf, over seeds.
	NonFinite int `json:"non_finite_outputs"`
}

// MSEResult is the result of MSE.
type MSEResult struct {
	// Rows are ordered by length, variant, sampler, then feature count.
	Rows []MSERow
	// Dim, Causal and Seeds repeat the configuration; Backend names the
	// BLAS backend that ran it.
	Dim     int
	Causal  bool
	Seeds   int
	Backend string
}

// MSE compares linear attention with the random feature maps of
// cfg against exact softmax attention, on random N(0, 1) Q, K, V (or the
// given ones): the output MSE (mean over entries of the squared
// difference, then mean ± standard deviation over seeds), the relative
// Frobenius error and the times. Seed s of length L draws Q, K, V from
// seeds derived from Seed, L and s, and the projections from Seed + s.
func MSE(ctx context.Context, cfg MSEConfig, progress func(done, total int)) (*MSEResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ls, d := cfg.inputs()
	samplers := cfg.Samplers
	if len(samplers) == 0 {
		samplers = []sampler.Sampler{sampler.Default()}
	}
	reg := catalog.Default()
	seeds := cfg.Seeds
	res := &MSEResult{Dim: d, Causal: cfg.Causal, Seeds: seeds, Backend: blas.Name()}
	total := len(ls) * seeds * len(cfg.Variants) * len(samplers) * len(cfg.Features)
	done := 0
	type ref struct {
		q, k, v, exact *mat.Dense
		secs           float64
	}
	for _, l := range ls {
		refs := make([]ref, seeds)
		for s := range refs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r := &refs[s]
			if cfg.Q != nil {
				r.q, r.k, r.v = cfg.Q, cfg.K, cfg.V
			} else {
				base := cfg.Seed*1000003 + uint64(l)*7919 + uint64(s)*104729
				var err error
				if r.q, r.k, r.v, err = randomQKV(l, d, base); err != nil {
					return nil, err
				}
			}
			t0 := time.Now()
			var err error
			if r.exact, err = (attention.Exact{Causal: cfg.Causal}).Apply(r.q, r.k, r.v); err != nil {
				return nil, err
			}
			r.secs = time.Since(t0).Seconds()
		}
		for _, variant := range cfg.Variants {
			for _, smp := range samplers {
				smp = sampler.Or(smp)
				for _, m := range cfg.Features {
					row := MSERow{L: l, D: d, Variant: strings.TrimSpace(variant), Sampler: smp.Name(),
						Features: m, Causal: cfg.Causal, Seeds: seeds}
					var rel float64
					for s, r := range refs {
						if err := ctx.Err(); err != nil {
							return nil, err
						}
						p, err := reg.Pair(variant, features.Options{InputDim: d, Features: m, Sampler: smp, Seed: cfg.Seed + uint64(s)})
						if err != nil {
							return nil, err
						}
						// A symmetric pair is applied as its map, with
						// stabilised (row-scaled) features where the map has
						// them; the hybrids as query/key pairs.
						lin := &attention.Linear{Pair: p, Causal: cfg.Causal}
						t0 := time.Now()
						out, err := lin.Apply(r.q, r.k, r.v)
						if err != nil {
							return nil, err
						}
						row.LinearSecs += time.Since(t0).Seconds() / float64(seeds)
						row.ExactSecs += r.secs / float64(seeds)
						var se float64
						n := 0
						exact := r.exact.RawMatrix().Data
						for i, x := range out.RawMatrix().Data {
							if math.IsNaN(x) || math.IsInf(x, 0) {
								row.NonFinite++
								continue
							}
							e := x - exact[i]
							se += e * e
							n++
						}
						row.MSEs = append(row.MSEs, se/float64(max(n, 1)))
						var diff mat.Dense
						diff.Sub(out, r.exact)
						rel += mat.Norm(&diff, 2) / mat.Norm(r.exact, 2) / float64(seeds)
						done++
						if progress != nil {
							progress(done, total)
						}
					}
					row.MSE, row.MSEStd = stat.MeanStdDev(row.MSEs, nil)
					if seeds == 1 {
						row.MSEStd = 0
					}
					row.RelError = rel
					res.Rows = append(res.Rows, row)
				}
			}
		}
	}
	return res, nil
}

// randomQKV draws l×d N(0, 1) queries, keys and values from the seeds
// base+1, base+2 and base+3.
func randomQKV(l, d int, base uint64) (q, k, v *mat.Dense, err error) {
	if q, err = (sampler.Gaussian{}).Sample(l, d, base+1); err != nil {
		return nil, nil, nil, err
	}
	if k, err = (sampler.Gaussian{}).Sample(l, d, base+2); err != nil {
		return nil, nil, nil, err
	}
	if v, err = (sampler.Gaussian{}).Sample(l, d, base+3); err != nil {
		return nil, nil, nil, err
	}
	return q, k, v, nil
}

// Table returns one line per row: MSE ± std, relative error, times and
// non-finite outputs.
func (r *MSEResult) Table() *report.Table {
	t := &report.Table{
		Title: fmt.Sprintf("linear attention vs exact softmax attention: d=%d, causal=%v, %d seeds, backend %s",
			r.Dim, r.Causal, r.Seeds, r.Backend),
		Header: []string{"L", "variant", "sampler", "m", "output MSE", "± std", "rel error", "exact s", "linear s", "non-finite"},
	}
	for _, row := range r.Rows {
		t.Add(row.L, row.Variant, row.Sampler, row.Features, fmt.Sprintf("%.3e", row.MSE), fmt.Sprintf("%.1e", row.MSEStd),
			report.Fixed(row.RelError, 3), report.Fixed(row.ExactSecs, 4), report.Fixed(row.LinearSecs, 4), row.NonFinite)
	}
	return t
}

// SamplerComparison compares the mean output MSE of orthogonal
// ("orf") and iid projections for one variant, feature count and length.
type SamplerComparison struct {
	L        int
	Variant  string
	Features int
	ORF, IID float64
	// Z is the difference of the means in standard errors of the
	// difference, (ORF − IID)/√((s²_orf + s²_iid)/seeds); negative favours
	// orthogonal projections.
	Z float64
}

// Verdict is "orf better" for Z < −2, "iid better" for Z > 2 and "not
// separated" otherwise.
func (c SamplerComparison) Verdict() string {
	switch {
	case c.Z < -2:
		return "orf better"
	case c.Z > 2:
		return "iid better"
	}
	return "not separated"
}

// SamplerComparisons pairs every orthogonal row with the iid row of the
// same variant, feature count and length.
func (r *MSEResult) SamplerComparisons() []SamplerComparison {
	var out []SamplerComparison
	for _, a := range r.Rows {
		if a.Sampler != "orf" {
			continue
		}
		for _, b := range r.Rows {
			if b.Sampler == "iid" && b.Variant == a.Variant && b.Features == a.Features && b.L == a.L {
				se := math.Sqrt((a.MSEStd*a.MSEStd + b.MSEStd*b.MSEStd) / float64(a.Seeds))
				out = append(out, SamplerComparison{L: a.L, Variant: a.Variant, Features: a.Features,
					ORF: a.MSE, IID: b.MSE, Z: (a.MSE - b.MSE) / se})
			}
		}
	}
	return out
}

// RenderComparison writes SamplerComparisons, one line each.
func (r *MSEResult) RenderComparison(w io.Writer) error {
	if _, err := fmt.Fprintln(w, "\northogonal vs iid (difference of mean MSE in standard errors; negative favours orf):"); err != nil {
		return err
	}
	for _, c := range r.SamplerComparisons() {
		if _, err := fmt.Fprintf(w, "  %-10s m=%-4d orf %.3e  iid %.3e  z=%+.2f  %s\n", c.Variant, c.Features, c.ORF, c.IID, c.Z, c.Verdict()); err != nil {
			return err
		}
	}
	return nil
}

// Plot returns the output MSE against the feature count, one line per
// variant, sampler and length, on a log scale.
func (r *MSEResult) Plot() *report.Plot {
	p := &report.Plot{
		Title:    "linear attention: output MSE vs features",
		XLabel:   "features m",
		YLabel:   "output MSE against exact softmax attention (log scale)",
		LogY:     true,
		Headroom: 30,
	}
	index := map[string]int{}
	for _, row := range r.Rows {
		key := fmt.Sprintf("%s / %s / L=%d", row.Variant, row.Sampler, row.L)
		i, ok := index[key]
		if !ok {
			i = len(p.Series)
			index[key] = i
			p.Series = append(p.Series, report.Series{Name: key, Points: true})
		}
		if row.MSE > 0 && !math.IsInf(row.MSE, 0) {
			p.Series[i].X = append(p.Series[i].X, float64(row.Features))
			p.Series[i].Y = append(p.Series[i].Y, row.MSE)
		}
	}
	return p
}

// TimingFeatures is the feature count of the linear attention in
// the timing study (positive features, orthogonal projections, seed 1).
const TimingFeatures = 256

// TimingLengths returns the default lengths of the timing study,
// 256, 512, …, 65536.
func TimingLengths() []int {
	return []int{256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}
}

// TimingConfig configures Timing.
type TimingConfig struct {
	// Lengths are the sequence lengths L.
	Lengths []int `json:"lengths"`
	// Dim is the head dimension d.
	Dim int `json:"d"`
	// MaxExact is the longest L at which exact attention is measured.
	MaxExact int `json:"max_exact"`
	// Causal selects unidirectional attention.
	Causal bool `json:"causal"`
}

// Validate checks the configuration.
func (c TimingConfig) Validate() error {
	if len(c.Lengths) == 0 {
		return errors.New("performer: no sequence lengths given")
	}
	if err := limits.Dim("performer: the head dimension", c.Dim); err != nil {
		return err
	}
	for _, l := range c.Lengths {
		if l <= 0 {
			return fmt.Errorf("performer: sequence lengths must be positive, got %d", l)
		}
		if _, err := limits.Matrix("performer: the inputs", 3*l, c.Dim); err != nil {
			return err
		}
	}
	return nil
}

// TimingRow is the time and allocated memory of exact and linear
// attention at one length; the exact fields are zero (and left out of
// JSON) beyond MaxExact.
type TimingRow struct {
	L            int     `json:"L"`
	ExactSecs    float64 `json:"exact_seconds,omitempty"`
	ExactBytes   uint64  `json:"exact_alloc_bytes,omitempty"`
	LinearSecs   float64 `json:"linear_seconds"`
	LinearBytes  uint64  `json:"linear_alloc_bytes"`
	LinearFeats  int     `json:"features"`
	LinearSample string  `json:"variant"`
}

// TimingResult is the result of Timing.
type TimingResult struct {
	Rows []TimingRow
	// Dim and Causal repeat the configuration; Backend names the BLAS
	// backend that ran it.
	Dim     int
	Causal  bool
	Backend string
}

// Timing measures the wall time and the bytes allocated by exact
// attention (for L ≤ MaxExact) and by linear attention with
// TimingFeatures positive features on orthogonal projections, on
// random N(0, 1) Q, K, V of each length.
func Timing(ctx context.Context, cfg TimingConfig, progress func(done, total int)) (*TimingResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	const m = TimingFeatures
	d := cfg.Dim
	p, err := catalog.Default().Pair("positive", features.Options{InputDim: d, Features: m, Sampler: sampler.Orthogonal{}, Seed: 1})
	if err != nil {
		return nil, err
	}
	lin := &attention.Linear{Pair: p, Causal: cfg.Causal}
	res := &TimingResult{Dim: d, Causal: cfg.Causal, Backend: blas.Name()}
	for i, l := range cfg.Lengths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q, k, v, err := randomQKV(l, d, uint64(l))
		if err != nil {
			return nil, err
		}
		r := TimingRow{L: l, LinearFeats: m, LinearSample: "positive/orf"}
		if l <= cfg.MaxExact {
			if r.ExactSecs, r.ExactBytes, err = measure(func() error {
				_, err := attention.Exact{Causal: cfg.Causal}.Apply(q, k, v)
				return err
			}); err != nil {
				return nil, err
			}
		}
		if r.LinearSecs, r.LinearBytes, err = measure(func() error {
			_, err := lin.Apply(q, k, v)
			return err
		}); err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, r)
		if progress != nil {
			progress(i+1, len(cfg.Lengths))
		}
	}
	return res, nil
}

// measure returns the wall time of f and the bytes it allocated
// (after a garbage collection, so earlier garbage is not counted).
func measure(f func() error) (float64, uint64, error) {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	t0 := time.Now()
	err := f()
	secs := time.Since(t0).Seconds()
	runtime.ReadMemStats(&b)
	return secs, b.TotalAlloc - a.TotalAlloc, err
}

// TimingSummary summarises a timing study.
type TimingSummary struct {
	// ExactSlope and LinearSlope are the log-log slopes of time against L
	// over the upper half of the lengths, at least two (about 2 and 1 when
	// the quadratic and linear costs dominate); HasExact and HasLinear
	// report whether there were two lengths or more to fit them.
	ExactSlope, LinearSlope float64
	HasExact, HasLinear     bool
	// Crossover is the first length at which linear attention was faster
	// than exact attention (0: none).
	Crossover int
}

// Summary returns the slopes and the crossover length of the rows.
func (r *TimingResult) Summary() TimingSummary {
	var s TimingSummary
	var lx, ex, ly, lyLin []float64
	for _, row := range r.Rows {
		if row.ExactSecs > 0 {
			lx = append(lx, math.Log(float64(row.L)))
			ex = append(ex, math.Log(row.ExactSecs))
			if s.Crossover == 0 && row.LinearSecs < row.ExactSecs {
				s.Crossover = row.L
			}
		}
		ly = append(ly, math.Log(float64(row.L)))
		lyLin = append(lyLin, math.Log(row.LinearSecs))
	}
	// The upper half of the points, but at least two.
	upper := func(n int) int { return min(n/2, n-2) }
	if n := len(lx); n >= 2 {
		_, s.ExactSlope = stat.LinearRegression(lx[upper(n):], ex[upper(n):], nil, false)
		s.HasExact = true
	}
	if n := len(ly); n >= 2 {
		_, s.LinearSlope = stat.LinearRegression(ly[upper(n):], lyLin[upper(n):], nil, false)
		s.HasLinear = true
	}
	return s
}

// Table returns one line per length: times, MiB allocated and the
// speed-up of linear attention.
func (r *TimingResult) Table() *report.Table {
	t := &report.Table{
		Title: fmt.Sprintf("exact vs linear attention (positive features, m=%d, orf), d=%d, causal=%v, backend %s",
			TimingFeatures, r.Dim, r.Causal, r.Backend),
		Header: []string{"L", "exact s", "exact MiB", "linear s", "linear MiB", "speed-up"},
	}
	mib := func(b uint64) string { return report.Fixed(float64(b)/(1<<20), 1) }
	for _, row := range r.Rows {
		if row.ExactSecs > 0 {
			t.Add(row.L, report.Fixed(row.ExactSecs, 4), mib(row.ExactBytes), report.Fixed(row.LinearSecs, 4), mib(row.LinearBytes),
				report.Fixed(row.ExactSecs/row.LinearSecs, 2))
		} else {
			t.Add(row.L, "-", "-", report.Fixed(row.LinearSecs, 4), mib(row.LinearBytes), "-")
		}
	}
	return t
}

// Render writes the table, the log-log slopes and the crossover length.
func (r *TimingResult) Render(w io.Writer) error {
	if err := r.Table().Render(w); err != nil {
		return err
	}
	s := r.Summary()
	var err error
	switch {
	case s.HasExact && s.HasLinear:
		_, err = fmt.Fprintf(w, "\nlog-log slope of time against L (upper half of the lengths): exact %.2f, linear %.2f\n", s.ExactSlope, s.LinearSlope)
	case s.HasLinear:
		_, err = fmt.Fprintf(w, "\nlog-log slope of time against L (upper half of the lengths): linear %.2f\n", s.LinearSlope)
	}
	if err != nil {
		return err
	}
	if s.Crossover > 0 {
		_, err = fmt.Fprintf(w, "linear attention is faster from L = %d on (first measured length where it wins)\n", s.Crossover)
	}
	return err
}
