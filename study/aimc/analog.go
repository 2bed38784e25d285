package aimc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/analog"
	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
)

// This file holds the studies of the analog paper: ridge classification and
// FAVOR+ attention with projections computed on emulated PCM crossbars
// (package analog, through the projector seam of package features), and the
// projection cost model of its Supplementary Table VIII.

// RidgeRow is one configuration of the ridge study on emulated
// hardware: accuracies and Gram errors averaged over Seeds seeds, fp64
// features against features whose projection ran on the emulated chip.
type RidgeRow struct {
	Dataset  string `json:"dataset"`
	Kernel   string `json:"kernel"`
	Sampler  string `json:"sampler"`
	LogRatio int    `json:"log2_D_over_d"`
	// Features is D = d·2^LogRatio.
	Features int `json:"features"`
	Seeds    int `json:"seeds"`
	// AccFP and AccHW are the test accuracies of the model (trained on
	// fp64 features) evaluated on fp64 and on emulated features; AccHWStd
	// is the sample standard deviation of AccHW over the seeds (0 for one
	// seed).
	AccFP    float64 `json:"accuracy_fp64"`
	AccHW    float64 `json:"accuracy_hw"`
	AccHWStd float64 `json:"accuracy_hw_std"`
	// GramFP and GramHW are the relative Frobenius Gram errors
	// ‖K − ZZᵀ‖_F/‖K‖_F on the first 1000 test rows.
	GramFP float64 `json:"gram_error_fp64"`
	GramHW float64 `json:"gram_error_hw"`
}

// RidgeConfig configures Ridge.
type RidgeConfig struct {
	// Name labels the rows (the data set's name).
	Name string
	// Train and Test are labelled data sets (class indices) with the same
	// columns. The study standardises them with the scaler of Train.
	Train, Test *data.Dataset
	// Kernels are "rbf" (sin/cos random Fourier features, γ = 1/d) and
	// "arccos0" (Heaviside features).
	Kernels []string
	// Samplers draw the projections; the iid Gaussian sampler is replaced
	// by the paper's 3σ-truncated Gaussian (sampler.Truncated{K: 3}).
	Samplers []sampler.Sampler
	// Ratios are the values of log2(D/d), each at least 0.
	Ratios []int
	// Seeds is the number of seeds per configuration (at least 1); seed s
	// draws the map with Seed+s and programs the chip with
	// Hardware.Seed + 7919·(s+1).
	Seeds int
	// Lambda is the ridge parameter (non-negative).
	Lambda float64
	// Hardware is the emulated chip (e.g. analog.PCM(seed)).
	Hardware analog.Config
	// Seed is the base seed of the feature maps.
	Seed uint64
}

// ridgeKernels maps the kernel names of the analog study to the catalog's
// map names: "rbf" is the sin/cos form of the paper.
var ridgeKernels = map[string]string{"rbf": "rbf/sincos", "arccos0": "arccos0"}

// Validate reports whether the configuration can run.
func (c RidgeConfig) Validate() error {
	if c.Train == nil || c.Test == nil || c.Train.Rows() == 0 || c.Test.Rows() == 0 {
		return errors.New("aimc: analog ridge needs non-empty train and test sets")
	}
	if c.Train.Cols() != c.Test.Cols() {
		return fmt.Errorf("aimc: analog ridge: train set has %d columns, test set %d", c.Train.Cols(), c.Test.Cols())
	}
	if c.Test.Y == nil {
		return errors.New("aimc: analog ridge: the test set has no labels")
	}
	if len(c.Kernels) == 0 || len(c.Samplers) == 0 || len(c.Ratios) == 0 {
		return errors.New("aimc: analog ridge needs at least one kernel, sampler and ratio")
	}
	for _, k := range c.Kernels {
		if _, ok := ridgeKernels[strings.TrimSpace(k)]; !ok {
			return fmt.Errorf("aimc: unknown analog kernel %q (want rbf or arccos0)", k)
		}
	}
	for i, s := range c.Samplers {
		if s == nil {
			return fmt.Errorf("aimc: analog ridge: sampler %d is nil", i)
		}
	}
	d := c.Train.Cols()
	for _, r := range c.Ratios {
		if r < 0 || r > 30 || d<<r > limits.MaxDim {
			return fmt.Errorf("aimc: analog ridge: log2(D/d) = %d out of range for d = %d", r, d)
		}
		if _, err := limits.Matrix("analog ridge features", max(c.Train.Rows(), c.Test.Rows()), d<<r); err != nil {
			return fmt.Errorf("aimc: %w", err)
		}
	}
	if err := limits.Count("aimc: analog ridge seeds", c.Seeds, 1); err != nil {
		return err
	}
	if !(c.Lambda >= 0) {
		return fmt.Errorf("aimc: ridge parameter must be non-negative, got %v", c.Lambda)
	}
	return nil
}

