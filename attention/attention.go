package attention

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/internal/vmath"
)

// Attention maps queries, keys and values (Lq×d, Lk×d, Lk×dv) to outputs
// (Lq×dv).
type Attention interface {
	Apply(q, k, v *mat.Dense) (*mat.Dense, error)
}

// Masked is an Attention that also takes a key padding mask. Exact,
// Kernelized and *Linear implement it.
type Masked interface {
	Attention
	// ApplyMasked is Apply with the keys s for which keyPadding[s] is true
	// left out: they and their values take no part in any output (PyTorch's
	// key_padding_mask convention, true marks padding). Padded key and
	// value rows are not read, so they may hold anything, even NaN.
	// keyPadding is nil (no padding) or has one entry per key; another
	// length is an error. A query that sees no key (every key padded, or
	// none before it under the causal mask) gets an output row of zeros.
	ApplyMasked(q, k, v *mat.Dense, keyPadding []bool) (*mat.Dense, error)
}

// checkShapes checks the dimensions of queries (lq×d), keys (lk×dk),
// values (lv×dv) and a padding mask.
func checkShapes(lq, d, lk, dk, lv, dv int, pad []bool) error {
	if lq == 0 || lk == 0 || d == 0 || dv == 0 {
		return errors.New("attention: empty input")
	}
	if d != dk {
		return fmt.Errorf("attention: queries have %d columns, keys %d", d, dk)
	}
	if lk != lv {
		return fmt.Errorf("attention: %d keys but %d values", lk, lv)
	}
	if pad != nil && len(pad) != lk {
		return fmt.Errorf("attention: key padding mask of length %d for %d keys", len(pad), lk)
	}
	return nil
}

// checkFinite returns an error if a row of x that is not padded (pad nil,
// or pad[i] false) has a NaN or an infinity.
func checkFinite[T num](x dense[T], pad []bool) error {
	for i := 0; i < x.rows; i++ {
		if pad != nil && pad[i] {
			continue
		}
		for _, v := range x.row(i) {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				return errors.New("attention: input has NaN or Inf")
			}
		}
	}
	return nil
}

func checkInputs[T num](q, k, v dense[T], pad []bool) error {
	if err := checkShapes(q.rows, q.cols, k.rows, k.cols, v.rows, v.cols, pad); err != nil {
		return err
	}
	if err := checkFinite(q, nil); err != nil {
		return err
	}
	if err := checkFinite(k, pad); err != nil {
		return err
	}
	return checkFinite(v, pad)
}

func checkQKV(q, k, v *mat.Dense, pad []bool) (l, d, dv int, err error) {
	if q == nil || k == nil || v == nil {
		return 0, 0, 0, errors.New("attention: nil input")
	}
	if err := checkInputs(fromMat(q), fromMat(k), fromMat(v), pad); err != nil {
		return 0, 0, 0, err
	}
	l, d = q.Dims()
	_, dv = v.Dims()
	return l, d, dv, nil
}

// anyPadded reports whether the mask pads some key.
func anyPadded(pad []bool) bool {
	for _, p := range pad {
		if p {
			return true
		}
	}
	return false
}

// keptKeys returns the indices of the keys the mask keeps (in increasing
// order) and those rows of k and v; nil indices and k, v themselves when
// nothing is padded.
func keptKeys(k, v *mat.Dense, pad []bool) (pos []int, kk, vv *mat.Dense) {
	if !anyPadded(pad) {
		return nil, k, v
	}
	pos = make([]int, 0, len(pad))
	for s, p := range pad {
		if !p {
			pos = append(pos, s)
		}
	}
	if len(pos) == 0 {
		return pos, nil, nil
	}
	_, d := k.Dims()
	_, dv := v.Dims()
	kk, vv = mat.NewDense(len(pos), d, nil), mat.NewDense(len(pos), dv, nil)
	for i, s := range pos {
		copy(kk.RawRowView(i), k.RawRowView(s))
		copy(vv.RawRowView(i), v.RawRowView(s))
	}
	return pos, kk, vv
}

// visibleFunc returns, for query row i, the number of kept keys it
// attends: all nk of them, or under the causal mask aligned bottom-right
// those at original positions s ≤ i + off with off = Lk − Lq. pos lists
// the kept positions (nil: all Lk keys kept, nk = Lk); the visible keys of
// a row are always the first ones of the kept list.
func visibleFunc(causal bool, pos []int, nk, off int) func(i int) int {
	if !causal {
		return func(int) int { return nk }
	}
	return func(i int) int {
		lim := i + off
		if lim < 0 {
			return 0
		}
		if pos == nil {
			return min(lim+1, nk)
		}
		return sort.SearchInts(pos, lim+1)
	}
}

