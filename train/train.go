package train

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/native"
	"github.com/kernelkit/kernelkit/train/engine"
)

// Example is one sequence: token ids (0 is padding) and a class label.
type Example struct {
	Tokens []int32
	Label  int
}

// Config describes a training run.
type Config struct {
	Model arch.ModelConfig
	// Steps is the total number of optimiser steps (a resumed run continues
	// up to it); Batch the mini-batch size.
	Steps, Batch int
	// LR is the peak learning rate of AdamW, reached linearly after Warmup
	// steps and decayed to zero by a cosine over the remaining steps;
	// WeightDecay is AdamW's decoupled weight decay (applied to every
	// trainable variable).
	LR, WeightDecay float64
	Warmup          int
	// Seed seeds the initialisation, the random features and the order of
	// the mini-batches.
	Seed uint64
	// Redraw redraws the attention projections (FAVOR+, HRF) every Redraw
	// steps (0: never).
	Redraw int
	// EvalEvery evaluates on the evaluation set every EvalEvery steps (0:
	// only at the end).
	EvalEvery int
	// Device is the engine and where it runs: empty or DeviceCPU ("cpu")
	// for the native CPU engine (the default), else a GoMLX backend
	// configuration for the graph engine, which the program must link in
	// (package train/graphtrain): "go" or "go:ops_sequential"
	// (nn.DefaultBackend) for GoMLX's pure-Go backend, "xla:cuda" where
	// linked in. The CLI names it with --device cpu|go|cuda (the
	// deprecated --backend takes the GoMLX names).
	Device string
	// Checkpoint, if set, is the checkpoint file: a run resumes from it
	// when it exists and writes it every CheckpointEvery steps (0: only at
	// the end) and at the end.
	Checkpoint      string
	CheckpointEvery int
	// InitFrom, if set, is a checkpoint of a pre-trained model whose
	// embeddings and blocks initialise this one (fine-tuning; the
	// classifier and adapters start fresh). A run that resumes from
	// Checkpoint ignores it (the checkpoint already holds those weights).
	InitFrom string
	// Progress, if set, is called after every step.
	Progress func(Progress)
	// Evaluated, if set, is called after every evaluation on the
	// evaluation set (every EvalEvery steps and at the end) with the step,
	// the accuracy and the mean loss: a log that survives an interrupted
	// run, whose Result is not returned.
	Evaluated func(step int, acc, loss float64)
	// MaxMemory is the memory budget in bytes (0: DefaultMaxMemory): New
	// refuses a model whose parameters, optimiser state and activations
	// of a step (EstimateMemory) exceed it, before anything is built.
	MaxMemory int64
}

// Progress reports a finished step.
type Progress struct {
	Step, Steps int
	Loss        float64
}

// Result reports a training run.
type Result struct {
	// StartStep is the step the run started from (non-zero when resumed).
	StartStep int `json:"start_step"`
	Steps     int `json:"steps"`
	// Loss holds the mini-batch loss of every step run.
	Loss []float64 `json:"loss"`
	// EvalStep, EvalAccuracy and EvalLoss are the evaluations.
	EvalStep     []int     `json:"eval_step"`
	EvalAccuracy []float64 `json:"eval_accuracy"`
	EvalLoss     []float64 `json:"eval_loss"`
	// Seconds is the training time (evaluations excluded); StepsPerSecond
	// the rate after the first step (which compiles the graph).
	Seconds        float64 `json:"seconds"`
	StepsPerSecond float64 `json:"steps_per_second"`
	// TrainableParams counts the trainable parameters, ModelParams every
	// parameter of the model (random features excluded).
	TrainableParams int `json:"trainable_params"`
	ModelParams     int `json:"model_params"`
	// Device is the run's Config.Device ("cpu" for the native engine) and
	// BLAS the BLAS the native engine ran on (blas.Name(); empty on the
	// graph engine); both are empty in reports written before they
	// existed. Backend describes the engine in words, e.g. "cpu (native
	// engine, float32; BLAS openblas …)" or the GoMLX backend's name: the
	// key under which reports named the engine before, kept for their
	// readers (deprecated: read "device" and "blas").
	Device  string `json:"device,omitempty"`
	BLAS    string `json:"blas,omitempty"`
	Backend string `json:"backend"`
	// History is the whole run's curve: for a run resumed from a
	// checkpoint, the earlier steps' losses and evaluations (as far as the
	// checkpoint recorded them) followed by this run's.
	History *History `json:"history,omitempty"`
}

