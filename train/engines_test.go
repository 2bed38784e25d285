package train

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/native"
)

// TestEnginesShareCheckpoints: a checkpoint written by one engine resumes
// and evaluates in the other, for every model kind. The native engine
// trains 3 steps and saves; GoMLX's pure-Go backend then predicts the
// same logits from that checkpoint and trains on to step 5, and the native
// engine predicts the logits of GoMLX's checkpoint. Both engines compute
// in float32, in different orders (and the native engine's exponential is
// a polynomial within 2 ulp of exp), so logits agree to float32 rounding
// as amplified by the model's conditioning. That amplification is
// measured, not assumed: the native engine in float64 on the same
// checkpoint gives the float32 error e32 = max |z32 − z64|/(1 + |z64|) of
// one float32 evaluation. GoMLX's float32 error is of the same order (both
// engines sum in float32 over the same reductions, in other orders), so the
// two evaluations differ by about e32 + e32_GoMLX; the bound is 8·e32 plus
// 1e-6, which allows GoMLX's error to be 7 times the native engine's (hrf's
// trigonometric features make its denominators, and so its e32, about ten
// times larger than the other kinds').
func TestEnginesShareCheckpoints(t *testing.T) {
	data := toyData(t, 48, 7)
	for _, kind := range arch.Kinds {
		t.Run(kind, func(t *testing.T) {
			cfg := toyConfig(kind)
			cfg.Checkpoint = filepath.Join(t.TempDir(), "a.ckpt")
			crossEngines(t, cfg, data, nil)
		})
	}
}

// crossEngines trains cfg for 3 steps on the native engine, writing
// cfg.Checkpoint, calls check (if not nil) on that checkpoint, resumes it
// in GoMLX and compares the logits of 20 examples, trains on to step 5
// there, resumes that checkpoint in the native engine and compares again,
// each comparison within tolerance32.
func crossEngines(t *testing.T, cfg Config, data []Example, check func(*Checkpoint)) {
	t.Helper()
	cfg.Steps, cfg.Device = 3, DeviceCPU
	nat, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nat.Fit(context.Background(), data, nil); err != nil {
		t.Fatal(err)
	}
	want, err := nat.Predict(data[:20])
	if err != nil {
		t.Fatal(err)
	}
	if check != nil {
		ck, err := ReadCheckpoint(cfg.Checkpoint)
		if err != nil {
			t.Fatal(err)
		}
		check(ck)
	}
	cfg.Device = "go"
	gx, err := New(cfg)
	if err != nil {
		t.Fatalf("GoMLX resuming the native checkpoint: %v", err)
	}
	if gx.Step() != 3 {
		t.Fatalf("GoMLX resumed at step %d, want 3", gx.Step())
	}
	got, err := gx.Predict(data[:20])
	if err != nil {
		t.Fatal(err)
	}
	tol := tolerance32(t, cfg, data[:20], want)
	worst := compareLogits(t, "GoMLX on the native checkpoint", got, want, tol)
	// GoMLX trains on and writes; the native engine reads it back.
	cfg.Steps = 5
	gx2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := gx2.Fit(context.Background(), data, nil)
	if err != nil {
		t.Fatalf("GoMLX training on from the native checkpoint: %v", err)
	}
	if res.StartStep != 3 || res.Steps != 5 {
		t.Errorf("GoMLX ran steps %d to %d, want 3 to 5", res.StartStep, res.Steps)
	}
	want2, err := gx2.Predict(data[:20])
	if err != nil {
		t.Fatal(err)
	}
	cfg.Device = DeviceCPU
	nat2, err := New(cfg)
	if err != nil {
		t.Fatalf("native engine resuming GoMLX's checkpoint: %v", err)
	}
	got2, err := nat2.Predict(data[:20])
	if err != nil {
		t.Fatal(err)
	}
	tol2 := tolerance32(t, cfg, data[:20], got2)
	worst = math.Max(worst, compareLogits(t, "native engine on GoMLX's checkpoint", got2, want2, tol2))
	t.Logf("largest logit difference %.2g (bounds %.2g, %.2g)", worst, tol, tol2)
}

// tolerance32 returns 8·e32 + 1e-6, e32 the largest relative difference
// between the float32 logits z32 of the examples and the native engine's
// float64 logits on cfg.Checkpoint.
func tolerance32(t *testing.T, cfg Config, set []Example, z32 [][]float64) float64 {
	t.Helper()
	ck, err := ReadCheckpoint(cfg.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	m := ck.Model
	nt, err := native.New[float64](m, native.Options{LR: cfg.LR, WeightDecay: cfg.WeightDecay, Warmup: cfg.Warmup, Steps: cfg.Steps}, ck.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := nt.ImportVariables(toNative(ck.Variables)); err != nil {
		t.Fatal(err)
	}
	idx := make([]int, len(set))
	for i := range idx {
		idx[i] = i
	}
	tok, _ := packTokens(set, idx, m.Length)
	z64, err := nt.Logits(tok)
	if err != nil {
		t.Fatal(err)
	}
	e32 := 0.0
	for i := range z32 {
		for j, v := range z32[i] {
			w := z64[i*m.Classes+j]
			e32 = math.Max(e32, math.Abs(v-w)/(1+math.Abs(w)))
		}
	}
	return 8*e32 + 1e-6
}

func compareLogits(t *testing.T, what string, got, want [][]float64, tol float64) float64 {
	t.Helper()
	worst := 0.0
	for i := range want {
		for j := range want[i] {
			d := math.Abs(got[i][j]-want[i][j]) / (1 + math.Abs(want[i][j]))
			worst = math.Max(worst, d)
			if !(d <= tol) {
				t.Errorf("%s: logit [%d][%d] = %v, want %v (bound %.2g)", what, i, j, got[i][j], want[i][j], tol)
				return worst
			}
		}
	}
	return worst
}
