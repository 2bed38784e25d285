package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kernelkit/kernelkit/cluster"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/sampler"
)

// estimatorSpec builds softmax-kernel estimators by name with a feature
// budget D (FLOP-matched for the hybrids).
type estimatorSpec struct {
	name    string
	d, D    int
	smp     sampler.Sampler
	norm    float64       // input norm, for the Gaussian bipolar hybrid
	centres [2]*mat.Dense // query and key centres, for the clustered hybrid
}

var estimatorNames = []string{"trig", "positive", "hyperbolic", "angular", "gaussian", "clustered"}

func (e estimatorSpec) build(seed uint64) (features.Pair, error) {
	switch e.name {
	case "trig", "positive", "hyperbolic":
		D := e.D
		if e.name != "positive" && D%2 == 1 {
			D++
		}
		mp, err := features.New(features.Config{Kernel: "softmax", Form: e.name, Features: D, Sampler: e.smp, Seed: seed}, e.d)
		if err != nil {
			return nil, err
		}
		return features.Symmetric(mp), nil
	case "angular", "gaussian":
		o := hybrid.MatchFLOPs(e.d, e.D)
		o.Sampler, o.Seed = e.smp, seed
		if e.name == "angular" {
			return hybrid.Angular(e.d, o)
		}
		return hybrid.GaussianBipolar(e.d, 1, math.Max(e.norm, 1e-3), o)
	case "clustered":
		if e.centres[0] == nil {
			return nil, fmt.Errorf("the clustered estimator needs cluster centres")
		}
		nk, _ := e.centres[1].Dims()
		// Each query evaluates nk per-pair estimators of M projections:
		// M = D/(2 nk) keeps the projection cost at that of D/2 projections.
		m := max(1, e.D/(2*nk))
		return hybrid.NewClustered(e.centres[0], e.centres[1], hybrid.ClusterOptions{M: m, Sampler: e.smp, Seed: seed})
	}
	return nil, fmt.Errorf("unknown estimator %q (want %s)", e.name, strings.Join(estimatorNames, ", "))
}

// pairEstimates returns the estimates SM̂(x_i, y_i) for paired rows.
func pairEstimates(p features.Pair, x, y *mat.Dense) ([]float64, error) {
	qx, err := features.Queries(p, x)
	if err != nil {
		return nil, err
	}
	ky, err := features.Keys(p, y)
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	out := make([]float64, n)
	for i := range out {
		out[i] = mat.Dot(qx.RowView(i), ky.RowView(i))
	}
	return out, nil
}

