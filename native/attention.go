package native

import (
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/internal/parallel"
)

// Attention is the multi-head attention token mixer of the attention kinds
// (nn's builder.attention): q, k and v affine projections of the input
// (B·L×d), split into heads of width d_h = d/H, optionally L2-normalised
// to norm QKNorm·d_h^(1/4) (nn's unitRows), mixed by the kind's attention
// — softmax attention for transformer (nn.SoftmaxAttention), FAVOR+
// linear attention for performer (nn.FamilyAttention: FAVOR+, SimRF, or
// OPRF and SDERF fitted per sequence and head), angular hybrid
// random-feature attention for hrf (nn.HybridAttention), bidirectional or
// causal, with a key-padding mask — then merged and mapped by the output
// affine map.
//
// Softmax attention costs O(L²) per head (causal: about half, by row
// blocks); FAVOR+ and HRF cost O(L) per head and never form an L×L matrix
// (causal forms: chunks of min(Chunk, L) rows, a chunk×chunk block inside
// each). All skip the keys after a sequence's last real token. Heads run in
// parallel, one (batch, head) pair per work item; the parameter gradients
// are summed sequence by sequence, merged in sequence order, so results
// do not depend on scheduling or on the number of cores.
//
// Forward's result and Backward's input gradient are buffers of the layer,
// overwritten by the next call. Backward must follow the Forward whose
// gradient it takes.
type Attention[T Float] struct {
	// Wq, Bq, Wk, Bk, Wv, Bv, Wo and Bo are the affine maps, d×d and d
	// ("wq", "bq", …, trainable unless the backbone is frozen).
	Wq, Bq, Wk, Bk, Wv, Bv, Wo, Bo *Param[T]
	// Omega is the fixed projection of FAVOR+ (Features×d_h) or of HRF's
	// positive estimator (HRFM×d_h); OmegaTrig (HRFM×d_h) and Tau
	// (HRFN×d_h) are HRF's trigonometric and sgn projections. They are nil
	// where the kind has none.
	Omega, OmegaTrig, Tau *Param[T]

	kind         string
	width, heads int
	dh           int
	causal       bool
	chunk        int     // cfg.Chunk (causal FAVOR+ and HRF)
	qkNorm       float64 // row norm r of q and k; 0: none
	m, n         int     // FAVOR+ features, or HRF's M and N
	family       string  // performer's feature family (arch.FeatureFamily)
	// project, if set, computes the FAVOR+ projections x·Ωᵀ in place of
	// the exact product (SetFeatureProjection).
	project func(dst, x []T, rows, d, m int)

	mask    []T // B·L key mask, nil for none
	bsz, l  int // shape of the last Forward
	forward bool

	x, q, k, v []T // input copy and projections (B·L×d)
	qs, ks     []T // row norms per head (B·L×H), with QK normalisation
	qn, kn     []T // normalised q and k (aliases of q, k without it)
	o, y       []T // merged attention output and layer output
	do, dq     []T
	dk, dv, dx []T
	state      []T // per-head state saved for the backward pass
	stride     int // elements of state per head
	ws         []*headScratch[T]
	gs         gradScratch[T]
}

// headScratch is one worker's scratch space, a set of numbered buffers
// grown on demand and reused across calls.
type headScratch[T Float] struct {
	bufs [][]T
}

// buf returns scratch buffer i resized to n elements (contents undefined).
func (s *headScratch[T]) buf(i, n int) []T {
	for len(s.bufs) <= i {
		s.bufs = append(s.bufs, nil)
	}
	s.bufs[i] = growSlice(s.bufs[i], n)
	return s.bufs[i]
}