// Trainer trains one model.
type Trainer struct {
	cfg Config
	eng engine.Engine
	// nat is the native CPU engine (eng's), nil on the graph engine.
	nat  *native.Trainer[float32]
	step int
	hist History // the curve up to step (checkpoints carry it)
}

// checkConfig validates cfg (after the model defaults) and checks the
// memory of a run with data bytes of data sets against the budget.
func checkConfig(cfg *Config, data float64) error {
	cfg.Model.Defaults()
	if err := cfg.Model.Validate(); err != nil {
		// A size limit of the model may be the symptom of a run far
		// above the memory budget: report the budget, which names the
		// memory the run would need, when the sizes allow an estimate.
		if m := &cfg.Model; slices.Contains(arch.Kinds, m.Kind) && cfg.Batch > 0 && min(m.Vocab, m.Classes, m.Length, m.Width, m.Depth, m.Heads, m.Hidden, m.Expand) > 0 {
			if need, nerr := EstimateMemory(*cfg, data); nerr == nil {
				if berr := need.Check(cfg.MaxMemory); berr != nil {
					return berr
				}
			}
		}
		return err
	}
	if cfg.Steps < 0 || cfg.Batch <= 0 || cfg.Warmup < 0 || cfg.Redraw < 0 || cfg.EvalEvery < 0 || cfg.CheckpointEvery < 0 {
		return fmt.Errorf("train: need steps ≥ 0, batch > 0 and non-negative warm-up, redraw, eval and checkpoint intervals")
	}
	if err := limits.Dim("train: batch", cfg.Batch); err != nil {
		return err
	}
	if !(cfg.LR > 0) || math.IsInf(cfg.LR, 0) || !(cfg.WeightDecay >= 0) || math.IsInf(cfg.WeightDecay, 0) {
		return fmt.Errorf("train: need a positive finite learning rate and a non-negative weight decay, got %v and %v", cfg.LR, cfg.WeightDecay)
	}
	need, err := EstimateMemory(*cfg, data)
	if err != nil {
		return err
	}
	if err := need.Check(cfg.MaxMemory); err != nil {
		return err
	}
	// Under a budget raised far enough, one tensor may still pass the
	// dense-matrix limit.
	_, err = limits.Matrix("train: batch of tokens", cfg.Batch, cfg.Model.Length)
	return err
}

// New prepares a trainer: the engine (Config.Device), the model
// resumed from cfg.Checkpoint if that file exists, or initialised from
// the seed (its backbone from cfg.InitFrom when set), and the random
// features. The graph engine (a GoMLX backend) must be linked into the
// program: package train/graphtrain registers it.
func New(cfg Config) (*Trainer, error) {
	if err := checkConfig(&cfg, 0); err != nil {
		return nil, err
	}
	open := func(run engine.Run) (engine.Engine, error) { return openNative(&cfg, run) }
	if !IsNative(cfg.Device) {
		if open = engine.Graph(); open == nil {
			return nil, fmt.Errorf("train: the GoMLX engine (device %q) is not linked into this program (import github.com/kernelkit/kernelkit/train/graphtrain)", cfg.Device)
		}
	}
	run := engine.Run{Model: cfg.Model, Seed: cfg.Seed, Device: cfg.Device, Options: native.Options{
		LR: cfg.LR, WeightDecay: cfg.WeightDecay, Warmup: cfg.Warmup, Steps: cfg.Steps, Redraw: cfg.Redraw,
	}}
	t := &Trainer{cfg: cfg}
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
			if ck.Step < int64(cfg.Steps) { // training continues: it needs the optimiser state
				if err := checkOptimizerState(ck, cfg.Checkpoint); err != nil {
					return nil, err
				}
			}
			run.Resume, run.Step = toNative(ck.Variables), int(ck.Step)
			t.step = int(ck.Step)
			t.hist = resumedHistory(ck)
		case errors.Is(err, os.ErrNotExist):
		default:
			return nil, err
		}
	}
	if run.Resume == nil && cfg.InitFrom != "" {
		ck, err := readInitFrom(&cfg)
		if err != nil {
			return nil, err
		}
		for _, v := range toNative(ck.Variables) {
			if backbone(v.Scope, v.Name) {
				run.Init = append(run.Init, v)
			}
		}
	}
	if t.step > cfg.Steps {
		return nil, fmt.Errorf("train: the checkpoint has %d steps, more than the %d asked for", t.step, cfg.Steps)
	}
	eng, err := open(run)
	if err != nil {
		return nil, err
	}
	t.eng = eng
	if ne, ok := eng.(nativeEngine); ok {
		t.nat = ne.t
	}
	return t, nil
}

