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
//
// Training is reproducible and race-free: the same Config (Seed included)
// and data give bit-identical models and predictions. The variable
// initialisers and the graph's random state are seeded, the mini-batches
// are drawn by a seeded shuffle of this package's own (GoMLX v0.26's
// in-memory dataset reshuffles with the unseeded global generator, which
// made two runs with one seed differ), and the backend executes the ops of
// a graph one after another (BackendConfig: its default runs independent
// ops concurrently, and its bookkeeping of their shared buffers is then a
// data race that the race detector reports).
package mlp

import (
	stdcontext "context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/layers"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/gomlxbackend"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
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

// BackendConfig is the GoMLX configuration of the backend,
// gomlxbackend.Default (nn.DefaultBackend): the pure-Go backend ("go",
// simplego) with the ops of a graph executed sequentially. Each op may
// still split its own work (a large matrix product) across goroutines;
// that split is fixed by the shapes, so results do not depend on
// scheduling.
const BackendConfig = gomlxbackend.Default

// Backend returns GoMLX's pure-Go backend, configured by BackendConfig,
// opened by gomlxbackend.Open: the one place kernelkit opens GoMLX
// backends, shared with the graph models (nn.Backend), the graph training
// engine and package device.
func Backend() (backends.Backend, error) {
	return gomlxbackend.Open(BackendConfig)
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
// (xte, yte). Labels are class indices in [0, Classes). The same
// configuration and data give bit-identical results.
func Train(cfg Config, xtr *mat.Dense, ytr []int, xte *mat.Dense, yte []int) (*Result, error) {
	return TrainContext(stdcontext.Background(), cfg, xtr, ytr, xte, yte)
}

// TrainContext is Train that stops with ctx's error, between two
// mini-batches, when ctx is done.
func TrainContext(cx stdcontext.Context, cfg Config, xtr *mat.Dense, ytr []int, xte *mat.Dense, yte []int) (*Result, error) {
	r, _, err := fit(cx, cfg, xtr, ytr, xte, yte)
	return r, err
}

// fit is TrainContext that also returns the test logits.
func fit(cx stdcontext.Context, cfg Config, xtr *mat.Dense, ytr []int, xte *mat.Dense, yte []int) (*Result, [][]float32, error) {
	if err := limits.Count("mlp: epochs", cfg.Epochs, 1); err != nil {
		return nil, nil, err
	}
	if cfg.Hidden <= 0 || cfg.Classes < 2 || cfg.Epochs <= 0 || cfg.BatchSize <= 0 || !(cfg.LearningRate > 0) {
		return nil, nil, fmt.Errorf("mlp: bad configuration %+v", cfg)
	}
	if xtr == nil || xte == nil {
		return nil, nil, errors.New("mlp: nil training or test inputs")
	}
	n, d := xtr.Dims()
	if n != len(ytr) || n == 0 {
		return nil, nil, fmt.Errorf("mlp: %d training rows and %d labels", n, len(ytr))
	}
	nte, dte := xte.Dims()
	if nte != len(yte) || nte == 0 {
		return nil, nil, fmt.Errorf("mlp: %d test rows and %d labels", nte, len(yte))
	}
	if dte != d {
		return nil, nil, fmt.Errorf("mlp: training inputs have %d columns, test inputs %d", d, dte)
	}
	for _, ys := range [][]int{ytr, yte} {
		for _, y := range ys {
			if y < 0 || y >= cfg.Classes {
				return nil, nil, fmt.Errorf("mlp: label %d outside [0, %d)", y, cfg.Classes)
			}
		}
	}
	be, err := Backend()
	if err != nil {
		return nil, nil, fmt.Errorf("mlp: GoMLX backend: %w", err)
	}
	ds := newShuffled(toF32(xtr), ytr, min(cfg.BatchSize, n), uint64(cfg.Seed))
	ds.ctx = cx
	ctx := context.New()
	ctx.SetParam(optimizers.ParamLearningRate, cfg.LearningRate)
	// Seed the variable initialisers (GoMLX otherwise draws a random seed)
	// and the graph's random state.
	ctx.SetParam(context.ParamInitialSeed, cfg.Seed)
	if err := ctx.SetRNGStateFromSeed(cfg.Seed); err != nil {
		return nil, nil, fmt.Errorf("mlp: seeding GoMLX: %w", err)
	}
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
		if cerr := cx.Err(); cerr != nil {
			return nil, nil, cerr
		}
		return nil, nil, fmt.Errorf("mlp: training: %w", err)
	}
	secs := time.Since(t0).Seconds()
	// Evaluate.
	exec, err := context.NewExecAny(be, ctx.Reuse(), func(ctx *context.Context, x *graph.Node) *graph.Node {
		return model(ctx, nil, []*graph.Node{x})[0]
	})
	if err != nil {
		return nil, nil, fmt.Errorf("mlp: evaluation: %w", err)
	}
	out, err := exec.Exec(tensors.FromValue(toF32(xte)))
	if err != nil {
		return nil, nil, fmt.Errorf("mlp: evaluation: %w", err)
	}
	v, err := out[0].ValueSafe()
	if err != nil {
		return nil, nil, fmt.Errorf("mlp: evaluation: %w", err)
	}
	logits, ok := v.([][]float32)
	if !ok {
		return nil, nil, fmt.Errorf("mlp: evaluation returned %T, want [][]float32", v)
	}
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
	res := &Result{TestAccuracy: float64(correct) / float64(nte), Params: params, Seconds: secs, Backend: be.Name()}
	return res, logits, nil
}

// shuffled is the training stream: an endless sequence of mini-batches of
// batch rows, drawn without replacement from a permutation of the rows that
// a seeded generator redraws at the start of every epoch (the rows left
// over when n is not a multiple of batch are skipped for that epoch). It
// implements train.Dataset.
type shuffled struct {
	x     [][]float32
	y     []int
	batch int
	rnd   *rand.Rand
	perm  []int
	next  int
	ctx   stdcontext.Context // Yield fails once it is done (nil: never)
}

func newShuffled(x [][]float32, y []int, batch int, seed uint64) *shuffled {
	s := &shuffled{x: x, y: y, batch: batch, rnd: rng.New(seed), perm: make([]int, len(x))}
	s.Reset()
	return s
}

// Name implements train.Dataset.
func (s *shuffled) Name() string { return "train" }

// Reset starts a new epoch with a new permutation.
func (s *shuffled) Reset() {
	for i := range s.perm {
		s.perm[i] = i
	}
	s.rnd.Shuffle(len(s.perm), func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
	s.next = 0
}

// Yield returns the next mini-batch: inputs batch×d and labels batch×1.
func (s *shuffled) Yield() (spec any, inputs, labels []*tensors.Tensor, err error) {
	if s.ctx != nil {
		if err := s.ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
	}
	if s.next+s.batch > len(s.perm) {
		s.Reset()
	}
	xb := make([][]float32, s.batch)
	yb := make([][]int32, s.batch)
	for i, r := range s.perm[s.next : s.next+s.batch] {
		xb[i] = s.x[r]
		yb[i] = []int32{int32(s.y[r])}
	}
	s.next += s.batch
	return nil, []*tensors.Tensor{tensors.FromValue(xb)}, []*tensors.Tensor{tensors.FromValue(yb)}, nil
}
