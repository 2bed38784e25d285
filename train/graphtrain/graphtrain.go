// Package graphtrain is package train's GoMLX graph engine: the models of
// package nn trained by GoMLX's automatic differentiation and its AdamW
// (optimizers.Adam().WeightDecay), on GoMLX's pure-Go backend or, in a
// build with the xla tag, on XLA ("xla:cuda"). Importing it registers the
// engine with package train (engine.RegisterGraph), so that
// train.Config.Device selects it; package train itself builds without
// GoMLX.
//
// The learning rate follows train.ScheduleAt (Schedule, its graph form):
// a linear warm-up lr·(s+1)/w for s < w steps taken, then the cosine
// lr·½(1 + cos(π(s − w)/(S − w))) to zero at S steps. The context is
// seeded with seed>>1 (context.ParamInitialSeed and the generator state,
// arch.RunRNGState), the random features are arch.ModelConfig's
// FixedVariables, and a checkpoint's variables are loaded as the context
// creates them, so that a run resumed from a checkpoint (of either engine)
// continues as the uninterrupted run would.
package graphtrain

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"
	gctx "github.com/gomlx/gomlx/pkg/ml/context"
	gtrain "github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/native"
	"github.com/kernelkit/kernelkit/nn"
	"github.com/kernelkit/kernelkit/train/engine"
)

func init() { engine.RegisterGraph(Open) }

// Engine trains a model on a GoMLX backend; it implements engine.Engine.
type Engine struct {
	run     engine.Run
	model   arch.ModelConfig // run.Model with FFT set for the backend
	be      backends.Backend
	ctx     *gctx.Context
	tr      *gtrain.Trainer
	logits  *gctx.Exec
	step    int
	redraws int
}

