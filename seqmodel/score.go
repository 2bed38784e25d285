package seqmodel

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/native"
)

// Defaults of ScorerOptions: the forward passes' memory budget (1 GiB),
// the most sequences one forward pass takes when the budget allows it,
// and the most replicas. DefaultMaxBatch: on 2 cores of an AMD EPYC Zen 3
// (OpenBLAS, FFTW) the FD-TNN and the Performer of length 512, width 64
// and depth 4 took 3.1–3.5 ms a sequence in passes of 2 to 16 sequences
// (4.2 ms alone) and 5.4–6.0 ms in passes of 32, whose buffers (12 MB a
// sequence) no longer fit the caches as well (best of 6 to 26 passes,
// 2026-12-05, load average 11).
const (
	DefaultMaxMemory = 1 << 30
	DefaultMaxBatch  = 16
	MaxReplicas      = 1024
)

// ScorerOptions configure a Scorer. Zero values take the defaults.
type ScorerOptions struct {
	// MaxBatch bounds the sequences of one forward pass: a call with more
	// runs several passes (0: the largest batch up to DefaultMaxBatch that
	// the memory budget allows).
	MaxBatch int
	// MaxMemory bounds the estimated working memory of the forward passes
	// of all replicas together, in bytes (0: DefaultMaxMemory). The
	// estimate (arch.ModelConfig.EstimateMemory of a forward pass at
	// MaxBatch sequences, per replica) is checked before anything is
	// allocated; the weights are the model's, shared, and not counted.
	MaxMemory int64
	// Replicas is the number of forward passes that may run at once,
	// each with buffers of its own and every one on all cores (0: 1).
	Replicas int
}

// Scorer computes the logits of batches of sequences with a model's
// forward pass (native.Predictor), at most MaxBatch sequences per pass.
// Its methods are safe for concurrent use: up to Replicas calls run at
// once, further calls wait for a free replica.
type Scorer struct {
	m        *Model
	maxBatch int
	memory   float64
	pool     chan *replica
}

// replica is one forward pass with its token buffer.
type replica struct {
	p   *native.Predictor[float32]
	tok []int32
}

// ForwardMemory estimates the working memory in bytes of one forward pass
// of the model over batch sequences: the live tensors of its graph
// (arch.ModelConfig.EstimateMemory), which bound the native engine's
// buffers, and the batch's token ids.
func (m *Model) ForwardMemory(batch int) (float64, error) {
	est, err := m.h.Model.EstimateMemory(batch, false)
	if err != nil {
		return 0, err
	}
	return est.Activations + 4*float64(batch)*float64(m.h.MaxLength), nil
}