// Ridge trains ridge classifiers on exact (fp64) random features and
// evaluates them on the same features with the projection computed on the
// emulated chip (analog paper, Fig. 2): for each kernel, sampler and ratio
// D/d it reports test accuracies and Gram errors averaged over the seeds.
// The chip is calibrated on the first 2000 standardised training rows.
// Progress counts the (kernel, sampler, ratio, seed) runs.
func Ridge(ctx context.Context, cfg RidgeConfig, progress func(done, total int)) ([]RidgeRow, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	labels, k, err := cfg.Train.Labels()
	if err != nil {
		return nil, err
	}
	y, err := linear.OneHot(labels, k)
	if err != nil {
		return nil, err
	}
	xtr, xte, err := data.Standardize(cfg.Train.X, cfg.Test.X)
	if err != nil {
		return nil, err
	}
	d := cfg.Train.Cols()
	calib := xtr.Slice(0, min(2000, cfg.Train.Rows()), 0, d).(*mat.Dense)
	xg := xte.Slice(0, min(1000, cfg.Test.Rows()), 0, d).(*mat.Dense)
	reg := catalog.Default()
	total := len(cfg.Kernels) * len(cfg.Samplers) * len(cfg.Ratios) * cfg.Seeds
	done := 0
	seeds := float64(cfg.Seeds)
	var rows []RidgeRow
	for _, kn := range cfg.Kernels {
		kn = strings.TrimSpace(kn)
		opts := features.Options{InputDim: d}
		if kn == "rbf" {
			opts.Gamma = 1 / float64(d)
		}
		var exactG *mat.Dense // the kernel's Gram matrix on xg, once per kernel
		for _, smp := range cfg.Samplers {
			if smp.Name() == "iid" {
				smp = sampler.Truncated{K: 3} // the paper's 3σ truncation
			}
			for _, r := range cfg.Ratios {
				D := d << r
				row := RidgeRow{Dataset: cfg.Name, Kernel: kn, Sampler: smp.Name(), LogRatio: r, Features: D, Seeds: cfg.Seeds}
				var accHW []float64
				for s := 0; s < cfg.Seeds; s++ {
					if err := ctx.Err(); err != nil {
						return nil, err
					}
					o := opts
					o.Features, o.Sampler, o.Seed = D, smp, cfg.Seed+uint64(s)
					what := fmt.Sprintf("analog ridge %s, %s/%s, D = %d, seed %d", cfg.Name, kn, smp.Name(), D, o.Seed)
					mp, err := reg.Map(ridgeKernels[kn], o)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", what, err)
					}
					z, err := features.Apply(mp, xtr)
					if err != nil {
						return nil, fmt.Errorf("%s: training features: %w", what, err)
					}
					st := linear.NewStats(D, k)
					if err := st.Add(z, y); err != nil {
						return nil, err
					}
					mdl, err := linear.Fit(st, cfg.Lambda, true)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", what, err)
					}
					hw := cfg.Hardware
					hw.Seed = cfg.Hardware.Seed + 7919*uint64(s+1)
					mhw, err := features.WithProjectors(mp, analog.Projectors(calib, hw))
					if err != nil {
						return nil, fmt.Errorf("%s: programming the chip: %w", what, err)
					}
					acc := func(t features.Transformer) (float64, error) {
						zt, err := features.Apply(t, xte)
						if err != nil {
							return 0, fmt.Errorf("%s: test features: %w", what, err)
						}
						p, err := mdl.Predict(zt)
						if err != nil {
							return 0, err
						}
						return model.Accuracy(linear.Argmax(p), cfg.Test.Y), nil
					}
					if exactG == nil {
						if exactG, err = exactGram(mp, xg); err != nil {
							return nil, fmt.Errorf("%s: %w", what, err)
						}
					}
					gram := func(t features.Transformer) (float64, error) {
						zg, err := features.Apply(t, xg)
						if err != nil {
							return 0, fmt.Errorf("%s: Gram error: %w", what, err)
						}
						var kh mat.Dense
						kh.Mul(zg, zg.T())
						return kernel.RelativeError(exactG, &kh)
					}
					aFP, err := acc(mp)
					if err != nil {
						return nil, err
					}
					aHW, err := acc(mhw)
					if err != nil {
						return nil, err
					}
					gFP, err := gram(mp)
					if err != nil {
						return nil, err
					}
					gHW, err := gram(mhw)
					if err != nil {
						return nil, err
					}
					row.AccFP += aFP / seeds
					accHW = append(accHW, aHW)
					row.GramFP += gFP / seeds
					row.GramHW += gHW / seeds
					done++
					reportProgress(progress, done, total)
				}
				row.AccHW, row.AccHWStd = stat.MeanStdDev(accHW, nil)
				if cfg.Seeds == 1 {
					row.AccHWStd = 0
				}
				rows = append(rows, row)
			}
		}
	}
	return rows, nil
}

