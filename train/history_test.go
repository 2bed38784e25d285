package train

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/nn"
)

// TestHistoryAcrossResume checks that checkpoints carry the training
// curve: a run stopped at step 3 and resumed to step 6 reports the whole
// run's losses (the same bits as a straight run) and evaluations; a
// resume from a checkpoint without history starts its curve at the
// checkpoint's step; a finished run evaluated again does not repeat its
// last evaluation; and a history that does not end at the checkpoint's
// step is refused; on both engines.
func TestHistoryAcrossResume(t *testing.T) {
	for _, backend := range []string{DeviceCPU, nn.DefaultBackend} {
		t.Run(backend, func(t *testing.T) { historyAcrossResume(t, backend) })
	}
}

func historyAcrossResume(t *testing.T, backend string) {
	data, eval := toyData(t, 40, 2), toyData(t, 16, 3)
	dir := t.TempDir()
	cfg := toyConfig(arch.KindFDTNN)
	cfg.Device = backend
	cfg.Steps, cfg.EvalEvery = 6, 2
	cfg.Checkpoint = filepath.Join(dir, "straight.ckpt")
	fit := func(cfg Config) *Result {
		t.Helper()
		tr, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, err := tr.Fit(context.Background(), data, eval)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	straight := fit(cfg)
	if h := straight.History; h == nil || h.LossFrom != 0 || !slices.Equal(h.Loss, straight.Loss) || !slices.Equal(h.EvalStep, []int{2, 4, 6}) {
		t.Fatalf("straight run's history %+v", straight.History)
	}

	cfg.Checkpoint = filepath.Join(dir, "resumed.ckpt")
	cfg.Steps = 3
	fit(cfg)
	cfg.Steps = 6
	second := fit(cfg)
	h := second.History
	if h == nil || h.LossFrom != 0 || !slices.Equal(h.Loss, straight.Loss) {
		t.Fatalf("resumed run's history %+v, want the straight run's losses %v", h, straight.Loss)
	}
	if !slices.Equal(h.EvalStep, []int{2, 3, 4, 6}) || h.EvalAccuracy[3] != straight.EvalAccuracy[2] {
		t.Errorf("resumed run's evaluations at %v (accuracy %v), want steps 2, 3, 4, 6 ending at %v", h.EvalStep, h.EvalAccuracy, straight.EvalAccuracy[2])
	}
	again := fit(cfg) // finished: evaluates once more at step 6
	if !slices.Equal(again.History.EvalStep, []int{2, 3, 4, 6}) {
		t.Errorf("a finished run evaluated again: history steps %v", again.History.EvalStep)
	}

	// A checkpoint without history (written before it existed).
	cfg.Checkpoint = filepath.Join(dir, "old.ckpt")
	cfg.Steps = 3
	fit(cfg)
	ck, err := ReadCheckpoint(cfg.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	ck.History = nil
	if err := WriteCheckpoint(cfg.Checkpoint, ck); err != nil {
		t.Fatal(err)
	}
	cfg.Steps = 6
	if h := fit(cfg).History; h.LossFrom != 3 || len(h.Loss) != 3 || !slices.Equal(h.Loss, straight.Loss[3:]) {
		t.Errorf("resumed from a checkpoint without history: %+v", h)
	}

	// A history that does not match its checkpoint.
	ck.History = &History{Loss: []float64{1, 2}}
	bad := filepath.Join(dir, "bad.ckpt")
	if err := WriteCheckpoint(bad, ck); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCheckpoint(bad); err == nil || !strings.Contains(err.Error(), "does not end at step 3") {
		t.Errorf("history of 2 losses in a checkpoint of step 3: %v", err)
	}
}
