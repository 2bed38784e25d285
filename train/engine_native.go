package train

import (
	"errors"
	"fmt"
	"os"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/native"
)

// BackendCPU names the native CPU engine (package native): hand-written
// forward and backward passes on the installed BLAS, float32. It is the
// default; any other Config.Backend is a GoMLX backend (e.g. "go", GoMLX's
// pure-Go backend, or "xla:cuda").
const BackendCPU = "cpu"

// IsNative reports whether the backend configuration selects the native
// CPU engine.
func IsNative(backendConfig string) bool {
	return backendConfig == "" || backendConfig == BackendCPU
}

// newNative prepares a trainer on the native engine: the model initialised
// from the seed, resumed from cfg.Checkpoint when it exists, or its
// backbone initialised from cfg.InitFrom. cfg has been checked.
func newNative(cfg Config) (*Trainer, error) {
	cfg.Model.FFT = false
	nt, err := native.New[float32](cfg.Model, native.Options{
		LR: cfg.LR, WeightDecay: cfg.WeightDecay, Warmup: cfg.Warmup, Steps: cfg.Steps, Redraw: cfg.Redraw,
	}, cfg.Seed)
	if err != nil {
		return nil, err
	}
	t := &Trainer{cfg: cfg, nat: nt}
	resumed := false
	if cfg.Checkpoint != "" {
		if err := checkCheckpointFile(cfg.Checkpoint, cfg.MaxMemory); err != nil {
			return nil, err
		}
		ck, err := ReadCheckpoint(cfg.Checkpoint)
		switch {
		case err == nil:
			if err := sameModel(ck, &cfg); err != nil {
				return nil, err
			}
			if ck.Step < int64(cfg.Steps) {
				if err := checkOptimizerState(ck, cfg.Checkpoint); err != nil {
					return nil, err
				}
			}
			if err := nt.ImportVariables(toNative(ck.Variables)); err != nil {
				return nil, fmt.Errorf("train: %s: %w", cfg.Checkpoint, err)
			}
			t.step = int(ck.Step)
			t.hist = resumedHistory(ck)
			resumed = true
		case errors.Is(err, os.ErrNotExist):
		default:
			return nil, err
		}
	}
	if !resumed && cfg.InitFrom != "" {
		ck, err := readInitFrom(&cfg)
		if err != nil {
			return nil, err
		}
		if err := nt.LoadWeights(toNative(ck.Variables), backbone); err != nil {
			return nil, fmt.Errorf("train: %s: %w", cfg.InitFrom, err)
		}
	}
	if t.step > cfg.Steps {
		return nil, fmt.Errorf("train: the checkpoint has %d steps, more than the %d asked for", t.step, cfg.Steps)
	}
	return t, nil
}

// nativeName describes the native engine and the BLAS it runs on.
func nativeName() string {
	return "cpu (native engine, float32; BLAS " + blas.Name() + ")"
}

func toNative(vs []SavedVariable) []native.Variable {
	out := make([]native.Variable, len(vs))
	for i, v := range vs {
		out[i] = native.Variable(v)
	}
	return out
}

func fromNative(vs []native.Variable) []SavedVariable {
	out := make([]SavedVariable, len(vs))
	for i, v := range vs {
		out[i] = SavedVariable(v)
	}
	return out
}

// packTokens packs examples into B×Length token ids (truncated or padded
// with 0) and B labels; an index below zero is a padding row.
func packTokens(exs []Example, idx []int, length int) ([]int32, []int32) {
	tok := make([]int32, len(idx)*length)
	lab := make([]int32, len(idx))
	for i, j := range idx {
		if j < 0 {
			continue
		}
		copy(tok[i*length:(i+1)*length], exs[j].Tokens)
		lab[i] = int32(exs[j].Label)
	}
	return tok, lab
}
