package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/toeplitz"
)

type toeplitzReport struct {
	SKIError []*toeplitz.SKIErrorReport `json:"ski_error,omitempty"`
	Decay    []decaySummary             `json:"decay,omitempty"`
	Timing   []timingPoint              `json:"timing,omitempty"`
	Slopes   map[string]float64         `json:"slopes,omitempty"`
}

type decaySummary struct {
	Activation string    `json:"activation"`
	Lags       []int     `json:"lags"`
	Magnitude  []float64 `json:"magnitude"`
}

type timingPoint struct {
	N         int     `json:"n"`
	Dense     float64 `json:"dense_seconds,omitempty"`
	FFT       float64 `json:"fft_seconds"`
	SKI       float64 `json:"ski_seconds"`
	FDCausal  float64 `json:"fd_causal_seconds"`
	SKIvsFFT  float64 `json:"ski_speedup_over_fft"`
	SKIRelErr float64 `json:"ski_relative_error"`
}

func newToeplitz() *cobra.Command {
	var d, r, m, maxN, maxDense int
	var lambda float64
	var asJSON, noTiming, noDiag bool
	var plotPath string
	var seed uint64
	cmd := &cobra.Command{
		Use:   "toeplitz",
		Short: "Toeplitz neural operator diagnostics and timing (FFT, SKI, frequency-domain)",
		Long: "toeplitz runs the diagnostics of the ski-tnn paper: the SKI spectral-norm error against the\n" +
			"bound of Theorem 1 (Matérn 5/2 kernel, n = 256), impulse responses of GeLU, SiLU and ReLU\n" +
			"frequency-domain MLPs (Theorems 2-4), and the timing study over n = 512 … --max-n with d\n" +
			"channels: dense O(n²) products up to --max-dense, FFT O(n log n), SKI with r inducing points\n" +
			"and a sparse filter of width m, and the causal FD operator.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if d <= 0 || m < 0 || r < 2 || maxN < 512 {
				return fmt.Errorf("need d > 0, m ≥ 0, r ≥ 2 and --max-n ≥ 512 (got d=%d, m=%d, r=%d, max-n=%d)", d, m, r, maxN)
			}
			if !(lambda > 0 && lambda < 1) {
				return fmt.Errorf("--lambda must lie in (0, 1), got %v", lambda)
			}
			w := cmd.OutOrStdout()
			rep := &toeplitzReport{}
			if !noDiag {
				const n = 256
				for _, rr := range []int{8, 16, 32, 64} {
					e, err := toeplitz.SKIError(toeplitz.Matern52(16), 5.0/(3*16*16), n, rr)
					if err != nil {
						return err
					}
					rep.SKIError = append(rep.SKIError, e)
				}
				lags := []int{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
				for _, act := range []string{"gelu", "silu", "relu"} {
					dc, err := toeplitz.ImpulseResponse(act, []int{32, 32}, 4096, seed)
					if err != nil {
						return err
					}
					s := decaySummary{Activation: act, Lags: lags}
					for _, l := range lags {
						s.Magnitude = append(s.Magnitude, dc.K[l])
					}
					rep.Decay = append(rep.Decay, s)
				}
			}
			if !noTiming {
				var err error
				if rep.Timing, err = toeplitzTiming(d, r, m, lambda, maxN, maxDense, seed); err != nil {
					return err
				}
				rep.Slopes = slopes(rep.Timing)
			}
			if asJSON {
				return json.NewEncoder(w).Encode(rep)
			}
			printToeplitz(w, rep, d, r, m)
			if plotPath != "" && len(rep.Decay) > 0 {
				if err := plotDecay(plotPath, rep.Decay); err != nil {
					return err
				}
				fmt.Fprintf(w, "\nimpulse-response plot written to %s\n", plotPath)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&d, "d", 64, "channels")
	fl.IntVar(&r, "r", 64, "SKI inducing points")
	fl.IntVar(&m, "m", 32, "sparse filter width")
	fl.Float64Var(&lambda, "lambda", 0.99, "inverse time warp λ at n = 512 (λ^(512/n) at length n)")
	fl.IntVar(&maxN, "max-n", 1<<20, "longest sequence in the timing study")
	fl.IntVar(&maxDense, "max-dense", 4096, "longest sequence for the dense O(n²) product")
	fl.Uint64Var(&seed, "seed", 0, "random seed")
	fl.BoolVar(&noTiming, "no-timing", false, "skip the timing study")
	fl.BoolVar(&noDiag, "no-diagnostics", false, "skip the error and decay diagnostics")
	fl.StringVar(&plotPath, "plot", "", "PNG plot of the impulse responses")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func toeplitzTiming(d, r, m int, lambda float64, maxN, maxDense int, seed uint64) ([]timingPoint, error) {
	rpe, err := toeplitz.RandomPiecewiseLinear(33, d, seed)
	if err != nil {
		return nil, err
	}
	mlp, err := toeplitz.NewMLP([]int{32}, d, toeplitz.GeLU, seed+1)
	if err != nil {
		return nil, err
	}
	var out []timingPoint
	bar := newBar(0, "toeplitz")
	for n := 512; n <= maxN; n *= 2 {
		x, _ := sampler.Gaussian{}.Sample(n, d, seed+uint64(n))
		filters := make([][]float64, d)
		kernels := make([]func(float64) float64, d)
		ts := make([]*toeplitz.Toeplitz, d)
		for l := 0; l < d; l++ {
			g, _ := sampler.Gaussian{}.Sample(1, m, seed+uint64(1000*l))
			filters[l] = g.RawRowView(0)
			if m == 0 {
				filters[l] = nil
			}
			// λ_n = λ^(512/n): the warp spans the same fraction of every
			// sequence length, so the kernel's smooth part has the same shape
			// relative to n and the SKI error is comparable across n.
			kernels[l] = rpe.Kernel(l, math.Pow(lambda, 512/float64(n)))
			sp, err := toeplitz.SparseToeplitz(n, filters[l])
			if err != nil {
				return nil, err
			}
			k := kernels[l]
			t, err := toeplitz.FromKernel(n, func(t int) float64 { return k(float64(t)) + sp.Coef(t) })
			if err != nil {
				return nil, err
			}
			ts[l] = t
		}
		p := timingPoint{N: n}
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
		ski, err := toeplitz.NewSKI(n, min(r, n), toeplitz.Linear, kernels, filters)
		if err != nil {
			return nil, err
		}
		t0 = time.Now()
		ySKI, err := ski.Apply(x)
		if err != nil {
			return nil, err
		}
		p.SKI = time.Since(t0).Seconds()
		var diff mat.Dense
		diff.Sub(ySKI, yFFT)
		p.SKIRelErr = mat.Norm(&diff, 2) / mat.Norm(yFFT, 2)
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
		if n <= maxDense {
			t0 = time.Now()
			for l := 0; l < d; l++ {
				ts[l].MulVecDirect(mat.Col(nil, l, x))
			}
			p.Dense = time.Since(t0).Seconds()
		}
		out = append(out, p)
		_ = bar.Add(1)
	}
	_ = bar.Finish()
	return out, nil
}

// slopes fits log time against log n over the upper half of the lengths.
func slopes(ps []timingPoint) map[string]float64 {
	fit := func(get func(timingPoint) float64) float64 {
		var x, y []float64
		for _, p := range ps[len(ps)/2:] {
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
	s := map[string]float64{
		"fft": fit(func(p timingPoint) float64 { return p.FFT }),
		"ski": fit(func(p timingPoint) float64 { return p.SKI }),
		"fd":  fit(func(p timingPoint) float64 { return p.FDCausal }),
	}
	var x, y []float64
	for _, p := range ps {
		if p.Dense > 0 {
			x = append(x, math.Log(float64(p.N)))
			y = append(y, math.Log(p.Dense))
		}
	}
	if len(x) >= 2 {
		_, s["dense"] = stat.LinearRegression(x, y, nil, false)
	}
	for k, v := range s {
		if math.IsNaN(v) {
			delete(s, k)
		}
	}
	return s
}

func printToeplitz(w io.Writer, rep *toeplitzReport, d, r, m int) {
	if len(rep.SKIError) > 0 {
		fmt.Fprintln(w, "SKI spectral-norm error against Theorem 1 (Matérn 5/2 kernel, ℓ = 16, n = 256, linear interpolation):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "r\t‖E_SKI‖₂\tbound\t‖E_nyst‖₂\t‖WAWᵀ−T‖₂/‖T‖₂\t")
		for _, e := range rep.SKIError {
			fmt.Fprintf(tw, "%d\t%.4g\t%.4g\t%.4g\t%.4g\t\n", e.R, e.Measured, e.Bound, e.Nystrom, e.ToExact)
		}
		tw.Flush()
	}
	if len(rep.Decay) > 0 {
		fmt.Fprintln(w, "\nimpulse responses |k[t]|/|k[0]| of random frequency-domain MLPs (2×32 hidden, n = 4096):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "t\t")
		for _, dc := range rep.Decay {
			fmt.Fprintf(tw, "%s\t", dc.Activation)
		}
		fmt.Fprintln(tw)
		for i, l := range rep.Decay[0].Lags {
			fmt.Fprintf(tw, "%d\t", l)
			for _, dc := range rep.Decay {
				fmt.Fprintf(tw, "%.3e\t", dc.Magnitude[i])
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	if len(rep.Timing) > 0 {
		fmt.Fprintf(w, "\ntiming, d = %d channels (SKI: r = %d, m = %d; seconds per operator application):\n", d, r, m)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "n\tdense\tFFT\tSKI\tFD causal\tSKI speed-up\tSKI rel. error\t")
		for _, p := range rep.Timing {
			dense := "-"
			if p.Dense > 0 {
				dense = fmt.Sprintf("%.4f", p.Dense)
			}
			fmt.Fprintf(tw, "%d\t%s\t%.4f\t%.4f\t%.4f\t%.1f×\t%.3f\t\n", p.N, dense, p.FFT, p.SKI, p.FDCausal, p.SKIvsFFT, p.SKIRelErr)
		}
		tw.Flush()
		fmt.Fprintf(w, "log-log slopes (time against n): ")
		for _, k := range []string{"dense", "fft", "ski", "fd"} {
			if v, ok := rep.Slopes[k]; ok {
				fmt.Fprintf(w, "%s %.2f  ", k, v)
			}
		}
		fmt.Fprintln(w)
	}
}

func plotDecay(path string, ds []decaySummary) error {
	p := plot.New()
	p.Title.Text = "impulse responses of frequency-domain MLPs"
	p.X.Label.Text = "lag t (log scale)"
	p.Y.Label.Text = "|k[t]| / |k[0]| (log scale)"
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Tick.Marker = expTicks{}
	var lines []any
	for _, d := range ds {
		var pts plotter.XYs
		for i, l := range d.Lags {
			if l > 0 && d.Magnitude[i] > 1e-300 {
				pts = append(pts, plotter.XY{X: float64(l), Y: d.Magnitude[i]})
			}
		}
		lines = append(lines, d.Activation, pts)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

// expTicks labels logarithmic ticks as 1e-05, 1e-10, ….
type expTicks struct{}

func (expTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.LogTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = fmt.Sprintf("%.0e", ts[i].Value)
		}
	}
	return ts
}
