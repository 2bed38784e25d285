package train

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/kernelkit/kernelkit/nn"
)

// TestEnginesShareCheckpoints: a checkpoint written by one engine resumes
// and evaluates in the other, for every model kind. The native engine
// trains 3 steps and saves; GoMLX's pure-Go backend then predicts the
// same logits from that checkpoint and trains on to step 5, and the native
// engine predicts the logits of GoMLX's checkpoint. Both engines compute
// in float32, in different orders (and the native engine's exponential is
// a polynomial within 2 ulp of exp), so logits agree to rounding: each of
// the model's float32 reductions (sums over width, hidden units, sequence
// positions) contributes about √n·u of its terms' magnitude; the bound is
// 1e-4·(1 + |logit|), the 1e-5 with a factor 10 for depth and the
// exponentials, relative to logits of order 1.
func TestEnginesShareCheckpoints(t *testing.T) {
	data := toyData(t, 48, 7)
	for _, kind := range nn.Kinds {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			cfg := toyConfig(kind)
			cfg.Checkpoint = filepath.Join(dir, "a.ckpt")
			cfg.Steps, cfg.Backend = 3, BackendCPU
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
			cfg.Backend = "go"
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
			worst := compareLogits(t, "GoMLX on the native checkpoint", got, want)
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
			cfg.Backend = BackendCPU
			nat2, err := New(cfg)
			if err != nil {
				t.Fatalf("native engine resuming GoMLX's checkpoint: %v", err)
			}
			got2, err := nat2.Predict(data[:20])
			if err != nil {
				t.Fatal(err)
			}
			worst = math.Max(worst, compareLogits(t, "native engine on GoMLX's checkpoint", got2, want2))
			t.Logf("largest logit difference %.2g", worst)
		})
	}
}

func compareLogits(t *testing.T, what string, got, want [][]float64) float64 {
	t.Helper()
	worst := 0.0
	for i := range want {
		for j := range want[i] {
			d := math.Abs(got[i][j]-want[i][j]) / (1 + math.Abs(want[i][j]))
			worst = math.Max(worst, d)
			if !(d <= 1e-4) {
				t.Errorf("%s: logit [%d][%d] = %v, want %v", what, i, j, got[i][j], want[i][j])
				return worst
			}
		}
	}
	return worst
}