// NewAttention returns the attention mixer of an attention-kind
// configuration (after Defaults and Validate) with zeroed parameters
// under scope (e.g. "/block_0/mix"), named and shaped as nn creates them.
// It panics if the kind is not an attention kind.
func NewAttention[T Float](cfg *arch.ModelConfig, scope string) *Attention[T] {
	if !cfg.IsAttention() {
		panic(fmt.Sprintf("native: %q is not an attention kind", cfg.Kind))
	}
	d := cfg.Width
	dh := d / cfg.Heads
	train := !cfg.FreezeBackbone
	a := &Attention[T]{
		kind: cfg.Kind, width: d, heads: cfg.Heads, dh: dh, causal: cfg.Causal, chunk: cfg.Chunk,
		Wq: newParam[T](scope, "wq", train, d, d), Bq: newParam[T](scope, "bq", train, d),
		Wk: newParam[T](scope, "wk", train, d, d), Bk: newParam[T](scope, "bk", train, d),
		Wv: newParam[T](scope, "wv", train, d, d), Bv: newParam[T](scope, "bv", train, d),
		Wo: newParam[T](scope, "wo", train, d, d), Bo: newParam[T](scope, "bo", train, d),
	}
	if cfg.QKNorm > 0 {
		a.qkNorm = cfg.QKNorm * math.Pow(float64(dh), 0.25)
	}
	switch cfg.Kind {
	case arch.KindPerformer:
		fam, err := arch.FeatureFamily(cfg.FeatureMap)
		if err != nil {
			panic(err) // validated
		}
		a.m, a.family = cfg.Features, fam
		a.Omega = newParam[T](scope, "omega", false, a.m, dh)
	case arch.KindHRF:
		a.m, a.n = cfg.HRFM, cfg.HRFN
		a.Omega = newParam[T](scope, "omega", false, a.m, dh)
		a.OmegaTrig = newParam[T](scope, "omega_trig", false, a.m, dh)
		a.Tau = newParam[T](scope, "tau", false, a.n, dh)
	}
	return a
}

// Params returns the layer's parameters in the order nn creates them: wq,
// bq, wk, bk, wv, bv, the fixed projections, wo, bo.
func (a *Attention[T]) Params() []*Param[T] {
	ps := []*Param[T]{a.Wq, a.Bq, a.Wk, a.Bk, a.Wv, a.Bv}
	for _, p := range []*Param[T]{a.Omega, a.OmegaTrig, a.Tau} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return append(ps, a.Wo, a.Bo)
}

// SetMask sets the key-padding mask of the following Forward calls: B·L
// entries, 1 for a real token and 0 for padding (nil: none). Softmax
// attention ignores keys whose entry is not positive; FAVOR+ and HRF
// multiply each key's terms by its entry, as nn does. The mask is copied.
func (a *Attention[T]) SetMask(mask []T) {
	if mask == nil {
		a.mask = nil
		return
	}
	a.mask = append(a.mask[:0], mask...)
}

// chunkLen returns the causal chunk length for sequences of length l.
func (a *Attention[T]) chunkLen(l int) int {
	c := a.chunk
	if c <= 0 || c > l {
		c = l
	}
	if l%c != 0 {
		panic(fmt.Sprintf("native: causal chunk %d does not divide the length %d", c, l))
	}
	return c
}

// coreChunk returns the chunk length of the causal linear-attention core
// for the current length (0 for bidirectional attention, which has none).
func (a *Attention[T]) coreChunk() int {
	if !a.causal {
		return 0
	}
	return a.chunkLen(a.l)
}

// keyRows returns one past the last key of head z's sequence whose mask
// entry is not zero (L without a mask): the keys after it are padding,
// their features zero in FAVOR+ and HRF.
func (a *Attention[T]) keyRows(z int) int {
	mask := a.headMask(z)
	if mask == nil {
		return a.l
	}
	for j := len(mask) - 1; j >= 0; j-- {
		if mask[j] != 0 {
			return j + 1
		}
	}
	return 0
}

// headState returns the saved state of head z.
func (a *Attention[T]) headState(z int) []T { return a.state[z*a.stride : (z+1)*a.stride] }

// stateStride returns the state elements per head for sequences of
// length l.
func (a *Attention[T]) stateStride(l int) int {
	w := a.dh + 1
	switch a.kind {
	case arch.KindPerformer:
		return 2*l*a.m + l*w + a.familyStateLen()
	case arch.KindHRF:
		return 8*l*a.m + 3*l*(1+a.n) + l*w
	}
	return l * l
}

