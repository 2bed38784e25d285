package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/backend"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/sampler"
)

// attVariant names a linear-attention feature map.
type attVariant struct {
	name, kernel, form string
}

var attVariants = map[string]attVariant{
	"positive":   {"positive", "softmax", "positive"},
	"hyperbolic": {"hyperbolic", "softmax", "hyperbolic"},
	"trig":       {"trig", "softmax", "trig"},
	"relu":       {"relu", "arccos1", ""},
	"angular":    {"angular", "hybrid", "angular"},
	"gaussian":   {"gaussian", "hybrid", "gaussian"},
}

// linearFor builds the linear attention of a variant with m features (the
// hybrids are FLOP-matched to m, see hybrid.MatchFLOPs).
func linearFor(v attVariant, m, d int, smp sampler.Sampler, seed uint64, causal bool) (*attention.Linear, error) {
	if v.kernel == "hybrid" {
		o := hybrid.MatchFLOPs(d, m)
		o.Sampler, o.Seed = smp, seed
		var p features.Pair
		var err error
		if v.form == "angular" {
			p, err = hybrid.Angular(d, o)
		} else {
			p, err = hybrid.Gaussian(d, 1, o)
		}
		if err != nil {
			return nil, err
		}
		return &attention.Linear{Pair: p, Causal: causal}, nil
	}
	mp, err := features.New(features.Config{Kernel: v.kernel, Form: v.form, Features: m, Sampler: smp, Seed: seed}, d)
	if err != nil {
		return nil, err
	}
	return &attention.Linear{Map: mp, Causal: causal}, nil
}

// attRow is one line of the attention study, aggregated over seeds.
type attRow struct {
	L          int       `json:"L"`
	D          int       `json:"d"`
	Variant    string    `json:"variant"`
	Sampler    string    `json:"sampler"`
	Features   int       `json:"features"`
	Causal     bool      `json:"causal"`
	Seeds      int       `json:"seeds"`
	MSE        float64   `json:"mse"`
	MSEStd     float64   `json:"mse_std"`
	MSEs       []float64 `json:"mse_per_seed,omitempty"`
	RelError   float64   `json:"rel_error"`
	ExactSecs  float64   `json:"exact_seconds"`
	LinearSecs float64   `json:"linear_seconds"`
	NonFinite  int       `json:"non_finite_outputs"`
}

func parseInts(s, flag string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("bad value %q in --%s (want positive integers)", f, flag)
		}
		out = append(out, v)
	}
	return out, nil
}

func readMatrix(path string) (*mat.Dense, error) {
	ds, err := readData(path, "csv", "", true)
	if err != nil {
		return nil, err
	}
	return ds.X, nil
}

