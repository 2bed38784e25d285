package calibrate

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/rng"
)

// logistic draws n scores s ~ N(0, spread²) and labels from the sigmoid
// P(1|s) = 1/(1 + exp(a·s + b)).
func logistic(r *rand.Rand, n int, a, b, spread float64) ([]float64, []bool) {
	s := make([]float64, n)
	y := make([]bool, n)
	for i := range s {
		s[i] = spread * r.NormFloat64()
		y[i] = r.Float64() < Sigmoid{A: a, B: b}.Prob(s[i])
	}
	return s, y
}

// standardErrors returns the asymptotic standard errors of the maximum
// likelihood estimates of A and B at the true (a, b): the square roots of
// the diagonal of the inverse Fisher information Σᵢ pᵢ(1−pᵢ)(sᵢ,1)(sᵢ,1)ᵀ.
func standardErrors(s []float64, a, b float64) (seA, seB float64) {
	var i11, i12, i22 float64
	for _, v := range s {
		p := Sigmoid{A: a, B: b}.Prob(v)
		w := p * (1 - p)
		i11 += w * v * v
		i12 += w * v
		i22 += w
	}
	det := i11*i22 - i12*i12
	return math.Sqrt(i22 / det), math.Sqrt(i11 / det)
}

// TestFitSigmoidRecovers: scores drawn from a known logistic model give
// back its A and B within 4 standard errors. The MLE is asymptotically
// normal with the inverse Fisher information as covariance, so a 4-SE
// miss has probability 6·10⁻⁵ per parameter; Platt's targets move the
// estimate by O(1/N±) (about 10⁻⁴ here), far inside one SE (about 0.02).
// A second check fits 400 replicates of 1000 rows: the z-scores
// (Â − A)/SE must have mean 0 ± 0.2 (4/√400) and standard deviation
// 1 ± 0.15 (4·1/√800 plus the O(1/√n) finite-sample bias), which checks
// the fit's variance, not only its centre.
func TestFitSigmoidRecovers(t *testing.T) {
	const a, b = -1.5, 0.4
	r := rng.New(1)
	s, y := logistic(r, 20000, a, b, 1.5)
	g, err := FitSigmoid(s, y)
	if err != nil {
		t.Fatal(err)
	}
	seA, seB := standardErrors(s, a, b)
	if math.Abs(g.A-a) > 4*seA || math.Abs(g.B-b) > 4*seB {
		t.Errorf("fit A = %.5f, B = %.5f; true %v, %v with SE %.4f, %.4f", g.A, g.B, a, b, seA, seB)
	}
	const reps = 400
	var za, zb [reps]float64
	for k := range reps {
		s, y := logistic(r, 1000, a, b, 1.5)
		g, err := FitSigmoid(s, y)
		if err != nil {
			t.Fatal(err)
		}
		seA, seB := standardErrors(s, a, b)
		za[k], zb[k] = (g.A-a)/seA, (g.B-b)/seB
	}
	for name, z := range map[string][]float64{"A": za[:], "B": zb[:]} {
		var m, v float64
		for _, e := range z {
			m += e
		}
		m /= reps
		for _, e := range z {
			v += (e - m) * (e - m)
		}
		sd := math.Sqrt(v / (reps - 1))
		if math.Abs(m) > 0.2 || math.Abs(sd-1) > 0.15 {
			t.Errorf("%s: z-scores of %d replicates have mean %.3f and sd %.3f, want 0 ± 0.2 and 1 ± 0.15", name, reps, m, sd)
		}
	}
}

// naiveLoss is the cross-entropy against Platt's targets written out
// directly, with log p = −log(1 + e^z) and log(1 − p) = z − log(1 + e^z)
// for p = 1/(1 + e^z) (the test's |z| stay far below overflow).
func naiveLoss(s []float64, y []bool, a, b float64) float64 {
	var np, nn float64
	for _, v := range y {
		if v {
			np++
		} else {
			nn++
		}
	}
	var f float64
	for i, v := range s {
		t := 1 / (nn + 2)
		if y[i] {
			t = (np + 1) / (np + 2)
		}
		z := a*v + b
		lp := -math.Log1p(math.Exp(z))
		f -= t*lp + (1-t)*(z+lp)
	}
	return f
}

