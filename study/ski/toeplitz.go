package ski

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/toeplitz"
)

// This file holds the studies of the ski-tnn paper (Toeplitz neural
// operators): the SKI error against the bound of Theorem 1, the decay of
// the impulse responses of frequency-domain MLPs (Theorems 2-4), and the
// timing of dense, FFT, SKI and frequency-domain operators.

// ErrorBoundConfig configures ErrorBound. Zero values give
// the study of the paper's diagnostics: n = 256, ℓ = 16, r = 8, 16, 32, 64.
type ErrorBoundConfig struct {
	// N is the size of the Toeplitz matrix (default 256; the study costs
	// O(N³)).
	N int
	// Lengthscale is ℓ of the Matérn 5/2 kernel (default 16).
	Lengthscale float64
	// Ranks are the numbers r of inducing points (each 2 ≤ r ≤ N).
	Ranks []int
}

// maxErrorN bounds N of the error study, whose dense SVDs cost
// O(N³).
const maxErrorN = 4096

func (c ErrorBoundConfig) withDefaults() ErrorBoundConfig {
	if c.N == 0 {
		c.N = 256
	}
	if c.Lengthscale == 0 {
		c.Lengthscale = 16
	}
	if c.Ranks == nil {
		c.Ranks = []int{8, 16, 32, 64}
	}
	return c
}

// Validate reports whether the configuration can run.
func (c ErrorBoundConfig) Validate() error {
	c = c.withDefaults()
	if c.N < 2 || c.N > maxErrorN {
		return fmt.Errorf("ski: Toeplitz error study needs 2 ≤ n ≤ %d, got %d", maxErrorN, c.N)
	}
	if !(c.Lengthscale > 0) || math.IsInf(c.Lengthscale, 0) {
		return fmt.Errorf("ski: Matérn length scale must be positive and finite, got %v", c.Lengthscale)
	}
	if len(c.Ranks) == 0 {
		return errors.New("ski: Toeplitz error study needs at least one rank")
	}
	for _, r := range c.Ranks {
		if r < 2 || r > c.N {
			return fmt.Errorf("ski: SKI rank must lie in [2, n = %d], got %d", c.N, r)
		}
	}
	return nil
}

// ErrorBound measures the spectral-norm error of SKI (linear
// interpolation) for the n×n Toeplitz matrix of the Matérn 5/2 kernel with
// r inducing points, with the bound of Theorem 1 (|k”| ≤ 5/(3ℓ²)). The
// measured error lies below the bound and falls with r. Progress counts
// the ranks.
func ErrorBound(ctx context.Context, cfg ErrorBoundConfig, progress func(done, total int)) ([]*toeplitz.SKIErrorReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	ell := cfg.Lengthscale
	var out []*toeplitz.SKIErrorReport
	for i, r := range cfg.Ranks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e, err := toeplitz.SKIError(toeplitz.Matern52(ell), 5.0/(3*ell*ell), cfg.N, r)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		reportProgress(progress, i+1, len(cfg.Ranks))
	}
	return out, nil
}

func reportProgress(progress func(done, total int), done, total int) {
	if progress != nil {
		progress(done, total)
	}
}

// DecayRow is the impulse response of one random frequency-domain
// MLP: |k[t]|/|k[0]| at the given lags.
type DecayRow struct {
	Activation string    `json:"activation"`
	Lags       []int     `json:"lags"`
	Magnitude  []float64 `json:"magnitude"`
}

// ImpulseConfig configures Impulse. Zero values give the
// paper's diagnostics: GeLU, SiLU and ReLU MLPs with two hidden layers of
// 32, n = 4096, lags 0, 1, 2, 4, …, 512.
type ImpulseConfig struct {
	// Activations are names accepted by toeplitz.ActivationByName.
	Activations []string
	// Hidden are the hidden widths of the MLPs.
	Hidden []int
	// N is the number of frequencies (lags 0…N).
	N int
	// Lags are the lags reported (each in [0, N]).
	Lags []int
	// Seed seeds the MLP weights (the same for every activation).
	Seed uint64
}