// Forward returns the mixer's output (B·L×d) for x (B·L×d, row-major, B
// sequences of L rows). It panics on slices of the wrong length, and for
// causal FAVOR+ or HRF when min(Chunk, L) does not divide L.
func (a *Attention[T]) Forward(x []T, B, L int) []T {
	d, nr := a.width, B*L
	if len(x) != nr*d {
		panic(fmt.Sprintf("native: attention input has %d elements, want %d·%d·%d", len(x), B, L, d))
	}
	if a.mask != nil && len(a.mask) != nr {
		panic(fmt.Sprintf("native: attention mask has %d entries, want %d", len(a.mask), nr))
	}
	if a.causal && a.kind != arch.KindTransformer {
		a.chunkLen(L)
	}
	a.bsz, a.l, a.forward = B, L, true
	a.x = growSlice(a.x, nr*d)
	copy(a.x, x)
	a.q, a.k, a.v = growSlice(a.q, nr*d), growSlice(a.k, nr*d), growSlice(a.v, nr*d)
	a.projectHeads()
	if a.qkNorm > 0 {
		a.qn, a.kn = growSlice(a.qn, nr*d), growSlice(a.kn, nr*d)
		a.qs, a.ks = growSlice(a.qs, nr*a.heads), growSlice(a.ks, nr*a.heads)
		a.normRows(a.qn, a.qs, a.q, nr)
		a.normRows(a.kn, a.ks, a.k, nr)
	} else {
		a.qn, a.kn = a.q, a.k
	}
	a.o = growSlice(a.o, nr*d)
	a.stride = a.stateStride(L)
	a.state = growSlice(a.state, B*a.heads*a.stride)
	a.runHeads(false)
	a.y = growSlice(a.y, nr*d)
	a.mergeHeads()
	return a.y
}

// Layout: the per-head tensors (q, k, v, their normalised forms, the
// attention output and the gradients of all of them) are head-major, head
// z = b·H + h holding its L rows of d_h contiguously from z·L·d_h, so that
// the head passes read and write contiguous blocks. The projections map
// the input (B·L×d) to them and back a sequence at a time: head h of q is
// x·W_q restricted to columns h·d_h … (h+1)·d_h, so one product x_b·W_q
// (L×d) gives every head of sequence b, and a pass moves its column blocks
// into the head blocks (toHeads) or back (fromHeads). One product of
// width d in place of H of width d_h: fewer, larger BLAS calls.

// headRange returns head z's block of the head-major tensor t.
func (a *Attention[T]) headRange(t []T, z int) []T {
	n := a.l * a.dh
	return t[z*n : (z+1)*n]
}

// rowScratch returns worker's row-major scratch of L·d elements (buffer
// i of its headScratch; contents undefined), for workers workers.
func (a *Attention[T]) rowScratch(workers, worker, i int) []T {
	for len(a.ws) < workers {
		a.ws = append(a.ws, &headScratch[T]{})
	}
	return a.ws[worker].buf(i, a.l*a.width)
}

// toHeads sets the head blocks of sequence b of t (head-major) to the
// row-major r (L×d) plus bias (nil: none) on every row. With a bias, r
// is overwritten by r + bias (a whole row at a time, the same sums as
// element by element).
func (a *Attention[T]) toHeads(t, r []T, b int, bias []T) {
	d, dh, L, H := a.width, a.dh, a.l, a.heads
	if bias != nil {
		for l := 0; l < L; l++ {
			row := r[l*d : (l+1)*d]
			sumTo(row, row, bias)
		}
	}
	for h := 0; h < H; h++ {
		dst := a.headRange(t, b*H+h)
		for l := 0; l < L; l++ {
			copy(dst[l*dh:(l+1)*dh], r[l*d+h*dh:l*d+(h+1)*dh])
		}
	}
}

// fromHeads sets the row-major r (L×d) to the head blocks of sequence b
// of t (head-major).
func (a *Attention[T]) fromHeads(r, t []T, b int) {
	d, dh, L, H := a.width, a.dh, a.l, a.heads
	for h := 0; h < H; h++ {
		src := a.headRange(t, b*H+h)
		for l := 0; l < L; l++ {
			copy(r[l*d+h*dh:l*d+(h+1)*dh], src[l*dh:(l+1)*dh])
		}
	}
}