func newEstimate() *cobra.Command {
	var study, dataPath, estimators, smpName, plotPath, norms string
	var pairs, feats, drawsN, dim int
	var seed uint64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "estimate",
		Short: "Pointwise softmax-kernel estimation studies (hybrid random features)",
		Long: "estimate measures softmax-kernel estimators SM(x,y) = exp(xᵀy) pointwise:\n" +
			"  --study angle      same-length inputs (d = 64, r = 1, 1.25, 1.5), angle 0..π: true value,\n" +
			"                     5th-95th percentile and relative error of trig and positive (128\n" +
			"                     features) and FLOP-matched hybrids (HRF Fig. 2/5)\n" +
			"  --study data       --data F.csv: random pairs of rows (standardised, scaled to norm --norms),\n" +
			"                     MSE over pairs, mean and std over --draws independent maps (HRF Table 1)\n" +
			"  --study clustered  synthetic clustered data (HRF App. H.1): clustered HRF vs FAVOR+ and trig\n" +
			"  --study softmax    softmax sampling quality (HRF Sec. 4.2): Wasserstein-1, KS, negatives",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			smp, err := sampler.ByName(smpName)
			if err != nil {
				return err
			}
			if feats <= 0 {
				return fmt.Errorf("--features must be positive, got %d", feats)
			}
			if drawsN < 2 {
				return fmt.Errorf("--draws must be at least 2, got %d", drawsN)
			}
			var names []string
			for _, n := range strings.Split(estimators, ",") {
				n = strings.TrimSpace(n)
				ok := false
				for _, k := range estimatorNames {
					ok = ok || k == n
				}
				if !ok {
					return fmt.Errorf("unknown estimator %q (want %s)", n, strings.Join(estimatorNames, ", "))
				}
				names = append(names, n)
			}
			rs, err := parseFloats(norms, "norms")
			if err != nil {
				return err
			}
			if study == "" {
				study = "angle"
				if dataPath != "" {
					study = "data"
				}
			}
			switch study {
			case "angle":
				return angleStudy(w, names, smp, feats, drawsN, seed, plotPath, asJSON)
			case "data":
				if dataPath == "" {
					return fmt.Errorf("--study data needs --data")
				}
				if pairs <= 0 {
					return fmt.Errorf("--pairs must be positive, got %d", pairs)
				}
				ds, err := readData(dataPath, "auto", "", false)
				if err != nil {
					return err
				}
				return dataStudy(w, ds, names, smp, feats, drawsN, pairs, rs, seed, asJSON)
			case "clustered":
				return clusteredStudy(w, smp, drawsN, seed, plotPath, asJSON)
			case "softmax":
				if dim <= 0 {
					return fmt.Errorf("--d must be positive")
				}
				return softmaxStudy(w, names, smp, dim, rs, seed, asJSON)
			}
			return fmt.Errorf("unknown --study %q (want angle, data, clustered or softmax)", study)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&study, "study", "", "angle, data, clustered or softmax (default: data with --data, else angle)")
	fl.StringVar(&dataPath, "data", "", "CSV data set for --study data (label column dropped)")
	fl.StringVar(&estimators, "estimator", "trig,positive,angular", "estimators: "+strings.Join(estimatorNames, ", "))
	fl.StringVar(&smpName, "sampler", "iid", "projection sampler: iid, orf, sorf, halton, truncated")
	fl.IntVar(&feats, "features", 0, "feature budget D (default 128 for angle, 512 for data and softmax)")
	fl.IntVar(&drawsN, "draws", 0, "independent draws of each map (default 1000 for angle, 50 otherwise, 20 for clustered)")
	fl.IntVar(&pairs, "pairs", 100, "random pairs of rows for --study data")
	fl.StringVar(&norms, "norms", "1", "row norms after standardisation (data) or embedding norms (softmax)")
	fl.IntVar(&dim, "d", 64, "dimension for --study softmax")
	fl.Uint64Var(&seed, "seed", 0, "random seed")
	fl.StringVar(&plotPath, "plot", "", "PNG plot (angle: relative error vs θ; clustered: MSE vs m)")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		s, _ := cmd.Flags().GetString("study")
		dp, _ := cmd.Flags().GetString("data")
		if s == "" && dp != "" {
			s = "data"
		}
		if !cmd.Flags().Changed("features") {
			feats = 512
			if s == "" || s == "angle" {
				feats = 128
			}
		}
		if !cmd.Flags().Changed("draws") {
			switch s {
			case "", "angle":
				drawsN = 1000
			case "clustered":
				drawsN = 20
			default:
				drawsN = 50
			}
		}
		return nil
	}
	return cmd
}

func parseFloats(s, flag string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		var v float64
		if _, err := fmt.Sscan(strings.TrimSpace(f), &v); err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("bad value %q in --%s (want positive numbers)", f, flag)
		}
		out = append(out, v)
	}
	return out, nil
}

type angleRow struct {
	R         float64 `json:"r"`
	Theta     float64 `json:"theta"`
	Estimator string  `json:"estimator"`
	Dim       int     `json:"feature_dim"`
	True      float64 `json:"true"`
	P5        float64 `json:"p5"`
	P95       float64 `json:"p95"`
	RelError  float64 `json:"rel_error"`
}