// Exact is softmax attention softmax(QKᵀ/√d)V, the reference.
type Exact struct {
	// Causal masks the keys after each query, aligned bottom-right: query
	// i of Lq attends keys s ≤ i + (Lk − Lq) of Lk (PyTorch's
	// causal_lower_right, xFormers' LowerTriangularFromBottomRightMask),
	// which for Lq = Lk is s ≤ i, and for a block of new queries after a
	// cached prefix of Lk − Lq keys lets every query see the whole prefix.
	Causal bool
}

const exactBlock = 64

// Apply computes exact attention in blocks of query rows.
func (e Exact) Apply(q, k, v *mat.Dense) (*mat.Dense, error) { return e.ApplyMasked(q, k, v, nil) }

// ApplyMasked computes exact attention with a key padding mask (see
// Masked) in blocks of query rows: padded keys are dropped before the
// product, and a row's softmax runs over the keys it sees.
func (e Exact) ApplyMasked(q, k, v *mat.Dense, keyPadding []bool) (*mat.Dense, error) {
	l, d, dv, err := checkQKV(q, k, v, keyPadding)
	if err != nil {
		return nil, err
	}
	lk, _ := k.Dims()
	out := mat.NewDense(l, dv, nil)
	pos, kk, vv := keptKeys(k, v, keyPadding)
	nk := lk
	if pos != nil {
		nk = len(pos)
	}
	if nk == 0 {
		return out, nil
	}
	visible := visibleFunc(e.Causal, pos, nk, lk-l)
	scale := 1 / math.Sqrt(float64(d))
	qr, kr, vr, or := q.RawMatrix(), kk.RawMatrix(), vv.RawMatrix(), out.RawMatrix()
	bufs := make([][]float64, parallel.Workers((l+exactBlock-1)/exactBlock))
	parallel.Chunks(l, exactBlock, func(w, lo, hi int) {
		rows := hi - lo
		cols := visible(hi - 1) // the most any row of the block sees
		if cols == 0 {
			return
		}
		if bufs[w] == nil {
			bufs[w] = make([]float64, exactBlock*nk)
		}
		s := bufs[w][:rows*nk]
		sg := blas64.General{Rows: rows, Cols: cols, Stride: nk, Data: s}
		blas64.Gemm(blas.NoTrans, blas.Trans, scale,
			blas64.General{Rows: rows, Cols: d, Stride: qr.Stride, Data: qr.Data[lo*qr.Stride:]},
			blas64.General{Rows: cols, Cols: d, Stride: kr.Stride, Data: kr.Data}, 0, sg)
		for i := 0; i < rows; i++ {
			row := s[i*nk : i*nk+cols]
			n := visible(lo + i)
			mx := math.Inf(-1)
			for _, x := range row[:n] {
				if x > mx {
					mx = x
				}
			}
			for j := range row[:n] {
				row[j] -= mx
			}
			vmath.Exp(row[:n], row[:n])
			var sum float64
			for _, x := range row[:n] {
				sum += x
			}
			inv := 1 / sum
			for j := 0; j < n; j++ {
				row[j] *= inv
			}
			for j := n; j < cols; j++ {
				row[j] = 0
			}
		}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, sg,
			blas64.General{Rows: cols, Cols: dv, Stride: vr.Stride, Data: vr.Data},
			0, blas64.General{Rows: rows, Cols: dv, Stride: or.Stride, Data: or.Data[lo*or.Stride:]})
	})
	return out, nil
}

// Kernelized is exact attention with an arbitrary kernel:
// out_t = Σ_s κ(q_t, k_s) v_s / Σ_s κ(q_t, k_s) over the keys s that query
// t sees, in O(Lq·Lk) time. It is the reference for linear attention with
// a map that factorises κ exactly. A row that sees no key is zero.
type Kernelized struct {
	Kernel func(q, k []float64) float64
	// Causal masks the keys after each query, aligned bottom-right as in
	// Exact.
	Causal bool
}

// Apply computes kernelized attention directly.
func (a Kernelized) Apply(q, k, v *mat.Dense) (*mat.Dense, error) { return a.ApplyMasked(q, k, v, nil) }

