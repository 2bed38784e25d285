package hrf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/sampler"
)

func TestResolveEstimators(t *testing.T) {
	reg := catalog.Default()
	for _, c := range []struct {
		in, label, entry string
		ok               bool
	}{
		{"trig", "trig", "trig", true},
		{" favor+", "favor+", "positive", true},
		{"gaussian", "gaussian", "gaussian", true}, // HRF Eq. 20 (hybrid.Gaussian)
		{"bipolar", "bipolar", "bipolar", true},    // HRF App. F (hybrid.GaussianBipolar)
		{"clustered", "clustered", "clustered", true},
		{"rbf", "", "", false}, // a map, but not of the softmax kernel
		{"magic", "", "", false},
	} {
		got, err := resolveEstimators(reg, []string{c.in})
		if (err == nil) != c.ok {
			t.Errorf("%q: error %v, want ok=%v", c.in, err, c.ok)
			continue
		}
		if c.ok && (got[0].label != c.label || got[0].entry != c.entry) {
			t.Errorf("%q: got %+v, want label %q entry %q", c.in, got[0], c.label, c.entry)
		}
		if !c.ok && !strings.Contains(err.Error(), "unknown estimator") {
			t.Errorf("%q: error %q does not name the problem", c.in, err)
		}
	}
	def, err := resolveEstimators(reg, nil)
	if err != nil || len(def) != 3 || def[0].entry != "trig" || def[1].entry != "positive" || def[2].entry != "angular" {
		t.Errorf("default estimators %+v, %v", def, err)
	}
}

func TestConfigsValidate(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"angle features", AnglesConfig{Features: 0, Draws: 2}.Validate(), "feature budget"},
		{"angle draws", AnglesConfig{Features: 8, Draws: 1}.Validate(), "draws must be between 2 and"},
		{"angle huge draws", AnglesConfig{Features: 8, Draws: 1 << 40}.Validate(), "draws must be between 2 and"},
		{"data huge draws", DataConfig{X: x, Features: 8, Draws: 1 << 40, Pairs: 1, Norms: []float64{1}}.Validate(), "draws must be between"},
		{"angle clustered", AnglesConfig{Features: 8, Draws: 2, Estimators: []string{"clustered"}}.Validate(), "no clusters"},
		{"angle estimator", AnglesConfig{Features: 8, Draws: 2, Estimators: []string{"cosine"}}.Validate(), "unknown estimator"},
		{"data nil", DataConfig{Features: 8, Draws: 2, Pairs: 1, Norms: []float64{1}}.Validate(), "no data"},
		{"data rows", DataConfig{X: mat.NewDense(1, 2, nil), Features: 8, Draws: 2, Pairs: 1, Norms: []float64{1}}.Validate(), "at least 2 rows"},
		{"data pairs", DataConfig{X: x, Features: 8, Draws: 2, Pairs: 0, Norms: []float64{1}}.Validate(), "pairs"},
		{"data huge pairs", DataConfig{X: x, Features: 8, Draws: 2, Pairs: 1 << 40, Norms: []float64{1}}.Validate(), "pairs"},
		{"data norms", DataConfig{X: x, Features: 8, Draws: 2, Pairs: 1, Norms: []float64{-1}}.Validate(), "norms"},
		{"data no norms", DataConfig{X: x, Features: 8, Draws: 2, Pairs: 1}.Validate(), "norms"},
		{"data inf norm", DataConfig{X: x, Features: 8, Draws: 2, Pairs: 1, Norms: []float64{math.Inf(1)}}.Validate(), "norms"},
		{"clustered draws", ClusteredConfig{Draws: 0}.Validate(), "draw"},
		{"clustered pairs", ClusteredConfig{Draws: 1, Pairs: -1}.Validate(), "pairs"},
		{"clustered features", ClusteredConfig{Draws: 1, Features: []int{0}}.Validate(), "features"},
		{"softmax dim", SoftmaxSamplingConfig{Dim: 0, Norms: []float64{1}}.Validate(), "dimension"},
		{"softmax budget", SoftmaxSamplingConfig{Dim: 4, Norms: []float64{1}, Features: []int{-3}}.Validate(), "budget"},
		{"softmax norms", SoftmaxSamplingConfig{Dim: 4}.Validate(), "norms"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, c.err, c.want)
		}
	}
	if err := (AnglesConfig{Features: 8, Draws: 2}).Validate(); err != nil {
		t.Errorf("valid angle config: %v", err)
	}
}