func angleStudy(w io.Writer, names []string, smp sampler.Sampler, D, draws int, seed uint64, plotPath string, asJSON bool) error {
	const d = 64
	rs := []float64{1, 1.25, 1.5}
	const nTheta = 13
	var x, y []float64
	var meta [][2]float64
	for _, r := range rs {
		for i := 0; i < nTheta; i++ {
			th := math.Pi * float64(i) / float64(nTheta-1)
			// Same-length vectors at angle θ in a random-looking plane.
			u := make([]float64, d)
			v := make([]float64, d)
			for k := 0; k < d; k++ {
				u[k] = math.Sin(float64(k+1) * 1.3)
				v[k] = math.Cos(float64(k+1) * 0.7)
			}
			orthonormalise(u, v)
			for k := 0; k < d; k++ {
				x = append(x, r*u[k])
				y = append(y, r*(math.Cos(th)*u[k]+math.Sin(th)*v[k]))
			}
			meta = append(meta, [2]float64{r, th})
		}
	}
	n := len(meta)
	xm, ym := mat.NewDense(n, d, x), mat.NewDense(n, d, y)
	var rows []angleRow
	bar := newBar(len(names)*draws, "estimate")
	for _, name := range names {
		spec := estimatorSpec{name: name, d: d, D: D, smp: smp, norm: 1.25}
		est := make([][]float64, n)
		dimF := 0
		for s := 0; s < draws; s++ {
			p, err := spec.build(seed + uint64(s))
			if err != nil {
				return err
			}
			dimF = p.Dim()
			e, err := pairEstimates(p, xm, ym)
			if err != nil {
				return err
			}
			for i, v := range e {
				est[i] = append(est[i], v)
			}
			_ = bar.Add(1)
		}
		for i := range meta {
			tv := math.Exp(dot(xm.RawRowView(i), ym.RawRowView(i)))
			sort.Float64s(est[i])
			var mse float64
			for _, v := range est[i] {
				mse += (v - tv) * (v - tv)
			}
			mse /= float64(draws)
			rows = append(rows, angleRow{R: meta[i][0], Theta: meta[i][1], Estimator: name, Dim: dimF, True: tv,
				P5: stat.Quantile(0.05, stat.Empirical, est[i], nil), P95: stat.Quantile(0.95, stat.Empirical, est[i], nil),
				RelError: math.Sqrt(mse) / tv})
		}
	}
	_ = bar.Finish()
	if asJSON {
		return json.NewEncoder(w).Encode(rows)
	}
	fmt.Fprintf(w, "pointwise softmax-kernel estimation, d=%d, same-length inputs, %d draws, budget %d features (%s); hybrids FLOP-matched\n\n", d, draws, D, smp.Name())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "r\tθ/π\tSM(x,y)\t")
	for _, nm := range names {
		fmt.Fprintf(tw, "%s rel.err\t", nm)
	}
	fmt.Fprintln(tw, "best\t")
	for i := range meta {
		fmt.Fprintf(tw, "%.2f\t%.3f\t%.4g\t", meta[i][0], meta[i][1]/math.Pi, rows[i].True)
		best, bv := "", math.Inf(1)
		for k, nm := range names {
			r := rows[k*n+i]
			fmt.Fprintf(tw, "%.4f\t", r.RelError)
			if r.RelError < bv {
				best, bv = nm, r.RelError
			}
		}
		fmt.Fprintf(tw, "%s\t\n", best)
	}
	tw.Flush()
	for k, nm := range names {
		fmt.Fprintf(w, "%s: feature dimension %d, max relative error %.4f\n", nm, rows[k*n].Dim, maxRel(rows[k*n:(k+1)*n]))
	}
	if plotPath != "" {
		p := plot.New()
		p.Title.Text = "softmax kernel: empirical relative error vs angle"
		p.X.Label.Text = "θ / π"
		p.Y.Label.Text = "relative error √MSE / SM(x,y) (log scale; exact zeros omitted)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		var lines []any
		for k, nm := range names {
			for _, r := range rs {
				var pts plotter.XYs
				for i := range meta {
					if meta[i][0] == r && rows[k*n+i].RelError > 1e-12 {
						pts = append(pts, plotter.XY{X: meta[i][1] / math.Pi, Y: rows[k*n+i].RelError})
					}
				}
				lines = append(lines, fmt.Sprintf("%s, r=%.2f", nm, r), pts)
			}
		}
		if err := plotutil.AddLinePoints(p, lines...); err != nil {
			return err
		}
		p.Legend.Top = true
		p.Legend.Left = true
		p.Y.Max *= 30
		if err := p.Save(9*vg.Inch, 6*vg.Inch, plotPath); err != nil {
			return err
		}
		fmt.Fprintf(w, "plot written to %s\n", plotPath)
	}
	return nil
}