// maxImpulseN bounds N of the impulse study.
const maxImpulseN = 1 << 24

func (c ImpulseConfig) withDefaults() ImpulseConfig {
	if c.Activations == nil {
		c.Activations = []string{"gelu", "silu", "relu"}
	}
	if c.Hidden == nil {
		c.Hidden = []int{32, 32}
	}
	if c.N == 0 {
		c.N = 4096
	}
	if c.Lags == nil {
		c.Lags = []int{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
	}
	return c
}

// Validate reports whether the configuration can run.
func (c ImpulseConfig) Validate() error {
	c = c.withDefaults()
	if len(c.Activations) == 0 {
		return errors.New("ski: impulse study needs at least one activation")
	}
	for _, a := range c.Activations {
		if _, err := toeplitz.ActivationByName(a); err != nil {
			return err
		}
	}
	prev := 1
	for _, h := range c.Hidden {
		if err := limits.Dim("ski: MLP hidden width", h); err != nil {
			return err
		}
		if _, err := limits.Matrix("MLP weights", h, prev); err != nil {
			return fmt.Errorf("ski: %w", err)
		}
		prev = h
	}
	if c.N < 1 || c.N > maxImpulseN {
		return fmt.Errorf("ski: impulse study needs 1 ≤ n ≤ %d, got %d", maxImpulseN, c.N)
	}
	for _, l := range c.Lags {
		if l < 0 || l > c.N {
			return fmt.Errorf("ski: lag %d outside [0, n = %d]", l, c.N)
		}
	}
	return nil
}

// Impulse returns the impulse responses |k[t]|/|k[0]| of random
// frequency-domain MLPs of cos ω, one per activation: they decay fast
// (super-polynomially) for the smooth GeLU and SiLU and slowly for ReLU
// (Theorems 2-4). Progress counts the activations.
func Impulse(ctx context.Context, cfg ImpulseConfig, progress func(done, total int)) ([]DecayRow, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	var out []DecayRow
	for i, act := range cfg.Activations {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dc, err := toeplitz.ImpulseResponse(act, cfg.Hidden, cfg.N, cfg.Seed)
		if err != nil {
			return nil, err
		}
		row := DecayRow{Activation: act, Lags: append([]int(nil), cfg.Lags...)}
		for _, l := range cfg.Lags {
			row.Magnitude = append(row.Magnitude, dc.K[l])
		}
		out = append(out, row)
		reportProgress(progress, i+1, len(cfg.Activations))
	}
	return out, nil
}

// TimingRow is one sequence length of the timing study: seconds
// per operator application of d channels.
type TimingRow struct {
	N int `json:"n"`
	// Dense is the direct O(n²) product (0: not measured at this n).
	Dense    float64 `json:"dense_seconds,omitempty"`
	FFT      float64 `json:"fft_seconds"`
	SKI      float64 `json:"ski_seconds"`
	FDCausal float64 `json:"fd_causal_seconds"`
	// SKIvsFFT is FFT/SKI.
	SKIvsFFT float64 `json:"ski_speedup_over_fft"`
	// SKIRelErr is the relative Frobenius error of the SKI output against
	// the exact (FFT) output.
	SKIRelErr float64 `json:"ski_relative_error"`
}

// TimingConfig configures Timing.
type TimingConfig struct {
	// Channels is the number d of channels (positive).
	Channels int
	// Inducing is the number r of SKI inducing points (at least 2; min(r,
	// n) at length n).
	Inducing int
	// FilterWidth is the width m of the sparse filter (0: none).
	FilterWidth int
	// Lambda is the inverse time warp λ at n = 512, in (0, 1); length n
	// uses λ^(512/n).
	Lambda float64
	// MaxN is the longest sequence (at least 512); the lengths are 512,
	// 1024, … up to MaxN.
	MaxN int
	// MaxDense is the longest sequence for the dense O(n²) product.
	MaxDense int
	// Seed seeds the positional encoder, the filters and the inputs.
	Seed uint64
}

// Validate reports whether the configuration can run.
func (c TimingConfig) Validate() error {
	if c.Channels <= 0 || c.FilterWidth < 0 || c.Inducing < 2 || c.MaxN < 512 {
		return fmt.Errorf("ski: Toeplitz timing needs d > 0, m ≥ 0, r ≥ 2 and max n ≥ 512 (got d=%d, m=%d, r=%d, max n=%d)",
			c.Channels, c.FilterWidth, c.Inducing, c.MaxN)
	}
	if !(c.Lambda > 0 && c.Lambda < 1) {
		return fmt.Errorf("ski: λ must lie in (0, 1), got %v", c.Lambda)
	}
	if c.MaxN > limits.MaxDim {
		return fmt.Errorf("ski: max n must be at most %d, got %d", limits.MaxDim, c.MaxN)
	}
	if _, err := limits.Matrix("Toeplitz timing input", c.MaxN, c.Channels); err != nil {
		return fmt.Errorf("ski: %w", err)
	}
	if _, err := limits.Matrix("Toeplitz timing filters", c.Channels, c.FilterWidth); err != nil {
		return fmt.Errorf("ski: %w", err)
	}
	return nil
}

// timingLengths returns 512, 1024, … ≤ maxN.
func timingLengths(maxN int) []int {
	var ns []int
	for n := 512; n <= maxN; n *= 2 {
		ns = append(ns, n)
	}
	return ns
}

// Timing times, for n = 512, 1024, … MaxN and d channels of
// piecewise-linear positional kernels plus a sparse filter, the operator
// applied by FFT (O(n log n)), by SKI with r inducing points, by the causal
// frequency-domain operator of a GeLU MLP, and (n ≤ MaxDense) by direct
// O(n²) products; it reports the SKI error against the FFT output. The
// warp λ_n = λ^(512/n) spans the same fraction of every length, so the
// SKI error is comparable across n. Progress counts the lengths.
func Timing(ctx context.Context, cfg TimingConfig, progress func(done, total int)) ([]TimingRow, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := cfg.Channels
	rpe, err := toeplitz.RandomPiecewiseLinear(33, d, cfg.Seed)
	if err != nil {
		return nil, err
	}
	mlp, err := toeplitz.NewMLP([]int{32}, d, toeplitz.GeLU, cfg.Seed+1)
	if err != nil {
		return nil, err
	}
	ns := timingLengths(cfg.MaxN)
	var out []TimingRow
	for i, n := range ns {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		x, filters, kernels, ts, err := timingInputs(cfg, rpe, n)
		if err != nil {
			return nil, err
		}
		p := TimingRow{N: n}
		op, err := toeplitz.NewOperator(ts)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		yFFT, err := op.Apply(x)
		if err != nil {
			return nil, err
		}
		p.FFT = time.Since(t0).Seconds()
		ski, err := toeplitz.NewSKI(n, min(cfg.Inducing, n), toeplitz.Linear, kernels, filters)
		if err != nil {
			return nil, err
		}
		t0 = time.Now()
		ySKI, err := ski.Apply(x)
		if err != nil {
			return nil, err
		}
		p.SKI = time.Since(t0).Seconds()
		if p.SKIRelErr, err = kernel.RelativeError(yFFT, ySKI); err != nil {
			return nil, fmt.Errorf("ski: Toeplitz timing, n = %d: SKI error: %w", n, err)
		}
		p.SKIvsFFT = p.FFT / p.SKI
		fd, err := toeplitz.NewCausalFD(n, toeplitz.MLPResponse(mlp))
		if err != nil {
			return nil, err
		}
		t0 = time.Now()
		if _, err := fd.Apply(x); err != nil {
			return nil, err
		}
		p.FDCausal = time.Since(t0).Seconds()
		if n <= cfg.MaxDense {
			t0 = time.Now()
			for l := 0; l < d; l++ {
				ts[l].MulVecDirect(mat.Col(nil, l, x))
			}
			p.Dense = time.Since(t0).Seconds()
		}
		out = append(out, p)
		reportProgress(progress, i+1, len(ns))
	}
	return out, nil
}

// Slopes fits log time against log n by least squares: "fft",
// "ski" and "fd" over the upper half of the lengths, "dense" over every
// length where it was measured. Methods with fewer than two positive times
// are left out.
func Slopes(rows []TimingRow) map[string]float64 {
	fit := func(rs []TimingRow, get func(TimingRow) float64) float64 {
		var x, y []float64
		for _, p := range rs {
			if v := get(p); v > 0 {
				x = append(x, math.Log(float64(p.N)))
				y = append(y, math.Log(v))
			}
		}
		if len(x) < 2 {
			return math.NaN()
		}
		_, b := stat.LinearRegression(x, y, nil, false)
		return b
	}
	upper := rows[len(rows)/2:]
	s := map[string]float64{
		"fft":   fit(upper, func(p TimingRow) float64 { return p.FFT }),
		"ski":   fit(upper, func(p TimingRow) float64 { return p.SKI }),
		"fd":    fit(upper, func(p TimingRow) float64 { return p.FDCausal }),
		"dense": fit(rows, func(p TimingRow) float64 { return p.Dense }),
	}
	for k, v := range s {
		if math.IsNaN(v) {
			delete(s, k)
		}
	}
	return s
}

// Report gathers the Toeplitz studies of one run, as the CLI
// prints them.
type Report struct {
	SKIError []*toeplitz.SKIErrorReport `json:"ski_error,omitempty"`
	Decay    []DecayRow                 `json:"decay,omitempty"`
	Timing   []TimingRow                `json:"timing,omitempty"`
	// Slopes are Slopes(Timing).
	Slopes map[string]float64 `json:"slopes,omitempty"`
	// The studies' configurations, for the tables' titles (zero values
	// mean the defaults).
	ErrorSetup   ErrorBoundConfig `json:"-"`
	ImpulseSetup ImpulseConfig    `json:"-"`
	TimingSetup  TimingConfig     `json:"-"`
}

// ErrorTable returns the table of the SKI error study (its title is
// printed by Render).
func (r *Report) ErrorTable() *report.Table {
	t := &report.Table{Header: []string{"r", "‖E_SKI‖₂", "bound", "‖E_nyst‖₂", "‖WAWᵀ−T‖₂/‖T‖₂"}}
	for _, e := range r.SKIError {
		t.Add(e.R, report.F(e.Measured, 4), report.F(e.Bound, 4), report.F(e.Nystrom, 4), report.F(e.ToExact, 4))
	}
	return t
}

// DecayTable returns the table of the impulse responses, one column per
// activation (its title is printed by Render).
func (r *Report) DecayTable() *report.Table {
	t := &report.Table{Header: []string{"t"}}
	if len(r.Decay) == 0 {
		return t
	}
	for _, dc := range r.Decay {
		t.Header = append(t.Header, dc.Activation)
	}
	for i, l := range r.Decay[0].Lags {
		row := []string{strconv.Itoa(l)}
		for _, dc := range r.Decay {
			row = append(row, strconv.FormatFloat(dc.Magnitude[i], 'e', 3, 64))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// TimingTable returns the table of the timing study (its title and the
// slopes are printed by Render).
func (r *Report) TimingTable() *report.Table {
	t := &report.Table{Header: []string{"n", "dense", "FFT", "SKI", "FD causal", "SKI speed-up", "SKI rel. error"}}
	for _, p := range r.Timing {
		dense := "-"
		if p.Dense > 0 {
			dense = report.Fixed(p.Dense, 4)
		}
		t.Add(p.N, dense, report.Fixed(p.FFT, 4), report.Fixed(p.SKI, 4), report.Fixed(p.FDCausal, 4),
			report.Fixed(p.SKIvsFFT, 1)+"×", report.Fixed(p.SKIRelErr, 3))
	}
	return t
}

// hiddenWidths describes hidden widths as "2×32" when they are equal.
func hiddenWidths(h []int) string {
	for _, v := range h {
		if v != h[0] {
			s := make([]string, len(h))
			for i, v := range h {
				s[i] = strconv.Itoa(v)
			}
			return strings.Join(s, ", ")
		}
	}
	if len(h) == 0 {
		return "no"
	}
	return fmt.Sprintf("%d×%d", len(h), h[0])
}

// Render writes the text report: the tables of the studies that ran.
func (r *Report) Render(w io.Writer) error {
	var b bytes.Buffer
	if len(r.SKIError) > 0 {
		e := r.ErrorSetup.withDefaults()
		fmt.Fprintf(&b, "SKI spectral-norm error against Theorem 1 (Matérn 5/2 kernel, ℓ = %g, n = %d, linear interpolation):\n", e.Lengthscale, e.N)
		if err := r.ErrorTable().Render(&b); err != nil {
			return err
		}
	}
	if len(r.Decay) > 0 {
		im := r.ImpulseSetup.withDefaults()
		fmt.Fprintf(&b, "\nimpulse responses |k[t]|/|k[0]| of random frequency-domain MLPs (%s hidden, n = %d):\n", hiddenWidths(im.Hidden), im.N)
		if err := r.DecayTable().Render(&b); err != nil {
			return err
		}
	}
	if len(r.Timing) > 0 {
		c := r.TimingSetup
		fmt.Fprintf(&b, "\ntiming, d = %d channels (SKI: r = %d, m = %d; seconds per operator application):\n", c.Channels, c.Inducing, c.FilterWidth)
		if err := r.TimingTable().Render(&b); err != nil {
			return err
		}
		b.WriteString("log-log slopes (time against n): ")
		for _, k := range []string{"dense", "fft", "ski", "fd"} {
			if v, ok := r.Slopes[k]; ok {
				fmt.Fprintf(&b, "%s %.2f  ", k, v)
			}
		}
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Plot returns the log-log plot of the impulse responses (positive lags,
// magnitudes above 10⁻³⁰⁰); nil without decay rows.
func (r *Report) Plot() *report.Plot {
	if len(r.Decay) == 0 {
		return nil
	}
	p := &report.Plot{
		Title:  "impulse responses of frequency-domain MLPs",
		XLabel: "lag t (log scale)", YLabel: "|k[t]| / |k[0]| (log scale)",
		LogX: true, LogY: true, Width: 8, Height: 5,
	}
	for _, dc := range r.Decay {
		s := report.Series{Name: dc.Activation, Points: true}
		for i, l := range dc.Lags {
			if l > 0 && dc.Magnitude[i] > 1e-300 {
				s.X = append(s.X, float64(l))
				s.Y = append(s.Y, dc.Magnitude[i])
			}
		}
		p.Series = append(p.Series, s)
	}
	return p
}

// timingInputs draws the inputs of one length n of the Toeplitz
// timing studies (Timing, CompareDevice): a random n×d sequence,
// per channel a random sparse filter of cfg.FilterWidth taps, the RPE
// kernel with the warp λ^(512/n), and the Toeplitz matrices of kernel plus
// filter.
func timingInputs(cfg TimingConfig, rpe *toeplitz.PiecewiseLinear, n int) (*mat.Dense, [][]float64, []func(float64) float64, []*toeplitz.Toeplitz, error) {
	g := sampler.Gaussian{}
	d, m := cfg.Channels, cfg.FilterWidth
	x, err := g.Sample(n, d, cfg.Seed+uint64(n))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	filters := make([][]float64, d)
	kernels := make([]func(float64) float64, d)
	ts := make([]*toeplitz.Toeplitz, d)
	for l := 0; l < d; l++ {
		if m > 0 {
			f, err := g.Sample(1, m, cfg.Seed+uint64(1000*l))
			if err != nil {
				return nil, nil, nil, nil, err
			}
			filters[l] = f.RawRowView(0)
		}
		kernels[l] = rpe.Kernel(l, math.Pow(cfg.Lambda, 512/float64(n)))
		sp, err := toeplitz.SparseToeplitz(n, filters[l])
		if err != nil {
			return nil, nil, nil, nil, err
		}
		k := kernels[l]
		if ts[l], err = toeplitz.FromKernel(n, func(t int) float64 { return k(float64(t)) + sp.Coef(t) }); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	return x, filters, kernels, ts, nil
}