// TestAngles checks the pointwise study against what the theory
// says exactly: trigonometric features are exact for x = y (θ = 0),
// positive features for x = −y (θ = π), the angular hybrid at both ends,
// and each is far off at the end where the other is exact.
func TestAngles(t *testing.T) {
	var calls, last int
	res, err := Angles(context.Background(), AnglesConfig{
		Estimators: []string{"trig", "positive", "angular"}, Features: 64, Draws: 20, Seed: 1,
	}, func(done, _ int) { calls, last = calls+1, done })
	if err != nil {
		t.Fatal(err)
	}
	n := len(anglesRadii) * AnglesSteps
	if len(res.Rows) != 3*n || calls != 3*20 || last != 60 {
		t.Fatalf("%d rows (want %d), %d progress calls ending at %d (want 60)", len(res.Rows), 3*n, calls, last)
	}
	row := func(est string, r float64, step int) AnglesRow {
		for _, x := range res.Rows {
			if x.Estimator == est && x.R == r && math.Abs(x.Theta-math.Pi*float64(step)/12) < 1e-12 {
				return x
			}
		}
		t.Fatalf("no row %s r=%v step %d", est, r, step)
		return AnglesRow{}
	}
	for _, x := range res.Rows {
		want := math.Exp(x.R * x.R * math.Cos(x.Theta))
		if math.Abs(x.True-want) > 1e-12*want {
			t.Errorf("%s r=%v θ=%v: true %v, want exp(r² cos θ) = %v", x.Estimator, x.R, x.Theta, x.True, want)
		}
		if !(x.P5 <= x.P95) || math.IsNaN(x.RelError) || x.RelError < 0 {
			t.Errorf("%+v: bad percentiles or error", x)
		}
	}
	for _, r := range anglesRadii {
		for _, c := range []struct {
			est        string
			step       int
			exact      bool
			minRelFar  float64
			stepOfFail int
		}{
			{"trig", 0, true, 0.1, 12},
			{"positive", 12, true, 0.1, 0},
			{"angular", 0, true, 0, 0},
			{"angular", 12, true, 0, 0},
		} {
			if e := row(c.est, r, c.step).RelError; e > 1e-12 {
				t.Errorf("%s r=%v θ=%dπ/12: relative error %v, want exact (< 1e-12)", c.est, r, c.step, e)
			}
			if c.minRelFar > 0 {
				if e := row(c.est, r, c.stepOfFail).RelError; e < c.minRelFar {
					t.Errorf("%s r=%v θ=%dπ/12: relative error %v, want > %v", c.est, r, c.stepOfFail, e, c.minRelFar)
				}
			}
		}
		// The trigonometric error grows with the angle (its variance
		// grows with ‖x − y‖).
		if a, b := row("trig", r, 1).RelError, row("trig", r, 6).RelError; !(a < b) {
			t.Errorf("trig r=%v: error %v at π/12 not below %v at π/2", r, a, b)
		}
	}
	if row("trig", 1, 0).Dim != 64 || row("angular", 1, 0).Dim <= 64 {
		t.Errorf("dimensions trig %d, angular %d", row("trig", 1, 0).Dim, row("angular", 1, 0).Dim)
	}

	var b bytes.Buffer
	if err := res.Render(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.HasPrefix(lines[0], "pointwise softmax-kernel estimation, d=64") || len(lines) != 2+1+n+3 ||
		!strings.HasPrefix(lines[len(lines)-3], "trig: feature dimension 64, max relative error") {
		t.Errorf("rendering:\n%s", b.String())
	}
	if tb := res.Table(); len(tb.Header) != 3+3+1 || len(tb.Rows) != n {
		t.Errorf("table %d columns, %d rows", len(tb.Header), len(tb.Rows))
	}
	p := res.Plot()
	if len(p.Series) != 3*len(anglesRadii) {
		t.Errorf("%d series", len(p.Series))
	}
	if err := p.Save(filepath.Join(t.TempDir(), "angle.png")); err != nil {
		t.Error(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Angles(ctx, AnglesConfig{Features: 8, Draws: 2}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled study returned %v", err)
	}
}

func letterRows(n int) *mat.Dense {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return data.Letter().Subset(idx).X
}

// TestData checks the data study on letter rows: finite errors,
// the structure of the rows, and the variance reduction of orthogonal
// random features (Yu et al. 2016): with D/2 = d projections, ORF lowers
// the MSE of the trigonometric estimator clearly below iid.
func TestData(t *testing.T) {
	x := letterRows(300)
	run := func(smp sampler.Sampler) *DataResult {
		res, err := Data(context.Background(), DataConfig{X: x, Estimators: []string{"trig", "favor+", "clustered"},
			Sampler: smp, Features: 32, Draws: 40, Pairs: 100, Norms: []float64{1, 1.5}, Seed: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	iid, orf := run(sampler.Gaussian{}), run(sampler.Orthogonal{})
	if len(iid.Rows) != 6 {
		t.Fatalf("%d rows, want 2 norms × 3 estimators", len(iid.Rows))
	}
	for i, r := range iid.Rows {
		wantEst := []string{"trig", "favor+", "clustered"}[i%3]
		wantNorm := []float64{1, 1.5}[i/3]
		if r.Estimator != wantEst || r.Norm != wantNorm || r.Sampler != "iid" || r.Pairs != 100 || r.Draws != 40 || r.Features != 32 {
			t.Errorf("row %d: %+v", i, r)
		}
		if !(r.MSE > 0) || math.IsInf(r.MSE, 0) || !(r.MSEStd >= 0) || math.IsInf(r.MSEStd, 0) {
			t.Errorf("row %d: MSE %v ± %v not finite and positive", i, r.MSE, r.MSEStd)
		}
		// Standardised letter rows are nearly orthogonal on average.
		if !(r.MeanAngle > 1.2 && r.MeanAngle < 1.9) {
			t.Errorf("row %d: mean angle %v", i, r.MeanAngle)
		}
	}
	// The advantage shrinks as ‖x − y‖ grows (Yu et al. 2016, Fig. 2):
	// at r = 1 ORF is below 0.6×iid, at r = 1.5 still clearly below.
	for i, ratio := range map[int]float64{0: 0.6, 3: 1} {
		a, b := iid.Rows[i], orf.Rows[i] // trig
		se := math.Sqrt((a.MSEStd*a.MSEStd + b.MSEStd*b.MSEStd) / float64(a.Draws))
		if !(b.MSE < ratio*a.MSE && a.MSE-b.MSE > 4*se) {
			t.Errorf("r=%v: trig MSE orf %v, iid %v (standard error %v): want orf below %v×iid by 4 standard errors", a.Norm, b.MSE, a.MSE, se, ratio)
		}
	}
	tb := iid.Table()
	if len(tb.Rows) != 6 || !strings.Contains(tb.Title, "100 random pairs") || tb.Rows[1][2] != "favor+" {
		t.Errorf("table %q %v", tb.Title, tb.Rows)
	}
}

// TestClustered checks the clustered-data study at reduced size:
// every MSE is finite and inside its [min, max], and for every estimator
// the MSE falls roughly as 1/m (at least threefold from m = 20 to 200).
func TestClustered(t *testing.T) {
	res, err := Clustered(context.Background(), ClusteredConfig{Draws: 4, Seed: 1, Features: []int{20, 200}, Pairs: 300}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2*2*3 || res.Pairs != 300 {
		t.Fatalf("%d rows, %d pairs", len(res.Rows), res.Pairs)
	}
	for _, r := range res.Rows {
		if !(r.Min <= r.MSE && r.MSE <= r.Max) || !(r.Min > 0) || math.IsInf(r.Max, 0) {
			t.Errorf("%+v: MSE not finite or outside [min, max]", r)
		}
	}
	for i := 0; i < len(res.Rows); i += 6 {
		for k := 0; k < 3; k++ {
			lo, hi := res.Rows[i+k], res.Rows[i+3+k]
			if lo.Features != 20 || hi.Features != 200 || lo.Estimator != hi.Estimator {
				t.Fatalf("row order %+v %+v", lo, hi)
			}
			if !(hi.MSE < lo.MSE/3) {
				t.Errorf("%s %s: MSE %v at m=200, %v at m=20: want a fall of 3x or more", lo.Config, lo.Estimator, hi.MSE, lo.MSE)
			}
		}
	}
	if res.Rows[0].Config != "σ=1" || res.Rows[6].Config != "σ=3.16" {
		t.Errorf("configs %q %q", res.Rows[0].Config, res.Rows[6].Config)
	}
	if p := res.Plot(); len(p.Series) != 6 || len(p.Series[0].X) != 2 {
		t.Errorf("plot has %d series", len(p.Series))
	}
	if tb := res.Table(); len(tb.Rows) != 12 {
		t.Errorf("table has %d rows", len(tb.Rows))
	}
}

// TestClusteredData checks the synthetic data of HRF App. H.3:
// shapes, cluster centres of norm 1 and SM(x, y) within [e⁻¹·², e¹·²].
func TestClusteredData(t *testing.T) {
	x, y, err := ClusteredData(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := x.Dims(); r != 2*ClusteredPoints || c != ClusteredDim {
		t.Fatalf("x is %d×%d", r, c)
	}
	// The noise has norm about 0.1σ, so rows have norm 1 ± 0.2.
	for _, m := range []*mat.Dense{x, y} {
		for i := 0; i < 2*ClusteredPoints; i += 97 {
			row := m.RawRowView(i)
			if nr := math.Sqrt(floats.Dot(row, row)); math.Abs(nr-1) > 0.2 {
				t.Errorf("row %d has norm %v", i, nr)
			}
		}
	}
	for i := 0; i < 2*ClusteredPoints; i += 37 {
		if ip := floats.Dot(x.RawRowView(i), y.RawRowView((i*7)%(2*ClusteredPoints))); math.Abs(ip) > 1.2 {
			t.Errorf("xᵀy = %v outside [−1.2, 1.2]", ip)
		}
	}
}

// TestSoftmaxSampling checks the softmax sampling study: positive features
// never give negative estimates, KS ≤ W1, and W1 falls about as 1/√D (at
// least twofold from D = 64 to 512, √8 ≈ 2.8 expected).
func TestSoftmaxSampling(t *testing.T) {
	res, err := SoftmaxSampling(context.Background(), SoftmaxSamplingConfig{Estimators: []string{"positive", "trig", "clustered"},
		Dim: 8, Norms: []float64{0.5}, Features: []int{64, 512}, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 4 {
		t.Fatalf("%d rows, want 2 estimators × 2 budgets (clustered skipped)", len(res.Rows))
	}
	for _, r := range res.Rows {
		if !(r.KS > 0 && r.KS <= r.W1) || r.Negative < 0 || r.Negative > 1 || r.Dim != r.Features {
			t.Errorf("%+v", r)
		}
		if r.Estimator == "positive" && r.Negative != 0 {
			t.Errorf("positive features gave a negative fraction %v", r.Negative)
		}
	}
	for i := 0; i < 4; i += 2 {
		if a, b := res.Rows[i], res.Rows[i+1]; !(b.W1 < a.W1/2) {
			t.Errorf("%s: W1 %v at D=64, %v at D=512: want a fall of 2x or more", a.Estimator, a.W1, b.W1)
		}
	}
	if tb := res.Table(); len(tb.Rows) != 4 || !strings.Contains(tb.Title, "d=8") {
		t.Errorf("table %q, %d rows", tb.Title, len(tb.Rows))
	}
}

func ExampleAngles() {
	res, err := Angles(context.Background(), AnglesConfig{
		Estimators: []string{"trig", "positive"}, Features: 64, Draws: 10, Seed: 1,
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Trigonometric features are exact for x = y, positive features for
	// x = −y.
	for _, r := range res.Rows {
		if r.R == 1 && (r.Theta == 0 || r.Theta == math.Pi) {
			fmt.Printf("%-8s θ=%.0f°  relative error %.2f\n", r.Estimator, r.Theta*180/math.Pi, r.RelError)
		}
	}
	// Output:
	// trig     θ=0°  relative error 0.00
	// trig     θ=180°  relative error 0.62
	// positive θ=0°  relative error 0.51
	// positive θ=180°  relative error 0.00
}
