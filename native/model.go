package native

import (
	"fmt"
	"math"
	"strings"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/internal/rng"
)

// Model is arch.ModelConfig's sequence classifier (the graph of
// nn.Logits) with a hand-written backward pass: token
// embedding (plus learned positions for the attention kinds), Depth
// blocks of two pre-norm residual sub-blocks (TNN kinds: GTU with the
// kind's token mixer, then GLU), masked mean pooling, RMS norm and a linear
// classifier, trained with the mean softmax cross-entropy. Its parameters
// carry the scopes, names and shapes of the GoMLX context variables that
// Logits creates.
type Model[T Float] struct {
	cfg      arch.ModelConfig
	emb, pos *Param[T]
	subs     []*subBlock[T] // 2·Depth sub-blocks in order
	pool     rmsNorm[T]
	head     *linear[T]
	params   []*Param[T]
	std      map[*Param[T]]float64 // initial standard deviation (absent: zero)

	batch     int
	tokens    []int32
	mask, cnt []T
	xs        [][]T // residual stream: embedding, then after every sub-block
	pooled    []T
	logits    []T
	dlogits   []T
	dx        []T
}

// subBlock is x + adapter(layer(norm(x))).
type subBlock[T Float] struct {
	norm    rmsNorm[T]
	layer   Layer[T]
	adapter Layer[T] // nil: none
}

// masker is implemented by layers that need the key-padding mask (B·L
// entries, 1 for real tokens, 0 for padding).
type masker[T Float] interface{ SetMask(mask []T) }

// NewModel builds the model of cfg (Defaults are applied and the
// configuration validated) with zero parameters; Init draws them (random
// features: Trainer sets them from arch.ModelConfig.FixedVariables). The
// attention kinds' mixers and FFNs and the adapters are the layers
// NewAttention, NewFFN and NewAdapter build.
func NewModel[T Float](cfg arch.ModelConfig) (*Model[T], error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.RPEAct = strings.ToLower(cfg.RPEAct)
	m := &Model[T]{cfg: cfg, std: map[*Param[T]]float64{}}
	frozen := !cfg.FreezeBackbone // trainable flag of backbone variables
	d := cfg.Width
	m.emb = newParam[T]("/embed", "tokens", frozen, cfg.Vocab, d)
	m.std[m.emb] = 1
	m.params = append(m.params, m.emb)
	if cfg.IsAttention() {
		m.pos = newParam[T]("/embed", "positions", frozen, cfg.Length, d)
		m.std[m.pos] = 0.1
		m.params = append(m.params, m.pos)
	}
	for i := 0; i < cfg.Depth; i++ {
		block := fmt.Sprintf("/block_%d", i)
		mix, ffn, err := m.blockLayers(block, frozen)
		if err != nil {
			return nil, err
		}
		for j, l := range []Layer[T]{mix, ffn} {
			sb := &subBlock[T]{layer: l}
			if cfg.Adapter != arch.AdapterNone {
				scope := block + []string{"/adapter_mix", "/adapter_ffn"}[j]
				a, err := m.newAdapter(scope)
				if err != nil {
					return nil, err
				}
				sb.adapter = a
			}
			m.subs = append(m.subs, sb)
			m.params = append(m.params, l.Params()...)
			if sb.adapter != nil {
				m.params = append(m.params, sb.adapter.Params()...)
			}
		}
	}
	m.head = newLinear[T]("/head", "w", "b", d, cfg.Classes, true)
	m.std[m.head.w] = 1 / math.Sqrt(float64(d))
	m.params = append(m.params, m.head.params()...)
	return m, nil
}

