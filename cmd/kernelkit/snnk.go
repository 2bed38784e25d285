package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
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

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/snnk"
	"github.com/kernelkit/kernelkit/snnk/mlp"
)

type pointRow struct {
	Layer    string  `json:"layer"`
	Features int     `json:"features"`
	MeanRel  float64 `json:"mean_rel_error"`
	StdRel   float64 `json:"std_rel_error"`
}

type classRow struct {
	Dataset  string  `json:"dataset"`
	Model    string  `json:"model"`
	Params   int     `json:"trainable_params"`
	Accuracy float64 `json:"test_accuracy"`
	AccStd   float64 `json:"test_accuracy_std"`
	Seconds  float64 `json:"train_seconds"`
	Seeds    int     `json:"seeds"`
}

func newSNNK() *cobra.Command {
	var study, dataPaths, feats, plotPath string
	var draws, seeds, hidden, m, epochs int
	var seed uint64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "snnk",
		Short: "Scalable neural network kernels: pointwise URF study, bundling, classification",
		Long: "snnk runs the experiments of the SNNK paper:\n" +
			"  --study pointwise  Sec. 4.1: d = 2000, w and x entries Unif(0,1)/√d, sin(wᵀx + 0.5) by URFs and\n" +
			"                     the ReLU-SNNK layer (½K₁), mean relative error over --draws against features\n" +
			"  --study bundle     a 2-layer cos/sin network bundled into one matrix: error against features\n" +
			"  --study classify   digits and letter: MLP baseline, its hidden layer replaced by ReLU-SNNK\n" +
			"                     and cos-SNNK (trained with GoMLX, pure-Go backend), and the fully bundled\n" +
			"                     closed-form model; parameters, test accuracy over --seeds, training time",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			ms, err := parseInts(feats, "features")
			if err != nil {
				return err
			}
			if draws < 2 || seeds < 1 || hidden < 1 || m < 1 || epochs < 1 {
				return fmt.Errorf("need --draws ≥ 2 and positive --seeds, --hidden, --m, --epochs")
			}
			switch study {
			case "pointwise":
				rows, err := snnkPointwise(ms, draws, seed)
				if err != nil {
					return err
				}
				if asJSON {
					return json.NewEncoder(w).Encode(rows)
				}
				printPoint(w, rows, draws)
				if plotPath != "" {
					if err := plotPoint(plotPath, rows); err != nil {
						return err
					}
					fmt.Fprintf(w, "plot written to %s\n", plotPath)
				}
				return nil
			case "bundle":
				rows, err := snnkBundle(ms, seed)
				if err != nil {
					return err
				}
				if asJSON {
					return json.NewEncoder(w).Encode(rows)
				}
				fmt.Fprintln(w, "bundled 2-layer network (4 → 6 cos → 2 sin, weights 0.3·N(0,1), 50 inputs): relative error of W̄x̄ against the network, mean of 4 draws")
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintln(tw, "m\trel. error\t± std\t")
				for _, r := range rows {
					fmt.Fprintf(tw, "%d\t%.4f\t%.4f\t\n", r.Features, r.MeanRel, r.StdRel)
				}
				tw.Flush()
				return nil
			case "classify":
				var rows []classRow
				for _, p := range strings.Split(dataPaths, ",") {
					r, err := snnkClassify(strings.TrimSpace(p), hidden, m, epochs, seeds, seed)
					if err != nil {
						return err
					}
					rows = append(rows, r...)
				}
				if asJSON {
					return json.NewEncoder(w).Encode(rows)
				}
				fmt.Fprintf(w, "classification (hidden width %d, SNNK towers of %d random features, %d epochs, Adam, %d seeds; GoMLX pure-Go backend)\n\n", hidden, m, epochs, seeds)
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintln(tw, "data\tmodel\tparams\ttest acc\t± std\ttrain s\t")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%.4f\t%.4f\t%.2f\t\n", r.Dataset, r.Model, r.Params, r.Accuracy, r.AccStd, r.Seconds)
				}
				tw.Flush()
				return nil
			}
			return fmt.Errorf("unknown --study %q (want pointwise, bundle or classify)", study)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&study, "study", "pointwise", "pointwise, bundle or classify")
	fl.StringVar(&feats, "features", "8,16,32,64,128,256,512,1024", "feature counts m (pointwise, bundle)")
	fl.IntVar(&draws, "draws", 500, "independent draws (pointwise)")
	fl.StringVar(&dataPaths, "data", "../shared/data/digits.csv,letter", "CSV files or letter (classify)")
	fl.IntVar(&hidden, "hidden", 64, "hidden width (classify)")
	fl.IntVar(&m, "m", 16, "random features per SNNK tower (classify)")
	fl.IntVar(&epochs, "epochs", 30, "training epochs (classify)")
	fl.IntVar(&seeds, "seeds", 3, "seeds (classify)")
	fl.Uint64Var(&seed, "seed", 0, "base seed")
	fl.StringVar(&plotPath, "plot", "", "PNG plot (pointwise)")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// snnkPointwise reproduces Sec. 4.1: d = 2000, l = 1, w, x entries
