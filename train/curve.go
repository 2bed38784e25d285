package train

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// CurveFit is the least-squares line acc ≈ A + B·ln(examples) through a
// run's evaluation accuracies against the training examples seen: a
// crude model of a learning curve, used to say how many examples a run
// would need to reach a published accuracy if the curve went on as it
// did. It ignores the learning-rate schedule (a cosine schedule flattens
// the end of a run) and any plateau, so its extrapolations are rough
// orders of magnitude, not predictions.
type CurveFit struct {
	A, B   float64 // intercept, and accuracy gained per e-fold of examples
	R2     float64 // coefficient of determination of the fit
	Points int     // evaluation points fitted
	From   int     // examples seen at the first fitted point
}

// FitCurve fits CurveFit to the evaluations of h at steps ≥ fromStep,
// examples = step·batch. It returns an error for a batch below 1 or
// fewer than three points.
func FitCurve(h History, batch, fromStep int) (CurveFit, error) {
	if batch < 1 {
		return CurveFit{}, fmt.Errorf("train: curve fit with batch %d", batch)
	}
	var xs, ys []float64
	for i, s := range h.EvalStep {
		if s >= fromStep {
			xs = append(xs, math.Log(float64(s)*float64(batch)))
			ys = append(ys, h.EvalAccuracy[i])
		}
	}
	if len(xs) < 3 {
		return CurveFit{}, fmt.Errorf("train: curve fit needs at least 3 evaluations from step %d, have %d", fromStep, len(xs))
	}
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return CurveFit{}, errors.New("train: curve fit over a single step")
	}
	f := CurveFit{B: sxy / sxx, Points: len(xs), From: int(math.Round(math.Exp(xs[0])))}
	f.A = my - f.B*mx
	if syy > 0 {
		f.R2 = sxy * sxy / (sxx * syy)
	}
	return f, nil
}

// ExamplesFor returns the examples at which the fitted line reaches the
// accuracy acc (a fraction), and false when it never does (a slope that
// is not positive).
func (f CurveFit) ExamplesFor(acc float64) (float64, bool) {
	if !(f.B > 0) {
		return 0, false
	}
	return math.Exp((acc - f.A) / f.B), true
}

// PaperListOps returns the ListOps test accuracy (a fraction) that the
// SKI-TNN paper reports for a model kind (its Table 2, Long Range Arena:
// TNN 47.33 %, SKI-TNN 45.31 %, FD-TNN 55.21 %), and false for the kinds
// it does not list.
func PaperListOps(kind string) (float64, bool) {
	switch kind {
	case "tnn":
		return 0.4733, true
	case "ski-tnn":
		return 0.4531, true
	case "fd-tnn":
		return 0.5521, true
	}
	return 0, false
}

// LateStep returns the step of the first evaluation of h whose accuracy
// reaches frac of the last evaluation's: where a run's curve enters its
// late phase, after any plateau at the class prior and the climb out of
// it (fitting across that climb would extrapolate its steep slope). It
// returns 0 for a history without evaluations.
func LateStep(h History, frac float64) int {
	n := len(h.EvalAccuracy)
	if n == 0 {
		return 0
	}
	last := h.EvalAccuracy[n-1]
	for i, a := range h.EvalAccuracy {
		if a >= frac*last {
			return h.EvalStep[i]
		}
	}
	return h.EvalStep[n-1]
}

// WriteCurveTable writes, for each report whose model the SKI-TNN paper
// lists (PaperListOps) and whose result has a history, the CurveFit of
// its late evaluations (from LateStep(h, 0.9), and at least the last
// three) and the examples at which the fit reaches the paper's accuracy,
// as a Markdown table; names label the rows (one per report, e.g. the
// files' names).
func WriteCurveTable(w io.Writer, names []string, reports []JobReport) error {
	if len(names) != len(reports) {
		return fmt.Errorf("train: %d names for %d reports", len(names), len(reports))
	}
	var b strings.Builder
	b.WriteString("| run | L | examples seen | last evaluation | fit from | gain per e-fold of examples | R² | paper | examples to reach it (× this run's) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for i, r := range reports {
		paper, ok := PaperListOps(r.Kind)
		if !ok || r.Result == nil || r.Result.History == nil || r.Batch < 1 || len(r.Result.History.EvalStep) == 0 {
			continue
		}
		h := *r.Result.History
		from := LateStep(h, 0.9)
		if n := len(h.EvalStep); n >= 3 {
			from = min(from, h.EvalStep[n-3])
		}
		f, err := FitCurve(h, r.Batch, from)
		if err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
		seen := float64(r.Steps) * float64(r.Batch)
		reach := "never (slope ≤ 0)"
		if ex, ok := f.ExamplesFor(paper); ok {
			reach = fmt.Sprintf("%.3g (%.3g×)", ex, ex/seen)
		}
		last := h.EvalAccuracy[len(h.EvalAccuracy)-1]
		fmt.Fprintf(&b, "| %s | %d | %.3g | %.1f %% | %d | %.2f points | %.2f | %.2f %% | %s |\n", names[i], r.Length, seen,
			100*last, f.From, 100*f.B, f.R2, 100*paper, reach)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