// Open prepares the engine of a run: the backend (nn.Backend(run.Device)),
// the context (loading run.Resume or run.Init as it creates the
// variables) and the random features.
func Open(run engine.Run) (engine.Engine, error) {
	be, err := nn.Backend(run.Device)
	if err != nil {
		return nil, err
	}
	e := &Engine{run: run, model: run.Model, be: be, ctx: gctx.New(), step: run.Step}
	e.model.FFT = nn.HasFFT(be)
	seed := run.Seed
	e.ctx.SetParam(gctx.ParamInitialSeed, int64(seed>>1))
	switch {
	case run.Resume != nil:
		e.ctx.SetLoader(newLoader(run.Resume))
		// Load every variable now, so that the next checkpoint holds them
		// all (the generator state too, which training never reads); only
		// the model's own variables may be trainable.
		for _, v := range run.Resume {
			if lv := e.ctx.GetVariableByScopeAndName(v.Scope, v.Name); lv != nil && !isModelScope(v.Scope) {
				lv.SetTrainable(false)
			}
		}
	case run.Init != nil:
		e.ctx.SetLoader(newLoader(run.Init))
	}
	if run.Resume == nil { // a resumed run loads the generator state
		if err := e.ctx.SetRNGStateFromSeed(int64(seed >> 1)); err != nil {
			return nil, err
		}
	}
	if r := run.Options.Redraw; r > 0 {
		e.redraws = e.step / r
	}
	fixed, err := e.model.FixedVariables(seed, e.redraws)
	if err != nil {
		return nil, err
	}
	for _, f := range fixed {
		// A value from the checkpoint (loader) takes precedence.
		e.ctx.InAbsPath(f.Scope).Checked(false).VariableWithValue(f.Name, nn.FixedTensor(f)).SetTrainable(false)
	}
	opt := optimizers.Adam().WeightDecay(run.Options.WeightDecay).Done()
	e.tr = gtrain.NewTrainer(be, e.ctx, e.modelFn, losses.SparseCategoricalCrossEntropyLogits, opt, nil, nil)
	e.logits, err = gctx.NewExec(be, e.ctx.Reuse(), func(ctx *gctx.Context, tokens *Node) *Node {
		return nn.Logits(&e.model, ctx, tokens)
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Name returns the backend's name.
func (e *Engine) Name() string { return e.be.Name() }

// modelFn is the GoMLX model function: the learning-rate schedule (when
// training) and the logits.
func (e *Engine) modelFn(ctx *gctx.Context, _ any, inputs []*Node) []*Node {
	g := inputs[0].Graph()
	o := e.run.Options
	if ctx.IsTraining(g) {
		step := ConvertDType(optimizers.GetGlobalStepVar(ctx).ValueGraph(g), dtypes.Float32)
		lr := Schedule(step, o.LR, o.Warmup, o.Steps)
		optimizers.LearningRateVar(ctx, dtypes.Float32, o.LR).SetValueGraph(lr)
	}
	return []*Node{nn.Logits(&e.model, ctx, inputs[0])}
}

// Schedule returns the learning rate at step s (0-based, the number of
// steps taken): linear warm-up lr·(s+1)/warmup for s < warmup, then a
// cosine from lr to 0 over the remaining steps, lr·½(1 + cos(π(s −
// warmup)/(total − warmup))); train.ScheduleAt is its host form.
func Schedule(s *Node, lr float64, warmup, total int) *Node {
	g := s.Graph()
	dt := s.DType()
	warm := MulScalar(AddScalar(s, 1), lr/float64(max(warmup, 1)))
	span := float64(max(total-warmup, 1))
	frac := ClipScalar(DivScalar(AddScalar(s, -float64(warmup)), span), 0, 1)
	cos := MulScalar(AddScalar(Cos(MulScalar(frac, math.Pi)), 1), lr/2)
	if warmup == 0 {
		return cos
	}
	return Where(LessThan(s, Scalar(g, dt, float64(warmup))), warm, cos)
}

// batch returns the token tensor (B×Length) of row-major token ids and,
// when labels is not nil, the label tensor (B×1).
func (e *Engine) batch(tokens, labels []int32) (tok, lab *tensors.Tensor) {
	l := e.model.Length
	tok = tensors.FromFlatDataAndDimensions(tokens, len(tokens)/l, l)
	if labels != nil {
		lab = tensors.FromFlatDataAndDimensions(labels, len(labels), 1)
	}
	return tok, lab
}

// Step takes one optimiser step, first redrawing the attention
// projections (FAVOR+, HRF) when a redraw interval has passed.
func (e *Engine) Step(tokens, labels []int32) (float64, error) {
	if r := e.run.Options.Redraw; r > 0 && e.step > 0 && e.step%r == 0 && e.step/r != e.redraws {
		if err := e.redraw(e.step / r); err != nil {
			return 0, err
		}
	}
	tok, lab := e.batch(tokens, labels)
	m, err := e.tr.TrainStep(nil, []*tensors.Tensor{tok}, []*tensors.Tensor{lab})
	if err != nil {
		return 0, err
	}
	e.step++
	return float64(tensors.ToScalar[float32](m[0])), nil
}

// redraw sets the attention projections (FAVOR+, HRF) to their draw
// number k.
func (e *Engine) redraw(k int) error {
	fixed, err := e.model.FixedVariables(e.run.Seed, k)
	if err != nil {
		return err
	}
	for _, f := range fixed {
		if !f.Redrawn {
			continue
		}
		v := e.ctx.GetVariableByScopeAndName(f.Scope, f.Name)
		if v == nil {
			return fmt.Errorf("train: no variable %s/%s to redraw", f.Scope, f.Name)
		}
		if err := v.SetValue(nn.FixedTensor(f)); err != nil {
			return err
		}
	}
	e.redraws = k
	return nil
}

// Logits returns the logits of a batch.
func (e *Engine) Logits(tokens []int32) ([]float32, error) {
	tok, _ := e.batch(tokens, nil)
	r, err := e.logits.Exec(tok)
	if err != nil {
		return nil, err
	}
	return tensors.MustCopyFlatData[float32](r[0]), nil
}

// Params counts the model's variables in the context (they exist once
// the model has been built, after the first step or evaluation).
func (e *Engine) Params() (trainable, model int) {
	for v := range e.ctx.IterVariables() {
		if !isModelScope(v.Scope()) || arch.IsFixedName(v.Name()) {
			continue
		}
		model += v.Shape().Size()
		if v.Trainable {
			trainable += v.Shape().Size()
		}
	}
	return trainable, model
}

// Variables returns every variable of the context but the trainer's
// running metrics. Before the first step or evaluation the model's
// variables do not exist yet: a forward pass on one padding row creates
// them, so that every checkpoint holds the whole model.
func (e *Engine) Variables() ([]native.Variable, error) {
	if e.ctx.GetVariableByScopeAndName("/head", "w") == nil {
		if _, err := e.Logits(make([]int32, e.model.Length)); err != nil {
			return nil, fmt.Errorf("train: building the model: %w", err)
		}
	}
	var out []native.Variable
	for v := range e.ctx.IterVariables() {
		if strings.HasPrefix(v.Scope(), "/metrics") {
			continue
		}
		t, err := v.Value()
		if err != nil {
			return nil, fmt.Errorf("train: variable %s: %w", v.ScopeAndName(), err)
		}
		dt, data, err := encode(t)
		if err != nil {
			return nil, err
		}
		out = append(out, native.Variable{Scope: v.Scope(), Name: v.Name(), DType: dt, Dims: append([]int(nil), t.Shape().Dimensions...), Data: data})
	}
	return out, nil
}

// isModelScope reports whether a scope holds model variables (not
// optimiser state, step counters or the generator state).
func isModelScope(sc string) bool {
	return strings.HasPrefix(sc, "/embed") || strings.HasPrefix(sc, "/block_") || strings.HasPrefix(sc, "/head")
}

// encode returns a tensor's dtype name and values (little-endian,
// row-major), as a checkpoint stores them.
func encode(t *tensors.Tensor) (string, []byte, error) {
	var name string
	var out []byte
	var err error
	switch t.DType() {
	case dtypes.Float32:
		name = "float32"
		err = tensors.ConstFlatData(t, func(f []float32) {
			out = make([]byte, 4*len(f))
			for i, v := range f {
				binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
			}
		})
	case dtypes.Float64:
		name = "float64"
		err = tensors.ConstFlatData(t, func(f []float64) {
			out = make([]byte, 8*len(f))
			for i, v := range f {
				binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(v))
			}
		})
	case dtypes.Int32:
		name = "int32"
		err = tensors.ConstFlatData(t, func(f []int32) {
			out = make([]byte, 4*len(f))
			for i, v := range f {
				binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
			}
		})
	case dtypes.Int64:
		name = "int64"
		err = tensors.ConstFlatData(t, func(f []int64) {
			out = make([]byte, 8*len(f))
			for i, v := range f {
				binary.LittleEndian.PutUint64(out[8*i:], uint64(v))
			}
		})
	case dtypes.Uint64: // the random-number generator state
		name = "uint64"
		err = tensors.ConstFlatData(t, func(f []uint64) {
			out = make([]byte, 8*len(f))
			for i, v := range f {
				binary.LittleEndian.PutUint64(out[8*i:], v)
			}
		})
	default:
		return "", nil, fmt.Errorf("train: cannot save a %s variable", t.DType())
	}
	return name, out, err
}

// Tensor decodes a saved variable (checked by train.ReadCheckpoint: a
// known dtype, as many bytes as its dimensions need) into a tensor.
func Tensor(v native.Variable) (*tensors.Tensor, error) {
	n := 1
	for _, d := range v.Dims {
		n *= d
	}
	size := map[string]int{"float32": 4, "float64": 8, "int32": 4, "int64": 8, "uint64": 8}[v.DType]
	if size == 0 || len(v.Data) != n*size {
		return nil, fmt.Errorf("train: variable %s/%s has %d bytes of %s%v", v.Scope, v.Name, len(v.Data), v.DType, v.Dims)
	}
	b := v.Data
	switch v.DType {
	case "float32":
		f := make([]float32, n)
		for i := range f {
			f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return tensors.FromFlatDataAndDimensions(f, v.Dims...), nil
	case "float64":
		f := make([]float64, n)
		for i := range f {
			f[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		return tensors.FromFlatDataAndDimensions(f, v.Dims...), nil
	case "int32":
		f := make([]int32, n)
		for i := range f {
			f[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return tensors.FromFlatDataAndDimensions(f, v.Dims...), nil
	case "int64":
		f := make([]int64, n)
		for i := range f {
			f[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
		return tensors.FromFlatDataAndDimensions(f, v.Dims...), nil
	default:
		f := make([]uint64, n)
		for i := range f {
			f[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
		return tensors.FromFlatDataAndDimensions(f, v.Dims...), nil
	}
}

// loader hands saved variables to a GoMLX context as it creates them
// (context.Loader).
type loader struct {
	vars map[string]*native.Variable
}

func newLoader(vs []native.Variable) *loader {
	l := &loader{vars: map[string]*native.Variable{}}
	for i := range vs {
		l.vars[vs[i].Scope+"\x00"+vs[i].Name] = &vs[i]
	}
	return l
}

// LoadVariable implements context.Loader.
func (l *loader) LoadVariable(_ *gctx.Context, scope, name string) (*tensors.Tensor, bool) {
	key := scope + "\x00" + name
	v, ok := l.vars[key]
	if !ok {
		return nil, false
	}
	delete(l.vars, key)
	t, err := Tensor(*v)
	if err != nil { // validated by train.ReadCheckpoint
		panic(err)
	}
	return t, true
}

// DeleteVariable implements context.Loader.
func (l *loader) DeleteVariable(_ *gctx.Context, scope, name string) error {
	delete(l.vars, scope+"\x00"+name)
	return nil
}