// exactGram returns the exact Gram matrix of t's kernel on the rows
// of x. The ridge study computes it once per kernel and measures every map
// against it: model.GramError, which recomputes it on each call, made the
// default study 17 % slower.
func exactGram(t features.Transformer, x *mat.Dense) (*mat.Dense, error) {
	ke, ok := t.(features.KernelEstimator)
	if !ok {
		return nil, fmt.Errorf("feature map %T has no exact kernel", t)
	}
	return kernel.Gram(ke.Kernel(), x, x)
}

func reportProgress(progress func(done, total int), done, total int) {
	if progress != nil {
		progress(done, total)
	}
}

// AttentionRow is the relative Frobenius error of FAVOR+ attention
// against exact softmax attention, with the projection computed in fp64
// and on the emulated chip.
type AttentionRow struct {
	Features int     `json:"features"`
	RelFP    float64 `json:"rel_error_fp64"`
	RelHW    float64 `json:"rel_error_hw"`
}

// AttentionConfig configures Attention. Zero values select the
// "attention" entry of the analog paper's Supplementary Table III.
type AttentionConfig struct {
	// Length is the sequence length L (default 1024).
	Length int
	// Dim is the model dimension d (default 64).
	Dim int
	// Features are the feature counts m (default 64, 128, 256, 512).
	Features []int
	// Hardware is the emulated chip; every m programs it with the same
	// seed.
	Hardware analog.Config
	// Seed seeds Q, K, V (Seed+1, +2, +3) and the feature maps (Seed).
	Seed uint64
}

func (c AttentionConfig) withDefaults() AttentionConfig {
	if c.Length == 0 {
		c.Length = 1024
	}
	if c.Dim == 0 {
		c.Dim = 64
	}
	if c.Features == nil {
		c.Features = []int{64, 128, 256, 512}
	}
	return c
}

// Validate reports whether the configuration can run.
func (c AttentionConfig) Validate() error {
	c = c.withDefaults()
	if c.Length < 1 || c.Dim < 1 {
		return fmt.Errorf("aimc: analog attention needs positive L and d, got %d and %d", c.Length, c.Dim)
	}
	if _, err := limits.Matrix("analog attention scores", c.Length, c.Length); err != nil {
		return fmt.Errorf("aimc: %w", err)
	}
	if _, err := limits.Matrix("analog attention calibration", 2*c.Length, c.Dim); err != nil {
		return fmt.Errorf("aimc: %w", err)
	}
	if len(c.Features) == 0 {
		return errors.New("aimc: analog attention needs at least one feature count")
	}
	for _, m := range c.Features {
		if err := limits.Dim("aimc: analog attention feature count", m); err != nil {
			return err
		}
		if _, err := limits.Matrix("analog attention features", c.Length, m); err != nil {
			return fmt.Errorf("aimc: %w", err)
		}
	}
	return nil
}

