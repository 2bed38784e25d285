package train

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFitCurve recovers an exact logarithmic curve (examples = step·batch)
// and its crossing of a target, and refuses what it cannot fit.
func TestFitCurve(t *testing.T) {
	const a, b, batch = -0.5, 0.08, 32
	var h History
	for s := 250; s <= 5000; s += 250 {
		h.EvalStep = append(h.EvalStep, s)
		h.EvalAccuracy = append(h.EvalAccuracy, a+b*math.Log(float64(s*batch)))
		h.EvalLoss = append(h.EvalLoss, 1)
	}
	f, err := FitCurve(h, batch, 2500)
	if err != nil {
		t.Fatal(err)
	}
	// The data are exact: the fit is exact to rounding (terms of order 10,
	// 11 points).
	if math.Abs(f.A-a) > 1e-12 || math.Abs(f.B-b) > 1e-13 || math.Abs(f.R2-1) > 1e-12 {
		t.Errorf("fit %+v, want A %v, B %v, R² 1", f, a, b)
	}
	if f.Points != 11 || f.From != 2500*batch {
		t.Errorf("fit of %d points from %d examples, want 11 from %d", f.Points, f.From, 2500*batch)
	}
	want := math.Exp((0.5521 - a) / b)
	if got, ok := f.ExamplesFor(0.5521); !ok || math.Abs(got-want) > 1e-9*want {
		t.Errorf("ExamplesFor = %v, %v, want %v", got, ok, want)
	}
	if _, ok := (CurveFit{A: 0.3, B: -0.01}).ExamplesFor(0.5); ok {
		t.Error("a falling curve reaches its target")
	}
	if _, err := FitCurve(h, batch, 4600); err == nil {
		t.Error("fit of two points: no error")
	}
	if _, err := FitCurve(h, 0, 0); err == nil {
		t.Error("batch 0: no error")
	}
	if acc, ok := PaperListOps("fd-tnn"); !ok || acc != 0.5521 {
		t.Errorf("PaperListOps(fd-tnn) = %v, %v", acc, ok)
	}
	if _, ok := PaperListOps("transformer"); ok {
		t.Error("PaperListOps(transformer): listed")
	}
}

// TestWriteCurveTable writes the row of a listed kind with a history and
// skips a kind the paper does not list.
func TestWriteCurveTable(t *testing.T) {
	h := History{EvalStep: []int{100, 200, 300, 400}, EvalAccuracy: []float64{0.2, 0.3, 0.35, 0.38}, EvalLoss: []float64{2, 2, 2, 2}}
	reps := []JobReport{
		{Kind: "fd-tnn", Length: 512, Batch: 10, Steps: 400, Result: &Result{History: &h}},
		{Kind: "transformer", Length: 512, Batch: 10, Steps: 400, Result: &Result{History: &h}},
	}
	var b strings.Builder
	if err := WriteCurveTable(&b, []string{"a", "b"}, reps); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	// 0.9·0.38 = 0.342: the late phase starts at step 300 (0.35); the fit
	// takes at least the last three evaluations, from step 200.
	if len(lines) != 3 || !strings.HasPrefix(lines[2], "| a | 512 | 4e+03 | 38.0 % | 2000 |") || !strings.Contains(lines[2], "55.21 %") {
		t.Errorf("table:\n%s", b.String())
	}
	if err := WriteCurveTable(&b, []string{"a"}, reps); err == nil {
		t.Error("one name for two reports: no error")
	}
}

// TestCurveSeries puts a run's moving-average loss and evaluations at
// step·scale, and SavePlot draws curves against the examples seen.
func TestCurveSeries(t *testing.T) {
	res := &Result{History: &History{LossFrom: 10, Loss: []float64{4, 2, 3, 1}, EvalStep: []int{12, 14}, EvalAccuracy: []float64{0.2, 0.4}, EvalLoss: []float64{1, 1}}}
	loss, acc := curveSeries(Curve{Name: "r", Res: res}, 2, 8)
	wantX, wantY := []float64{96, 104, 112}, []float64{3, 2.5, 2}
	if len(loss.X) != 3 {
		t.Fatalf("loss series %v", loss)
	}
	for i := range wantX {
		if loss.X[i] != wantX[i] || loss.Y[i] != wantY[i] {
			t.Errorf("loss point %d = (%v, %v), want (%v, %v)", i, loss.X[i], loss.Y[i], wantX[i], wantY[i])
		}
	}
	if len(acc.X) != 2 || acc.X[0] != 96 || acc.X[1] != 112 || acc.Y[1] != 0.4 {
		t.Errorf("accuracy series %v", acc)
	}
	dir := t.TempDir()
	if err := SavePlot(filepath.Join(dir, "l.png"), filepath.Join(dir, "a.png"), "t", []Curve{{Name: "r", Res: res, Batch: 8}}, 2); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"l.png", "a.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestLateStep finds the first evaluation within a fraction of the last.
func TestLateStep(t *testing.T) {
	h := History{EvalStep: []int{1, 2, 3, 4, 5}, EvalAccuracy: []float64{0.15, 0.16, 0.30, 0.33, 0.34}}
	for _, c := range []struct {
		frac float64
		want int
	}{{0.9, 4}, {0.85, 3}, {0.4, 1}, {1, 5}} {
		if got := LateStep(h, c.frac); got != c.want {
			t.Errorf("LateStep(%v) = %d, want %d", c.frac, got, c.want)
		}
	}
	if got := LateStep(History{}, 0.9); got != 0 {
		t.Errorf("LateStep of no evaluations = %d", got)
	}
}
