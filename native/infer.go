package native

import (
	"fmt"

	"github.com/kernelkit/kernelkit/arch"
)

// Predictor is a trained Model's forward pass alone, for inference: the
// logits of batches of token sequences, without a loss, a backward pass,
// gradients or optimiser state. It runs Model.Forward itself — the
// training engine's forward code, layer for layer — so its logits are
// those of Trainer.Logits on the same token batch, bit for bit. Two
// things differ, neither touching an arithmetic operation:
//
//   - No parameter has a gradient buffer (Param.Grad is nil; nothing in a
//     forward pass reads it), and the optimiser's moments never exist.
//   - The residual stream, which Forward keeps after every sub-block for
//     the backward pass (2·Depth + 1 buffers of B·L×Width), is two
//     buffers used in turn: Logits hands Forward a list of residual
//     buffers that alternate between the two, which Forward's buffer reuse
//     (grow) keeps as they are. The layers keep their own forward buffers
//     (reused from call to call).
//
// Sequences are the model's length (cfg.Length) long: shorter ones are
// padded with token 0, which the model masks out of its attention keys
// and its pooling exactly as in training (package train pads every batch
// the same way). A Predictor is not safe for concurrent use; Clone
// returns another that shares the weights (read only) and has buffers of
// its own.
type Predictor[T Float] struct {
	m        *Model[T]
	maxBatch int
	res      [2][]T // the residual stream's two buffers
}

// NewPredictor builds the model of cfg (arch.ModelConfig.Defaults applied,
// the configuration validated) and sets every parameter, random features
// included, from vars, which must hold each of the model's variables
// once with its dimensions (float32 or float64 data) and nothing else.
// maxBatch bounds the sequences of one Logits call; the caller sizes it
// to its memory budget (arch.ModelConfig.EstimateMemory).
func NewPredictor[T Float](cfg arch.ModelConfig, vars []Variable, maxBatch int) (*Predictor[T], error) {
	if maxBatch < 1 {
		return nil, fmt.Errorf("native: a predictor's batch bound must be positive, got %d", maxBatch)
	}
	m, err := NewModel[T](cfg)
	if err != nil {
		return nil, err
	}
	if len(vars) != len(m.params) {
		return nil, fmt.Errorf("native: %d variables for a %s model of %d", len(vars), m.cfg.Kind, len(m.params))
	}
	byKey := make(map[string]*Variable, len(vars))
	for i := range vars {
		key := vars[i].Scope + "\x00" + vars[i].Name
		if byKey[key] != nil {
			return nil, fmt.Errorf("native: variable %s/%s given twice", vars[i].Scope, vars[i].Name)
		}
		byKey[key] = &vars[i]
	}
	for _, p := range m.params {
		sv := byKey[p.Scope+"\x00"+p.Name]
		if sv == nil {
			return nil, fmt.Errorf("native: the variables lack %s/%s of the %s model", p.Scope, p.Name, m.cfg.Kind)
		}
		if err := decodeValues(sv, p.Dims, p.Value); err != nil {
			return nil, err
		}
	}
	dropGrads(m)
	return &Predictor[T]{m: m, maxBatch: maxBatch}, nil
}

// dropGrads releases the gradient buffers of m's parameters and of the
// fused input maps of its GTUs and GLUs, which only backward passes use.
func dropGrads[T Float](m *Model[T]) {
	for _, p := range m.params {
		p.Grad = nil
	}
	for _, sb := range m.subs {
		switch l := sb.layer.(type) {
		case *gtu[T]:
			l.luv.cat.w.Grad, l.luv.cat.b.Grad = nil, nil
		case *glu[T]:
			l.l12.cat.w.Grad, l.l12.cat.b.Grad = nil, nil
		}
	}
}

// Clone returns a predictor of the same model that shares p's weights
// (read only: neither modifies them) with buffers of its own, for
// concurrent use alongside p, taking at most maxBatch sequences a call.
func (p *Predictor[T]) Clone(maxBatch int) (*Predictor[T], error) {
	if maxBatch < 1 {
		return nil, fmt.Errorf("native: a predictor's batch bound must be positive, got %d", maxBatch)
	}
	m, err := NewModel[T](p.m.cfg)
	if err != nil { // p's configuration validated when p was built
		return nil, err
	}
	for i, q := range m.params {
		q.Value = p.m.params[i].Value
	}
	dropGrads(m)
	return &Predictor[T]{m: m, maxBatch: maxBatch}, nil
}

// Config returns the model's configuration (defaults applied).
func (p *Predictor[T]) Config() arch.ModelConfig { return p.m.cfg }

// MaxBatch returns the most sequences one Logits call takes.
func (p *Predictor[T]) MaxBatch() int { return p.maxBatch }

// Params returns the model's parameters (their Grad nil). They are the
// predictor's weights: a caller must not modify them while a Logits call
// of p or of a clone runs.
func (p *Predictor[T]) Params() []*Param[T] { return p.m.params }

// Logits returns the logits (B×Classes, row-major) of B token sequences
// (B·Length ids, row-major, 0 = padding, 1 ≤ B ≤ MaxBatch) in a buffer of
// the predictor, valid until its next call. Token ids outside the
// vocabulary, a token count that is not a positive multiple of the length
// or more than MaxBatch sequences give an error.
func (p *Predictor[T]) Logits(tokens []int32) ([]T, error) {
	L := p.m.cfg.Length
	if len(tokens) == 0 || len(tokens)%L != 0 {
		return nil, fmt.Errorf("native: %d tokens are not a positive multiple of the length %d", len(tokens), L)
	}
	if b := len(tokens) / L; b > p.maxBatch {
		return nil, fmt.Errorf("native: %d sequences, more than the predictor's batch bound of %d", b, p.maxBatch)
	}
	p.residual(len(tokens) * p.m.cfg.Width)
	return p.m.Forward(tokens)
}

// residual sets the model's residual-stream buffers to the predictor's
// two, used in turn (sub-block i reads buffer i mod 2 and writes the
// other), each of at least n values. Forward keeps a buffer whose
// capacity suffices (grow), so the list stays as set.
func (p *Predictor[T]) residual(n int) {
	m := p.m
	for i := range p.res {
		if cap(p.res[i]) < n {
			p.res[i] = make([]T, n)
		}
	}
	if len(m.xs) != len(m.subs)+1 {
		m.xs = make([][]T, len(m.subs)+1)
	}
	for i := range m.xs {
		m.xs[i] = p.res[i%2][:0]
	}
}
