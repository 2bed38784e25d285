// Package mlp trains the small classifiers of the SNNK experiments with
// GoMLX (github.com/gomlx/gomlx) and its pure-Go backend ("simplego",
// selected explicitly; the default backend would try to download an XLA
// plugin, which fails offline), so gradients come from automatic
// differentiation rather than hand-written code.
//
// A model is: inputs → Dense(Hidden) [→ activation] → Dense(classes), with
// softmax cross-entropy and Adam. For an SNNK layer the inputs are the
// fixed random input tower Φ(x), computed outside the graph, and the first
// Dense (no bias, no activation) is the learnable parameter tower A: its
// output already approximates f(Wx + b).
package mlp

import (
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // pure-Go backend
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/datasets"
	"github.com/gomlx/gomlx/pkg/ml/layers"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
	"gonum.org/v1/gonum/mat"
)

// Config describes the classifier and its training.
type Config struct {
	// Hidden is the width of the hidden layer.
	Hidden int
	// FirstBias and FirstReLU configure the first layer: a dense layer uses
	// both (the MLP baseline); an SNNK parameter tower uses neither.
	FirstBias, FirstReLU bool
	Classes              int
	Epochs, BatchSize    int
	LearningRate         float64
	Seed                 int64
}

// Result reports a trained model.
type Result struct {
	TestAccuracy float64
	Params       int     // trainable parameters
	Seconds      float64 // training time
	Backend      string
}

var (
	backendOnce sync.Once
	backend     backends.Backend
	backendErr  error
)

// Backend returns GoMLX's pure-Go backend.
func Backend() (backends.Backend, error) {
	backendOnce.Do(func() { backend, backendErr = backends.NewWithConfig("go") })
	return backend, backendErr
}

func toF32(m *mat.Dense) [][]float32 {
	r, c := m.Dims()
	out := make([][]float32, r)
	for i := range out {
		out[i] = make([]float32, c)
		for j := 0; j < c; j++ {
			out[i][j] = float32(m.At(i, j))
		}
	}
	return out
}

// Train fits the classifier on (xtr, ytr) and returns its accuracy on
// (xte, yte). Labels are class indices in [0, Classes).
func Train(cfg Config, xtr *mat.Dense, ytr []int, xte *mat.Dense, yte []int) (*Result, error) {
	if cfg.Hidden <= 0 || cfg.Classes < 2 || cfg.Epochs <= 0 || cfg.BatchSize <= 0 || !(cfg.LearningRate > 0) {
		return nil, fmt.Errorf("mlp: bad configuration %+v", cfg)
	}
	n, d := xtr.Dims()
	if n != len(ytr) || n == 0 {
		return nil, errors.New("mlp: training inputs and labels differ in length")
	}
	be, err := Backend()
	if err != nil {
		return nil, fmt.Errorf("mlp: GoMLX backend: %w", err)
	}
	labels := make([][]int32, n)
	for i, y := range ytr {
		if y < 0 || y >= cfg.Classes {
			return nil, fmt.Errorf("mlp: label %d out of range", y)
		}
		labels[i] = []int32{int32(y)}
	}
	ds, err := datasets.InMemoryFromData(be, "train", []any{tensors.FromValue(toF32(xtr))}, []any{tensors.FromValue(labels)})
	if err != nil {
		return nil, err
	}
	ds = ds.WithRand(rand.New(rand.NewSource(cfg.Seed))).Infinite(true).Shuffle().BatchSize(min(cfg.BatchSize, n), true)
	ctx := context.New()
	ctx.SetParam(optimizers.ParamLearningRate, cfg.LearningRate)
	// Seed the variable initialisers (GoMLX otherwise draws a random seed)
	// and the graph's random state.
	ctx.SetParam(context.ParamInitialSeed, cfg.Seed)
	ctx.SetRNGStateFromSeed(cfg.Seed)
	model := func(ctx *context.Context, _ any, inputs []*graph.Node) []*graph.Node {
		h := layers.Dense(ctx.In("first"), inputs[0], cfg.FirstBias, cfg.Hidden)
		if cfg.FirstReLU {
			h = activations.Relu(h)
		}
		return []*graph.Node{layers.Dense(ctx.In("out"), h, true, cfg.Classes)}
	}
	tr := train.NewTrainer(be, ctx, model, losses.SparseCategoricalCrossEntropyLogits, optimizers.Adam().Done(), nil, nil)
	loop := train.NewLoop(tr)
	steps := cfg.Epochs * max(1, n/min(cfg.BatchSize, n))
	t0 := time.Now()
	if _, err := loop.RunSteps(ds, steps); err != nil {
		return nil, fmt.Errorf("mlp: training: %w", err)
	}
	secs := time.Since(t0).Seconds()
	// Evaluate.
	exec := context.MustNewExec(be, ctx.Reuse(), func(ctx *context.Context, x *graph.Node) *graph.Node {
		return model(ctx, nil, []*graph.Node{x})[0]
	})
	logits := exec.MustExec(tensors.FromValue(toF32(xte)))[0].Value().([][]float32)
	correct := 0
	for i, row := range logits {
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if best == yte[i] {
			correct++
		}
	}
	params := d*cfg.Hidden + cfg.Hidden*cfg.Classes + cfg.Classes
	if cfg.FirstBias {
		params += cfg.Hidden
	}
	return &Result{TestAccuracy: float64(correct) / float64(len(yte)), Params: params, Seconds: secs, Backend: be.Name()}, nil
}