// readInitFrom reads the checkpoint of a pre-trained model (cfg.InitFrom)
// and checks that its model is this run's without its adapters and
// classes.
func readInitFrom(cfg *Config) (*Checkpoint, error) {
	if err := checkCheckpointFile(cfg.InitFrom, cfg.MaxMemory); err != nil {
		return nil, err
	}
	ck, err := ReadCheckpoint(cfg.InitFrom)
	if err != nil {
		return nil, err
	}
	pre := ck.Model
	pre.Adapter, pre.AdapterSize, pre.AdapterSeed, pre.FreezeBackbone, pre.Classes = cfg.Model.Adapter, cfg.Model.AdapterSize, cfg.Model.AdapterSeed, cfg.Model.FreezeBackbone, cfg.Model.Classes
	pre.FFT = cfg.Model.FFT
	if pre != cfg.Model {
		return nil, fmt.Errorf("train: %s holds a %s model of width %d, depth %d, length %d; this run builds a %s model of width %d, depth %d, length %d",
			cfg.InitFrom, ck.Model.Kind, ck.Model.Width, ck.Model.Depth, ck.Model.Length, cfg.Model.Kind, cfg.Model.Width, cfg.Model.Depth, cfg.Model.Length)
	}
	return ck, nil
}

// sameModel checks that a checkpoint to resume from matches the run.
func sameModel(ck *Checkpoint, cfg *Config) error {
	m := ck.Model
	m.FFT = cfg.Model.FFT
	if m != cfg.Model || ck.Seed != cfg.Seed {
		return fmt.Errorf("train: checkpoint %s was written by a different model or seed (%s, width %d, depth %d, length %d, seed %d); delete it or change --checkpoint",
			cfg.Checkpoint, ck.Model.Kind, ck.Model.Width, ck.Model.Depth, ck.Model.Length, ck.Seed)
	}
	return nil
}

// ScheduleAt returns the learning rate at step s (0-based, the number of
// steps taken): linear warm-up lr·(s+1)/warmup for s < warmup, then a
// cosine from lr to 0 over the remaining steps, lr·½(1 + cos(π(s −
// warmup)/(total − warmup))). Both engines follow it (the graph engine by
// its graph form, graphtrain.Schedule).
func ScheduleAt(s int, lr float64, warmup, total int) float64 {
	if s < warmup {
		return lr * float64(s+1) / float64(max(warmup, 1))
	}
	frac := math.Min(1, math.Max(0, float64(s-warmup)/float64(max(total-warmup, 1))))
	return lr / 2 * (1 + math.Cos(math.Pi*frac))
}

// Step returns the number of steps taken.
func (t *Trainer) Step() int { return t.step }

func (t *Trainer) checkExamples(exs []Example, what string) error {
	if len(exs) == 0 {
		return fmt.Errorf("train: empty %s set", what)
	}
	for i, e := range exs {
		if e.Label < 0 || e.Label >= t.cfg.Model.Classes {
			return fmt.Errorf("train: %s example %d has label %d, outside [0, %d)", what, i, e.Label, t.cfg.Model.Classes)
		}
		for _, tok := range e.Tokens {
			if tok < 0 || int(tok) >= t.cfg.Model.Vocab {
				return fmt.Errorf("train: %s example %d has token %d, outside the vocabulary of %d", what, i, tok, t.cfg.Model.Vocab)
			}
		}
	}
	return nil
}

// stream yields the mini-batches of an epoch-wise seeded shuffle: a new
// permutation of the examples per epoch (the rows left over when the set
// is not a multiple of the batch are skipped that epoch).
type stream struct {
	n, batch int
	rnd      *rand.Rand
	perm     []int
	next     int
}

func newStream(n, batch int, seed uint64) *stream {
	s := &stream{n: n, batch: min(batch, n), rnd: rng.NewStream(seed, 0x64617461), perm: make([]int, n)}
	s.reset()
	return s
}