// projectHeads sets the head-major q, k and v to the input's projections,
// one (sequence, projection) pair per work item.
func (a *Attention[T]) projectHeads() {
	d, L := a.width, a.l
	n := 3 * a.bsz
	workers := parallel.Workers(n)
	for k := 0; k < workers; k++ {
		a.rowScratch(workers, k, 0)
	}
	prs := [3]struct {
		dst  []T
		w, c *Param[T]
	}{{a.q, a.Wq, a.Bq}, {a.k, a.Wk, a.Bk}, {a.v, a.Wv, a.Bv}}
	parallel.Chunks(n, 1, func(worker, lo, hi int) {
		r := a.ws[worker].bufs[0][:L*d]
		for z := lo; z < hi; z++ {
			b, pr := z/3, prs[z%3]
			gemm(false, false, L, d, d, 1, a.x[b*L*d:(b+1)*L*d], d, pr.w.Value, d, 0, r, d)
			a.toHeads(pr.dst, r, b, pr.c.Value)
		}
	})
}

// mergeHeads sets the output to o·W_o + b_o (o the heads side by side),
// one sequence per work item.
func (a *Attention[T]) mergeHeads() {
	d, L := a.width, a.l
	workers := parallel.Workers(a.bsz)
	for k := 0; k < workers; k++ {
		a.rowScratch(workers, k, 0)
	}
	parallel.Chunks(a.bsz, 1, func(worker, lo, hi int) {
		r := a.ws[worker].bufs[0][:L*d]
		for b := lo; b < hi; b++ {
			yb := a.y[b*L*d : (b+1)*L*d]
			for l := 0; l < L; l++ {
				copy(yb[l*d:(l+1)*d], a.Bo.Value)
			}
			a.fromHeads(r, a.o, b)
			gemm(false, false, L, d, d, 1, r, d, a.Wo.Value, d, 1, yb, d)
		}
	})
}

// Backward takes the gradient dy (B·L×d) of the last Forward's output,
// adds the gradients of the trainable parameters to their Grad and returns
// the gradient of the input. The fixed projections get no gradient. The
// parameter gradients are summed sequence by sequence, each sequence's
// partial added in order (parallel.Ordered), so they do not depend on
// scheduling or on the number of cores.
func (a *Attention[T]) Backward(dy []T) []T {
	if !a.forward {
		panic("native: attention Backward without Forward")
	}
	d, nr := a.width, a.bsz*a.l
	if len(dy) != nr*d {
		panic(fmt.Sprintf("native: attention output gradient has %d elements, want %d", len(dy), nr*d))
	}
	a.do = growSlice(a.do, nr*d)
	a.backOutput(dy)
	a.dq, a.dk, a.dv = growSlice(a.dq, nr*d), growSlice(a.dk, nr*d), growSlice(a.dv, nr*d)
	a.runHeads(true)
	if a.qkNorm > 0 {
		a.normRowsBackward(a.dq, a.q, a.qs, nr)
		a.normRowsBackward(a.dk, a.k, a.ks, nr)
	}
	a.dx = growSlice(a.dx, nr*d)
	a.backInput()
	return a.dx
}

// partials sizes the per-worker partial sums (n elements each) of the
// parallel.Ordered passes over the batch's sequences.
func (a *Attention[T]) partials(n int) {
	workers := parallel.Workers(a.bsz)
	for k := 0; k < workers; k++ {
		a.gs.get(workers, k, n)
	}
}

// backOutput sets the head-major gradient of the attention output, dO =
// dy·W_oᵀ (each head's block of columns to its head), and adds oᵀ·dy and
// the column sums of dy to the gradients of W_o and b_o.
func (a *Attention[T]) backOutput(dy []T) {
	d, L := a.width, a.l
	train := a.Wo.Trainable
	a.partials(d*d + d)
	workers := parallel.Workers(a.bsz)
	for k := 0; k < workers; k++ {
		a.rowScratch(workers, k, 0)
	}
	parallel.Ordered(a.bsz, 1, func(worker, lo, hi int) {
		part := a.gs.parts[worker][:d*d+d]
		clear(part[d*d:])
		r := a.ws[worker].bufs[0][:L*d]
		for b := lo; b < hi; b++ {
			dyb := dy[b*L*d : (b+1)*L*d]
			gemm(false, true, L, d, d, 1, dyb, d, a.Wo.Value, d, 0, r, d)
			a.toHeads(a.do, r, b, nil)
			if train {
				a.fromHeads(r, a.o, b)
				gemm(true, false, d, d, L, 1, r, d, dyb, d, 0, part[:d*d], d)
				pb := part[d*d:]
				for l := 0; l < L; l++ {
					addTo(pb, dyb[l*d:(l+1)*d])
				}
			}
		}
	}, func(worker, _, _ int) {
		if !train {
			return
		}
		part := a.gs.parts[worker][:d*d+d]
		addTo(a.Wo.Grad[:d*d], part[:d*d])
		addTo(a.Bo.Grad[:d], part[d*d:])
	})
}