func maxRel(rows []angleRow) float64 {
	m := 0.0
	for _, r := range rows {
		m = math.Max(m, r.RelError)
	}
	return m
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func orthonormalise(u, v []float64) {
	nu := math.Sqrt(dot(u, u))
	for i := range u {
		u[i] /= nu
	}
	p := dot(u, v)
	for i := range v {
		v[i] -= p * u[i]
	}
	nv := math.Sqrt(dot(v, v))
	for i := range v {
		v[i] /= nv
	}
}

type dataRow struct {
	Estimator string  `json:"estimator"`
	Sampler   string  `json:"sampler"`
	Features  int     `json:"features"`
	Dim       int     `json:"feature_dim"`
	Norm      float64 `json:"norm"`
	Pairs     int     `json:"pairs"`
	Draws     int     `json:"draws"`
	MSE       float64 `json:"mse"`
	MSEStd    float64 `json:"mse_std"`
	MeanAngle float64 `json:"mean_angle"`
}

// prepRows standardises the columns and scales each row to norm r.
func prepRows(x *mat.Dense, r float64) (*mat.Dense, error) {
	s, err := data.FitScaler(x)
	if err != nil {
		return nil, err
	}
	z, err := s.Transform(x)
	if err != nil {
		return nil, err
	}
	n, _ := z.Dims()
	for i := 0; i < n; i++ {
		row := z.RawRowView(i)
		nr := math.Sqrt(dot(row, row))
		if nr == 0 {
			continue
		}
		for j := range row {
			row[j] *= r / nr
		}
	}
	return z, nil
}

func dataStudy(w io.Writer, ds *data.Dataset, names []string, smp sampler.Sampler, D, draws, pairs int, norms []float64, seed uint64, asJSON bool) error {
	n, d := ds.X.Dims()
	if n < 2 {
		return fmt.Errorf("--study data needs at least 2 rows")
	}
	rng := rng.New(seed)
	ia := make([]int, pairs)
	ib := make([]int, pairs)
	for i := range ia {
		ia[i] = rng.IntN(n)
		ib[i] = rng.IntN(n - 1)
		if ib[i] >= ia[i] {
			ib[i]++
		}
	}
	var rows []dataRow
	bar := newBar(len(norms)*len(names)*draws, "estimate")
	for _, r := range norms {
		z, err := prepRows(ds.X, r)
		if err != nil {
			return err
		}
		xa := mat.NewDense(pairs, d, nil)
		xb := mat.NewDense(pairs, d, nil)
		exact := make([]float64, pairs)
		var angle float64
		for i := range ia {
			copy(xa.RawRowView(i), z.RawRowView(ia[i]))
			copy(xb.RawRowView(i), z.RawRowView(ib[i]))
			exact[i] = math.Exp(dot(xa.RawRowView(i), xb.RawRowView(i)))
			angle += hybrid.Angle(xa.RawRowView(i), xb.RawRowView(i)) / float64(pairs)
		}
		var centres [2]*mat.Dense
		for _, nm := range names {
			if nm == "clustered" {
				c, _, err := cluster.KMeans(z, 2, seed, 50)
				if err != nil {
					return err
				}
				centres = [2]*mat.Dense{c, c}
			}
		}
		for _, nm := range names {
			spec := estimatorSpec{name: nm, d: d, D: D, smp: smp, norm: r, centres: centres}
			row := dataRow{Estimator: nm, Sampler: smp.Name(), Features: D, Norm: r, Pairs: pairs, Draws: draws, MeanAngle: angle}
			var mses []float64
			for s := 0; s < draws; s++ {
				p, err := spec.build(seed + 1 + uint64(s))
				if err != nil {
					return err
				}
				row.Dim = p.Dim()
				e, err := pairEstimates(p, xa, xb)
				if err != nil {
					return err
				}
				var mse float64
				for i, v := range e {
					mse += (v - exact[i]) * (v - exact[i])
				}
				mses = append(mses, mse/float64(pairs))
				_ = bar.Add(1)
			}
			row.MSE, row.MSEStd = stat.MeanStdDev(mses, nil)
			rows = append(rows, row)
		}
	}
	_ = bar.Finish()
	if asJSON {
		if len(rows) == 1 {
			return json.NewEncoder(w).Encode(rows[0])
		}
		return json.NewEncoder(w).Encode(rows)
	}
	fmt.Fprintf(w, "softmax-kernel MSE on %d random pairs of rows (standardised, scaled to norm r), %d draws, budget D=%d, %s\n\n", pairs, draws, D, smp.Name())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "r\tmean θ/π\testimator\tdim\tMSE\t± std\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%.2f\t%.3f\t%s\t%d\t%.4e\t%.2e\t\n", r.Norm, r.MeanAngle/math.Pi, r.Estimator, r.Dim, r.MSE, r.MSEStd)
	}
	tw.Flush()
	return nil
}

