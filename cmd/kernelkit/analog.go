package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kernelkit/kernelkit/analog"
	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/sampler"
)

type analogRow struct {
	Dataset  string  `json:"dataset"`
	Kernel   string  `json:"kernel"`
	Sampler  string  `json:"sampler"`
	LogRatio int     `json:"log2_D_over_d"`
	Features int     `json:"features"`
	Seeds    int     `json:"seeds"`
	AccFP    float64 `json:"accuracy_fp64"`
	AccHW    float64 `json:"accuracy_hw"`
	AccHWStd float64 `json:"accuracy_hw_std"`
	GramFP   float64 `json:"gram_error_fp64"`
	GramHW   float64 `json:"gram_error_hw"`
}

type attnRow struct {
	Features int     `json:"features"`
	RelFP    float64 `json:"rel_error_fp64"`
	RelHW    float64 `json:"rel_error_hw"`
}

type analogReport struct {
	Ridge     []analogRow   `json:"ridge,omitempty"`
	Attention []attnRow     `json:"attention,omitempty"`
	Cost      []analog.Cost `json:"cost,omitempty"`
	CostCases [][3]int      `json:"cost_cases,omitempty"`
	Config    analog.Config `json:"hardware"`
}

func newAnalog() *cobra.Command {
	var dataPaths, kernels, samplers, ratios, plotPath string
	var seeds int
	var lambda, tinf float64
	var noRidge, noAttention, noCost, asJSON bool
	var costL, costD, costM int
	var seed uint64
	cmd := &cobra.Command{
		Use:   "analog",
		Short: "Kernel approximation on emulated analog in-memory hardware",
		Long: "analog runs the studies of the analog paper on emulated PCM crossbars: ridge classification\n" +
			"with RBF and arc-cosine-0 features for log2(D/d) = 1..5 and iid (3σ-truncated), ORF and SORF\n" +
			"projections, models trained on exact features and evaluated on emulated ones (accuracy and\n" +
			"Gram error, fp64 against hardware); the FAVOR+ attention error; and the Table VIII cost model.\n" +
			"--data takes CSV files (letter is embedded and used by default: first 16000 rows train;\n" +
			"other sets are split in two random halves).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if seeds <= 0 {
				return fmt.Errorf("--seeds must be positive, got %d", seeds)
			}
			if !(lambda >= 0) {
				return fmt.Errorf("--lambda must be non-negative, got %v", lambda)
			}
			if tinf < 0 {
				return fmt.Errorf("--t-inference must be non-negative, got %v", tinf)
			}
			rs, err := parseInts(ratios, "ratios")
			if err != nil {
				return err
			}
			hw := analog.PCM(seed)
			hw.TInference = tinf
			rep := &analogReport{Config: hw}
			w := cmd.OutOrStdout()
			if !noRidge {
				for _, path := range strings.Split(dataPaths, ",") {
					path = strings.TrimSpace(path)
					var train, test *data.Dataset
					name := "letter"
					if path == "letter" {
						train, test, err = data.Letter().SplitAt(16000)
					} else {
						var ds *data.Dataset
						if ds, err = readData(path, "auto", "", false); err != nil {
							return err
						}
						name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
						train, test, err = ds.Split(0.5, seed)
					}
					if err != nil {
						return err
					}
					rows, err := analogRidge(name, train, test, strings.Split(kernels, ","), strings.Split(samplers, ","), rs, seeds, lambda, hw, seed)
					if err != nil {
						return err
					}
					rep.Ridge = append(rep.Ridge, rows...)
				}
			}
			if !noAttention {
				if rep.Attention, err = analogAttention(hw, seed); err != nil {
					return err
				}
			}
			if !noCost {
				cases := [][3]int{{1024, 512, 1024}, {1024, 1024, 2048}}
				if costL > 0 && costD > 0 && costM > 0 {
					cases = append(cases, [3]int{costL, costD, costM})
				}
				for _, c := range cases {
					for _, dev := range []analog.Device{analog.AIMC, analog.GPUINT8, analog.GPUFP16, analog.CPU} {
						cc, err := analog.ProjectionCost(dev, c[0], c[1], c[2])
						if err != nil {
							return err
						}
						rep.Cost = append(rep.Cost, cc)
					}
				}
				rep.CostCases = cases
			}
			if asJSON {
				return json.NewEncoder(w).Encode(rep)
			}
			printAnalog(w, rep)
			if plotPath != "" && len(rep.Ridge) > 0 {
				if err := plotAnalog(plotPath, rep.Ridge); err != nil {
					return err
				}
				fmt.Fprintf(w, "\nplot of Gram error against log2(D/d) written to %s\n", plotPath)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dataPaths, "data", "letter", "comma-separated CSV files, or letter for the embedded set")
	fl.StringVar(&kernels, "kernels", "rbf,arccos0", "kernels: rbf (sin/cos features, γ = 1/d), arccos0")
	fl.StringVar(&samplers, "samplers", "iid,orf,sorf", "samplers (iid draws 3σ-truncated Gaussians)")
	fl.StringVar(&ratios, "ratios", "1,2,3,4,5", "log2(D/d) values")
	fl.IntVar(&seeds, "seeds", 3, "seeds per configuration")
	fl.Float64Var(&lambda, "lambda", 0.5, "ridge parameter")
	fl.Float64Var(&tinf, "t-inference", 3600, "seconds between programming and inference (drift, read noise)")
	fl.Uint64Var(&seed, "seed", 0, "base seed")
	fl.BoolVar(&noRidge, "no-ridge", false, "skip the ridge-classification study")
	fl.BoolVar(&noAttention, "no-attention", false, "skip the attention study")
	fl.BoolVar(&noCost, "no-cost", false, "skip the cost model")
	fl.IntVar(&costL, "L", 0, "extra cost-model case: sequence length")
	fl.IntVar(&costD, "cost-d", 0, "extra cost-model case: model dimension d")
	fl.IntVar(&costM, "cost-m", 0, "extra cost-model case: mapping dimension m")
	fl.StringVar(&plotPath, "plot", "", "PNG plot of the Gram error against log2(D/d)")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func analogRidge(name string, train, test *data.Dataset, kernels, samplers []string, ratios []int, seeds int, lambda float64, hw analog.Config, seed uint64) ([]analogRow, error) {
	labels, k, err := train.Labels()
	if err != nil {
		return nil, err
	}
	y, err := linear.OneHot(labels, k)
	if err != nil {
		return nil, err
	}
	sc, err := data.FitScaler(train.X)
	if err != nil {
		return nil, err
	}
	xtr, _ := sc.Transform(train.X)
	xte, _ := sc.Transform(test.X)
	d := train.Cols()
	ncal := min(2000, train.Rows())
	calib := xtr.Slice(0, ncal, 0, d).(*mat.Dense)
	ng := min(1000, test.Rows())
	xg := xte.Slice(0, ng, 0, d).(*mat.Dense)
	var rows []analogRow
	bar := newBar(len(kernels)*len(samplers)*len(ratios)*seeds, name)
	for _, kn := range kernels {
		kn = strings.TrimSpace(kn)
		var cfg features.Config
		switch kn {
		case "rbf":
			cfg = features.Config{Kernel: "rbf", Form: "sincos", Gamma: 1 / float64(d)}
		case "arccos0":
			cfg = features.Config{Kernel: "arccos0"}
		default:
			return nil, fmt.Errorf("unknown analog kernel %q (want rbf or arccos0)", kn)
		}
		mp0, err := features.New(features.Config{Kernel: cfg.Kernel, Form: cfg.Form, Gamma: cfg.Gamma, Features: 2}, d)
		if err != nil {
			return nil, err
		}
		exactG, err := kernel.Gram(mp0.Kernel(), xg, xg)
		if err != nil {
			return nil, err
		}
		for _, sn := range samplers {
			smp, err := sampler.ByName(strings.TrimSpace(sn))
			if err != nil {
				return nil, err
			}
			if smp.Name() == "iid" {
				smp = sampler.Truncated{K: 3} // the paper's 3σ truncation
			}
			for _, r := range ratios {
				D := d << r
				row := analogRow{Dataset: name, Kernel: kn, Sampler: smp.Name(), LogRatio: r, Features: D, Seeds: seeds}
				var accHW []float64
				for s := 0; s < seeds; s++ {
					c := cfg
					c.Features, c.Sampler, c.Seed = D, smp, seed+uint64(s)
					mp, err := features.New(c, d)
					if err != nil {
						return nil, err
					}
					z, _ := features.Apply(mp, xtr)
					st := linear.NewStats(D, k)
					if err := st.Add(z, y); err != nil {
						return nil, err
					}
					mdl, err := linear.Fit(st, lambda, true)
					if err != nil {
						return nil, err
					}
					h := hw
					h.Seed = hw.Seed + 7919*uint64(s+1)
					cb, err := analog.Program(mp.W(), calib, h)
					if err != nil {
						return nil, err
					}
					mhw := mp.WithProjector(cb)
					acc := func(m *features.Map) float64 {
						zt, _ := features.Apply(m, xte)
						p, _ := mdl.Predict(zt)
						c := 0
						for i, v := range linear.Argmax(p) {
							if float64(v) == test.Y[i] {
								c++
							}
						}
						return float64(c) / float64(test.Rows())
					}
					gram := func(m *features.Map) float64 {
						zg, _ := features.Apply(m, xg)
						var kh mat.Dense
						kh.Mul(zg, zg.T())
						e, _ := kernel.RelativeError(exactG, &kh)
						return e
					}
					row.AccFP += acc(mp) / float64(seeds)
					a := acc(mhw)
					accHW = append(accHW, a)
					row.GramFP += gram(mp) / float64(seeds)
					row.GramHW += gram(mhw) / float64(seeds)
					_ = bar.Add(1)
				}
				row.AccHW, row.AccHWStd = stat.MeanStdDev(accHW, nil)
				if seeds == 1 {
					row.AccHWStd = 0
				}
				rows = append(rows, row)
			}
		}
	}
	_ = bar.Finish()
	return rows, nil
}

// analogAttention compares FAVOR+ attention with digital and emulated
// projections on random Q, K, V (L = 1024, d = 64, the "attention" entry
// of Supplementary Table III), against exact softmax attention.
func analogAttention(hw analog.Config, seed uint64) ([]attnRow, error) {
	const l, d = 1024, 64
	q, _ := sampler.Gaussian{}.Sample(l, d, seed+1)
	k, _ := sampler.Gaussian{}.Sample(l, d, seed+2)
	v, _ := sampler.Gaussian{}.Sample(l, d, seed+3)
	// Queries and keys of moderate norm (‖q‖ ≈ 2), where FAVOR+ is usable.
	q.Scale(0.25, q)
	k.Scale(0.25, k)
	exact, err := attention.Exact{}.Apply(q, k, v)
	if err != nil {
		return nil, err
	}
	// Calibration: the d^(-1/4)-scaled queries and keys the map will see.
	calib := mat.NewDense(2*l, d, nil)
	calib.Slice(0, l, 0, d).(*mat.Dense).Scale(math.Pow(d, -0.25), q)
	calib.Slice(l, 2*l, 0, d).(*mat.Dense).Scale(math.Pow(d, -0.25), k)
	var rows []attnRow
	for _, m := range []int{64, 128, 256, 512} {
		mp, err := features.New(features.Config{Kernel: "softmax", Form: "positive", Features: m, Sampler: sampler.Truncated{K: 3}, Seed: seed}, d)
		if err != nil {
			return nil, err
		}
		cb, err := analog.Program(mp.W(), calib, hw)
		if err != nil {
			return nil, err
		}
		rel := func(mm *features.Map) (float64, error) {
			o, err := (&attention.Linear{Map: mm}).Apply(q, k, v)
			if err != nil {
				return 0, err
			}
			var diff mat.Dense
			diff.Sub(o, exact)
			return mat.Norm(&diff, 2) / mat.Norm(exact, 2), nil
		}
		r := attnRow{Features: m}
		if r.RelFP, err = rel(mp); err != nil {
			return nil, err
		}
		if r.RelHW, err = rel(mp.WithProjector(cb)); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func printAnalog(w io.Writer, rep *analogReport) {
	if len(rep.Ridge) > 0 {
		fmt.Fprintf(w, "ridge classification on emulated PCM hardware (programming noise, drift and read noise at t = %gs, %d-bit ADC, affine correction; models trained on fp64 features)\n\n", rep.Config.TInference, rep.Config.ADCBits)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "data\tkernel\tsampler\tlog2(D/d)\tD\tacc fp64\tacc HW\t± std\tΔ (pp)\tGram fp64\tGram HW\t")
		for _, r := range rep.Ridge {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%.4f\t%.4f\t%.4f\t%+.2f\t%.4f\t%.4f\t\n", r.Dataset, r.Kernel, r.Sampler, r.LogRatio, r.Features, r.AccFP, r.AccHW, r.AccHWStd, 100*(r.AccFP-r.AccHW), r.GramFP, r.GramHW)
		}
		tw.Flush()
	}
	if len(rep.Attention) > 0 {
		fmt.Fprintln(w, "\nFAVOR+ attention (L = 1024, d = 64, ‖q‖ ≈ 2), relative error against exact softmax attention:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "m\tfp64\tHW\t")
		for _, r := range rep.Attention {
			fmt.Fprintf(tw, "%d\t%.4f\t%.4f\t\n", r.Features, r.RelFP, r.RelHW)
		}
		tw.Flush()
	}
	if len(rep.Cost) > 0 {
		fmt.Fprintln(w, "\nprojection cost (analog paper, Supplementary Table VIII model: 2·L·d·m operations at peak):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "L\td\tm\tdevice\tlatency (ms)\tenergy (mJ)\t")
		for i, c := range rep.Cost {
			cs := rep.CostCases[i/4]
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%.4f\t%.4f\t\n", cs[0], cs[1], cs[2], c.Device, c.LatencyMS, c.EnergyMJ)
		}
		tw.Flush()
	}
}

func plotAnalog(path string, rows []analogRow) error {
	p := plot.New()
	p.Title.Text = "Gram error: fp64 vs emulated PCM hardware"
	p.X.Label.Text = "log2(D/d)"
	p.Y.Label.Text = "relative Gram error (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	series := map[string]plotter.XYs{}
	var order []string
	for _, r := range rows {
		for _, hw := range []bool{false, true} {
			key := fmt.Sprintf("%s %s %s fp64", r.Dataset, r.Kernel, r.Sampler)
			v := r.GramFP
			if hw {
				key = fmt.Sprintf("%s %s %s HW", r.Dataset, r.Kernel, r.Sampler)
				v = r.GramHW
			}
			if _, ok := series[key]; !ok {
				order = append(order, key)
			}
			series[key] = append(series[key], plotter.XY{X: float64(r.LogRatio), Y: v})
		}
	}
	var lines []any
	for _, k := range order {
		lines = append(lines, k, series[k])
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	p.Legend.Top = true
	p.Y.Max *= 10
	return p.Save(10*vg.Inch, 7*vg.Inch, path)
}