// backInput sets the input gradient dx = dq·W_qᵀ + dk·W_kᵀ + dv·W_vᵀ (the
// head gradients side by side) and adds xᵀ·dq (and so on) and the column
// sums of the head gradients to the projections' gradients.
func (a *Attention[T]) backInput() {
	d, L := a.width, a.l
	train := a.Wq.Trainable
	block := d*d + d
	a.partials(3 * block)
	workers := parallel.Workers(a.bsz)
	for k := 0; k < workers; k++ {
		a.rowScratch(workers, k, 0)
	}
	prs := [3]struct {
		g    []T
		w, c *Param[T]
	}{{a.dq, a.Wq, a.Bq}, {a.dk, a.Wk, a.Bk}, {a.dv, a.Wv, a.Bv}}
	parallel.Ordered(a.bsz, 1, func(worker, lo, hi int) {
		part := a.gs.parts[worker][:3*block]
		for i := range prs {
			clear(part[i*block+d*d : (i+1)*block])
		}
		r := a.ws[worker].bufs[0][:L*d]
		for b := lo; b < hi; b++ {
			xb, dxb := a.x[b*L*d:(b+1)*L*d], a.dx[b*L*d:(b+1)*L*d]
			var beta T
			for i, pr := range prs {
				a.fromHeads(r, pr.g, b)
				gemm(false, true, L, d, d, 1, r, d, pr.w.Value, d, beta, dxb, d)
				beta = 1
				if !train {
					continue
				}
				gemm(true, false, d, d, L, 1, xb, d, r, d, 0, part[i*block:i*block+d*d], d)
				pb := part[i*block+d*d : (i+1)*block]
				for l := 0; l < L; l++ {
					addTo(pb, r[l*d:(l+1)*d])
				}
			}
		}
	}, func(worker, _, _ int) {
		if !train {
			return
		}
		part := a.gs.parts[worker][:3*block]
		for i, pr := range prs {
			addTo(pr.w.Grad[:d*d], part[i*block:i*block+d*d])
			addTo(pr.c.Grad[:d], part[i*block+d*d:(i+1)*block])
		}
	})
}

// runHeads runs the kind's forward (or backward) pass of every (batch,
// head) pair, in parallel.
func (a *Attention[T]) runHeads(backward bool) {
	z := a.bsz * a.heads
	workers := parallel.Workers(z)
	for len(a.ws) < workers {
		a.ws = append(a.ws, &headScratch[T]{})
	}
	parallel.Chunks(z, 1, func(worker, lo, hi int) {
		s := a.ws[worker]
		for h := lo; h < hi; h++ {
			switch {
			case a.kind == arch.KindPerformer && !backward:
				a.favorForward(s, h)
			case a.kind == arch.KindPerformer:
				a.favorBackward(s, h)
			case a.kind == arch.KindHRF && !backward:
				a.hrfForward(s, h)
			case a.kind == arch.KindHRF:
				a.hrfBackward(s, h)
			case !backward:
				a.softmaxForward(s, h)
			default:
				a.softmaxBackward(s, h)
			}
		}
	})
}

// normRows sets every head's row of dst to r·x/√(‖x‖² + 1e-12) and norms
// to √(‖x‖² + 1e-12) (nn's unitRows), for nr rows of x (nr×d).
func (a *Attention[T]) normRows(dst, norms, x []T, nr int) {
	dh, r := a.dh, a.qkNorm
	parallel.Chunks(nr, mixRowChunk, func(_, lo, hi int) {
		for i := lo * a.heads; i < hi*a.heads; i++ {
			row := x[i*dh : (i+1)*dh]
			var ss float64
			for _, v := range row {
				ss += float64(v) * float64(v)
			}
			s := math.Sqrt(ss + 1e-12)
			norms[i] = T(s)
			f := r / s
			for j, v := range row {
				dst[i*dh+j] = T(float64(v) * f)
			}
		}
	})
}