type clusterRow struct {
	Config    string  `json:"config"`
	Features  int     `json:"features"`
	Estimator string  `json:"estimator"`
	MSE       float64 `json:"mse"`
	Min       float64 `json:"min"`
	Max       float64 `json:"max"`
}

// clusteredData builds synthetic clustered data after HRF App. H.3: two
// query clusters around rotations O₁X₀, O₂X₀ and two key clusters around
// O₃Y₀, O₄Y₀ in R^50 (X₀, Y₀ random of norm 1, O random orthogonal), 1000
// points each, Gaussian noise of norm about 0.1σ (per-coordinate standard
// deviation 0.1σ/√50). The paper does not give the scale of X₀ against σ;
// this choice keeps SM(x, y) in [e⁻¹·², e¹·²].
func clusteredData(sigma float64, seed uint64) (x, y *mat.Dense) {
	const d, per = 50, 1000
	unit := func(s uint64) *mat.Dense {
		v, _ := sampler.Gaussian{}.Sample(1, d, s)
		v.Scale(1/mat.Norm(v, 2), v)
		return v
	}
	x0, y0 := unit(seed), unit(seed+1)
	gen := func(base *mat.Dense, s uint64) *mat.Dense {
		out := mat.NewDense(2*per, d, nil)
		for c := 0; c < 2; c++ {
			o, _ := sampler.Orthogonal{}.Sample(d, d, s+uint64(c))
			for i := 0; i < d; i++ { // unit rows: a rotation
				row := o.RawRowView(i)
				nr := math.Sqrt(dot(row, row))
				for j := range row {
					row[j] /= nr
				}
			}
			var mean mat.Dense
			mean.Mul(base, o.T())
			noise, _ := sampler.Gaussian{}.Sample(per, d, s+10+uint64(c))
			sd := 0.1 * sigma / math.Sqrt(d)
			for i := 0; i < per; i++ {
				row := out.RawRowView(c*per + i)
				for j := range row {
					row[j] = mean.At(0, j) + sd*noise.At(i, j)
				}
			}
		}
		return out
	}
	return gen(x0, seed+100), gen(y0, seed+200)
}

