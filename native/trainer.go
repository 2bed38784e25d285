package native

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/arch"
)

// Options are the optimiser settings of a Trainer, those of train.Config:
// AdamW with peak learning rate LR, decoupled weight decay WeightDecay
// (applied to every trainable parameter), a linear warm-up over Warmup
// steps and a cosine decay to zero at Steps (train.ScheduleAt), and the
// attention projections redrawn every Redraw steps (0: never).
type Options struct {
	LR, WeightDecay float64
	Warmup, Steps   int
	Redraw          int
}

// Variable is one saved variable, field for field package train's
// SavedVariable (scope, name, dtype, dimensions, little-endian row-major
// data), so that a []train.SavedVariable converts element-wise
// (native.Variable(v), train.SavedVariable(v)) and the checkpoint format
// is shared; defined here so that package train can import this one.
type Variable struct {
	Scope string `json:"scope"`
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Dims  []int  `json:"dims"`
	Data  []byte `json:"data"`
}

// ScheduleAt is train.ScheduleAt: the learning rate at step s (0-based,
// the number of steps taken), a linear warm-up lr·(s+1)/warmup for s <
// warmup, then a cosine from lr to 0 over the remaining steps.
func ScheduleAt(s int, lr float64, warmup, total int) float64 {
	if s < warmup {
		return lr * float64(s+1) / float64(max(warmup, 1))
	}
	frac := math.Min(1, math.Max(0, float64(s-warmup)/float64(max(total-warmup, 1))))
	return lr / 2 * (1 + math.Cos(math.Pi*frac))
}

// Adam's constants: GoMLX v0.26's optimizers.Adam defaults.
const (
	adamBeta1   = 0.9
	adamBeta2   = 0.999
	adamEpsilon = 1e-7
)

// GoMLX's names for the optimiser state (v0.26): the global step at the
// root scope and in Adam's scope, the learning-rate variable, and Adam's
// moments under "/AdamOptimizer" + the variable's scope.
const (
	adamScope        = "/AdamOptimizer"
	globalStepName   = "global_step"
	lrScope          = "/optimizers"
	lrName           = "learning_rate"
	firstMomentName  = "_1st_moment"
	secondMomentName = "_2nd_moment"
)

// Trainer trains a Model with AdamW exactly as package train's GoMLX path
// does (optimizers.Adam().WeightDecay(wd): β₁ = 0.9, β₂ = 0.999, ε = 1e-7,
// bias correction by 1/(1 − βᵗ), update lr·m̂/(√v̂ + ε) + lr·wd·w), with the
// learning rate of train.ScheduleAt.
type Trainer[T Float] struct {
	model   *Model[T]
	opt     Options
	seed    uint64
	step    int
	redraws int
	m1, m2  [][]T // per parameter (nil for non-trainable ones)
	extra   []Variable
}

// New builds a trainer for cfg: the model initialised from seed (Init) and
// its random features (arch.ModelConfig.FixedVariables for seed, the values
// GoMLX's path uses).
func New[T Float](cfg arch.ModelConfig, opt Options, seed uint64) (*Trainer[T], error) {
	if !(opt.LR > 0) || math.IsInf(opt.LR, 0) || !(opt.WeightDecay >= 0) || math.IsInf(opt.WeightDecay, 0) {
		return nil, fmt.Errorf("native: need a positive finite learning rate and a non-negative weight decay, got %v and %v", opt.LR, opt.WeightDecay)
	}
	if opt.Warmup < 0 || opt.Steps < 0 || opt.Redraw < 0 {
		return nil, fmt.Errorf("native: need non-negative warm-up, steps and redraw interval")
	}
	m, err := NewModel[T](cfg)
	if err != nil {
		return nil, err
	}
	m.Init(seed)
	t := &Trainer[T]{model: m, opt: opt, seed: seed}
	t.m1 = make([][]T, len(m.params))
	t.m2 = make([][]T, len(m.params))
	for i, p := range m.params {
		if p.Trainable {
			t.m1[i] = make([]T, len(p.Value))
			t.m2[i] = make([]T, len(p.Value))
		}
	}
	if err := t.setFixed(0); err != nil {
		return nil, err
	}
	return t, nil
}

// Model returns the trained model.
func (t *Trainer[T]) Model() *Model[T] { return t.model }