// Attention compares FAVOR+ attention (3σ-truncated Gaussian
// projections) with digital and emulated projections on random Q, K, V of
// moderate norm (entries 0.25·N(0,1), ‖q‖ ≈ 0.25√d, where FAVOR+ is
// usable) against exact softmax attention. The chip is calibrated on the
// d^(−1/4)-scaled queries and keys the map sees. Progress counts the
// feature counts.
func Attention(ctx context.Context, cfg AttentionConfig, progress func(done, total int)) ([]AttentionRow, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	l, d := cfg.Length, cfg.Dim
	var qkv [3]*mat.Dense
	for i := range qkv {
		m, err := sampler.Gaussian{}.Sample(l, d, cfg.Seed+uint64(i)+1)
		if err != nil {
			return nil, err
		}
		qkv[i] = m
	}
	q, k, v := qkv[0], qkv[1], qkv[2]
	q.Scale(0.25, q)
	k.Scale(0.25, k)
	exact, err := attention.Exact{}.Apply(q, k, v)
	if err != nil {
		return nil, err
	}
	s := math.Pow(float64(d), -0.25)
	calib := mat.NewDense(2*l, d, nil)
	calib.Slice(0, l, 0, d).(*mat.Dense).Scale(s, q)
	calib.Slice(l, 2*l, 0, d).(*mat.Dense).Scale(s, k)
	reg := catalog.Default()
	rel := func(t features.Transformer) (float64, error) {
		o, err := (&attention.Linear{Map: t}).Apply(q, k, v)
		if err != nil {
			return 0, err
		}
		return kernel.RelativeError(exact, o)
	}
	var rows []AttentionRow
	for i, m := range cfg.Features {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		mp, err := reg.Map("positive", features.Options{InputDim: d, Features: m, Sampler: sampler.Truncated{K: 3}, Seed: cfg.Seed})
		if err != nil {
			return nil, err
		}
		mhw, err := features.WithProjectors(mp, analog.Projectors(calib, cfg.Hardware))
		if err != nil {
			return nil, fmt.Errorf("analog attention, m = %d: programming the chip: %w", m, err)
		}
		r := AttentionRow{Features: m}
		if r.RelFP, err = rel(mp); err != nil {
			return nil, fmt.Errorf("analog attention, m = %d, fp64: %w", m, err)
		}
		if r.RelHW, err = rel(mhw); err != nil {
			return nil, fmt.Errorf("analog attention, m = %d, hardware: %w", m, err)
		}
		rows = append(rows, r)
		reportProgress(progress, i+1, len(cfg.Features))
	}
	return rows, nil
}

// CostCases returns the (L, d, m) cases of the analog paper's
// Supplementary Table VIII.
func CostCases() [][3]int { return [][3]int{{1024, 512, 1024}, {1024, 1024, 2048}} }

// CostHardware returns the processors of the cost model, in table order.
func CostHardware() []analog.Hardware {
	return []analog.Hardware{analog.AIMC, analog.GPUINT8, analog.GPUFP16, analog.CPU}
}

// Cost evaluates the projection cost model (2·L·d·m operations at
// peak) for each (L, d, m) case on each of CostHardware, case by case.
func Cost(cases [][3]int) ([]analog.Cost, error) {
	var out []analog.Cost
	for _, c := range cases {
		for _, dev := range CostHardware() {
			cc, err := analog.ProjectionCost(dev, c[0], c[1], c[2])
			if err != nil {
				return nil, err
			}
			out = append(out, cc)
		}
	}
	return out, nil
}

// Report gathers the analog studies of one run, as the CLI prints
// them.
type Report struct {
	Ridge     []RidgeRow     `json:"ridge,omitempty"`
	Attention []AttentionRow `json:"attention,omitempty"`
	// Cost holds Cost(CostCases): len(CostHardware()) rows per
	// case.
	Cost      []analog.Cost `json:"cost,omitempty"`
	CostCases [][3]int      `json:"cost_cases,omitempty"`
	// Hardware is the emulated chip of the ridge and attention studies.
	Hardware analog.Config `json:"hardware"`
	// AttentionSetup is the attention study's configuration (for the
	// table's title; zero means the defaults).
	AttentionSetup AttentionConfig `json:"-"`
}

