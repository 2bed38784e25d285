package train

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
)

// TestFeatureMapsShareCheckpoints: a performer of every feature family
// (arch.FeatureMaps), with its projections redrawn every 2 steps, trains 3
// steps on the native engine and saves; GoMLX's pure-Go backend predicts
// the same logits from that checkpoint and trains on to step 5 (redrawing
// at step 4), and the native engine predicts the logits of GoMLX's
// checkpoint. The bound is TestEnginesShareCheckpoints' 8·e32 + 1e-6, e32
// the native engine's float32 error measured against its float64 run on
// the checkpoint (the fitted families' parameters are computed in float64
// by the native engine and in float32 by GoMLX's graph; their effect on
// the logits is of the order of the features' own rounding).
func TestFeatureMapsShareCheckpoints(t *testing.T) {
	data := toyData(t, 48, 7)
	for _, fam := range arch.FeatureMaps {
		for _, causal := range []bool{false, true} {
			if causal && (fam == arch.FeatureFavor || fam == arch.FeatureSimRF) {
				continue // TestEnginesShareCheckpoints' path; the draw alone differs
			}
			name := fam
			if causal {
				name += "/causal"
			}
			t.Run(name, func(t *testing.T) {
				cfg := toyConfig(arch.KindPerformer)
				cfg.Model.FeatureMap, cfg.Model.Causal, cfg.Redraw = fam, causal, 2
				cfg.Checkpoint = filepath.Join(t.TempDir(), "a.ckpt")
				crossEngines(t, cfg, data, func(ck *Checkpoint) {
					if got, _ := arch.FeatureFamily(ck.Model.FeatureMap); got != fam {
						t.Fatalf("checkpoint holds feature map %q, want %s", ck.Model.FeatureMap, fam)
					}
				})
			})
		}
	}
}

// TestFeatureMapResumeMismatch: a checkpoint of one feature family does
// not resume a run of another.
func TestFeatureMapResumeMismatch(t *testing.T) {
	data := toyData(t, 16, 3)
	cfg := toyConfig(arch.KindPerformer)
	cfg.Model.FeatureMap, cfg.Steps, cfg.Device = arch.FeatureOPRF, 1, DeviceCPU
	cfg.Checkpoint = filepath.Join(t.TempDir(), "a.ckpt")
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Fit(context.Background(), data, nil); err != nil {
		t.Fatal(err)
	}
	cfg.Model.FeatureMap = arch.FeatureSDERF
	if _, err := New(cfg); err == nil {
		t.Error("an oprf checkpoint resumed an sderf run")
	}
	cfg.Model.FeatureMap = "favor+"
	if _, err := New(cfg); err == nil {
		t.Error("an oprf checkpoint resumed a favor+ run")
	}
}