// StepCount returns the number of optimiser steps taken.
func (t *Trainer[T]) StepCount() int { return t.step }

// setFixed sets the random features to their draw k (arch.ModelConfig.FixedVariables).
func (t *Trainer[T]) setFixed(k int) error {
	cfg := t.model.cfg
	fixed, err := cfg.FixedVariables(t.seed, k)
	if err != nil {
		return err
	}
	for _, f := range fixed {
		if k > 0 && !f.Redrawn {
			continue
		}
		p := t.model.param(f.Scope, f.Name)
		if p == nil {
			return fmt.Errorf("native: the model has no random-feature variable %s/%s", f.Scope, f.Name)
		}
		if len(f.Value) != len(p.Value) {
			return fmt.Errorf("native: random features %s/%s have %d values, want %d", f.Scope, f.Name, len(f.Value), len(p.Value))
		}
		for j, x := range f.Value {
			p.Value[j] = T(x)
		}
	}
	t.redraws = k
	return nil
}

// param returns the parameter of the given scope and name (nil if none).
func (m *Model[T]) param(scope, name string) *Param[T] {
	for _, p := range m.params {
		if p.Scope == scope && p.Name == name {
			return p
		}
	}
	return nil
}

// Step takes one optimiser step on a batch: tokens (B·Length ids, 0 =
// padding) and labels (B classes); it returns the batch's mean loss
// before the update. Invalid tokens or labels give an error.
func (t *Trainer[T]) Step(tokens, labels []int32) (float64, error) {
	if r := t.opt.Redraw; r > 0 && t.step > 0 && t.step%r == 0 && t.step/r != t.redraws {
		if err := t.setFixed(t.step / r); err != nil {
			return 0, err
		}
	}
	m := t.model
	if _, err := m.Forward(tokens); err != nil {
		return 0, err
	}
	loss, err := m.Loss(labels)
	if err != nil {
		return 0, err
	}
	m.ZeroGrad()
	m.Backward()
	t.update(ScheduleAt(t.step, t.opt.LR, t.opt.Warmup, t.opt.Steps))
	t.step++
	return loss, nil
}

// update applies one AdamW step with learning rate lr, in T arithmetic in
// GoMLX's order of operations.
func (t *Trainer[T]) update(lr64 float64) {
	step := float64(t.step + 1)
	b1, b2 := T(adamBeta1), T(adamBeta2)
	db1 := 1 / (1 - T(math.Pow(adamBeta1, step)))
	db2 := 1 / (1 - T(math.Pow(adamBeta2, step)))
	eps, lr, wd := T(adamEpsilon), T(lr64), T(t.opt.WeightDecay)
	for i, p := range t.model.params {
		if !p.Trainable {
			continue
		}
		m1, m2 := t.m1[i], t.m2[i]
		chunks(len(p.Value), rowChunk*64, func(_, lo, hi int) {
			for j := lo; j < hi; j++ {
				g := p.Grad[j]
				m1[j] = b1*m1[j] + (1-b1)*g
				m2[j] = b2*m2[j] + (1-b2)*(g*g)
				dir := lr * (m1[j] * db1) / (T(math.Sqrt(float64(m2[j]*db2))) + eps)
				if wd > 0 {
					dir += lr * (p.Value[j] * wd)
				}
				p.Value[j] -= dir
			}
		})
	}
}

// Logits returns the logits (B×Classes, row-major, a new slice) of the
// token ids (B·Length, 0 = padding).
func (t *Trainer[T]) Logits(tokens []int32) ([]T, error) {
	z, err := t.model.Forward(tokens)
	if err != nil {
		return nil, err
	}
	return append([]T(nil), z...), nil
}

// dtypeName is the checkpoint dtype of T.
func dtypeName[T Float]() string {
	var z T
	if _, ok := any(z).(float32); ok {
		return "float32"
	}
	return "float64"
}

// encodeValues encodes values little-endian in T's width.
func encodeValues[T Float](v []T) []byte {
	var z T
	if _, ok := any(z).(float32); ok {
		out := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(x)))
		}
		return out
	}
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(float64(x)))
	}
	return out
}

