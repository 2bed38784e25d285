package nnkernel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/snnk"
	"github.com/kernelkit/kernelkit/snnk/mlp"
)

// This file holds the studies of the SNNK paper: the pointwise estimation
// of Sec. 4.1, the bundled network of Sec. 3.3 and the classification
// experiments (Sec. 4.2, App. J).

// PointRow is the relative error of one estimator at m random features:
// mean and sample standard deviation over independent draws.
type PointRow struct {
	// Layer is "sin" (the URF estimate of sin(wᵀx + 0.5)), "relu" (the
	// ReLU-SNNK estimate of ½K₁(x, w)) or "bundle".
	Layer    string  `json:"layer"`
	Features int     `json:"features"`
	MeanRel  float64 `json:"mean_rel_error"`
	StdRel   float64 `json:"std_rel_error"`
}

// pointwiseDim is the input dimension of Sec. 4.1.
const pointwiseDim = 2000

// PointwiseConfig configures Pointwise.
type PointwiseConfig struct {
	// Features are the feature counts m (each positive).
	Features []int
	// Draws is the number of independent draws per m (at least 2).
	Draws int
	// Seed draws x and w (rng.New(Seed)); draw s uses Seed+s+1.
	Seed uint64
}

// Validate reports whether the configuration can run.
func (c PointwiseConfig) Validate() error {
	if len(c.Features) == 0 {
		return errors.New("nnkernel: SNNK pointwise needs at least one feature count")
	}
	for _, m := range c.Features {
		if err := limits.Dim("nnkernel: SNNK feature count", m); err != nil {
			return err
		}
		if _, err := limits.Matrix("SNNK projection", m, pointwiseDim); err != nil {
			return fmt.Errorf("nnkernel: %w", err)
		}
	}
	if err := limits.Count("nnkernel: SNNK pointwise draws", c.Draws, 2); err != nil {
		return err
	}
	return nil
}

// PointwiseResult holds the rows of Pointwise with its
// configuration.
type PointwiseResult struct {
	Config PointwiseConfig
	Rows   []PointRow
}

// Pointwise reproduces Sec. 4.1 of the SNNK paper: d = 2000, l = 1,
// entries of w and x drawn Unif(0,1)/√d; the mean relative error of the URF
// estimate of sin(wᵀx + 0.5) and of the ReLU-SNNK estimate of ½K₁(x, w)
// over Draws draws of the towers, for each m. The error falls like 1/√m.
// Progress counts the draws.
func Pointwise(ctx context.Context, cfg PointwiseConfig, progress func(done, total int)) (*PointwiseResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	const d, b = pointwiseDim, 0.5
	r := rng.New(cfg.Seed)
	x := mat.NewDense(1, d, nil)
	w := mat.NewDense(1, d, nil)
	for i := 0; i < d; i++ {
		x.Set(0, i, r.Float64()/math.Sqrt(d))
		w.Set(0, i, r.Float64()/math.Sqrt(d))
	}
	z := mat.Dot(x.RowView(0), w.RowView(0))
	targets := map[string]float64{"sin": math.Sin(z + b), "relu": snnk.ReLUTarget(x.RawRowView(0), w.RawRowView(0))}
	res := &PointwiseResult{Config: cfg}
	total, done := 2*len(cfg.Features)*cfg.Draws, 0
	for _, layer := range []string{"sin", "relu"} {
		for _, m := range cfg.Features {
			rel := make([]float64, 0, cfg.Draws)
			for s := 0; s < cfg.Draws; s++ {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				var tw snnk.Towers
				var err error
				seed := cfg.Seed + uint64(s) + 1
				if layer == "sin" {
					tw, err = snnk.NewURF(snnk.Sin, d, m, snnk.DefaultA(d), sampler.Default(), seed)
				} else {
					tw, err = snnk.NewReLU(d, m, sampler.Default(), seed)
				}
				if err != nil {
					return nil, err
				}
				phi := mat.NewDense(1, tw.Dim(), nil)
				psi := mat.NewDense(1, tw.Dim(), nil)
				if err := tw.Transform(phi, x); err != nil {
					return nil, err
				}
				if err := tw.Params(psi, w, []float64{b}); err != nil {
					return nil, err
				}
				est := mat.Dot(phi.RowView(0), psi.RowView(0))
				rel = append(rel, math.Abs(est-targets[layer])/math.Abs(targets[layer]))
				done++
				reportProgress(progress, done, total)
			}
			mean, sd := stat.MeanStdDev(rel, nil)
			res.Rows = append(res.Rows, PointRow{Layer: layer, Features: m, MeanRel: mean, StdRel: sd})
		}
	}
	return res, nil
}