func clusteredStudy(w io.Writer, smp sampler.Sampler, draws int, seed uint64, plotPath string, asJSON bool) error {
	ms := []int{20, 50, 80, 100, 120, 150, 200}
	const npairs = 2000
	var rows []clusterRow
	bar := newBar(2*len(ms)*draws, "clustered")
	for _, sigma := range []float64{1, math.Sqrt(10)} {
		x, y := clusteredData(sigma, seed)
		qc, _, err := cluster.KMeans(x, 2, seed, 100)
		if err != nil {
			return err
		}
		kc, _, err := cluster.KMeans(y, 2, seed+1, 100)
		if err != nil {
			return err
		}
		rng := rng.New(seed + 7)
		xa := mat.NewDense(npairs, 50, nil)
		yb := mat.NewDense(npairs, 50, nil)
		exact := make([]float64, npairs)
		for i := 0; i < npairs; i++ {
			copy(xa.RawRowView(i), x.RawRowView(rng.IntN(2000)))
			copy(yb.RawRowView(i), y.RawRowView(rng.IntN(2000)))
			exact[i] = math.Exp(dot(xa.RawRowView(i), yb.RawRowView(i)))
		}
		cfg := fmt.Sprintf("σ=%.3g", sigma)
		for _, m := range ms {
			for _, nm := range []string{"hybrid-cluster", "positive", "trig"} {
				var mses []float64
				for s := 0; s < draws; s++ {
					var p features.Pair
					var err error
					switch nm {
					case "hybrid-cluster":
						p, err = hybrid.NewClustered(qc, kc, hybrid.ClusterOptions{M: max(1, m/2), Sampler: smp, Seed: seed + uint64(s)})
					default:
						p, err = estimatorSpec{name: nm, d: 50, D: m, smp: smp}.build(seed + uint64(s))
					}
					if err != nil {
						return err
					}
					e, err := pairEstimates(p, xa, yb)
					if err != nil {
						return err
					}
					var mse float64
					for i, v := range e {
						mse += (v - exact[i]) * (v - exact[i])
					}
					mses = append(mses, mse/npairs)
				}
				sort.Float64s(mses)
				rows = append(rows, clusterRow{Config: cfg, Features: m, Estimator: nm, MSE: stat.Mean(mses, nil), Min: mses[0], Max: mses[len(mses)-1]})
				_ = bar.Add(draws / 3)
			}
		}
	}
	_ = bar.Finish()
	if asJSON {
		return json.NewEncoder(w).Encode(rows)
	}
	fmt.Fprintf(w, "clustered data (HRF App. H.1): 2+2 Gaussian clusters of 1000 points in R^50 (centres of norm 1, noise norm 0.1σ), k-means k=2, real diagonal A (Eq. 88), zero-one λ; MSE over %d pairs, %d draws\n\n", npairs, draws)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "data\tm\testimator\tmean MSE\t[min, max]\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.4e\t[%.4f, %.4f]\t\n", r.Config, r.Features, r.Estimator, r.MSE, r.Min, r.Max)
	}
	tw.Flush()
	if plotPath != "" {
		p := plot.New()
		p.Title.Text = "clustered data: MSE vs features"
		p.X.Label.Text = "features m"
		p.Y.Label.Text = "mean MSE (log scale)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		series := map[string]plotter.XYs{}
		var order []string
		for _, r := range rows {
			k := r.Config + " " + r.Estimator
			if _, ok := series[k]; !ok {
				order = append(order, k)
			}
			series[k] = append(series[k], plotter.XY{X: float64(r.Features), Y: r.MSE})
		}
		var lines []any
		for _, k := range order {
			lines = append(lines, k, series[k])
		}
		if err := plotutil.AddLinePoints(p, lines...); err != nil {
			return err
		}
		if err := p.Save(9*vg.Inch, 6*vg.Inch, plotPath); err != nil {
			return err
		}
		fmt.Fprintf(w, "plot written to %s\n", plotPath)
	}
	return nil
}

type softmaxRow struct {
	Estimator string  `json:"estimator"`
	Features  int     `json:"features"`
	Dim       int     `json:"feature_dim"`
	Norm      float64 `json:"norm"`
	W1        float64 `json:"wasserstein1"`
	KS        float64 `json:"ks"`
	Negative  float64 `json:"negative_fraction"`
}

func softmaxStudy(w io.Writer, names []string, smp sampler.Sampler, d int, norms []float64, seed uint64, asJSON bool) error {
	const nq, nc = 100, 1000
	var rows []softmaxRow
	for _, r := range norms {
		q, _ := sampler.Gaussian{}.Sample(nq, d, seed+1)
		c, _ := sampler.Gaussian{}.Sample(nc, d, seed+2)
		for _, m := range []*mat.Dense{q, c} {
			n, _ := m.Dims()
			for i := 0; i < n; i++ {
				row := m.RawRowView(i)
				nr := math.Sqrt(dot(row, row))
				for j := range row {
					row[j] *= r / nr
				}
			}
		}
		for _, nm := range names {
			if nm == "clustered" {
				continue
			}
			for _, D := range []int{64, 128, 256, 512} {
				p, err := estimatorSpec{name: nm, d: d, D: D, smp: smp, norm: r}.build(seed + 3)
				if err != nil {
					return err
				}
				w1, ks, neg, err := hybrid.SoftmaxQuality(p, q, c)
				if err != nil {
					return fmt.Errorf("%s, D=%d: %w", nm, D, err)
				}
				rows = append(rows, softmaxRow{Estimator: nm, Features: D, Dim: p.Dim(), Norm: r, W1: w1, KS: ks, Negative: neg})
			}
		}
	}
	if asJSON {
		return json.NewEncoder(w).Encode(rows)
	}
	fmt.Fprintf(w, "softmax sampling quality (HRF Sec. 4.2): %d queries, %d classes, d=%d, embeddings of norm r (%s)\n\n", nq, nc, d, smp.Name())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "r\testimator\tD\tdim\tW1\tKS\tnegative\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%.2f\t%s\t%d\t%d\t%.4f\t%.4f\t%.4f\t\n", r.Norm, r.Estimator, r.Features, r.Dim, r.W1, r.KS, r.Negative)
	}
	tw.Flush()
	return nil
}