func newAttention() *cobra.Command {
	var lengths, feats, variants, samplers, plotPath, qPath, kPath, vPath string
	var d, seeds int
	var causal, asJSON, replicate, timing bool
	var seed uint64
	var maxExact int
	cmd := &cobra.Command{
		Use:   "attention",
		Short: "Linear attention with random features against exact softmax attention",
		Long: "attention compares linear attention D⁻¹(Q'(K'ᵀV)) with positive (FAVOR+), hyperbolic,\n" +
			"trigonometric and ReLU features against exact softmax(QKᵀ/√d)V on random N(0,1) Q, K, V\n" +
			"(or on --q/--k/--v CSV files, header row, one row per token): output MSE (mean over entries\n" +
			"of the squared difference, then mean ± std over seeds), relative Frobenius error and time.\n" +
			"--replicate runs the Performer setup of the analog paper's Supplementary Note 3 (L = 4096,\n" +
			"d = 16, features 16..192, 15 seeds, iid and orthogonal, positive and trigonometric).\n" +
			"--timing measures time and allocated memory of exact and linear attention over L.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			if timing {
				ls, err := parseInts(lengths, "lengths")
				if err != nil {
					return err
				}
				if !cmd.Flags().Changed("lengths") {
					ls = []int{256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}
				}
				if !cmd.Flags().Changed("d") {
					d = 64
				}
				return attentionTiming(w, ls, d, maxExact, causal, asJSON)
			}
			if replicate {
				if !cmd.Flags().Changed("lengths") {
					lengths = "4096"
				}
				if !cmd.Flags().Changed("features") {
					feats = "16,32,64,96,128,160,192"
				}
				if !cmd.Flags().Changed("seeds") {
					seeds = 15
				}
				if !cmd.Flags().Changed("variants") {
					variants = "positive,trig"
				}
				if !cmd.Flags().Changed("samplers") {
					samplers = "iid,orf"
				}
				if !cmd.Flags().Changed("plot") {
					plotPath = "kernelkit-attention.png"
				}
			}
			ls, err := parseInts(lengths, "lengths")
			if err != nil {
				return err
			}
			ms, err := parseInts(feats, "features")
			if err != nil {
				return err
			}
			if d <= 0 {
				return fmt.Errorf("--d must be positive, got %d", d)
			}
			if seeds <= 0 {
				return fmt.Errorf("--seeds must be positive, got %d", seeds)
			}
			var vs []attVariant
			for _, name := range strings.Split(variants, ",") {
				v, ok := attVariants[strings.TrimSpace(name)]
				if !ok {
					return fmt.Errorf("unknown variant %q (want positive, hyperbolic, trig, relu, angular or gaussian)", name)
				}
				vs = append(vs, v)
			}
			ss, err := parseSamplers(samplers)
			if err != nil {
				return err
			}
			var fixed [3]*mat.Dense
			if qPath != "" || kPath != "" || vPath != "" {
				if qPath == "" || kPath == "" || vPath == "" {
					return fmt.Errorf("--q, --k and --v go together")
				}
				for i, p := range []string{qPath, kPath, vPath} {
					if fixed[i], err = readMatrix(p); err != nil {
						return err
					}
				}
				l, dd := fixed[0].Dims()
				ls, d = []int{l}, dd
			}
			var rows []*attRow
			bar := newBar(len(ls)*seeds*len(vs)*len(ss)*len(ms), "attention")
			for _, l := range ls {
				type ref struct {
					q, k, v, exact *mat.Dense
					secs           float64
				}
				refs := make([]ref, seeds)
				for s := range refs {
					r := &refs[s]
					if fixed[0] != nil {
						r.q, r.k, r.v = fixed[0], fixed[1], fixed[2]
					} else {
						base := seed*1000003 + uint64(l)*7919 + uint64(s)*104729
						r.q, _ = sampler.Gaussian{}.Sample(l, d, base+1)
						r.k, _ = sampler.Gaussian{}.Sample(l, d, base+2)
						r.v, _ = sampler.Gaussian{}.Sample(l, d, base+3)
					}
					t0 := time.Now()
					if r.exact, err = (attention.Exact{Causal: causal}).Apply(r.q, r.k, r.v); err != nil {
						return err
					}
					r.secs = time.Since(t0).Seconds()
				}
				for _, v := range vs {
					for _, smp := range ss {
						for _, m := range ms {
							row := &attRow{L: l, D: d, Variant: v.name, Sampler: smp.Name(), Features: m, Causal: causal, Seeds: seeds}
							var rel float64
							for s, r := range refs {
								lin, err := linearFor(v, m, d, smp, seed+uint64(s), causal)
								if err != nil {
									return err
								}
								t0 := time.Now()
								out, err := lin.Apply(r.q, r.k, r.v)
								if err != nil {
									return err
								}
								row.LinearSecs += time.Since(t0).Seconds() / float64(seeds)
								row.ExactSecs += r.secs / float64(seeds)
								var se float64
								n := 0
								for i, x := range out.RawMatrix().Data {
									if math.IsNaN(x) || math.IsInf(x, 0) {
										row.NonFinite++
										continue
									}
									e := x - r.exact.RawMatrix().Data[i]
									se += e * e
									n++
								}
								row.MSEs = append(row.MSEs, se/float64(max(n, 1)))
								var diff mat.Dense
								diff.Sub(out, r.exact)
								rel += mat.Norm(&diff, 2) / mat.Norm(r.exact, 2) / float64(seeds)
								_ = bar.Add(1)
							}
							row.MSE, row.MSEStd = stat.MeanStdDev(row.MSEs, nil)
							if seeds == 1 {
								row.MSEStd = 0
							}
							row.RelError = rel
							rows = append(rows, row)
						}
					}
				}
			}
			_ = bar.Finish()
			if asJSON {
				return json.NewEncoder(w).Encode(rows)
			}
			fmt.Fprintf(w, "linear attention vs exact softmax attention: d=%d, causal=%v, %d seeds, backend %s\n\n", d, causal, seeds, backend.Name())
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "L\tvariant\tsampler\tm\toutput MSE\t± std\trel error\texact s\tlinear s\tnon-finite\t")
			for _, r := range rows {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%.3e\t%.1e\t%.3f\t%.4f\t%.4f\t%d\t\n", r.L, r.Variant, r.Sampler, r.Features, r.MSE, r.MSEStd, r.RelError, r.ExactSecs, r.LinearSecs, r.NonFinite)
			}
			tw.Flush()
			if replicate {
				orfVsIID(w, rows)
			}
			if plotPath != "" {
				if err := plotAttention(plotPath, rows); err != nil {
					return err
				}
				fmt.Fprintf(w, "\nplot of output MSE against features written to %s\n", plotPath)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&lengths, "lengths", "1024", "sequence lengths L")
	fl.IntVar(&d, "d", 16, "head dimension d")
	fl.StringVar(&feats, "features", "16,64,256", "feature counts")
	fl.StringVar(&variants, "variants", "positive,hyperbolic,trig,relu", "feature maps: positive, hyperbolic, trig, relu, angular, gaussian (hybrids FLOP-matched to m)")
	fl.StringVar(&samplers, "samplers", "orf", "projection samplers")
	fl.IntVar(&seeds, "seeds", 5, "seeds (independent Q, K, V and projections)")
	fl.Uint64Var(&seed, "seed", 0, "base seed")
	fl.BoolVar(&causal, "causal", false, "causal (unidirectional) attention")
	fl.BoolVar(&replicate, "replicate", false, "the analog paper's Supplementary Note 3 Performer setup")
	fl.BoolVar(&timing, "timing", false, "time and memory of exact vs linear attention over --lengths")
	fl.IntVar(&maxExact, "max-exact", 32768, "longest L for exact attention in --timing")
	fl.StringVar(&qPath, "q", "", "queries CSV (with --k and --v)")
	fl.StringVar(&kPath, "k", "", "keys CSV")
	fl.StringVar(&vPath, "v", "", "values CSV")
	fl.StringVar(&plotPath, "plot", "", "PNG plot of output MSE against features")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// orfVsIID reports, per variant and feature count, whether orthogonal