func reportProgress(progress func(done, total int), done, total int) {
	if progress != nil {
		progress(done, total)
	}
}

// Table returns the text table of the pointwise study.
func (r *PointwiseResult) Table() *report.Table {
	t := &report.Table{
		Title:  fmt.Sprintf("SNNK pointwise estimation (Sec. 4.1): d = %d, entries Unif(0,1)/√d, %d draws; mean relative error", pointwiseDim, r.Config.Draws),
		Header: []string{"layer", "m", "mean rel. error", "± std"},
	}
	for _, w := range r.Rows {
		t.Add(w.Layer, w.Features, report.Fixed(w.MeanRel, 4), report.Fixed(w.StdRel, 4))
	}
	return t
}

// Plot returns the log-log plot of the mean relative error against m.
func (r *PointwiseResult) Plot() *report.Plot {
	p := &report.Plot{
		Title:  fmt.Sprintf("SNNK pointwise estimation (d = %d)", pointwiseDim),
		XLabel: "random features m (log scale)", YLabel: "mean relative error (log scale)",
		LogX: true, LogY: true, Width: 8, Height: 5,
	}
	for _, s := range []struct{ layer, name string }{{"sin", "sin(wᵀx+0.5), URF"}, {"relu", "ReLU-SNNK (½K₁)"}} {
		sr := report.Series{Name: s.name, Points: true}
		for _, w := range r.Rows {
			if w.Layer == s.layer {
				sr.X = append(sr.X, float64(w.Features))
				sr.Y = append(sr.Y, w.MeanRel)
			}
		}
		p.Series = append(p.Series, sr)
	}
	return p
}

// bundleDraws is the number of tower draws per m of the bundle study.
const bundleDraws = 4

// BundleConfig configures Bundle.
type BundleConfig struct {
	// Features are the feature counts m of both towers (each positive).
	Features []int
	// Seed draws the network (Seed+1, +2), the inputs (Seed+3) and the
	// towers (Seed+10+s, Seed+20+s for draw s).
	Seed uint64
}

// Validate reports whether the configuration can run.
func (c BundleConfig) Validate() error {
	if len(c.Features) == 0 {
		return errors.New("nnkernel: SNNK bundle needs at least one feature count")
	}
	for _, m := range c.Features {
		if err := limits.Dim("nnkernel: SNNK feature count", m); err != nil {
			return err
		}
		// The second tower's input is the first tower's output (4m wide).
		if _, err := limits.Matrix("SNNK second tower", m, 4*m); err != nil {
			return fmt.Errorf("nnkernel: %w", err)
		}
	}
	return nil
}

// BundleResult holds the rows of Bundle (layer "bundle") with its
// configuration.
type BundleResult struct {
	Config BundleConfig
	Rows   []PointRow
}