// blockLayers builds the two sub-block layers of block scope.
func (m *Model[T]) blockLayers(block string, trainable bool) (mix, ffn Layer[T], err error) {
	cfg := &m.cfg
	if cfg.IsAttention() {
		a := NewAttention[T](cfg, block+"/mix")
		for _, w := range []*Param[T]{a.Wq, a.Wk, a.Wv, a.Wo} {
			m.std[w] = 1 / math.Sqrt(float64(cfg.Width))
		}
		f := NewFFN[T](cfg, block+"/ffn")
		m.std[f.W1] = 1 / math.Sqrt(float64(cfg.Width))
		m.std[f.W2] = 1 / math.Sqrt(float64(cfg.Hidden))
		return a, f, nil
	}
	d, e := cfg.Width, cfg.Expand*cfg.Width
	scope := block + "/gtu"
	var tno Layer[T]
	switch cfg.Kind {
	case arch.KindTNN:
		t, err := newTNNTNO[T](cfg, scope+"/tno", e, trainable)
		if err != nil {
			return nil, nil, err
		}
		m.rpeStd(t.rpe)
		tno = t
	case arch.KindFDTNN:
		t, err := newFDTNO[T](cfg, scope+"/tno", e, trainable)
		if err != nil {
			return nil, nil, err
		}
		m.rpeStd(t.rpe)
		tno = t
	case arch.KindSKITNN:
		t, err := newSKITNO[T](cfg, scope+"/tno", e, trainable)
		if err != nil {
			return nil, nil, err
		}
		m.std[t.vals] = 0.1
		m.std[t.filt] = 1 / float64(cfg.SKIFilter)
		tno = t
	default:
		return nil, nil, fmt.Errorf("native: model kind %q is not yet supported by the native engine", cfg.Kind)
	}
	g := newGTU(scope, d, e, tno, trainable)
	for _, l := range []*linear[T]{g.luv.p, g.luv.q, g.lo} {
		m.std[l.w] = 1 / math.Sqrt(float64(l.in))
	}
	u := newGLU[T](block+"/glu", d, cfg.Hidden, trainable)
	for _, l := range []*linear[T]{u.l12.p, u.l12.q, u.l3} {
		m.std[l.w] = 1 / math.Sqrt(float64(l.in))
	}
	return g, u, nil
}

// rpeStd records the initial scales of an RPE MLP: weights N(0, 1/fan_in),
// biases N(0, 0.1²), as nn's builder.rpe.
func (m *Model[T]) rpeStd(r *mlp[T]) {
	for _, l := range r.layers {
		m.std[l.w] = 1 / math.Sqrt(float64(l.in))
		m.std[l.b] = 0.1
	}
}

// newAdapter builds the adapter of a sub-block (initial scales as nn's
// builder.adapter: W_down N(0, 1/width), A N(0, 1/m), the rest zero).
func (m *Model[T]) newAdapter(scope string) (Layer[T], error) {
	cfg := &m.cfg
	switch a := NewAdapter[T](cfg, scope).(type) {
	case *BottleneckAdapter[T]:
		m.std[a.WDown] = 1 / math.Sqrt(float64(cfg.Width))
		return a, nil
	case *SNNKAdapter[T]:
		m.std[a.A] = 1 / math.Sqrt(float64(cfg.AdapterSize))
		return a, nil
	}
	return nil, fmt.Errorf("native: %q adapters (%s) are not supported by the native engine", cfg.Adapter, scope)
}

// Config returns the model's configuration (with defaults applied).
func (m *Model[T]) Config() arch.ModelConfig { return m.cfg }

// Params returns every parameter of the model (random features included,
// as non-trainable parameters).
func (m *Model[T]) Params() []*Param[T] { return m.params }

// Init draws the parameters from seed with the distributions of nn's
// initialisers (normal with the same standard deviations, zero biases);
// the draws differ from GoMLX's generator, so two engines initialised from
// the same seed start from different (equally distributed) weights. Fixed
// random features are left as they are (see SetFixed).
func (m *Model[T]) Init(seed uint64) {
	r := rng.NewStream(seed, 0x6e6174697665)
	for _, p := range m.params {
		sd, ok := m.std[p]
		if !ok {
			continue
		}
		for i := range p.Value {
			p.Value[i] = T(sd * r.NormFloat64())
		}
	}
}

