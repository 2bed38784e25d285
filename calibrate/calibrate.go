package calibrate

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/parallel"
)

// Sigmoid is one Platt sigmoid, P(positive | s) = 1/(1 + exp(A·s + B)).
type Sigmoid struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// Prob returns the sigmoid's probability of the positive class for score
// s, without overflow for any finite A·s + B.
func (g Sigmoid) Prob(s float64) float64 {
	return 1 / (1 + math.Exp(g.A*s+g.B))
}

// logProb returns log P(positive | s) = −log(1 + exp(A·s + B)).
func (g Sigmoid) logProb(s float64) float64 {
	return -softplus(g.A*s + g.B)
}

// softplus returns log(1 + exp(z)) without overflow.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// The constants of Lin, Lin & Weng's Newton method (see the package
// documentation).
const (
	maxIter = 100   // Newton iterations
	minStep = 1e-10 // shortest step of the line search
	sigma   = 1e-12 // added to the Hessian's diagonal
	stepTol = 1e-12 // relative change of A and B that ends the iteration
	decTol  = 1e-12 // Newton decrement ∇FᵀH⁻¹∇F, relative to F, that ends it
)

// FitSigmoid fits a Platt sigmoid to the decision scores of rows whose
// label is positive[i], by Newton's method on the cross-entropy against
// Platt's regularised targets (see the package documentation). It returns
// an error when the lengths differ, a score is not finite, there are no
// positive or no negative rows, or the iteration does not converge. When
// every score is the same only A·s + B is determined, and FitSigmoid
// returns A = 0 with the B of the mean target.
func FitSigmoid(scores []float64, positive []bool) (Sigmoid, error) {
	return FitSigmoidWeighted(scores, positive, nil)
}

// FitSigmoidWeighted is FitSigmoid with row weights (nil: every row
// weighs 1): row i's term of the cross-entropy, and so of its gradient
// and Hessian, is multiplied by weights[i], as scikit-learn's
// _sigmoid_calibration does with sample_weight. A row of weight zero is
// no row: it is dropped, its score unchecked. Platt's prior counts N₊ and
// N₋, which set the targets, are the numbers of rows of positive weight
// of each label, not their weights (scikit-learn up to 1.2 counts the
// labels, unweighted). The weights are rescaled to mean one over the rows
// of positive weight, which leaves the minimiser where it is and makes
// the stopping tests independent of the weights' scale. A weight that is
// negative, NaN or infinite, weights of another length than the scores,
// and weights that leave no positive or no negative row are errors.
func FitSigmoidWeighted(scores []float64, positive []bool, weights []float64) (Sigmoid, error) {
	if len(scores) != len(positive) {
		return Sigmoid{}, fmt.Errorf("calibrate: %d scores for %d labels", len(scores), len(positive))
	}
	if weights != nil && len(weights) != len(scores) {
		return Sigmoid{}, fmt.Errorf("calibrate: %d weights for %d scores", len(weights), len(scores))
	}
	if err := checkWeights(weights); err != nil {
		return Sigmoid{}, err
	}
	var np, nn float64
	for i, s := range scores {
		if weights != nil && weights[i] == 0 {
			continue
		}
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return Sigmoid{}, fmt.Errorf("calibrate: score %v of row %d is not finite", s, i)
		}
		if positive[i] {
			np++
		} else {
			nn++
		}
	}
	if np == 0 || nn == 0 {
		what := "rows"
		if weights != nil {
			what = "rows of positive weight"
		}
		return Sigmoid{}, fmt.Errorf("calibrate: %v positive and %v negative %s; a sigmoid needs both", np, nn, what)
	}
	var w []float64
	if weights != nil {
		scores, positive, w = compact(scores, positive, weights)
	}
	hi, lo := (np+1)/(np+2), 1/(nn+2)
	if constant(scores) {
		// F depends on A·s + B alone: A = 0 and the B whose probability
		// is the weighted mean target.
		wp, wn := np, nn
		if w != nil {
			wp, wn = 0, 0
			for i, v := range w {
				if positive[i] {
					wp += v
				} else {
					wn += v
				}
			}
		}
		t := (wp*hi + wn*lo) / (wp + wn)
		return Sigmoid{A: 0, B: math.Log((1 - t) / t)}, nil
	}
	t := [2]float64{lo, hi} // indexed by the label
	a, b := 0.0, math.Log((nn+1)/(np+1))
	e := eval(scores, positive, w, t, a, b)
	for range maxIter {
		if e.g1 == 0 && e.g2 == 0 {
			return Sigmoid{A: a, B: b}, nil
		}
		det := e.h11*e.h22 - e.h21*e.h21
		if !(det > 0) {
			return Sigmoid{}, fmt.Errorf("calibrate: singular Hessian (determinant %v)", det)
		}
		da := -(e.h22*e.g1 - e.h21*e.g2) / det
		db := -(-e.h21*e.g1 + e.h11*e.g2) / det
		if math.Abs(da) <= stepTol*(1+math.Abs(a)) && math.Abs(db) <= stepTol*(1+math.Abs(b)) {
			return Sigmoid{A: a + da, B: b + db}, nil
		}
		gd := e.g1*da + e.g2*db
		if -gd <= decTol*(1+math.Abs(e.f)) {
			// F is within −gd/2 of its minimum, too close for the line
			// search to see a decrease through F's rounding: the full
			// Newton step, converging quadratically, ends the fit.
			return Sigmoid{A: a + da, B: b + db}, nil
		}
		step := 1.0
		for ; step >= minStep; step /= 2 {
			na, nb := a+step*da, b+step*db
			if ne := eval(scores, positive, w, t, na, nb); ne.f < e.f+1e-4*step*gd {
				a, b, e = na, nb, ne
				break
			}
		}
		if step < minStep {
			// No step decreases F: it is at its rounding floor.
			return Sigmoid{A: a, B: b}, nil
		}
	}
	return Sigmoid{}, fmt.Errorf("calibrate: the sigmoid fit did not converge in %d Newton iterations", maxIter)
}