// golden returns the minimiser of a convex f on [lo, hi] by golden-section
// search down to an interval of tol.
func golden(f func(float64) float64, lo, hi, tol float64) float64 {
	phi := (math.Sqrt(5) - 1) / 2
	x1, x2 := hi-phi*(hi-lo), lo+phi*(hi-lo)
	f1, f2 := f(x1), f(x2)
	for hi-lo > tol {
		if f1 < f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - phi*(hi-lo)
			f1 = f(x1)
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + phi*(hi-lo)
			f2 = f(x2)
		}
	}
	return (lo + hi) / 2
}

// TestFitSigmoidBruteForce: the Newton fit equals a derivative-free
// minimisation of the same cross-entropy (written out independently):
// golden-section search over A of min_B F(A, B), itself a golden-section
// search over B (a partial minimum of a jointly convex function is
// convex), to 1e-6 — for overlapping classes, separable classes (where
// only Platt's targets keep A finite) and scores of a large scale.
func TestFitSigmoidBruteForce(t *testing.T) {
	r := rng.New(2)
	for _, c := range []struct {
		name         string
		a, b, spread float64
		separable    bool
		lo, hi       float64
	}{
		{"overlapping", -1.2, 0.3, 1, false, -10, 10},
		{"skewed", 2, -1.5, 0.7, false, -10, 10},
		{"separable", 0, 0, 1, true, -60, 60},
		{"large scale", -0.01, 0.2, 100, false, -1, 1},
	} {
		s, y := logistic(r, 400, c.a, c.b, c.spread)
		if c.separable {
			for i, v := range s {
				y[i] = v > 0.1
			}
		}
		g, err := FitSigmoid(s, y)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		minB := func(a float64) float64 {
			return golden(func(b float64) float64 { return naiveLoss(s, y, a, b) }, -60, 60, 1e-11)
		}
		a := golden(func(a float64) float64 { return naiveLoss(s, y, a, minB(a)) }, c.lo, c.hi, 1e-11)
		b := minB(a)
		t.Logf("%s: |ΔA| = %.2g, |ΔB| = %.2g", c.name, math.Abs(g.A-a), math.Abs(g.B-b))
		if math.Abs(g.A-a) > 1e-6*max(1, math.Abs(a)) || math.Abs(g.B-b) > 1e-6*max(1, math.Abs(b)) {
			t.Errorf("%s: Newton A = %.10g, B = %.10g; brute force %.10g, %.10g", c.name, g.A, g.B, a, b)
		}
	}
}

// TestFitSigmoidSklearn: on a small fixed problem the fit equals
// scikit-learn 1.2.1's _sigmoid_calibration, which minimises the same F by
// BFGS until the gradient's largest entry is below 1e-5 (so its 2-norm
// below 1.42e-5); at the minimum the Hessian here has smallest eigenvalue
// 2.67, so scikit-learn's answer is within 1.42e-5/2.67 = 5.3e-6 of the
// minimiser (to first order). Made by
//
//	from sklearn.calibration import _sigmoid_calibration
//	print(_sigmoid_calibration(s, y))   # s, y as below
func TestFitSigmoidSklearn(t *testing.T) {
	s := []float64{-2.1, -1.7, -1.5, -1.2, -0.9, -0.8, -0.5, -0.3, -0.2, 0.0, 0.1, 0.25, 0.4, 0.6, 0.7, 0.9, 1.1, 1.3, 1.6, 2.0, -1.0, 0.3, 1.4, -0.6}
	l := []int{0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 0}
	y := make([]bool, len(l))
	for i, v := range l {
		y[i] = v == 1
	}
	const skA, skB = -1.4630746766530158, 0.00028133543558408135
	g, err := FitSigmoid(s, y)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("|ΔA| = %.2g, |ΔB| = %.2g", math.Abs(g.A-skA), math.Abs(g.B-skB))
	if math.Hypot(g.A-skA, g.B-skB) > 5.3e-6 {
		t.Errorf("A = %.10g, B = %.10g; scikit-learn %.10g, %.10g", g.A, g.B, skA, skB)
	}
}