// features lower the output MSE by more than two standard errors of the
// difference of means.
func orfVsIID(w io.Writer, rows []*attRow) {
	fmt.Fprintln(w, "\northogonal vs iid (difference of mean MSE in standard errors; negative favours orf):")
	for _, a := range rows {
		if a.Sampler != "orf" {
			continue
		}
		for _, b := range rows {
			if b.Sampler == "iid" && b.Variant == a.Variant && b.Features == a.Features && b.L == a.L {
				se := math.Sqrt((a.MSEStd*a.MSEStd + b.MSEStd*b.MSEStd) / float64(a.Seeds))
				z := (a.MSE - b.MSE) / se
				verdict := "not separated"
				if z < -2 {
					verdict = "orf better"
				} else if z > 2 {
					verdict = "iid better"
				}
				fmt.Fprintf(w, "  %-10s m=%-4d orf %.3e  iid %.3e  z=%+.2f  %s\n", a.Variant, a.Features, a.MSE, b.MSE, z, verdict)
			}
		}
	}
}

func plotAttention(path string, rows []*attRow) error {
	p := plot.New()
	p.Title.Text = "linear attention: output MSE vs features"
	p.X.Label.Text = "features m"
	p.Y.Label.Text = "output MSE against exact softmax attention (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	series := map[string]plotter.XYs{}
	var order []string
	for _, r := range rows {
		key := fmt.Sprintf("%s / %s / L=%d", r.Variant, r.Sampler, r.L)
		if _, ok := series[key]; !ok {
			order = append(order, key)
		}
		if r.MSE > 0 && !math.IsInf(r.MSE, 0) {
			series[key] = append(series[key], plotter.XY{X: float64(r.Features), Y: r.MSE})
		}
	}
	var lines []any
	for _, k := range order {
		if len(series[k]) > 0 {
			lines = append(lines, k, series[k])
		}
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	p.Y.Max *= 30
	return p.Save(9*vg.Inch, 6*vg.Inch, path)
}

// timingRow is one length of the timing study.
type timingRow struct {
	L            int     `json:"L"`
	ExactSecs    float64 `json:"exact_seconds,omitempty"`
	ExactBytes   uint64  `json:"exact_alloc_bytes,omitempty"`
	LinearSecs   float64 `json:"linear_seconds"`
	LinearBytes  uint64  `json:"linear_alloc_bytes"`
	LinearFeats  int     `json:"features"`
	LinearSample string  `json:"variant"`
}

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

func attentionTiming(w io.Writer, ls []int, d, maxExact int, causal, asJSON bool) error {
	const m = 256
	mp, err := features.New(features.Config{Kernel: "softmax", Form: "positive", Features: m, Sampler: sampler.Orthogonal{}, Seed: 1}, d)
	if err != nil {
		return err
	}
	var rows []timingRow
	bar := newBar(len(ls), "timing")
	for _, l := range ls {
		q, _ := sampler.Gaussian{}.Sample(l, d, uint64(l)+1)
		k, _ := sampler.Gaussian{}.Sample(l, d, uint64(l)+2)
		v, _ := sampler.Gaussian{}.Sample(l, d, uint64(l)+3)
		r := timingRow{L: l, LinearFeats: m, LinearSample: "positive/orf"}
		if l <= maxExact {
			if r.ExactSecs, r.ExactBytes, err = measure(func() error {
				_, err := attention.Exact{Causal: causal}.Apply(q, k, v)
				return err
			}); err != nil {
				return err
			}
		}
		if r.LinearSecs, r.LinearBytes, err = measure(func() error {
			_, err := (&attention.Linear{Map: mp, Causal: causal}).Apply(q, k, v)
			return err
		}); err != nil {
			return err
		}
		rows = append(rows, r)
		_ = bar.Add(1)
	}
	_ = bar.Finish()
	if asJSON {
		return json.NewEncoder(w).Encode(rows)
	}
	fmt.Fprintf(w, "exact vs linear attention (positive features, m=%d, orf), d=%d, causal=%v, backend %s\n\n", m, d, causal, backend.Name())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "L\texact s\texact MiB\tlinear s\tlinear MiB\tspeed-up\t")
	var lx, ex, ly, lyLin []float64
	cross := 0
	for _, r := range rows {
		if r.ExactSecs > 0 {
			fmt.Fprintf(tw, "%d\t%.4f\t%.1f\t%.4f\t%.1f\t%.2f\t\n", r.L, r.ExactSecs, float64(r.ExactBytes)/(1<<20), r.LinearSecs, float64(r.LinearBytes)/(1<<20), r.ExactSecs/r.LinearSecs)
			lx = append(lx, math.Log(float64(r.L)))
			ex = append(ex, math.Log(r.ExactSecs))
			if cross == 0 && r.LinearSecs < r.ExactSecs {
				cross = r.L
			}
		} else {
			fmt.Fprintf(tw, "%d\t-\t-\t%.4f\t%.1f\t-\t\n", r.L, r.LinearSecs, float64(r.LinearBytes)/(1<<20))
		}
		ly = append(ly, math.Log(float64(r.L)))
		lyLin = append(lyLin, math.Log(r.LinearSecs))
	}
	tw.Flush()
	if len(lx) >= 2 {
		_, se := stat.LinearRegression(lx[len(lx)/2:], ex[len(ex)/2:], nil, false)
		fmt.Fprintf(w, "\nlog-log slope of time against L (upper half of the lengths): exact %.2f", se)
	}
	if len(ly) >= 2 {
		_, sl := stat.LinearRegression(ly[len(ly)/2:], lyLin[len(lyLin)/2:], nil, false)
		fmt.Fprintf(w, ", linear %.2f\n", sl)
	}
	if cross > 0 {
		fmt.Fprintf(w, "linear attention is faster from L = %d on (first measured length where it wins)\n", cross)
	}
	return nil
}