// checkWeights returns an error naming the first weight that is negative,
// NaN or infinite.
func checkWeights(weights []float64) error {
	for i, v := range weights {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("calibrate: weight %v of row %d is not a finite non-negative number", v, i)
		}
	}
	return nil
}

// compact returns the scores and labels of the rows of positive weight
// with their weights rescaled to mean one: divided by the largest first,
// so that neither the sum nor the quotient overflows, then by their
// mean. Weights all equal become exactly 1.
func compact(scores []float64, positive []bool, weights []float64) ([]float64, []bool, []float64) {
	top := 0.0
	for _, v := range weights {
		top = math.Max(top, v)
	}
	var s []float64
	var y []bool
	var w []float64
	var sum float64
	for i, v := range weights {
		if v > 0 {
			s, y = append(s, scores[i]), append(y, positive[i])
			w = append(w, v/top)
			sum += v / top
		}
	}
	scale := float64(len(w)) / sum
	for i := range w {
		w[i] *= scale
	}
	return s, y, w
}

// newton holds F, its gradient and its Hessian (σ added to the diagonal)
// at one point (A, B).
type newton struct {
	f, g1, g2, h11, h22, h21 float64
}

// eval returns F and its derivatives at (a, b) in one pass over the rows,
// with one exponential and one logarithm per row: for z = a·s + b and
// e = exp(−|z|), the term of F is t·z + log(1 + e) (z ≥ 0) or
// (t − 1)·z + log(1 + e) (z < 0), and p = 1/(1 + exp(z)) and 1 − p are
// e/(1 + e) and 1/(1 + e) in the order the sign of z gives. Each row's
// terms are multiplied by its weight w[i] (1 when w is nil).
func eval(scores []float64, positive []bool, w []float64, t [2]float64, a, b float64) newton {
	r := newton{h11: sigma, h22: sigma}
	for i, s := range scores {
		ti := t[0]
		if positive[i] {
			ti = t[1]
		}
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		z := a*s + b
		e := math.Exp(-math.Abs(z))
		l := math.Log1p(e)
		var p, q float64
		if z >= 0 {
			r.f += wi * (ti*z + l)
			p, q = e/(1+e), 1/(1+e)
		} else {
			r.f += wi * ((ti-1)*z + l)
			p, q = 1/(1+e), e/(1+e)
		}
		d2 := wi * p * q
		r.h11 += s * s * d2
		r.h22 += d2
		r.h21 += s * d2
		d1 := wi * (ti - p)
		r.g1 += s * d1
		r.g2 += d1
	}
	return r
}

// constant reports whether every score is the same.
func constant(scores []float64) bool {
	for _, s := range scores {
		if s != scores[0] {
			return false
		}
	}
	return true
}

// Platt is a fitted sigmoid calibration of k-class decision scores: for
// k > 2 one sigmoid per class, fitted one-vs-rest on the class's score
// column; for k = 2 one sigmoid, of class 1 on score column 1.
type Platt struct {
	// Classes is the number of classes k (≥ 2).
	Classes int `json:"classes"`
	// Sigmoids holds k sigmoids, one per class, or for k = 2 the one of
	// class 1.
	Sigmoids []Sigmoid `json:"sigmoids"`
}

// Fit fits the calibration of the n×k decision scores of rows with the
// given class labels (0…k−1), k ≥ 2. A class with no rows, a label out of
// range, a non-finite score or mismatched sizes is an error.
func Fit(scores *mat.Dense, labels []int) (*Platt, error) {
	return FitWeighted(scores, labels, nil)
}