// RidgeTable returns the table of the ridge study.
func (r *Report) RidgeTable() *report.Table {
	hw := r.Hardware
	t := &report.Table{
		Title:  fmt.Sprintf("ridge classification on emulated PCM hardware (programming noise, drift and read noise at t = %gs, %d-bit ADC, affine correction; models trained on fp64 features)", hw.TInference, hw.ADCBits),
		Header: []string{"data", "kernel", "sampler", "log2(D/d)", "D", "acc fp64", "acc HW", "± std", "Δ (pp)", "Gram fp64", "Gram HW"},
	}
	for _, w := range r.Ridge {
		t.Add(w.Dataset, w.Kernel, w.Sampler, w.LogRatio, w.Features, report.Fixed(w.AccFP, 4), report.Fixed(w.AccHW, 4),
			report.Fixed(w.AccHWStd, 4), fmt.Sprintf("%+.2f", 100*(w.AccFP-w.AccHW)), report.Fixed(w.GramFP, 4), report.Fixed(w.GramHW, 4))
	}
	return t
}

// AttentionTable returns the table of the attention study (its title is
// printed by Render).
func (r *Report) AttentionTable() *report.Table {
	t := &report.Table{Header: []string{"m", "fp64", "HW"}}
	for _, w := range r.Attention {
		t.Add(w.Features, report.Fixed(w.RelFP, 4), report.Fixed(w.RelHW, 4))
	}
	return t
}

// CostTable returns the table of the cost model (its title is printed by
// Render).
func (r *Report) CostTable() *report.Table {
	t := &report.Table{Header: []string{"L", "d", "m", "hardware", "latency (ms)", "energy (mJ)"}}
	per := len(CostHardware())
	for i, c := range r.Cost {
		var cs [3]int
		if i/per < len(r.CostCases) {
			cs = r.CostCases[i/per]
		}
		t.Add(cs[0], cs[1], cs[2], c.Hardware, report.Fixed(c.LatencyMS, 4), report.Fixed(c.EnergyMJ, 4))
	}
	return t
}

// Render writes the text report: the tables of the studies that ran.
func (r *Report) Render(w io.Writer) error {
	var b bytes.Buffer
	if len(r.Ridge) > 0 {
		if err := r.RidgeTable().Render(&b); err != nil {
			return err
		}
	}
	if len(r.Attention) > 0 {
		a := r.AttentionSetup.withDefaults()
		fmt.Fprintf(&b, "\nFAVOR+ attention (L = %d, d = %d, ‖q‖ ≈ %.3g), relative error against exact softmax attention:\n",
			a.Length, a.Dim, 0.25*math.Sqrt(float64(a.Dim)))
		if err := r.AttentionTable().Render(&b); err != nil {
			return err
		}
	}
	if len(r.Cost) > 0 {
		b.WriteString("\nprojection cost (analog paper, Supplementary Table VIII model: 2·L·d·m operations at peak):\n")
		if err := r.CostTable().Render(&b); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Plot returns the plot of the Gram errors (fp64 and hardware) against
// log2(D/d), one line per data set, kernel and sampler; nil without ridge
// rows.
func (r *Report) Plot() *report.Plot {
	if len(r.Ridge) == 0 {
		return nil
	}
	p := &report.Plot{
		Title:  "Gram error: fp64 vs emulated PCM hardware",
		XLabel: "log2(D/d)", YLabel: "relative Gram error (log scale)",
		LogY: true, Width: 10, Height: 7, Headroom: 10,
	}
	index := map[string]int{}
	for _, w := range r.Ridge {
		for _, hw := range []bool{false, true} {
			key, v := fmt.Sprintf("%s %s %s fp64", w.Dataset, w.Kernel, w.Sampler), w.GramFP
			if hw {
				key, v = fmt.Sprintf("%s %s %s HW", w.Dataset, w.Kernel, w.Sampler), w.GramHW
			}
			i, ok := index[key]
			if !ok {
				i = len(p.Series)
				index[key] = i
				p.Series = append(p.Series, report.Series{Name: key, Points: true})
			}
			p.Series[i].X = append(p.Series[i].X, float64(w.LogRatio))
			p.Series[i].Y = append(p.Series[i].Y, v)
		}
	}
	return p
}