// Bundle bundles a random 2-layer network (4 → 6 cos → 2 sin, weights
// 0.3·N(0,1)) into one matrix W̄ (Sec. 3.3) and reports the relative
// Frobenius error of W̄x̄ against the network on 50 inputs, mean and
// standard deviation over 4 draws of the towers, for each m. Progress
// counts the feature counts.
func Bundle(ctx context.Context, cfg BundleConfig, progress func(done, total int)) (*BundleResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	const d, h, o = 4, 6, 2
	g := sampler.Gaussian{}
	w0, err := g.Sample(h, d, cfg.Seed+1)
	if err != nil {
		return nil, err
	}
	w0.Scale(0.3, w0)
	w1, err := g.Sample(o, h, cfg.Seed+2)
	if err != nil {
		return nil, err
	}
	w1.Scale(0.3, w1)
	layers := []snnk.Dense{{W: w0, B: []float64{0.1, -0.2, 0.3, 0, 0.2, -0.1}, F: snnk.Cos}, {W: w1, B: []float64{0.05, -0.05}, F: snnk.Sin}}
	x, err := g.Sample(50, d, cfg.Seed+3)
	if err != nil {
		return nil, err
	}
	x.Scale(0.3, x)
	exact, err := snnk.Exact(layers, x)
	if err != nil {
		return nil, err
	}
	res := &BundleResult{Config: cfg}
	for i, m := range cfg.Features {
		errs := make([]float64, 0, bundleDraws)
		for s := uint64(0); s < bundleDraws; s++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			t1, err := snnk.NewURF(snnk.Cos, d, m, snnk.DefaultA(d), sampler.Default(), cfg.Seed+10+s)
			if err != nil {
				return nil, err
			}
			t2, err := snnk.NewURF(snnk.Sin, t1.Dim(), m, snnk.DefaultA(t1.Dim()), sampler.Default(), cfg.Seed+20+s)
			if err != nil {
				return nil, err
			}
			bd, err := snnk.NewBundle(layers, []snnk.Towers{t1, t2})
			if err != nil {
				return nil, err
			}
			y, err := bd.Forward(x)
			if err != nil {
				return nil, err
			}
			e, err := kernel.RelativeError(exact, y)
			if err != nil {
				return nil, fmt.Errorf("nnkernel: SNNK bundle, m = %d: %w", m, err)
			}
			errs = append(errs, e)
		}
		mean, sd := stat.MeanStdDev(errs, nil)
		res.Rows = append(res.Rows, PointRow{Layer: "bundle", Features: m, MeanRel: mean, StdRel: sd})
		reportProgress(progress, i+1, len(cfg.Features))
	}
	return res, nil
}

// Table returns the text table of the bundle study.
func (r *BundleResult) Table() *report.Table {
	t := &report.Table{Header: []string{"m", "rel. error", "± std"}}
	for _, w := range r.Rows {
		t.Add(w.Features, report.Fixed(w.MeanRel, 4), report.Fixed(w.StdRel, 4))
	}
	return t
}

// Render writes the bundle table under a one-line title.
func (r *BundleResult) Render(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "bundled 2-layer network (4 → 6 cos → 2 sin, weights 0.3·N(0,1), 50 inputs): relative error of W̄x̄ against the network, mean of %d draws\n", bundleDraws); err != nil {
		return err
	}
	return r.Table().Render(w)
}

// ClassRow is one model of the classification study: trainable
// parameters, test accuracy (mean and sample standard deviation over
// Seeds seeds) and mean training time.
type ClassRow struct {
	Dataset  string  `json:"dataset"`
	Model    string  `json:"model"`
	Params   int     `json:"trainable_params"`
	Accuracy float64 `json:"test_accuracy"`
	AccStd   float64 `json:"test_accuracy_std"`
	Seconds  float64 `json:"train_seconds"`
	Seeds    int     `json:"seeds"`
}

// ClassifyConfig configures Classify.
type ClassifyConfig struct {
	// Name labels the rows (the data set's name).
	Name string
	// Train and Test are labelled data sets (class indices) with the same
	// columns.
	Train, Test *data.Dataset
	// Hidden is the hidden width of the MLP baseline and of the SNNK
	// parameter towers.
	Hidden int
	// M is the number of random features per SNNK tower.
	M int
	// Epochs is the number of training epochs (Adam, batch 64, learning
	// rate 0.003).
	Epochs int
	// Seeds is the number of seeds per model (at least 1); seed s trains
	// with Seed+s and draws towers with Seed+s+1.
	Seeds int
	Seed  uint64
}