// Unif(0,1)/√d; sin(wᵀx + 0.5) by URFs and ½K₁(x, w) by ReLU-SNNK.
func snnkPointwise(ms []int, draws int, seed uint64) ([]pointRow, error) {
	const d, b = 2000, 0.5
	rng := rng.New(seed)
	x := mat.NewDense(1, d, nil)
	w := mat.NewDense(1, d, nil)
	for i := 0; i < d; i++ {
		x.Set(0, i, rng.Float64()/math.Sqrt(d))
		w.Set(0, i, rng.Float64()/math.Sqrt(d))
	}
	z := mat.Dot(x.RowView(0), w.RowView(0))
	targets := map[string]float64{"sin": math.Sin(z + b), "relu": snnk.ReLUTarget(x.RawRowView(0), w.RawRowView(0))}
	var rows []pointRow
	bar := newBar(2*len(ms)*draws, "pointwise")
	for _, layer := range []string{"sin", "relu"} {
		for _, m := range ms {
			var rel []float64
			for s := 0; s < draws; s++ {
				var tw snnk.Towers
				var err error
				if layer == "sin" {
					tw, err = snnk.NewURF(snnk.Sin, d, m, snnk.DefaultA(d), nil, seed+uint64(s)+1)
				} else {
					tw, err = snnk.NewReLU(d, m, nil, seed+uint64(s)+1)
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
				_ = bar.Add(1)
			}
			mean, sd := stat.MeanStdDev(rel, nil)
			rows = append(rows, pointRow{Layer: layer, Features: m, MeanRel: mean, StdRel: sd})
		}
	}
	_ = bar.Finish()
	return rows, nil
}

func printPoint(w io.Writer, rows []pointRow, draws int) {
	fmt.Fprintf(w, "SNNK pointwise estimation (Sec. 4.1): d = 2000, entries Unif(0,1)/√d, %d draws; mean relative error\n\n", draws)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "layer\tm\tmean rel. error\t± std\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.4f\t%.4f\t\n", r.Layer, r.Features, r.MeanRel, r.StdRel)
	}
	tw.Flush()
}