// normRowsBackward replaces the gradient g of normRows' output by that of
// its input x: (r/s)·(g − x(x·g)/s²) per head row.
func (a *Attention[T]) normRowsBackward(g, x, norms []T, nr int) {
	dh, r := a.dh, a.qkNorm
	parallel.Chunks(nr, mixRowChunk, func(_, lo, hi int) {
		for i := lo * a.heads; i < hi*a.heads; i++ {
			xr, gr := x[i*dh:(i+1)*dh], g[i*dh:(i+1)*dh]
			s := float64(norms[i])
			var xg float64
			for j, v := range xr {
				xg += float64(v) * float64(gr[j])
			}
			f, c := r/s, xg/(s*s)
			for j, v := range xr {
				gr[j] = T(f * (float64(gr[j]) - float64(v)*c))
			}
		}
	})
}

// gather copies head z's rows (L×d_h) of the head-major src into dst
// with row stride ld, times scale (a block pass where the rows are
// contiguous, ld = d_h; the same products either way).
func (a *Attention[T]) gather(dst []T, ld int, src []T, z int, scale T) {
	dh := a.dh
	s := a.headRange(src, z)
	switch {
	case ld == dh && scale == 1:
		copy(dst[:len(s)], s)
	case ld == dh:
		scaleTo(dst[:len(s)], s, scale)
	case scale == 1:
		for l := 0; l < a.l; l++ {
			copy(dst[l*ld:][:dh], s[l*dh:(l+1)*dh])
		}
	default:
		for l := 0; l < a.l; l++ {
			r := dst[l*ld:][:dh]
			for j, v := range s[l*dh : (l+1)*dh] {
				r[j] = scale * v
			}
		}
	}
}

// scatter writes src (L×d_h, row stride ld) times scale into head z's
// rows of the head-major dst (a block pass where ld = d_h, as gather).
func (a *Attention[T]) scatter(dst, src []T, ld int, z int, scale T) {
	dh := a.dh
	d := a.headRange(dst, z)
	switch {
	case ld == dh && scale == 1:
		copy(d, src[:len(d)])
	case ld == dh:
		scaleTo(d, src[:len(d)], scale)
	case scale == 1:
		for l := 0; l < a.l; l++ {
			copy(d[l*dh:(l+1)*dh], src[l*ld:][:dh])
		}
	default:
		for l := 0; l < a.l; l++ {
			r := d[l*dh : (l+1)*dh]
			for j, v := range src[l*ld:][:dh] {
				r[j] = scale * v
			}
		}
	}
}

// headMask returns the key mask of head z's sequence, nil for none.
func (a *Attention[T]) headMask(z int) []T {
	if a.mask == nil {
		return nil
	}
	b := z / a.heads
	return a.mask[b*a.l : (b+1)*a.l]
}

// denseMask returns head z's key mask, or nil where the mask hides no
// key before its last visible one (padding at the end only, the usual
// case): softmaxBlocks then ends every row's keys at the last visible
// one, and the rows need no mask test.
func (a *Attention[T]) denseMask(z int) []T {
	mask := a.headMask(z)
	last := 0
	for j, m := range mask {
		if m > 0 {
			last = j + 1
		}
	}
	for _, m := range mask[:last] {
		if m <= 0 {
			return mask
		}
	}
	if last == 0 {
		return mask
	}
	return nil
}

// smDP is the scratch buffer index of the softmax backward pass's dP.
const smDP = 0

// smBlock is the row block of causal softmax attention: a block of rows
// takes its scores against the keys up to its last row only, which
// halves the products.
const smBlock = 64

// softmaxBlocks calls fn(r0, r1, width) for the row blocks of head z, the
// scores of rows [r0, r1) to be taken against keys [0, width): one block
// of all rows (bidirectional) or blocks of smBlock rows (causal, width at
// most r1), width stopping after the last real key (keys after it are all
// padding). A block with a row that sees no real key takes all L keys:
// such a row gets the uniform distribution over all of them, as nn's
// −1e30 scores give.
func (a *Attention[T]) softmaxBlocks(z int, fn func(r0, r1, width int)) {
	L := a.l
	first, last := 0, L // first real key, and one past the last
	if mask := a.headMask(z); mask != nil {
		first, last = L, 0
		for j, m := range mask {
			if m > 0 {
				first, last = min(first, j), j+1
			}
		}
	}
	if !a.causal {
		if first == L {
			fn(0, L, L)
		} else {
			fn(0, L, last)
		}
		return
	}
	for r0 := 0; r0 < L; r0 += smBlock {
		r1 := min(r0+smBlock, L)
		w := min(r1, last)
		if r0 < first {
			w = L
		}
		fn(r0, r1, w)
	}
}