func (s *stream) reset() {
	for i := range s.perm {
		s.perm[i] = i
	}
	s.rnd.Shuffle(len(s.perm), func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
	s.next = 0
}

// indices returns the next batch (batch indices; when the set is smaller
// than the batch, rows repeat the set).
func (s *stream) indices(batch int) []int {
	if s.next+s.batch > s.n {
		s.reset()
	}
	idx := make([]int, batch)
	for i := range idx {
		idx[i] = s.perm[s.next+i%s.batch]
	}
	s.next += s.batch
	return idx
}

// Fit trains up to cfg.Steps steps on trainSet, evaluating on evalSet (nil:
// no evaluation), writing checkpoints as configured. When ctx is cancelled
// it stops after the current step, writes the checkpoint (if configured)
// and returns the context's error.
func (t *Trainer) Fit(ctx context.Context, trainSet, evalSet []Example) (*Result, error) {
	if err := t.checkExamples(trainSet, "training"); err != nil {
		return nil, err
	}
	if evalSet != nil {
		if err := t.checkExamples(evalSet, "evaluation"); err != nil {
			return nil, err
		}
	}
	cfg := t.cfg
	res := &Result{StartStep: t.step, Device: cmp.Or(cfg.Device, DeviceCPU), Backend: t.eng.Name()}
	if t.nat != nil {
		res.BLAS = blas.Name()
	}
	st := newStream(len(trainSet), cfg.Batch, cfg.Seed)
	for i := 0; i < t.step; i++ { // resume: the same batches as a straight run
		st.indices(cfg.Batch)
	}
	var steady time.Duration
	for t.step < cfg.Steps {
		if err := ctx.Err(); err != nil {
			if cfg.Checkpoint != "" {
				if serr := t.Save(cfg.Checkpoint); serr != nil {
					return nil, errors.Join(err, serr)
				}
			}
			return nil, err
		}
		idx := st.indices(cfg.Batch)
		t0 := time.Now()
		loss, err := t.trainStep(trainSet, idx)
		if err != nil {
			return nil, fmt.Errorf("train: step %d: %w", t.step+1, err)
		}
		el := time.Since(t0)
		res.Seconds += el.Seconds()
		if len(res.Loss) > 0 {
			steady += el
		}
		t.step++
		res.Loss = append(res.Loss, loss)
		t.hist.Loss = append(t.hist.Loss, loss)
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return nil, fmt.Errorf("train: the loss diverged at step %d (lower the learning rate)", t.step)
		}
		if cfg.Progress != nil {
			cfg.Progress(Progress{Step: t.step, Steps: cfg.Steps, Loss: loss})
		}
		if evalSet != nil && cfg.EvalEvery > 0 && t.step%cfg.EvalEvery == 0 && t.step < cfg.Steps {
			if err := t.evalInto(res, evalSet); err != nil {
				return nil, err
			}
		}
		if cfg.Checkpoint != "" && cfg.CheckpointEvery > 0 && t.step%cfg.CheckpointEvery == 0 && t.step < cfg.Steps {
			if err := t.Save(cfg.Checkpoint); err != nil {
				return nil, err
			}
		}
	}
	res.Steps = t.step
	if n := len(res.Loss) - 1; n > 0 && steady > 0 {
		res.StepsPerSecond = float64(n) / steady.Seconds()
	}
	if evalSet != nil {
		if err := t.evalInto(res, evalSet); err != nil {
			return nil, err
		}
	}
	res.TrainableParams, res.ModelParams = t.Params()
	h := t.history()
	res.History = &h
	if cfg.Checkpoint != "" {
		if err := t.Save(cfg.Checkpoint); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// trainStep takes one optimiser step on the examples idx of set (the
// engine redraws the random features when due) and returns the batch
// loss.
func (t *Trainer) trainStep(set []Example, idx []int) (float64, error) {
	tok, lab := packTokens(set, idx, t.cfg.Model.Length)
	return t.eng.Step(tok, lab)
}

func (t *Trainer) evalInto(res *Result, set []Example) error {
	acc, loss, err := t.Evaluate(set)
	if err != nil {
		return err
	}
	res.EvalStep = append(res.EvalStep, t.step)
	res.EvalAccuracy = append(res.EvalAccuracy, acc)
	res.EvalLoss = append(res.EvalLoss, loss)
	h := &t.hist
	if n := len(h.EvalStep); n > 0 && h.EvalStep[n-1] == t.step { // a finished run evaluated again
		h.EvalAccuracy[n-1], h.EvalLoss[n-1] = acc, loss
	} else {
		h.EvalStep = append(h.EvalStep, t.step)
		h.EvalAccuracy = append(h.EvalAccuracy, acc)
		h.EvalLoss = append(h.EvalLoss, loss)
	}
	if t.cfg.Evaluated != nil {
		t.cfg.Evaluated(t.step, acc, loss)
	}
	return nil
}

// Predict returns the logits (len(set)×Classes) of the examples.
func (t *Trainer) Predict(set []Example) ([][]float64, error) {
	b := t.cfg.Batch
	out := make([][]float64, 0, len(set))
	for lo := 0; lo < len(set); lo += b {
		idx := make([]int, b)
		for i := range idx {
			idx[i] = -1
			if lo+i < len(set) {
				idx[i] = lo + i
			}
		}
		flat, err := t.batchLogits(set, idx)
		if err != nil {
			return nil, fmt.Errorf("train: evaluation: %w", err)
		}
		c := t.cfg.Model.Classes
		for i := 0; i < b && lo+i < len(set); i++ {
			row := make([]float64, c)
			for j := range row {
				row[j] = float64(flat[i*c+j])
			}
			out = append(out, row)
		}
	}
	return out, nil
}

// batchLogits returns the logits (len(idx)×Classes, row-major) of the
// examples idx of set (an index below zero is a padding row).
func (t *Trainer) batchLogits(set []Example, idx []int) ([]float32, error) {
	tok, _ := packTokens(set, idx, t.cfg.Model.Length)
	return t.eng.Logits(tok)
}

// Evaluate returns the accuracy and mean cross-entropy on the examples,
// or an error when the logits are not finite.
func (t *Trainer) Evaluate(set []Example) (acc, loss float64, err error) {
	if err := t.checkExamples(set, "evaluation"); err != nil {
		return 0, 0, err
	}
	logits, err := t.Predict(set)
	if err != nil {
		return 0, 0, err
	}
	correct := 0
	for i, row := range logits {
		best := 0
		mx := math.Inf(-1)
		for j, v := range row {
			if v > row[best] {
				best = j
			}
			mx = math.Max(mx, v)
		}
		var s float64
		for _, v := range row {
			s += math.Exp(v - mx)
		}
		loss += mx + math.Log(s) - row[set[i].Label]
		if best == set[i].Label {
			correct++
		}
	}
	n := float64(len(set))
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		// Logits that overflowed (a damaged or diverged model): an
		// accuracy of NaN-valued rows would be meaningless.
		return 0, 0, fmt.Errorf("train: the model's evaluation loss is %v: its logits are not finite (diverged or damaged weights)", loss)
	}
	return float64(correct) / n, loss / n, nil
}

// Params returns the numbers of trainable parameters and of model
// parameters (embeddings, blocks, adapters and classifier; random
// features and optimiser state excluded). On the graph engine the
// variables exist once the model has been built (after the first step or
// evaluation).
func (t *Trainer) Params() (trainable, model int) { return t.eng.Params() }

// Save writes a checkpoint of the current state.
func (t *Trainer) Save(path string) error {
	vars, err := t.eng.Variables()
	if err != nil {
		return err
	}
	h := t.history()
	return WriteCheckpoint(path, &Checkpoint{Format: CheckpointFormat, Model: t.cfg.Model, Seed: t.cfg.Seed, Step: int64(t.step), Variables: fromNative(vars), History: &h})
}

// history returns a copy of the curve so far.
func (t *Trainer) history() History {
	h := t.hist
	h.Loss = slices.Clone(h.Loss)
	h.EvalStep = slices.Clone(h.EvalStep)
	h.EvalAccuracy = slices.Clone(h.EvalAccuracy)
	h.EvalLoss = slices.Clone(h.EvalLoss)
	return h
}

// resumedHistory is the curve a run resuming from ck continues: the
// checkpoint's, or an empty one starting at its step.
func resumedHistory(ck *Checkpoint) History {
	if ck.History != nil {
		return *ck.History
	}
	return History{LossFrom: int(ck.Step)}
}