// TestProbabilities: calibrated probabilities are in [0, 1] and sum to one
// within the rounding of k exponentials, a sum and a division ((k+2)·ε),
// also for extreme scores; each is increasing in its class's score with
// the other scores fixed (A < 0 for informative scores; strictly until
// the sigmoid rounds to 1); for k = 2 the
// probabilities depend on score column 1 only.
func TestProbabilities(t *testing.T) {
	r := rng.New(3)
	for _, k := range []int{2, 3, 7} {
		n := 3000
		scores := mat.NewDense(n, k, nil)
		labels := make([]int, n)
		for i := range n {
			labels[i] = r.IntN(k)
			for c := range k {
				v := 0.3 * r.NormFloat64()
				if c == labels[i] {
					v += 1
				}
				scores.Set(i, c, v)
			}
		}
		if k == 2 {
			for i := range n {
				scores.Set(i, 0, 1-scores.At(i, 1)) // ridge on one-hot targets: s₀ + s₁ = 1
			}
		}
		p, err := Fit(scores, labels)
		if err != nil {
			t.Fatal(err)
		}
		for c, g := range p.Sigmoids {
			if !(g.A < 0) {
				t.Errorf("k=%d: sigmoid %d has A = %v, want < 0", k, c, g.A)
			}
		}
		test := mat.NewDense(200, k, nil)
		for i := range 200 {
			for c := range k {
				test.Set(i, c, 40*r.NormFloat64())
			}
		}
		test.Set(0, 0, 1e6)
		test.Set(1, k-1, -1e6)
		probs, err := p.Probabilities(test)
		if err != nil {
			t.Fatal(err)
		}
		tol := float64(k+2) * 0x1p-52
		for i := range 200 {
			var sum float64
			for _, v := range probs.RawRowView(i) {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("k=%d row %d: probability %v", k, i, v)
				}
				sum += v
			}
			if math.Abs(sum-1) > tol {
				t.Errorf("k=%d row %d: probabilities sum to 1%+.3g", k, i, sum-1)
			}
		}
		// Monotone in the class's own score.
		base := []float64{0.2, 0.5, -0.1, 0.9, 0.0, 0.3, 0.4}[:k]
		for c := range k {
			prev := -1.0
			for v := -3.0; v <= 4; v += 0.25 {
				row := append([]float64(nil), base...)
				row[c] = v
				if k == 2 {
					row[1-c] = 1 - v
				}
				pr, err := p.Probabilities(mat.NewDense(1, k, row))
				if err != nil {
					t.Fatal(err)
				}
				// Non-decreasing everywhere; strictly increasing over the
				// scores' bulk, before the sigmoid saturates in float64.
				if got := pr.At(0, c); got < prev || (got == prev && v <= 2) {
					t.Fatalf("k=%d class %d: probability %v at score %v, not above %v", k, c, got, v, prev)
				}
				prev = pr.At(0, c)
			}
		}
		if k == 2 {
			a, _ := p.Probabilities(mat.NewDense(1, 2, []float64{0.3, 0.6}))
			b, _ := p.Probabilities(mat.NewDense(1, 2, []float64{-5, 0.6}))
			if !mat.Equal(a, b) {
				t.Errorf("k=2: probabilities depend on score 0: %v, %v", mat.Formatted(a), mat.Formatted(b))
			}
			if want := p.Sigmoids[0].Prob(0.6); a.At(0, 1) != want {
				t.Errorf("k=2: P(1) = %v, the sigmoid %v", a.At(0, 1), want)
			}
		}
	}
}

// TestConstantScores: with every score equal only A·s + B is determined;
// the fit has A = 0 and the probability of the mean target.
func TestConstantScores(t *testing.T) {
	s := []float64{2, 2, 2, 2, 2}
	y := []bool{true, false, false, true, false}
	g, err := FitSigmoid(s, y)
	if err != nil {
		t.Fatal(err)
	}
	// targets 3/4 (twice) and 1/5 (three times): mean 0.42.
	if g.A != 0 || math.Abs(g.Prob(2)-0.42) > 1e-15 {
		t.Errorf("A = %v, P = %v; want 0 and 0.42", g.A, g.Prob(2))
	}
}