// decodeValues decodes a float32 or float64 variable into dst (whose
// length and dimensions it checks).
func decodeValues[T Float](sv *Variable, dims []int, dst []T) error {
	if len(sv.Dims) != len(dims) {
		return fmt.Errorf("native: variable %s/%s has dimensions %v, want %v", sv.Scope, sv.Name, sv.Dims, dims)
	}
	for i := range dims {
		if sv.Dims[i] != dims[i] {
			return fmt.Errorf("native: variable %s/%s has dimensions %v, want %v", sv.Scope, sv.Name, sv.Dims, dims)
		}
	}
	switch sv.DType {
	case "float32":
		if len(sv.Data) != 4*len(dst) {
			return fmt.Errorf("native: variable %s/%s has %d bytes, want %d", sv.Scope, sv.Name, len(sv.Data), 4*len(dst))
		}
		for i := range dst {
			dst[i] = T(math.Float32frombits(binary.LittleEndian.Uint32(sv.Data[4*i:])))
		}
	case "float64":
		if len(sv.Data) != 8*len(dst) {
			return fmt.Errorf("native: variable %s/%s has %d bytes, want %d", sv.Scope, sv.Name, len(sv.Data), 8*len(dst))
		}
		for i := range dst {
			dst[i] = T(math.Float64frombits(binary.LittleEndian.Uint64(sv.Data[8*i:])))
		}
	default:
		return fmt.Errorf("native: variable %s/%s has dtype %s, want float32 or float64", sv.Scope, sv.Name, sv.DType)
	}
	return nil
}

// int64Var is an int64 scalar variable.
func int64Var(scope, name string, v int64) Variable {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, uint64(v))
	return Variable{Scope: scope, Name: name, DType: "int64", Dims: []int{}, Data: b}
}

// ExportVariables returns the trainer's state as the variables of GoMLX's
// context after the same number of steps: every model parameter (random
// features included), the global steps, the learning-rate variable and
// Adam's moments, in T's dtype, plus the variables an import carried that
// the engine does not use, unchanged; the GoMLX generator state is the
// imported one or, if none was imported, that of a fresh GoMLX run of the
// trainer's seed.
func (t *Trainer[T]) ExportVariables() ([]Variable, error) {
	dt := dtypeName[T]()
	var out []Variable
	out = append(out, t.extra...)
	hasRNG := false
	for _, v := range t.extra {
		hasRNG = hasRNG || v.Scope == "/" && v.Name == rngStateName
	}
	if !hasRNG {
		out = append(out, rngState(t.seed))
	}
	out = append(out, int64Var("/", globalStepName, int64(t.step)))
	lr := t.opt.LR
	if t.step > 0 {
		lr = ScheduleAt(t.step-1, t.opt.LR, t.opt.Warmup, t.opt.Steps)
	}
	out = append(out, Variable{Scope: lrScope, Name: lrName, DType: dt, Dims: []int{}, Data: encodeValues([]T{T(lr)})})
	for _, p := range t.model.params {
		out = append(out, Variable{Scope: p.Scope, Name: p.Name, DType: dt, Dims: append([]int(nil), p.Dims...), Data: encodeValues(p.Value)})
	}
	out = append(out, int64Var(adamScope, globalStepName, int64(t.step)))
	for i, p := range t.model.params {
		if !p.Trainable {
			continue
		}
		sc := adamScope + p.Scope
		out = append(out,
			Variable{Scope: sc, Name: p.Name + firstMomentName, DType: dt, Dims: append([]int(nil), p.Dims...), Data: encodeValues(t.m1[i])},
			Variable{Scope: sc, Name: p.Name + secondMomentName, DType: dt, Dims: append([]int(nil), p.Dims...), Data: encodeValues(t.m2[i])})
	}
	return out, nil
}

// rngStateName is the name of GoMLX's generator state variable (root
// scope), which package train needs to resume a run.
const rngStateName = arch.RNGStateName

// rngState returns the generator state a GoMLX run of package train with
// this seed starts from (arch.RunRNGState, GoMLX's
// context.SetRNGStateFromSeed(seed>>1)): the engine draws nothing from it,
// but a checkpoint must carry one.
func rngState(seed uint64) Variable {
	st := arch.RunRNGState(seed)
	data := make([]byte, 8*len(st))
	for i, v := range st {
		binary.LittleEndian.PutUint64(data[8*i:], v)
	}
	return Variable{Scope: "/", Name: rngStateName, DType: "uint64", Dims: []int{len(st)}, Data: data}
}