// ApplyMasked computes kernelized attention directly with a key padding
// mask (see Masked).
func (a Kernelized) ApplyMasked(q, k, v *mat.Dense, keyPadding []bool) (*mat.Dense, error) {
	l, _, dv, err := checkQKV(q, k, v, keyPadding)
	if err != nil {
		return nil, err
	}
	lk, _ := k.Dims()
	out := mat.NewDense(l, dv, nil)
	for t := 0; t < l; t++ {
		n := lk
		if a.Causal {
			n = max(0, min(lk, t+lk-l+1))
		}
		var den float64
		seen := false
		o := out.RawRowView(t)
		for s := 0; s < n; s++ {
			if keyPadding != nil && keyPadding[s] {
				continue
			}
			seen = true
			w := a.Kernel(q.RawRowView(t), k.RawRowView(s))
			den += w
			for j, x := range v.RawRowView(s)[:dv] {
				o[j] += w * x
			}
		}
		if seen {
			for j := range o {
				o[j] /= den
			}
		}
	}
	return out, nil
}

// Linear is linear attention D̃⁻¹(Q'(K'ᵀV)) with a random feature map.
// Its map (or pair) must be safe for concurrent use when one Linear runs
// several calls at once (MultiHead, Batch, ApplyTensor); the maps of
// kernelkit are.
type Linear struct {
	// Map is applied to the scaled queries and keys. If it implements
	// features.ScaledTransformer its scaled transform is used
	// (stabilisation).
	Map features.Transformer
	// Pair, if set instead of Map, gives asymmetric query and key features
	// (hybrid random features); no row scaling is applied to them. A pair
	// made by features.Symmetric is treated as its map.
	Pair features.Pair
	// Causal selects unidirectional attention by prefix sums, aligned
	// bottom-right as in Exact: query i of Lq attends keys s ≤ i + (Lk −
	// Lq) of Lk.
	Causal bool
	// Chunk is the block size of the causal form (default 64; 1 is the
	// plain prefix-sum recursion).
	Chunk int
	// NoInputScale skips the d^(−1/4) scaling of queries and keys (for maps
	// that do not estimate exp(qᵀk/√d), e.g. ReLU).
	NoInputScale bool
	// Eps guards denominators: |den| < Eps is clamped to ±Eps (default
	// 1e-30).
	Eps float64
}

// maps returns the map, or the pair when it is asymmetric.
func (a *Linear) maps() (features.Transformer, features.Pair, error) {
	mp, pair := a.Map, a.Pair
	if pair != nil {
		if t, ok := features.AsTransformer(pair); ok {
			mp, pair = t, nil
		}
	}
	if mp == nil && pair == nil {
		return nil, nil, errors.New("attention: Linear has no feature map")
	}
	return mp, pair, nil
}

func (a *Linear) eps() float64 {
	if a.Eps > 0 {
		return a.Eps
	}
	return 1e-30
}

// Apply computes linear attention.
func (a *Linear) Apply(q, k, v *mat.Dense) (*mat.Dense, error) { return a.ApplyMasked(q, k, v, nil) }