// FitWeighted is Fit with row weights (nil: every row weighs 1), each
// sigmoid fitted by FitSigmoidWeighted: a row of weight zero is no row,
// and every class needs a row of positive weight. A weight that is
// negative, NaN or infinite, or weights of another length than the rows,
// is an error.
func FitWeighted(scores *mat.Dense, labels []int, weights []float64) (*Platt, error) {
	if scores == nil {
		return nil, errors.New("calibrate: no scores")
	}
	n, k := scores.Dims()
	if n != len(labels) {
		return nil, fmt.Errorf("calibrate: %d rows of scores for %d labels", n, len(labels))
	}
	if weights != nil && len(weights) != n {
		return nil, fmt.Errorf("calibrate: %d weights for %d rows", len(weights), n)
	}
	if k < 2 {
		return nil, fmt.Errorf("calibrate: %d score columns; calibration needs at least 2 classes", k)
	}
	if err := checkWeights(weights); err != nil {
		return nil, err
	}
	counts := make([]int, k)
	for i, l := range labels {
		if l < 0 || l >= k {
			return nil, fmt.Errorf("calibrate: label %d of row %d is not a class of %d", l, i, k)
		}
		if weights == nil || weights[i] > 0 {
			counts[l]++
		}
	}
	for c, m := range counts {
		if m == 0 {
			if weights != nil {
				return nil, fmt.Errorf("calibrate: class %d has no rows of positive weight; every class needs calibration rows", c)
			}
			return nil, fmt.Errorf("calibrate: class %d has no rows; every class needs calibration rows", c)
		}
	}
	classes := make([]int, 0, k)
	if k == 2 {
		classes = append(classes, 1)
	} else {
		for c := range k {
			classes = append(classes, c)
		}
	}
	p := &Platt{Classes: k, Sigmoids: make([]Sigmoid, len(classes))}
	errs := make([]error, len(classes))
	cols := make([][]float64, parallel.Workers(len(classes)))
	pos := make([][]bool, len(cols))
	parallel.Tasks(len(classes), func(w, j int) {
		if cols[w] == nil {
			cols[w], pos[w] = make([]float64, n), make([]bool, n)
		}
		c := classes[j]
		mat.Col(cols[w], c, scores)
		for i, l := range labels {
			pos[w][i] = l == c
		}
		g, err := FitSigmoidWeighted(cols[w], pos[w], weights)
		if err != nil {
			errs[j] = fmt.Errorf("class %d: %w", c, err)
			return
		}
		p.Sigmoids[j] = g
	})
	if err := firstError(errs); err != nil {
		return nil, err
	}
	return p, nil
}

// firstError returns the first non-nil error of errs.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Validate returns an error unless p is a calibration of k ≥ 2 classes
// with the right number of finite sigmoids.
func (p *Platt) Validate() error {
	if p.Classes < 2 {
		return fmt.Errorf("calibrate: calibration of %d classes (want at least 2)", p.Classes)
	}
	want := p.Classes
	if want == 2 {
		want = 1
	}
	if len(p.Sigmoids) != want {
		return fmt.Errorf("calibrate: %d sigmoids for %d classes (want %d)", len(p.Sigmoids), p.Classes, want)
	}
	for _, g := range p.Sigmoids {
		if math.IsNaN(g.A) || math.IsInf(g.A, 0) || math.IsNaN(g.B) || math.IsInf(g.B, 0) {
			return errors.New("calibrate: non-finite sigmoid parameter")
		}
	}
	return nil
}

// Probabilities returns the n×k calibrated class probabilities of n×k
// decision scores; each row sums to one up to rounding. A score matrix of
// another width or a non-finite score is an error. For k > 2 each class's
// log-probability log qᶜ is floored at −MaxFloat64 before the log-sum-exp,
// so that scores whose A·s + B overflows give a distribution, not NaN:
// the classes at the floor have probability zero next to any class above
// it and share the row equally when every class is at the floor (as
// scikit-learn falls back to the uniform distribution when every qᶜ
// underflows).
func (p *Platt) Probabilities(scores *mat.Dense) (*mat.Dense, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	n, k := scores.Dims()
	if k != p.Classes {
		return nil, fmt.Errorf("calibrate: %d score columns for a calibration of %d classes", k, p.Classes)
	}
	out := mat.NewDense(n, k, nil)
	for i := range n {
		s, row := scores.RawRowView(i), out.RawRowView(i)
		for _, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("calibrate: score %v of row %d is not finite", v, i)
			}
		}
		if k == 2 {
			g := p.Sigmoids[0]
			z := g.A*s[1] + g.B
			row[1] = 1 / (1 + math.Exp(z))
			row[0] = 1 / (1 + math.Exp(-z))
			continue
		}
		top := math.Inf(-1)
		for c, g := range p.Sigmoids {
			// Floored at −MaxFloat64: where A·s + B overflows every
			// log-probability would be −Inf, and −Inf − (−Inf) NaN.
			row[c] = math.Max(g.logProb(s[c]), -math.MaxFloat64)
			top = math.Max(top, row[c])
		}
		var sum float64
		for c, v := range row {
			row[c] = math.Exp(v - top)
			sum += row[c]
		}
		for c := range row {
			row[c] /= sum
		}
	}
	return out, nil
}