// ImportVariables loads a state written by ExportVariables or by package
// train (a checkpoint's Variables): every model parameter must be present
// with its shape; Adam's moments and the step counters are loaded when
// present (absent: zero, as a fresh optimiser), and variables the engine
// does not use (other than the trainer's metrics) are kept for the next
// export.
func (t *Trainer[T]) ImportVariables(vars []Variable) error {
	m := t.model
	byKey := map[string]*Variable{}
	for i := range vars {
		byKey[vars[i].Scope+"\x00"+vars[i].Name] = &vars[i]
	}
	used := map[string]bool{}
	for _, p := range m.params {
		key := p.Scope + "\x00" + p.Name
		sv, ok := byKey[key]
		if !ok {
			return fmt.Errorf("native: the variables lack %s/%s", p.Scope, p.Name)
		}
		if err := decodeValues(sv, p.Dims, p.Value); err != nil {
			return err
		}
		used[key] = true
	}
	for i, p := range m.params {
		if !p.Trainable {
			continue
		}
		for j, name := range []string{firstMomentName, secondMomentName} {
			key := adamScope + p.Scope + "\x00" + p.Name + name
			dst := [][]T{t.m1[i], t.m2[i]}[j]
			sv, ok := byKey[key]
			if !ok {
				clear(dst)
				continue
			}
			if err := decodeValues(sv, p.Dims, dst); err != nil {
				return err
			}
			used[key] = true
		}
	}
	step := int64(0)
	for _, sc := range []string{adamScope, "/"} {
		key := sc + "\x00" + globalStepName
		sv, ok := byKey[key]
		if !ok {
			continue
		}
		used[key] = true
		if sv.DType != "int64" || len(sv.Data) != 8 {
			return fmt.Errorf("native: variable %s/%s is not an int64 scalar", sv.Scope, sv.Name)
		}
		if sc == adamScope || step == 0 {
			step = int64(binary.LittleEndian.Uint64(sv.Data))
		}
	}
	if step < 0 {
		return fmt.Errorf("native: negative step count %d", step)
	}
	used[lrScope+"\x00"+lrName] = true
	t.extra = t.extra[:0]
	for _, v := range vars {
		if !used[v.Scope+"\x00"+v.Name] && !isMetricsScope(v.Scope) {
			t.extra = append(t.extra, v)
		}
	}
	t.step = int(step)
	if t.opt.Redraw > 0 {
		t.redraws = t.step / t.opt.Redraw
	}
	return nil
}

// isMetricsScope reports whether a scope holds GoMLX trainer metrics.
func isMetricsScope(s string) bool { return len(s) >= 8 && s[:8] == "/metrics" }

// LoadWeights sets the model parameters that keep accepts (nil: all) from
// vars, each of which must be present with its shape; the optimiser state
// and the step count are left alone: the initialisation of a fine-tuning
// run from a pre-trained model (train.Config.InitFrom loads the
// embeddings and blocks, adapters excluded).
func (t *Trainer[T]) LoadWeights(vars []Variable, keep func(scope, name string) bool) error {
	byKey := map[string]*Variable{}
	for i := range vars {
		byKey[vars[i].Scope+"\x00"+vars[i].Name] = &vars[i]
	}
	for _, p := range t.model.params {
		if keep != nil && !keep(p.Scope, p.Name) {
			continue
		}
		sv, ok := byKey[p.Scope+"\x00"+p.Name]
		if !ok {
			return fmt.Errorf("native: the variables lack %s/%s", p.Scope, p.Name)
		}
		if err := decodeValues(sv, p.Dims, p.Value); err != nil {
			return err
		}
	}
	return nil
}

// ParamCounts returns the numbers of trainable parameters and of model
// parameters (random features excluded), as train.Trainer.Params counts
// them.
func (m *Model[T]) ParamCounts() (trainable, model int) {
	for _, p := range m.params {
		if arch.IsFixedName(p.Name) {
			continue
		}
		model += len(p.Value)
		if p.Trainable {
			trainable += len(p.Value)
		}
	}
	return trainable, model
}