// ApplyMasked computes linear attention with a key padding mask (see
// Masked): the features of padded keys are never computed, their rows of
// K' are zero, so they add nothing to K'ᵀV and K'ᵀ1 nor (causal) to the
// running references.
func (a *Linear) ApplyMasked(q, k, v *mat.Dense, keyPadding []bool) (*mat.Dense, error) {
	if _, _, err := a.maps(); err != nil {
		return nil, err
	}
	l, _, dv, err := checkQKV(q, k, v, keyPadding)
	if err != nil {
		return nil, err
	}
	out := mat.NewDense(l, dv, nil)
	if err := linearApply(a, q, k, fromMat(v), keyPadding, fromMat(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// Apply32 is ApplyMasked in single precision: float32 queries, keys and
// values (Lq×d, Lk×d, Lk×dv) and outputs (Lq×dv). The features are
// computed in float64 (the maps' own arithmetic, stabilised in the log
// domain; rows of maps without log-scales are scaled to a largest
// magnitude of 1 first, so that they fit the float32 range) and rounded
// once to float32; the products with the values
// (K'ᵀV, Q'(K'ᵀV) and, causal, the C×C blocks and each chunk's update of
// the state) run in float32 through blas32, while the denominators and the
// carried causal state are summed in float64. See the package
// documentation for the measured error against float64.
func (a *Linear) Apply32(q, k, v blas32.General, keyPadding []bool) (blas32.General, error) {
	if _, _, err := a.maps(); err != nil {
		return blas32.General{}, err
	}
	qd, kd, vd := fromGeneral32(q), fromGeneral32(k), fromGeneral32(v)
	if err := checkGeneral32(q, k, v); err != nil {
		return blas32.General{}, err
	}
	if err := checkInputs(qd, kd, vd, keyPadding); err != nil {
		return blas32.General{}, err
	}
	out := newDense[float32](q.Rows, v.Cols)
	if err := linearApply(a, toMat(qd), toMat(kd), vd, keyPadding, out); err != nil {
		return blas32.General{}, err
	}
	return blas32.General{Rows: out.rows, Cols: out.cols, Stride: out.stride, Data: out.data}, nil
}

// checkGeneral32 checks that the float32 matrices are consistent views.
func checkGeneral32(ms ...blas32.General) error {
	for _, m := range ms {
		if m.Rows < 0 || m.Cols < 0 || m.Stride < max(m.Cols, 1) || (m.Rows > 0 && len(m.Data) < (m.Rows-1)*m.Stride+m.Cols) {
			return fmt.Errorf("attention: float32 matrix %d×%d with stride %d and %d values", m.Rows, m.Cols, m.Stride, len(m.Data))
		}
	}
	return nil
}

// linearApply computes linear attention in precision T for float64
// queries and keys (the maps' inputs), values v and output out (zero on
// entry).
func linearApply[T num](a *Linear, q, k *mat.Dense, v dense[T], pad []bool, out dense[T]) error {
	if !a.Causal {
		var err error
		if a, err = a.adapted(q, k, pad); err != nil {
			return err
		}
	}
	st, err := a.NewState()
	if err != nil {
		return err
	}
	qf, _, err := st.features(q, true)
	if err != nil {
		return err
	}
	kf, ks, err := st.keyFeatures(k, pad)
	if err != nil {
		return err
	}
	v = zeroPadded(v, pad)
	if _, ok := any(v.data).([]float32); ok {
		ks = single(qf, kf, ks)
	}
	if !a.Causal {
		bidirectional(qf, kf, ks, v, out, a.eps())
		return nil
	}
	l, lk := qf.rows, kf.rows
	off := lk - l
	qlo, klo := max(0, -off), max(0, off)
	qt, kt := as[T](qf), as[T](kf)
	if err := st.setDV(v.cols); err != nil {
		return err
	}
	absorb(st, kt.sliceRows(0, klo), subScales(ks, 0, klo), v.sliceRows(0, klo))
	return extend(st, qt.sliceRows(qlo, l), kt.sliceRows(klo, lk), subScales(ks, klo, lk), v.sliceRows(klo, lk), out.sliceRows(qlo, l))
}

// adapted returns a, or, when its map or pair is features.Adaptive (the
// OPRF and DERF maps of package prf: FAVOR++ and FAVOR#), a copy whose
// pair is fitted to the queries and the keys the mask keeps, both scaled
// as the map sees them. Causal calls and States keep the map as given: a
// fit to the whole sequence would let later tokens shape earlier outputs.
func (a *Linear) adapted(q, k *mat.Dense, pad []bool) (*Linear, error) {
	mp, pair, err := a.maps()
	if err != nil {
		return nil, err
	}
	var ad features.Adaptive
	if pair != nil {
		ad, _ = pair.(features.Adaptive)
	} else {
		ad, _ = mp.(features.Adaptive)
	}
	if ad == nil {
		return a, nil
	}
	_, kk, _ := keptKeys(k, k, pad)
	if kk == nil {
		return a, nil // every key padded: nothing to fit to
	}
	qs, ks := q, kk
	if !a.NoInputScale {
		_, d := q.Dims()
		f := math.Pow(float64(d), -0.25)
		qs, ks = mat.NewDense(q.RawMatrix().Rows, d, nil), mat.NewDense(kk.RawMatrix().Rows, d, nil)
		qs.Scale(f, q)
		ks.Scale(f, kk)
	}
	p, err := ad.Adapt(qs, ks)
	if err != nil {
		return nil, err
	}
	c := *a
	c.Map, c.Pair = nil, p
	return &c, nil
}

// as returns x in precision T: x itself for float64, a rounded copy for
// float32.
func as[T num](x dense[float64]) dense[T] {
	if d, ok := any(x).(dense[T]); ok {
		return d
	}
	return convert[T](x)
}

func subScales(ks []float64, lo, hi int) []float64 {
	if ks == nil {
		return nil
	}
	return ks[lo:hi]
}

// zeroPadded returns v, or a copy of it whose padded rows are zero.
func zeroPadded[T num](v dense[T], pad []bool) dense[T] {
	if !anyPadded(pad) {
		return v
	}
	out := newDense[T](v.rows, v.cols)
	for i := 0; i < v.rows; i++ {
		if !pad[i] {
			copy(out.row(i), v.row(i))
		}
	}
	return out
}

// bidirectional computes D̃⁻¹(Q'(K'ᵀV)) with the key rows brought to the
// common reference max_s ks_s (padded keys: zero rows, scale −∞).
func bidirectional[T num](qf, kf dense[float64], ks []float64, v, out dense[T], eps float64) {
	if ks != nil {
		ref := math.Inf(-1)
		for _, s := range ks {
			ref = math.Max(ref, s)
		}
		for i, s := range ks {
			if f := rel(s, ref); f != 1 {
				scaleRow(kf.row(i), f)
			}
		}
	}
	qt, kt := as[T](qf), as[T](kf)
	m, dv := kt.cols, v.cols
	// KV = K'ᵀV (m×dv) and ksum = K'ᵀ1 (m).
	kv := newDense[T](m, dv)
	gemm(true, false, 1, kt, v, 0, kv)
	ksum := make([]float64, m)
	for i := 0; i < kt.rows; i++ {
		for j, x := range kt.row(i) {
			ksum[j] += float64(x)
		}
	}
	gemm(false, false, 1, qt, kv, 0, out)
	for i := 0; i < out.rows; i++ {
		d := guard(dot64(qt.row(i), ksum), eps)
		o := out.row(i)
		for j := range o {
			o[j] = T(float64(o[j]) / d)
		}
	}
}

// MultiHead applies att to each of heads column blocks of q, k, v (d_model
// = heads·d_head) and concatenates the outputs, heads in parallel.
func MultiHead(att Attention, q, k, v *mat.Dense, heads int) (*mat.Dense, error) {
	if heads <= 0 {
		return nil, fmt.Errorf("attention: heads must be positive, got %d", heads)
	}
	l, d, dv, err := checkQKV(q, k, v, nil)
	if err != nil {
		return nil, err
	}
	if d%heads != 0 || dv%heads != 0 {
		return nil, fmt.Errorf("attention: widths %d and %d not divisible by %d heads", d, dv, heads)
	}
	lk, _ := k.Dims()
	hd, hv := d/heads, dv/heads
	out := mat.NewDense(l, dv, nil)
	errs := make([]error, heads)
	parallel.Chunks(heads, 1, func(_, h, _ int) {
		qh := mat.DenseCopyOf(q.Slice(0, l, h*hd, (h+1)*hd))
		kh := mat.DenseCopyOf(k.Slice(0, lk, h*hd, (h+1)*hd))
		vh := mat.DenseCopyOf(v.Slice(0, lk, h*hv, (h+1)*hv))
		o, err := att.Apply(qh, kh, vh)
		if err != nil {
			errs[h] = err
			return
		}
		out.Slice(0, l, h*hv, (h+1)*hv).(*mat.Dense).Copy(o)
	})
	return out, errors.Join(errs...)
}

// Batch applies MultiHead to each sequence of a batch, in parallel, and
// stops early if ctx is cancelled.
func Batch(ctx context.Context, att Attention, qs, ks, vs []*mat.Dense, heads int) ([]*mat.Dense, error) {
	if len(qs) != len(ks) || len(ks) != len(vs) {
		return nil, fmt.Errorf("attention: batch sizes %d, %d, %d differ", len(qs), len(ks), len(vs))
	}
	out := make([]*mat.Dense, len(qs))
	errs := make([]error, len(qs))
	parallel.Chunks(len(qs), 1, func(_, i, _ int) {
		if err := ctx.Err(); err != nil {
			errs[i] = err
			return
		}
		out[i], errs[i] = MultiHead(att, qs[i], ks[i], vs[i], heads)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Redraw hands out feature maps drawn from Config, drawing a new
// projection every Every calls (0: never) with seeds Config.Seed,
// Config.Seed+1, …: the explicit, reproducible redraw policy that
// Performer training relies on (analog paper, Supplementary Note 2).
// It is safe for concurrent use.
type Redraw struct {
	Config   features.Config
	InputDim int
	Every    int

	mu    sync.Mutex
	calls int
	epoch int
	cur   *features.Map
}

// Map returns the feature map for this call.
func (r *Redraw) Map() (*features.Map, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil || (r.Every > 0 && r.calls > 0 && r.calls%r.Every == 0) {
		if r.cur != nil {
			r.epoch++
		}
		cfg := r.Config
		cfg.Seed += uint64(r.epoch)
		m, err := features.New(cfg, r.InputDim)
		if err != nil {
			return nil, err
		}
		r.cur = m
	}
	r.calls++
	return r.cur, nil
}