func TestErrors(t *testing.T) {
	two := mat.NewDense(3, 2, []float64{0, 1, 1, 0, 0.5, 0.5})
	for _, c := range []struct {
		name   string
		scores *mat.Dense
		labels []int
		want   string
	}{
		{"nil", nil, nil, "no scores"},
		{"sizes", two, []int{0, 1}, "3 rows of scores for 2 labels"},
		{"one class", mat.NewDense(2, 1, []float64{1, 2}), []int{0, 0}, "at least 2 classes"},
		{"label", two, []int{0, 1, 2}, "label 2 of row 2"},
		{"negative label", two, []int{0, -1, 1}, "label -1 of row 1"},
		{"empty class", mat.NewDense(3, 3, []float64{0, 1, 2, 1, 0, 2, 2, 1, 0}), []int{0, 2, 0}, "class 1 has no rows"},
		{"NaN", mat.NewDense(3, 2, []float64{0, math.NaN(), 1, 0, 0.5, 0.5}), []int{0, 1, 1}, "not finite"},
		{"Inf", mat.NewDense(3, 2, []float64{0, 1, 1, math.Inf(-1), 0.5, 0.5}), []int{0, 1, 1}, "not finite"},
	} {
		_, err := Fit(c.scores, c.labels)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := FitSigmoid([]float64{1, 2}, []bool{true}); err == nil {
		t.Error("FitSigmoid: no error for mismatched lengths")
	}
	if _, err := FitSigmoid([]float64{1, 2}, []bool{true, true}); err == nil || !strings.Contains(err.Error(), "needs both") {
		t.Errorf("FitSigmoid: one class: %v", err)
	}
	p := &Platt{Classes: 3, Sigmoids: []Sigmoid{{-1, 0}, {-1, 0}, {-1, 0}}}
	for _, c := range []struct {
		name   string
		p      *Platt
		scores *mat.Dense
		want   string
	}{
		{"width", p, two, "2 score columns for a calibration of 3"},
		{"NaN", p, mat.NewDense(1, 3, []float64{0, math.NaN(), 0}), "not finite"},
		{"sigmoids", &Platt{Classes: 2, Sigmoids: []Sigmoid{{-1, 0}, {-1, 0}}}, two, "2 sigmoids for 2 classes (want 1)"},
		{"classes", &Platt{Classes: 1, Sigmoids: []Sigmoid{{-1, 0}}}, two, "calibration of 1 classes"},
		{"parameter", &Platt{Classes: 2, Sigmoids: []Sigmoid{{math.Inf(1), 0}}}, two, "non-finite"},
	} {
		_, err := c.p.Probabilities(c.scores)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Probabilities %s: error %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := LogLoss(two, []int{0, 2, 1}); err == nil {
		t.Error("LogLoss: no error for a label out of range")
	}
	if _, err := ECE(two, []int{0, 1, 1}, 0); err == nil {
		t.Error("ECE: no error for 0 bins")
	}
	if _, err := ECE(two, []int{0, 1}, 15); err == nil {
		t.Error("ECE: no error for mismatched sizes")
	}
}

// TestMetrics: log-loss, ECE and softmax on hand-computed cases.
func TestMetrics(t *testing.T) {
	probs := mat.NewDense(4, 2, []float64{
		0.9, 0.1, // top 0.9, label 0: hit
		0.8, 0.2, // top 0.8, label 1: miss
		0.3, 0.7, // top 0.7, label 1: hit
		0.5, 0.5, // top 0.5 (class 0, first of ties), label 0: hit
	})
	labels := []int{0, 1, 1, 0}
	ll, err := LogLoss(probs, labels)
	if err != nil {
		t.Fatal(err)
	}
	if want := -(math.Log(0.9) + math.Log(0.2) + math.Log(0.7) + math.Log(0.5)) / 4; math.Abs(ll-want) > 1e-15 {
		t.Errorf("log-loss %v, want %v", ll, want)
	}
	// 2 bins: (0, 0.5] holds row 4 (acc 1, conf 0.5); (0.5, 1] rows 1-3
	// (acc 2/3, conf 0.8): ECE = (1/4)·0.5 + (3/4)·|2/3 − 0.8| = 0.225.
	ece, err := ECE(probs, labels, 2)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(ece-0.225) > 1e-15 {
		t.Errorf("ECE %v, want 0.225", ece)
	}
	// A zero probability is clipped at 1e-15.
	if ll, _ := LogLoss(mat.NewDense(1, 2, []float64{1, 0}), []int{1}); math.Abs(ll-15*math.Ln10) > 1e-12 {
		t.Errorf("clipped log-loss %v, want %v", ll, 15*math.Ln10)
	}
	sm := Softmax(mat.NewDense(1, 3, []float64{1000, 1000 + math.Log(2), 0}))
	// 1000 + log 2 is rounded to a multiple of 2⁻⁴³ ≈ 1.1e-13.
	if want := []float64{1.0 / 3, 2.0 / 3, 0}; math.Abs(sm.At(0, 0)-want[0]) > 2e-13 || math.Abs(sm.At(0, 1)-want[1]) > 2e-13 || sm.At(0, 2) != 0 {
		t.Errorf("softmax %v, want %v", sm.RawRowView(0), want)
	}
}

// naiveWeightedLoss is the weighted cross-entropy Σᵢ wᵢ·(term of
// naiveLoss), its prior counts N± counted over the rows of positive
// weight.
func naiveWeightedLoss(s []float64, y []bool, w []float64, a, b float64) float64 {
	var np, nn float64
	for i, v := range y {
		switch {
		case w[i] == 0:
		case v:
			np++
		default:
			nn++
		}
	}
	var f float64
	for i, v := range s {
		if w[i] == 0 {
			continue
		}
		t := 1 / (nn + 2)
		if y[i] {
			t = (np + 1) / (np + 2)
		}
		z := a*v + b
		lp := -math.Log1p(math.Exp(z))
		f -= w[i] * (t*lp + (1-t)*(z+lp))
	}
	return f
}

// TestFitSigmoidWeightedBruteForce: the weighted Newton fit equals a
// golden-section minimisation (as in TestFitSigmoidBruteForce) of the
// weighted cross-entropy written out directly, to 1e-6, for integer
// weights (with zeros), continuous weights and weights of a tiny scale;
// integer weights do not give the fit of repeated rows (the prior counts
// stay counts), and weights all 1 give FitSigmoid's bits.
func TestFitSigmoidWeightedBruteForce(t *testing.T) {
	r := rng.New(5)
	s, y := logistic(r, 300, -1.3, 0.4, 1)
	integer := make([]float64, len(s))
	continuous := make([]float64, len(s))
	tiny := make([]float64, len(s))
	for i := range s {
		integer[i] = float64(r.IntN(4)) // 0…3: a quarter of the rows drop out
		continuous[i] = 0.1 + 3*r.Float64()
		tiny[i] = 1e-9 * continuous[i]
	}
	for _, c := range []struct {
		name string
		w    []float64
	}{{"integer", integer}, {"continuous", continuous}, {"tiny", tiny}} {
		g, err := FitSigmoidWeighted(s, y, c.w)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The loss scaled to weights of mean about one, so that the
		// golden-section search's comparisons resolve as finely for every
		// scale (the minimiser does not depend on the scale).
		scale := 1 / c.w[0]
		f := func(a, b float64) float64 { return scale * naiveWeightedLoss(s, y, c.w, a, b) }
		minB := func(a float64) float64 {
			return golden(func(b float64) float64 { return f(a, b) }, -60, 60, 1e-11)
		}
		a := golden(func(a float64) float64 { return f(a, minB(a)) }, -10, 10, 1e-11)
		b := minB(a)
		t.Logf("%s: |ΔA| = %.2g, |ΔB| = %.2g", c.name, math.Abs(g.A-a), math.Abs(g.B-b))
		if math.Abs(g.A-a) > 1e-6*max(1, math.Abs(a)) || math.Abs(g.B-b) > 1e-6*max(1, math.Abs(b)) {
			t.Errorf("%s: Newton A = %.10g, B = %.10g; brute force %.10g, %.10g", c.name, g.A, g.B, a, b)
		}
	}
	// Repeated rows count in the prior; integer weights do not.
	var rs []float64
	var ry []bool
	for i, k := range integer {
		for range int(k) {
			rs, ry = append(rs, s[i]), append(ry, y[i])
		}
	}
	gw, err := FitSigmoidWeighted(s, y, integer)
	if err != nil {
		t.Fatal(err)
	}
	gr, err := FitSigmoid(rs, ry)
	if err != nil {
		t.Fatal(err)
	}
	if gw == gr {
		t.Errorf("integer weights give the fit of repeated rows %+v; the prior counts should differ", gr)
	}
	ones := make([]float64, len(s))
	for i := range ones {
		ones[i] = 1
	}
	g1, err := FitSigmoidWeighted(s, y, ones)
	if err != nil {
		t.Fatal(err)
	}
	if g0, _ := FitSigmoid(s, y); g1 != g0 {
		t.Errorf("weights all 1: %+v, unweighted %+v", g1, g0)
	}
	// A power-of-two scale of the weights divides out exactly.
	scaled := make([]float64, len(s))
	for i, v := range continuous {
		scaled[i] = 0x1p-600 * v
	}
	g2, err := FitSigmoidWeighted(s, y, scaled)
	if err != nil {
		t.Fatal(err)
	}
	if g3, _ := FitSigmoidWeighted(s, y, continuous); g2 != g3 {
		t.Errorf("weights scaled by 2⁻⁶⁰⁰: %+v, unscaled %+v", g2, g3)
	}
}

// TestZeroWeightIsNoRow: rows of weight zero — of either label, with any
// score, even NaN — leave the fit bit for bit as it is without them, for
// one sigmoid and for a calibration of three classes, where they would
// otherwise change the counts and the targets; weights all zero for a
// label, a weight that is negative, NaN or infinite, and weights of
// another length are errors.
func TestZeroWeightIsNoRow(t *testing.T) {
	r := rng.New(6)
	s, y := logistic(r, 200, -1, 0.2, 1)
	w := make([]float64, len(s))
	for i := range w {
		w[i] = 0.5 + r.Float64()
	}
	want, err := FitSigmoidWeighted(s, y, w)
	if err != nil {
		t.Fatal(err)
	}
	xs := append(append([]float64{5}, s[:100]...), append([]float64{math.NaN(), -4}, s[100:]...)...)
	xy := append(append([]bool{false}, y[:100]...), append([]bool{true, true}, y[100:]...)...)
	xw := append(append([]float64{0}, w[:100]...), append([]float64{0, 0}, w[100:]...)...)
	got, err := FitSigmoidWeighted(xs, xy, xw)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("with rows of weight zero %+v, without %+v", got, want)
	}

	const n, k = 600, 3
	scores := mat.NewDense(n, k, nil)
	labels := make([]int, n)
	weights := make([]float64, n)
	for i := range n {
		labels[i] = r.IntN(k)
		weights[i] = 0.5 + r.Float64()
		for c := range k {
			v := 0.4 * r.NormFloat64()
			if c == labels[i] {
				v++
			}
			scores.Set(i, c, v)
		}
	}
	base, err := FitWeighted(scores, labels, weights)
	if err != nil {
		t.Fatal(err)
	}
	// Append 60 rows of weight zero with scores that contradict their
	// labels.
	extra := mat.NewDense(n+60, k, nil)
	extra.Slice(0, n, 0, k).(*mat.Dense).Copy(scores)
	xl := append([]int(nil), labels...)
	xw = append([]float64(nil), weights...)
	for i := n; i < n+60; i++ {
		l := i % k
		xl = append(xl, l)
		xw = append(xw, 0)
		for c := range k {
			extra.Set(i, c, 3*float64((c+1)%k-l))
		}
	}
	ext, err := FitWeighted(extra, xl, xw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ext, base) {
		t.Errorf("with rows of weight zero %+v, without %+v", ext, base)
	}
	if unweighted, _ := Fit(extra, xl); reflect.DeepEqual(unweighted, base) {
		t.Error("the rows of weight zero do not change the unweighted fit; the test shows nothing")
	}

	for _, c := range []struct {
		name string
		w    []float64
		want string
	}{
		{"negative", []float64{1, -1, 1, 1}, "weight -1 of row 1"},
		{"NaN", []float64{1, 1, math.NaN(), 1}, "weight NaN of row 2"},
		{"Inf", []float64{math.Inf(1), 1, 1, 1}, "weight +Inf of row 0"},
		{"length", []float64{1, 1, 1}, "3 weights for 4"},
		{"no positive row", []float64{0, 1, 0, 1}, "0 positive and 2 negative rows of positive weight"},
	} {
		_, err := FitSigmoidWeighted([]float64{1, 2, 3, 4}, []bool{true, false, true, false}, c.w)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FitSigmoidWeighted %s: error %v, want %q", c.name, err, c.want)
		}
	}
	two := mat.NewDense(4, 2, []float64{0, 1, 1, 0, 0.5, 0.5, 0.2, 0.8})
	for _, c := range []struct {
		name string
		w    []float64
		want string
	}{
		{"length", []float64{1, 1}, "2 weights for 4 rows"},
		{"negative", []float64{1, 1, -2, 1}, "weight -2 of row 2"},
		{"empty class", []float64{1, 0, 1, 0}, "class 1 has no rows of positive weight"},
	} {
		_, err := FitWeighted(two, []int{0, 1, 0, 1}, c.w)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FitWeighted %s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestProbabilitiesOverflow: scores of ±1e300 with sigmoids steep enough
// that A·s overflows give distributions, not NaN: for k = 3 a class whose
// A·s + B is +Inf has probability 0 next to any finite one, and a row
// whose every class overflows is uniform; for k = 2 the sigmoid saturates
// to 0 and 1. With the ordinary sigmoids of a fit the same scores give
// one-hot rows.
func TestProbabilitiesOverflow(t *testing.T) {
	steep := &Platt{Classes: 3, Sigmoids: []Sigmoid{{A: -1e10, B: 0}, {A: -1e10, B: 1}, {A: -2, B: 0.5}}}
	scores := mat.NewDense(4, 3, []float64{
		-1e300, -1e300, -1e300, // A·s + B = +Inf, +Inf, 2e300
		-1e300, -1e300, 1e300, // +Inf, +Inf, −2e300: class 2's q = 1
		1e300, -1e300, -1e300, // −Inf, +Inf, 2e300: class 0's q = 1
		-1e300, 1e300, -1e300, // +Inf, −Inf, 2e300: class 1's q = 1
	})
	p, err := steep.Probabilities(scores)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0, 0, 1}, {0, 0, 1}, {1, 0, 0}, {0, 1, 0}}
	// Row 0: classes 0 and 1 are at the floor, class 2's log q = −2e300
	// above it: one-hot on class 2.
	for i, w := range want {
		for c := range w {
			if got := p.At(i, c); got != w[c] {
				t.Errorf("row %d: probabilities %v, want %v", i, p.RawRowView(i), w)
				break
			}
		}
	}
	// Every A·s + B = +Inf: without the floor every log q is −Inf and
	// the row NaN.
	all := &Platt{Classes: 3, Sigmoids: []Sigmoid{{A: -1e10, B: 0}, {A: -1e10, B: 0}, {A: 1e10, B: 0}}}
	u, err := all.Probabilities(mat.NewDense(1, 3, []float64{-1e300, -1e300, 1e300}))
	if err != nil {
		t.Fatal(err)
	}
	for c := range 3 {
		if got := u.At(0, c); !(math.Abs(got-1.0/3) <= 1e-16) {
			t.Errorf("every class overflowing: probabilities %v, want uniform", u.RawRowView(0))
			break
		}
	}
	bin := &Platt{Classes: 2, Sigmoids: []Sigmoid{{A: -1e10, B: 0}}}
	b, err := bin.Probabilities(mat.NewDense(2, 2, []float64{0, -1e300, 0, 1e300}))
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(b, mat.NewDense(2, 2, []float64{1, 0, 0, 1})) {
		t.Errorf("k = 2: probabilities %v", mat.Formatted(b))
	}
	plain := &Platt{Classes: 3, Sigmoids: []Sigmoid{{A: -1.5, B: 0.1}, {A: -1.2, B: 0}, {A: -2, B: 0.3}}}
	q, err := plain.Probabilities(mat.NewDense(2, 3, []float64{1e300, -1e300, -1e300, -1e300, -1e300, 1e300}))
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(q, mat.NewDense(2, 3, []float64{1, 0, 0, 0, 0, 1})) {
		t.Errorf("ordinary sigmoids: probabilities %v", mat.Formatted(q))
	}
}

