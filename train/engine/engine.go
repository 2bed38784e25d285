// Package engine is the interface between package train and the engines
// that run its models: the native CPU engine (package native, built into
// train) and the GoMLX graph engine (package train/graphtrain), which
// registers itself here when a program links it in. Package train thus
// builds without GoMLX; a program that wants --device go or cuda imports
// train/graphtrain (cmd/kernelkit does).
//
// An engine runs one training run: it holds the model's variables and the
// optimiser state (AdamW with the learning rate of train.ScheduleAt), takes
// steps on token batches, computes logits and exports its state as the
// variables of a checkpoint. Both engines name their variables alike and
// write the same checkpoint format, so that each resumes the other's
// checkpoints.
package engine

import (
	"sync"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/native"
)

// Run is what an engine is given of a training run, already checked by
// package train.
type Run struct {
	// Model is the model (defaults applied, validated).
	Model arch.ModelConfig
	// Options are the optimiser settings and the redraw interval.
	Options native.Options
	// Seed seeds the initialisation and the random features.
	Seed uint64
	// Device is the engine's configuration: for the graph engine the
	// GoMLX backend ("go", "go:ops_sequential", "xla:cuda").
	Device string
	// Step is the number of steps taken: that of Resume, else 0.
	Step int
	// Resume, if not nil, holds every variable of the checkpoint the run
	// resumes from (the model, the optimiser state, the step counters, the
	// generator state).
	Resume []native.Variable
	// Init, if not nil, holds the pre-trained variables that initialise
	// the model's embeddings and blocks (a fine-tuning run; train.Config's
	// InitFrom): exactly those it initialises. Init is nil when Resume is
	// not.
	Init []native.Variable
}

// Engine runs the model of one training run. Tokens are row-major B×Length
// token ids (0 is padding) and labels B class indices.
type Engine interface {
	// Name describes the engine and where it runs (Result.Backend).
	Name() string
	// Step takes one optimiser step on a batch and returns its mean
	// loss; it redraws the attention projections when the run's redraw
	// interval says so.
	Step(tokens, labels []int32) (float64, error)
	// Logits returns the logits (B×Classes, row-major) of a batch.
	Logits(tokens []int32) ([]float32, error)
	// Params returns the numbers of trainable parameters and of model
	// parameters (random features and optimiser state excluded).
	Params() (trainable, model int)
	// Variables returns the state to checkpoint: the model's variables,
	// the optimiser state, the step counters and the generator state.
	Variables() ([]native.Variable, error)
}

// Opener opens an engine for a run.
type Opener func(Run) (Engine, error)

var (
	mu    sync.Mutex
	graph Opener
)

// RegisterGraph registers the GoMLX graph engine; package train/graphtrain
// calls it when it is initialised. A second registration replaces the
// first.
func RegisterGraph(open Opener) {
	mu.Lock()
	defer mu.Unlock()
	graph = open
}

// Graph returns the registered graph engine, or nil when none is linked
// into the program.
func Graph() Opener {
	mu.Lock()
	defer mu.Unlock()
	return graph
}