// NewScorer returns a scorer of the model. It refuses options out of
// range and a budget that the replicas' forward passes at MaxBatch (or at
// one sequence, when MaxBatch is 0) would exceed, before allocating them.
func (m *Model) NewScorer(o ScorerOptions) (*Scorer, error) {
	if o.MaxBatch < 0 || o.MaxBatch > limits.MaxDim {
		return nil, fmt.Errorf("seqmodel: the batch bound must lie in [1, %d], got %d", limits.MaxDim, o.MaxBatch)
	}
	if o.MaxMemory < 0 {
		return nil, fmt.Errorf("seqmodel: the memory budget must be positive, got %d bytes", o.MaxMemory)
	}
	if o.Replicas < 0 || o.Replicas > MaxReplicas {
		return nil, fmt.Errorf("seqmodel: replicas must lie in [1, %d], got %d", MaxReplicas, o.Replicas)
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if _, err := limits.Matrix("seqmodel: a batch of tokens", max(o.MaxBatch, 1), m.h.MaxLength); err != nil {
		return nil, err
	}
	budget := float64(o.MaxMemory) / float64(o.Replicas)
	batch := o.MaxBatch
	if batch == 0 {
		// The largest batch up to DefaultMaxBatch within the budget: the
		// estimate grows with the batch.
		lo, hi := 1, DefaultMaxBatch
		for lo < hi {
			mid := (lo + hi + 1) / 2
			need, err := m.ForwardMemory(mid)
			if err != nil {
				return nil, err
			}
			if need <= budget {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		batch = lo
	}
	need, err := m.ForwardMemory(batch)
	if err != nil {
		return nil, err
	}
	if total := need * float64(o.Replicas); total > float64(o.MaxMemory) {
		return nil, fmt.Errorf("seqmodel: %d forward passes of %d sequences of %d tokens would need about %s, more than the memory budget of %s",
			o.Replicas, batch, m.h.MaxLength, limits.Bytes(total), limits.Bytes(float64(o.MaxMemory)))
	}
	s := &Scorer{m: m, maxBatch: batch, memory: need * float64(o.Replicas), pool: make(chan *replica, o.Replicas)}
	for range o.Replicas {
		p, err := m.proto.Clone(batch)
		if err != nil {
			return nil, fmt.Errorf("seqmodel: %w", err)
		}
		s.pool <- &replica{p: p}
	}
	return s, nil
}

// MaxBatch returns the most sequences of one forward pass.
func (s *Scorer) MaxBatch() int { return s.maxBatch }

// Memory returns the estimated working memory of the scorer's forward
// passes, in bytes (ForwardMemory at MaxBatch times the replicas).
func (s *Scorer) Memory() float64 { return s.memory }

// Model returns the scorer's model.
func (s *Scorer) Model() *Model { return s.m }

// ErrNotFinite is the error of logits that are not finite: weights that
// overflow float32 in the forward pass (a damaged or diverged model).
var ErrNotFinite = errors.New("seqmodel: the model's logits are not finite (diverged or damaged weights)")

// Logits returns the logits (len(seqs)×Classes, row-major) of the
// sequences of token ids, each checked by CheckSequence (the first that
// fails gives a *SequenceError) and padded to the model's length, in
// forward passes of at most MaxBatch sequences. It waits for a free
// replica, and between passes checks ctx. A sequence's logits do not
// depend on the others of its pass beyond the rounding of the matrix
// products (see the package doc).
func (s *Scorer) Logits(ctx context.Context, seqs [][]int32) ([]float32, error) {
	if len(seqs) == 0 {
		return nil, errors.New("seqmodel: no sequences to score")
	}
	for i, q := range seqs {
		if err := s.m.CheckSequence(q); err != nil {
			return nil, &SequenceError{Index: i, Err: err}
		}
	}
	n, err := limits.Mul(len(seqs), s.m.h.Model.Classes)
	if err != nil {
		return nil, fmt.Errorf("seqmodel: %d sequences: %w", len(seqs), err)
	}
	var r *replica
	select {
	case r = <-s.pool:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { s.pool <- r }()
	L, C := s.m.h.MaxLength, s.m.h.Model.Classes
	out := make([]float32, n)
	for lo := 0; lo < len(seqs); lo += s.maxBatch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+s.maxBatch, len(seqs))
		if cap(r.tok) < (hi-lo)*L {
			r.tok = make([]int32, s.maxBatch*L)
		}
		tok := r.tok[:(hi-lo)*L]
		clear(tok)
		for i := lo; i < hi; i++ {
			copy(tok[(i-lo)*L:], seqs[i])
		}
		z, err := r.p.Logits(tok)
		if err != nil {
			return nil, fmt.Errorf("seqmodel: %w", err)
		}
		for _, v := range z {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, ErrNotFinite
			}
		}
		copy(out[lo*C:hi*C], z)
	}
	return out, nil
}

// Labels returns the class of the largest logit of each row of logits
// (rows of classes values; the first on a tie), as train's evaluation
// picks it.
func Labels(logits []float32, classes int) []int {
	out := make([]int, len(logits)/classes)
	for i := range out {
		row := logits[i*classes : (i+1)*classes]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		out[i] = best
	}
	return out
}

// Probabilities returns the softmax of each row of logits (rows of
// classes values), in float64: p_j = exp(z_j − max z)/Σ_k exp(z_k − max z).
func Probabilities(logits []float32, classes int) []float64 {
	out := make([]float64, len(logits))
	for i := 0; i+classes <= len(logits); i += classes {
		row := logits[i : i+classes]
		mx := float64(row[0])
		for _, v := range row {
			mx = math.Max(mx, float64(v))
		}
		var s float64
		for j, v := range row {
			e := math.Exp(float64(v) - mx)
			out[i+j] = e
			s += e
		}
		for j := range row {
			out[i+j] /= s
		}
	}
	return out
}