// Validate reports whether the configuration can run.
func (c ClassifyConfig) Validate() error {
	if c.Train == nil || c.Test == nil || c.Train.Rows() == 0 || c.Test.Rows() == 0 {
		return errors.New("nnkernel: SNNK classify needs non-empty train and test sets")
	}
	if c.Train.Cols() != c.Test.Cols() {
		return fmt.Errorf("nnkernel: SNNK classify: train set has %d columns, test set %d", c.Train.Cols(), c.Test.Cols())
	}
	if err := limits.Count("nnkernel: SNNK classify epochs", c.Epochs, 1); err != nil {
		return err
	}
	if err := limits.Count("nnkernel: SNNK classify seeds", c.Seeds, 1); err != nil {
		return err
	}
	if c.Hidden < 1 || c.M < 1 || c.Epochs < 1 || c.Seeds < 1 {
		return fmt.Errorf("nnkernel: SNNK classify needs positive hidden width, m, epochs and seeds (got %d, %d, %d, %d)", c.Hidden, c.M, c.Epochs, c.Seeds)
	}
	if err := limits.Dim("nnkernel: SNNK feature count", 4*c.M); err != nil {
		return err
	}
	if _, err := limits.Matrix("SNNK features", max(c.Train.Rows(), c.Test.Rows()), 16*c.M); err != nil {
		return fmt.Errorf("nnkernel: %w", err)
	}
	if _, err := limits.Matrix("SNNK hidden layer", max(c.Train.Cols(), 16*c.M), c.Hidden); err != nil {
		return fmt.Errorf("nnkernel: %w", err)
	}
	return nil
}

// ClassifyResult holds the rows of Classify with its
// configuration; results of several data sets with the same configuration
// are merged by appending rows.
type ClassifyResult struct {
	Config ClassifyConfig
	Rows   []ClassRow
}