// TestLogLossChecks: LogLoss and ECE refuse entries that are no
// probabilities (NaN, negative, above 1 beyond 10⁻¹² of rounding, in any
// column) instead of returning NaN or clipping them, and accept 1 + 10⁻¹³.
func TestLogLossChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		row  []float64
		want string
	}{
		{"NaN", []float64{math.NaN(), 0.5}, "probability NaN of row 0, class 0"},
		{"NaN elsewhere", []float64{0.5, math.NaN()}, "probability NaN of row 0, class 1"},
		{"negative", []float64{-0.1, 1.1}, "probability -0.1"},
		{"above one", []float64{0, 1 + 1e-9}, "not in [0, 1]"},
		{"Inf", []float64{math.Inf(1), 0}, "probability +Inf"},
	} {
		probs := mat.NewDense(1, 2, c.row)
		if _, err := LogLoss(probs, []int{0}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LogLoss %s: error %v, want %q", c.name, err, c.want)
		}
		if _, err := ECE(probs, []int{0}, 15); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ECE %s: error %v, want %q", c.name, err, c.want)
		}
	}
	ll, err := LogLoss(mat.NewDense(1, 2, []float64{1 + 1e-13, 0}), []int{0})
	if err != nil || ll != 0 {
		t.Errorf("LogLoss of 1 + 1e-13: %v, %v; want 0 (clipped to 1)", ll, err)
	}
}
