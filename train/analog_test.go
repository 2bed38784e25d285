package train

import (
	"context"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/analog"
	"github.com/kernelkit/kernelkit/arch"
)

// TestEvaluateAnalog trains a toy performer on the native engine and
// checks EvaluateAnalog's wiring: the same hardware gives the same bits
// twice, the PCM emulation moves the loss away from the digital one (the
// projections do go through the crossbars), the model evaluates as before
// afterwards, and the cases it cannot handle are refused with an error.
func TestEvaluateAnalog(t *testing.T) {
	data := toyData(t, 96, 2)
	train, test := data[:64], data[64:]
	cfg := toyConfig(arch.KindPerformer)
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Fit(context.Background(), train, nil); err != nil {
		t.Fatal(err)
	}
	acc0, loss0, err := tr.Evaluate(test)
	if err != nil {
		t.Fatal(err)
	}
	run := func(hw analog.Config) (float64, float64) {
		t.Helper()
		acc, loss, err := tr.EvaluateAnalog(test, AnalogConfig{Hardware: hw, Calibration: train[:32], Rows: 500})
		if err != nil {
			t.Fatal(err)
		}
		return acc, loss
	}
	a1, l1 := run(analog.Ideal())
	a2, l2 := run(analog.Ideal())
	if a1 != a2 || l1 != l2 {
		t.Errorf("ideal hardware twice: %v/%v, then %v/%v", a1, l1, a2, l2)
	}
	ap, lp := run(analog.PCM(7))
	if lp == loss0 {
		t.Errorf("PCM emulation left the loss at the digital %v", loss0)
	}
	t.Logf("digital %.4f/%.4f, ideal %.4f/%.4f, PCM %.4f/%.4f (accuracy/loss)", acc0, loss0, a1, l1, ap, lp)
	if acc, loss, err := tr.Evaluate(test); err != nil || acc != acc0 || loss != loss0 {
		t.Errorf("after the analog evaluation: %v/%v (%v), before %v/%v", acc, loss, err, acc0, loss0)
	}
	if _, _, err := tr.EvaluateAnalog(test, AnalogConfig{Hardware: analog.Ideal()}); err == nil || !strings.Contains(err.Error(), "calibration") {
		t.Errorf("no calibration: %v", err)
	}
	for _, c := range []struct{ kind, fm, backend, want string }{
		{arch.KindTNN, "", "", "needs a performer"},
		{arch.KindPerformer, arch.FeatureOPRF, "", "fixed projection"},
		{arch.KindPerformer, "", "go", "native engine"},
	} {
		cfg := toyConfig(c.kind)
		cfg.Model.FeatureMap, cfg.Device = c.fm, c.backend
		tr, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := tr.EvaluateAnalog(test, AnalogConfig{Hardware: analog.Ideal(), Calibration: train}); err == nil ||
			!strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s %s: error %v, want %q", c.kind, c.fm, c.backend, err, c.want)
		}
	}
}