func plotPoint(path string, rows []pointRow) error {
	p := plot.New()
	p.Title.Text = "SNNK pointwise estimation (d = 2000)"
	p.X.Label.Text = "random features m (log scale)"
	p.Y.Label.Text = "mean relative error (log scale)"
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	series := map[string]plotter.XYs{}
	for _, r := range rows {
		series[r.Layer] = append(series[r.Layer], plotter.XY{X: float64(r.Features), Y: r.MeanRel})
	}
	if err := plotutil.AddLinePoints(p, "sin(wᵀx+0.5), URF", series["sin"], "ReLU-SNNK (½K₁)", series["relu"]); err != nil {
		return err
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

func snnkBundle(ms []int, seed uint64) ([]pointRow, error) {
	const d, h, o = 4, 6, 2
	w0, _ := sampler.Gaussian{}.Sample(h, d, seed+1)
	w0.Scale(0.3, w0)
	w1, _ := sampler.Gaussian{}.Sample(o, h, seed+2)
	w1.Scale(0.3, w1)
	layers := []snnk.Dense{{W: w0, B: []float64{0.1, -0.2, 0.3, 0, 0.2, -0.1}, F: snnk.Cos}, {W: w1, B: []float64{0.05, -0.05}, F: snnk.Sin}}
	x, _ := sampler.Gaussian{}.Sample(50, d, seed+3)
	x.Scale(0.3, x)
	exact, err := snnk.Exact(layers, x)
	if err != nil {
		return nil, err
	}
	var rows []pointRow
	for _, m := range ms {
		var errs []float64
		for s := uint64(0); s < 4; s++ {
			t1, err := snnk.NewURF(snnk.Cos, d, m, snnk.DefaultA(d), nil, seed+10+s)
			if err != nil {
				return nil, err
			}
			t2, err := snnk.NewURF(snnk.Sin, t1.Dim(), m, snnk.DefaultA(t1.Dim()), nil, seed+20+s)
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
			var diff mat.Dense
			diff.Sub(y, exact)
			errs = append(errs, mat.Norm(&diff, 2)/mat.Norm(exact, 2))
		}
		mean, sd := stat.MeanStdDev(errs, nil)
		rows = append(rows, pointRow{Layer: "bundle", Features: m, MeanRel: mean, StdRel: sd})
	}
	return rows, nil
}

func snnkClassify(path string, hidden, m, epochs, seeds int, seed uint64) ([]classRow, error) {
	var train, test *data.Dataset
	var err error
	name := path
	if path == "letter" {
		train, test, err = data.Letter().SplitAt(16000)
	} else {
		ds, e := readData(path, "auto", "", false)
		if e != nil {
			return nil, e
		}
		name = strings.TrimSuffix(baseName(path), ".csv")
		train, test, err = ds.Split(0.3, seed)
	}
	if err != nil {
		return nil, err
	}
	ytr, k, err := train.Labels()
	if err != nil {
		return nil, err
	}
	yte, _, err := test.Labels()
	if err != nil {
		return nil, err
	}
	sc, _ := data.FitScaler(train.X)
	xtr, _ := sc.Transform(train.X)
	xte, _ := sc.Transform(test.X)
	d := train.Cols()
	// The URF input tower has magnitude exp(‖x‖²/2) (ρ(ξ) = 2πiξ puts x in
	// the imaginary argument of Λ_g), bounded only for bounded inputs
	// (Remark 3.1): scale rows by 1/√d and clip their norms at 1. Without
	// the clip, standardised digits rows of norm up to 5 gave tower
	// features with column standard deviations near 10⁵ and Adam failed.
	for _, m := range []*mat.Dense{xtr, xte} {
		m.Scale(1/math.Sqrt(float64(d)), m)
		r, _ := m.Dims()
		for i := 0; i < r; i++ {
			row := m.RawRowView(i)
			if nr := math.Sqrt(dot(row, row)); nr > 1 {
				for j := range row {
					row[j] /= nr
				}
			}
		}
	}
	type model struct {
		name  string
		tower func(s uint64) (snnk.Towers, error)
	}
	models := []model{
		{"MLP (dense hidden layer, ReLU)", nil},
		{fmt.Sprintf("ReLU-SNNK hidden layer (m=%d)", m), func(s uint64) (snnk.Towers, error) { return snnk.NewReLU(d, m, nil, s) }},
		{fmt.Sprintf("cos-SNNK hidden layer (m=%d, dim %d)", m, 4*m), func(s uint64) (snnk.Towers, error) {
			return snnk.NewURF(snnk.Cos, d, m, snnk.DefaultA(d), nil, s)
		}},
	}
	var rows []classRow
	bar := newBar((len(models)+1)*seeds, name)
	for _, md := range models {
		row := classRow{Dataset: name, Model: md.name, Seeds: seeds}
		var accs []float64
		for s := 0; s < seeds; s++ {
			cfg := mlp.Config{Hidden: hidden, Classes: k, Epochs: epochs, BatchSize: 64, LearningRate: 0.003, Seed: int64(seed) + int64(s)}
			in, inTe := xtr, xte
			if md.tower == nil {
				cfg.FirstBias, cfg.FirstReLU = true, true
			} else {
				tw, err := md.tower(seed + uint64(s) + 1)
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
			r, err := mlp.Train(cfg, in, ytr, inTe, yte)
			if err != nil {
				return nil, err
			}
			accs = append(accs, r.TestAccuracy)
			row.Params = r.Params
			row.Seconds += r.Seconds / float64(seeds)
			_ = bar.Add(1)
		}
		row.Accuracy, row.AccStd = meanStd(accs)
		rows = append(rows, row)
	}
	// Fully bundled closed-form model: cos-URF features, W̄ by ridge.
	row := classRow{Dataset: name, Model: fmt.Sprintf("bundled cos-SNNK, closed form (m=%d)", 4*m), Seeds: seeds}
	var accs []float64
	for s := 0; s < seeds; s++ {
		tw, err := snnk.NewURF(snnk.Cos, d, 4*m, snnk.DefaultA(d), nil, seed+uint64(s)+1)
		if err != nil {
			return nil, err
		}
		onehot, _ := linear.OneHot(ytr, k)
		t0 := time.Now()
		lm, err := snnk.FitBundle([]snnk.Towers{tw}, xtr, onehot, 1e-3)
		if err != nil {
			return nil, err
		}
		row.Seconds += time.Since(t0).Seconds() / float64(seeds)
		xb, _ := snnk.InputFeatures([]snnk.Towers{tw}, xte)
		p, _ := lm.Predict(xb)
		c := 0
		for i, v := range linear.Argmax(p) {
			if v == yte[i] {
				c++
			}
		}
		accs = append(accs, float64(c)/float64(len(yte)))
		r, cc := lm.W.Dims()
		row.Params = r*cc + cc
		_ = bar.Add(1)
	}
	row.Accuracy, row.AccStd = meanStd(accs)
	rows = append(rows, row)
	_ = bar.Finish()
	return rows, nil
}

// meanStd returns the mean and sample standard deviation (0 for one value).
func meanStd(v []float64) (float64, float64) {
	if len(v) == 1 {
		return v[0], 0
	}
	return stat.MeanStdDev(v, nil)
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, "/\\"); i >= 0 {
		return p[i+1:]
	}
	return p
}