// Classify compares, on one data set, an MLP baseline (dense ReLU
// hidden layer), the MLP with its hidden layer replaced by ReLU-SNNK and by
// cos-SNNK towers of M random features (trained with GoMLX, pure-Go
// backend) and the fully bundled closed-form model (cos-URF features of 4M
// random features, W̄ by ridge with λ = 10⁻³). Inputs are standardised,
// scaled by 1/√d and clipped to norm 1: the URF input tower grows like
// exp(‖x‖²/2) (Remark 3.1). MLP training is not bit-reproducible (GoMLX
// runs in parallel); the closed-form model is. Progress counts the
// trainings.
func Classify(ctx context.Context, cfg ClassifyConfig, progress func(done, total int)) (*ClassifyResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ytr, k, err := cfg.Train.Labels()
	if err != nil {
		return nil, err
	}
	yte, _, err := cfg.Test.Labels()
	if err != nil {
		return nil, err
	}
	xtr, xte, err := data.Standardize(cfg.Train.X, cfg.Test.X)
	if err != nil {
		return nil, err
	}
	d, m := cfg.Train.Cols(), cfg.M
	// The URF input tower has magnitude exp(‖x‖²/2) (ρ(ξ) = 2πiξ puts x in
	// the imaginary argument of Λ_g), bounded only for bounded inputs
	// (Remark 3.1): scale rows by 1/√d and clip their norms at 1. Without
	// the clip, standardised digits rows of norm up to 5 gave tower
	// features with column standard deviations near 10⁵ and Adam failed.
	for _, x := range []*mat.Dense{xtr, xte} {
		x.Scale(1/math.Sqrt(float64(d)), x)
		r, _ := x.Dims()
		for i := 0; i < r; i++ {
			row := x.RawRowView(i)
			if nr := math.Sqrt(floats.Dot(row, row)); nr > 1 {
				for j := range row {
					row[j] /= nr
				}
			}
		}
	}
	type net struct {
		name  string
		tower func(s uint64) (snnk.Towers, error)
	}
	nets := []net{
		{"MLP (dense hidden layer, ReLU)", nil},
		{fmt.Sprintf("ReLU-SNNK hidden layer (m=%d)", m), func(s uint64) (snnk.Towers, error) {
			return snnk.NewReLU(d, m, sampler.Default(), s)
		}},
		{fmt.Sprintf("cos-SNNK hidden layer (m=%d, dim %d)", m, 4*m), func(s uint64) (snnk.Towers, error) {
			return snnk.NewURF(snnk.Cos, d, m, snnk.DefaultA(d), sampler.Default(), s)
		}},
	}
	res := &ClassifyResult{Config: cfg}
	seeds := float64(cfg.Seeds)
	total, done := (len(nets)+1)*cfg.Seeds, 0
	for _, nt := range nets {
		row := ClassRow{Dataset: cfg.Name, Model: nt.name, Seeds: cfg.Seeds}
		var accs []float64
		for s := 0; s < cfg.Seeds; s++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			mc := mlp.Config{Hidden: cfg.Hidden, Classes: k, Epochs: cfg.Epochs, BatchSize: 64, LearningRate: 0.003, Seed: int64(cfg.Seed) + int64(s)}
			in, inTe := xtr, xte
			if nt.tower == nil {
				mc.FirstBias, mc.FirstReLU = true, true
			} else {
				tw, err := nt.tower(cfg.Seed + uint64(s) + 1)
				if err != nil {
					return nil, err
				}
				if in, err = snnk.InputFeatures([]snnk.Towers{tw}, xtr); err != nil {
					return nil, err
				}
				if inTe, err = snnk.InputFeatures([]snnk.Towers{tw}, xte); err != nil {
					return nil, err
				}
			}
			r, err := mlp.TrainContext(ctx, mc, in, ytr, inTe, yte)
			if err != nil {
				if cerr := ctx.Err(); cerr != nil {
					return nil, cerr
				}
				return nil, fmt.Errorf("nnkernel: SNNK classify %s, %s: %w", cfg.Name, nt.name, err)
			}
			accs = append(accs, r.TestAccuracy)
			row.Params = r.Params
			row.Seconds += r.Seconds / seeds
			done++
			reportProgress(progress, done, total)
		}
		row.Accuracy, row.AccStd = meanStd(accs)
		res.Rows = append(res.Rows, row)
	}
	// Fully bundled closed-form model: cos-URF features, W̄ by ridge.
	onehot, err := linear.OneHot(ytr, k)
	if err != nil {
		return nil, err
	}
	row := ClassRow{Dataset: cfg.Name, Model: fmt.Sprintf("bundled cos-SNNK, closed form (m=%d)", 4*m), Seeds: cfg.Seeds}
	var accs []float64
	for s := 0; s < cfg.Seeds; s++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tw, err := snnk.NewURF(snnk.Cos, d, 4*m, snnk.DefaultA(d), sampler.Default(), cfg.Seed+uint64(s)+1)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		lm, err := snnk.FitBundle([]snnk.Towers{tw}, xtr, onehot, 1e-3)
		if err != nil {
			return nil, fmt.Errorf("nnkernel: SNNK classify %s, closed form: %w", cfg.Name, err)
		}
		row.Seconds += time.Since(t0).Seconds() / seeds
		xb, err := snnk.InputFeatures([]snnk.Towers{tw}, xte)
		if err != nil {
			return nil, err
		}
		p, err := lm.Predict(xb)
		if err != nil {
			return nil, err
		}
		accs = append(accs, model.Accuracy(linear.Argmax(p), cfg.Test.Y))
		r, c := lm.W.Dims()
		row.Params = r*c + c
		done++
		reportProgress(progress, done, total)
	}
	row.Accuracy, row.AccStd = meanStd(accs)
	res.Rows = append(res.Rows, row)
	return res, nil
}

// meanStd returns the mean and sample standard deviation (0 for one
// value).
func meanStd(v []float64) (float64, float64) {
	if len(v) == 1 {
		return v[0], 0
	}
	return stat.MeanStdDev(v, nil)
}

// Table returns the text table of the classification study.
func (r *ClassifyResult) Table() *report.Table {
	c := r.Config
	t := &report.Table{
		Title: fmt.Sprintf("classification (hidden width %d, SNNK towers of %d random features, %d epochs, Adam, %d seeds; GoMLX pure-Go backend)",
			c.Hidden, c.M, c.Epochs, c.Seeds),
		Header: []string{"data", "model", "params", "test acc", "± std", "train s"},
	}
	for _, w := range r.Rows {
		t.Add(w.Dataset, w.Model, w.Params, report.Fixed(w.Accuracy, 4), report.Fixed(w.AccStd, 4), report.Fixed(w.Seconds, 2))
	}
	return t
}
