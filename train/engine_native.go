package train

import (
	"fmt"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/native"
	"github.com/kernelkit/kernelkit/train/engine"
)

// DeviceCPU names the native CPU engine (package native): hand-written
// forward and backward passes on the installed BLAS, float32. It is the
// default; any other Config.Device is a GoMLX backend of the graph engine
// (e.g. "go", GoMLX's pure-Go backend, or "xla:cuda").
const DeviceCPU = "cpu"

// BackendCPU is DeviceCPU under its name from before Config.Backend became
// Config.Device.
//
// Deprecated: use DeviceCPU.
const BackendCPU = DeviceCPU

// IsNative reports whether a device (Config.Device) selects the native
// CPU engine.
func IsNative(device string) bool {
	return device == "" || device == DeviceCPU
}

// openNative opens the native engine for a run of cfg: the model
// initialised from the seed, its variables loaded from run.Resume (the
// checkpoint cfg.Checkpoint) or its backbone from run.Init (cfg.InitFrom).
func openNative(cfg *Config, run engine.Run) (engine.Engine, error) {
	run.Model.FFT = false
	nt, err := native.New[float32](run.Model, run.Options, run.Seed)
	if err != nil {
		return nil, err
	}
	switch {
	case run.Resume != nil:
		if err := nt.ImportVariables(run.Resume); err != nil {
			return nil, fmt.Errorf("train: %s: %w", cfg.Checkpoint, err)
		}
	case run.Init != nil:
		if err := nt.LoadWeights(run.Init, backbone); err != nil {
			return nil, fmt.Errorf("train: %s: %w", cfg.InitFrom, err)
		}
	}
	return nativeEngine{nt}, nil
}

// nativeEngine is the native engine as an engine.Engine.
type nativeEngine struct{ t *native.Trainer[float32] }

func (e nativeEngine) Name() string { return nativeName() }

func (e nativeEngine) Step(tokens, labels []int32) (float64, error) { return e.t.Step(tokens, labels) }

func (e nativeEngine) Logits(tokens []int32) ([]float32, error) { return e.t.Logits(tokens) }

func (e nativeEngine) Params() (trainable, model int) { return e.t.Model().ParamCounts() }

func (e nativeEngine) Variables() ([]native.Variable, error) { return e.t.ExportVariables() }

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