// softmaxForward computes softmax(qkᵀ/√d_h)v for head z, saving the
// probabilities (L×L, zero where not computed). Keys after the query
// (causal) or with a mask entry that is not positive get probability
// zero; a query that sees no key gets the uniform distribution over all L
// keys, as nn's −1e30 scores give.
func (a *Attention[T]) softmaxForward(s *headScratch[T], z int) {
	L, dh := a.l, a.dh
	q, k, v := a.headRange(a.qn, z), a.headRange(a.kn, z), a.headRange(a.v, z)
	p := a.headState(z)
	o := a.headRange(a.o, z)
	mask := a.denseMask(z)
	scale := T(1 / math.Sqrt(float64(dh)))
	a.softmaxBlocks(z, func(r0, r1, width int) {
		gemm(false, true, r1-r0, width, dh, scale, q[r0*dh:], dh, k, dh, 0, p[r0*L:], L)
		for i := r0; i < r1; i++ {
			row := p[i*L : (i+1)*L]
			hi := width // keys [0, hi) may be visible
			if a.causal {
				hi = min(hi, i+1)
			}
			if mask == nil { // every key in [0, hi) is visible
				softmaxRow(row[:hi])
				clear(row[hi:])
				continue
			}
			var mx T
			seen := false
			for j, x := range row[:hi] {
				if mask[j] > 0 && (!seen || x > mx) {
					mx, seen = x, true
				}
			}
			if !seen {
				for j := range row {
					row[j] = T(1 / float64(L))
				}
				continue
			}
			for j := range row[:hi] {
				row[j] -= mx
			}
			expSlice(row[:hi])
			var total T
			for j, e := range row[:hi] {
				if mask[j] > 0 {
					total += e
				} else {
					row[j] = 0
				}
			}
			clear(row[hi:])
			inv := 1 / total
			for j := range row[:hi] {
				row[j] *= inv
			}
		}
		gemm(false, false, r1-r0, dh, width, 1, p[r0*L:], L, v, dh, 0, o[r0*dh:], dh)
	})
}

// softmaxBackward computes head z's gradients of q, k and v from that of
// its output: dS = P ⊙ (dP − rowsum(dP ⊙ P)) with dP = dO·vᵀ, zero on the
// masked scores (nn replaces them by a constant).
func (a *Attention[T]) softmaxBackward(s *headScratch[T], z int) {
	L, dh := a.l, a.dh
	q, k, v := a.headRange(a.qn, z), a.headRange(a.kn, z), a.headRange(a.v, z)
	do := a.headRange(a.do, z)
	p := a.headState(z)
	dp := s.buf(smDP, L*L)
	dq, dk, dv := a.headRange(a.dq, z), a.headRange(a.dk, z), a.headRange(a.dv, z)
	clear(dk)
	clear(dv)
	mask := a.denseMask(z)
	sc := T(1 / math.Sqrt(float64(dh)))
	a.softmaxBlocks(z, func(r0, r1, width int) {
		gemm(false, true, r1-r0, width, dh, 1, do[r0*dh:], dh, v, dh, 0, dp[r0*L:], L)
		for i := r0; i < r1; i++ {
			prow, drow := p[i*L:i*L+width], dp[i*L:i*L+width]
			hi := width
			if a.causal {
				hi = min(hi, i+1)
			}
			seen := false
			for j := 0; j < hi && !seen; j++ {
				seen = mask == nil || mask[j] > 0
			}
			if !seen {
				clear(drow)
				continue
			}
			subMulTo(drow, drow, dot(drow[:hi], prow), prow)
		}
		gemm(false, false, r1-r0, dh, width, sc, dp[r0*L:], L, k, dh, 0, dq[r0*dh:], dh)
		gemm(true, false, width, dh, r1-r0, sc, dp[r0*L:], L, q[r0*dh:], dh, 1, dk, dh)
		gemm(true, false, width, dh, r1-r0, 1, p[r0*L:], L, do[r0*dh:], dh, 1, dv, dh)
	})
}
