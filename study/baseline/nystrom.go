package baseline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/nystrom"
	"github.com/kernelkit/kernelkit/report"
)

// NystromConfig configures Nystrom: the scikit-learn comparison
// setting of the letter benchmark (features standardised on the training
// rows, RBF kernel, ridge classification with λ) for Nyström features with
// each landmark method, and RFF at the same dimension.
type NystromConfig struct {
	// Name labels the rows (the data set).
	Name string
	// Train and Test are the data sets (classification labels).
	Train, Test *data.Dataset
	// Components is the number of landmarks m, and the RFF dimension D
	// (default 512).
	Components int
	// Gamma is the RBF bandwidth (default 1/d).
	Gamma float64
	// Lambda is the ridge parameter (default 0.5, as scripts/compare.sh).
	Lambda float64
	// Methods are the landmark methods (default uniform, kmeans, leverage).
	Methods []nystrom.Method
	// RFF adds rows of random Fourier features (rbf/cos, iid) at D = m.
	RFF bool
	// Seeds is the number of seeds per method (default 3).
	Seeds int
	// GramRows is the number of test rows of the Gram error (default 1000).
	GramRows int
}

// NystromRow is one fit of Nystrom.
type NystromRow struct {
	Data       string `json:"data"`
	Map        string `json:"map"`    // "nystrom" or "rff"
	Method     string `json:"method"` // landmark method, "" for rff
	Components int    `json:"components"`
	Seed       uint64 `json:"seed"`
	// TestAccuracy and GramError (‖K − ZZᵀ‖_F/‖K‖_F on the first GramRows
	// standardised test rows) measure the fit.
	TestAccuracy float64 `json:"test_accuracy"`
	GramError    float64 `json:"gram_error"`
	GramRows     int     `json:"gram_rows"`
	// Seconds is the wall time of scaler, landmarks (or projection),
	// features, ridge fit and test prediction, as scikit-learn's side of
	// scripts/compare_nystrom.sh times it; LandmarkSeconds is the part
	// spent choosing landmarks and building the map.
	Seconds         float64 `json:"seconds"`
	LandmarkSeconds float64 `json:"landmark_seconds"`
	Backend         string  `json:"backend"`
}

// Nystrom runs every method for every seed and returns one row per
// fit, in the order methods × seeds (then the RFF rows). The Gram error is
// measured after the timed part.
func Nystrom(ctx context.Context, cfg NystromConfig) ([]NystromRow, error) {
	if cfg.Train == nil || cfg.Test == nil || cfg.Train.Rows() == 0 || cfg.Test.Rows() == 0 {
		return nil, errors.New("baseline: the Nyström comparison needs training and test rows")
	}
	if cfg.Train.Cols() != cfg.Test.Cols() {
		return nil, fmt.Errorf("baseline: training data has %d columns, test data %d", cfg.Train.Cols(), cfg.Test.Cols())
	}
	if cfg.Components == 0 {
		cfg.Components = 512
	}
	if err := limits.Dim("baseline: the number of landmarks", cfg.Components); err != nil {
		return nil, err
	}
	d := cfg.Train.Cols()
	if cfg.Gamma == 0 {
		cfg.Gamma = 1 / float64(d)
	}
	if cfg.Lambda == 0 {
		cfg.Lambda = 0.5
	}
	if len(cfg.Methods) == 0 {
		cfg.Methods = []nystrom.Method{nystrom.Uniform, nystrom.KMeans, nystrom.Leverage}
	}
	if cfg.Seeds <= 0 {
		cfg.Seeds = 3
	}
	if cfg.GramRows <= 0 {
		cfg.GramRows = 1000
	}
	labels, k, err := cfg.Train.Labels()
	if err != nil {
		return nil, err
	}
	targets, err := linear.OneHot(labels, k)
	if err != nil {
		return nil, err
	}
	k0 := kernel.RBF{Gamma: cfg.Gamma}
	type run struct {
		method nystrom.Method
		rff    bool
	}
	var runs []run
	for _, m := range cfg.Methods {
		runs = append(runs, run{method: m})
	}
	if cfg.RFF {
		runs = append(runs, run{rff: true})
	}
	var rows []NystromRow
	for _, r := range runs {
		for s := 0; s < cfg.Seeds; s++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			seed := uint64(s)
			start := time.Now()
			xtr, xte, err := data.Standardize(cfg.Train.X, cfg.Test.X)
			if err != nil {
				return nil, err
			}
			lstart := time.Now()
			var mp features.Transformer
			if r.rff {
				mp, err = features.New(features.Config{Kernel: "rbf", Gamma: cfg.Gamma, Features: cfg.Components, Seed: seed}, d)
			} else {
				mp, err = nystrom.Fit(xtr, nystrom.Config{Kernel: k0, Components: cfg.Components, Method: r.method, Seed: seed})
			}
			if err != nil {
				return nil, err
			}
			lsec := time.Since(lstart).Seconds()
			stats, err := model.Accumulate(ctx, mp, xtr, targets, 1, 0, nil)
			if err != nil {
				return nil, err
			}
			lm, err := linear.Fit(stats[0], cfg.Lambda, true)
			if err != nil {
				return nil, err
			}
			z, err := features.Apply(mp, xte)
			if err != nil {
				return nil, err
			}
			scores, err := lm.Predict(z)
			if err != nil {
				return nil, err
			}
			acc := model.Accuracy(linear.Argmax(scores), cfg.Test.Y)
			secs := time.Since(start).Seconds()
			g := min(cfg.GramRows, cfg.Test.Rows())
			ge, err := model.GramError(mp, xte.Slice(0, g, 0, d).(*mat.Dense))
			if err != nil {
				return nil, err
			}
			row := NystromRow{Data: cfg.Name, Map: "nystrom", Method: string(r.method), Components: cfg.Components, Seed: seed,
				TestAccuracy: acc, GramError: ge, GramRows: g, Seconds: secs, LandmarkSeconds: lsec, Backend: blas.Name()}
			if r.rff {
				row.Map, row.Method = "rff", ""
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// NystromTable returns the means over seeds of the rows of each data set,
// map and method.
func NystromTable(rows []NystromRow) *report.Table {
	t := &report.Table{Header: []string{"data", "map", "landmarks", "m", "seeds", "test acc", "Gram err", "seconds", "landmark s"}}
	type key struct{ data, mp, method string }
	var order []key
	groups := map[key][]NystromRow{}
	for _, r := range rows {
		k := key{r.Data, r.Map, r.Method}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range order {
		g := groups[k]
		var acc, ge, sec, lsec float64
		for _, r := range g {
			n := float64(len(g))
			acc, ge, sec, lsec = acc+r.TestAccuracy/n, ge+r.GramError/n, sec+r.Seconds/n, lsec+r.LandmarkSeconds/n
		}
		method := k.method
		if method == "" {
			method = "-"
		}
		t.Add(k.data, k.mp, method, g[0].Components, len(g), report.Fixed(acc, 4), report.Fixed(ge, 4), report.Fixed(sec, 3), report.Fixed(lsec, 3))
	}
	return t
}