// Forward computes the logits (B×Classes, row-major, a buffer owned by the
// model) of the token ids (B·Length, row-major, 0 = padding). Token ids
// outside the vocabulary or a token count that is not a multiple of the
// length give an error.
func (m *Model[T]) Forward(tokens []int32) ([]T, error) {
	cfg := &m.cfg
	L, d := cfg.Length, cfg.Width
	if len(tokens) == 0 || len(tokens)%L != 0 {
		return nil, fmt.Errorf("native: %d tokens are not a positive multiple of the length %d", len(tokens), L)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= cfg.Vocab {
			return nil, fmt.Errorf("native: token %d (sequence %d, position %d) lies outside the vocabulary of %d", t, i/L, i%L, cfg.Vocab)
		}
	}
	B := len(tokens) / L
	rows := B * L
	m.batch, m.tokens = B, tokens
	m.mask, m.cnt = grow(m.mask, rows), grow(m.cnt, B)
	for b := 0; b < B; b++ {
		var c T
		for l := 0; l < L; l++ {
			v := T(0)
			if tokens[b*L+l] != 0 {
				v = 1
			}
			m.mask[b*L+l] = v
			c += v
		}
		m.cnt[b] = max(c, 1)
	}
	if len(m.xs) != len(m.subs)+1 {
		m.xs = make([][]T, len(m.subs)+1)
	}
	x := grow(m.xs[0], rows*d)
	m.xs[0] = x
	forRows(rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			copy(x[r*d:(r+1)*d], m.emb.Value[int(tokens[r])*d:])
			if m.pos != nil {
				p := m.pos.Value[(r%L)*d:]
				for j := 0; j < d; j++ {
					x[r*d+j] += p[j]
				}
			}
		}
	})
	for i, sb := range m.subs {
		if mk, ok := sb.layer.(masker[T]); ok {
			mk.SetMask(m.mask)
		}
		h := sb.norm.forward(x, rows, d)
		o := sb.layer.Forward(h, B, L)
		if sb.adapter != nil {
			o = sb.adapter.Forward(o, B, L)
		}
		nx := grow(m.xs[i+1], rows*d)
		m.xs[i+1] = nx
		forRows(rows, func(lo, hi int) { sumTo(nx[lo*d:hi*d], x[lo*d:hi*d], o[lo*d:hi*d]) })
		x = nx
	}
	// Masked mean over the positions, then RMS norm and the classifier.
	m.pooled = grow(m.pooled, B*d)
	clear(m.pooled)
	for b := 0; b < B; b++ {
		p := m.pooled[b*d : (b+1)*d]
		for l := 0; l < L; l++ {
			if mk := m.mask[b*L+l]; mk != 0 {
				row := x[(b*L+l)*d:]
				for j := range p {
					p[j] += row[j] * mk
				}
			}
		}
		for j := range p {
			p[j] /= m.cnt[b]
		}
	}
	pn := m.pool.forward(m.pooled, B, d)
	m.logits = m.head.forward(pn, B)
	return m.logits, nil
}

// Loss returns the mean softmax cross-entropy of the last Forward's logits
// for labels (B entries in [0, Classes); others give an error) and keeps
// its gradient for Backward.
func (m *Model[T]) Loss(labels []int32) (float64, error) {
	B, C := m.batch, m.cfg.Classes
	if len(labels) != B {
		return 0, fmt.Errorf("native: %d labels for a batch of %d", len(labels), B)
	}
	m.dlogits = grow(m.dlogits, B*C)
	var loss float64
	for b := 0; b < B; b++ {
		y := int(labels[b])
		if y < 0 || y >= C {
			return 0, fmt.Errorf("native: label %d of sequence %d lies outside [0, %d)", y, b, C)
		}
		z := m.logits[b*C : (b+1)*C]
		mx := z[0]
		for _, v := range z {
			mx = max(mx, v)
		}
		var s float64
		for _, v := range z {
			s += math.Exp(float64(v - mx))
		}
		lse := float64(mx) + math.Log(s)
		loss += lse - float64(z[y])
		g := m.dlogits[b*C : (b+1)*C]
		for j, v := range z {
			g[j] = T(math.Exp(float64(v)-lse) / float64(B))
		}
		g[y] -= T(1 / float64(B))
	}
	return loss / float64(B), nil
}

// ZeroGrad clears every parameter gradient.
func (m *Model[T]) ZeroGrad() {
	for _, p := range m.params {
		p.ZeroGrad()
	}
}

// Backward accumulates the gradients of the last Loss into the
// parameters' Grad slices.
func (m *Model[T]) Backward() {
	cfg := &m.cfg
	B, L, d := m.batch, cfg.Length, cfg.Width
	rows := B * L
	dpn := m.head.backward(m.dlogits)
	dp := m.pool.backward(dpn)
	m.dx = grow(m.dx, rows*d)
	forRows(rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b := r / L
			s := m.mask[r] / m.cnt[b]
			for j := 0; j < d; j++ {
				m.dx[r*d+j] = dp[b*d+j] * s
			}
		}
	})
	dx := m.dx
	for i := len(m.subs) - 1; i >= 0; i-- {
		sb := m.subs[i]
		g := dx
		if sb.adapter != nil {
			g = sb.adapter.Backward(g)
		}
		g = sb.layer.Backward(g)
		g = sb.norm.backward(g)
		forRows(rows, func(lo, hi int) { addTo(dx[lo*d:hi*d], g[lo*d:hi*d]) })
	}
	if m.emb.Trainable {
		// Rows in order: each token's gradient sums its positions in a
		// fixed order; split over columns for the cores.
		chunks(d, colChunk, func(_, lo, hi int) {
			for r := 0; r < rows; r++ {
				dst := m.emb.Grad[int(m.tokens[r])*d:]
				for j := lo; j < hi; j++ {
					dst[j] += dx[r*d+j]
				}
			}
		})
	}
	if m.pos != nil && m.pos.Trainable {
		for r := 0; r < rows; r++ {
			dst := m.pos.Grad[(r%L)*d:]
			for j := 0; j < d; j++ {
				dst[j] += dx[r*d+j]
			}
		}
	}
}