// Softmax returns the n×k probabilities exp(s_c)/Σⱼ exp(s_j) of decision
// scores (computed with the row maximum subtracted), the uncalibrated
// baseline that calibration is measured against.
func Softmax(scores *mat.Dense) *mat.Dense {
	n, k := scores.Dims()
	out := mat.NewDense(n, k, nil)
	for i := range n {
		s, row := scores.RawRowView(i), out.RawRowView(i)
		top := math.Inf(-1)
		for _, v := range s {
			top = math.Max(top, v)
		}
		var sum float64
		for c, v := range s {
			row[c] = math.Exp(v - top)
			sum += row[c]
		}
		for c := range row {
			row[c] /= sum
		}
	}
	return out
}

// probSlack is the rounding above 1 that LogLoss and ECE accept in a
// probability.
const probSlack = 1e-12

// checkProbs returns an error unless probs has one row per label, every
// label is a column of it and every entry is a probability: in [0, 1],
// up to probSlack above 1 (NaN is not).
func checkProbs(probs *mat.Dense, labels []int) error {
	n, k := probs.Dims()
	if n != len(labels) {
		return fmt.Errorf("calibrate: %d rows of probabilities for %d labels", n, len(labels))
	}
	if n == 0 {
		return errors.New("calibrate: no rows")
	}
	for i, l := range labels {
		if l < 0 || l >= k {
			return fmt.Errorf("calibrate: label %d of row %d is not a class of %d", l, i, k)
		}
		for c, v := range probs.RawRowView(i) {
			if !(v >= 0 && v <= 1+probSlack) {
				return fmt.Errorf("calibrate: probability %v of row %d, class %d is not in [0, 1]", v, i, c)
			}
		}
	}
	return nil
}

// logLossEps is the clip of LogLoss's probabilities.
const logLossEps = 1e-15

// LogLoss returns the mean of −log p(true class) over the rows of n×k
// probabilities, each probability clipped to [10⁻¹⁵, 1] (so a zero
// probability of the true class costs 34.5, not infinity). An entry that
// is not a probability — NaN, negative or above 1 by more than 10⁻¹² of
// rounding — is an error, not clipped: clipping would hide a broken
// input (a NaN would otherwise make the mean NaN).
func LogLoss(probs *mat.Dense, labels []int) (float64, error) {
	if err := checkProbs(probs, labels); err != nil {
		return 0, err
	}
	var sum float64
	for i, l := range labels {
		sum -= math.Log(math.Min(math.Max(probs.At(i, l), logLossEps), 1))
	}
	return sum / float64(len(labels)), nil
}

// ECE returns the expected calibration error of n×k probabilities with
// the given number of equal-width bins of the top-class probability
// (Guo et al. 2017; 15 bins is their setting): Σ_m (|B_m|/n)·|acc(B_m) −
// conf(B_m)|, where bin m holds the rows whose top probability lies in
// (m/M, (m+1)/M] (the first bin includes 0), acc is the fraction of its
// rows whose top class (the first of ties) is the label and conf their
// mean top probability. An entry that is not a probability is an error,
// as for LogLoss.
func ECE(probs *mat.Dense, labels []int, bins int) (float64, error) {
	if err := checkProbs(probs, labels); err != nil {
		return 0, err
	}
	if bins < 1 {
		return 0, fmt.Errorf("calibrate: %d bins (want at least 1)", bins)
	}
	count := make([]float64, bins)
	hit := make([]float64, bins)
	conf := make([]float64, bins)
	for i, l := range labels {
		row := probs.RawRowView(i)
		best := 0
		for c, v := range row {
			if v > row[best] {
				best = c
			}
		}
		p := row[best]
		m := min(max(int(math.Ceil(p*float64(bins)))-1, 0), bins-1)
		count[m]++
		conf[m] += p
		if best == l {
			hit[m]++
		}
	}
	var ece float64
	for m := range bins {
		ece += math.Abs(hit[m] - conf[m]) // = |B_m|·|acc − conf|
	}
	return ece / float64(len(labels)), nil
}
