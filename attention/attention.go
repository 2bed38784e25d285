package attention

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
)

// Attention maps queries, keys and values (L×d, L×d, L×dv) to outputs
// (L×dv).
type Attention interface {
	Apply(q, k, v *mat.Dense) (*mat.Dense, error)
}

func checkQKV(q, k, v *mat.Dense) (l, d, dv int, err error) {
	if q == nil || k == nil || v == nil {
		return 0, 0, 0, errors.New("attention: nil input")
	}
	l, d = q.Dims()
	lk, dk := k.Dims()
	lv, dv := v.Dims()
	if l == 0 || d == 0 || dv == 0 {
		return 0, 0, 0, errors.New("attention: empty input")
	}
	if d != dk {
		return 0, 0, 0, fmt.Errorf("attention: queries have %d columns, keys %d", d, dk)
	}
	if lk != lv {
		return 0, 0, 0, fmt.Errorf("attention: %d keys but %d values", lk, lv)
	}
	for _, m := range []*mat.Dense{q, k, v} {
		r, c := m.Dims()
		for i := 0; i < r; i++ {
			for _, x := range m.RawRowView(i)[:c] {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return 0, 0, 0, errors.New("attention: input has NaN or Inf")
				}
			}
		}
	}
	return l, d, dv, nil
}

// Exact is softmax attention softmax(QKᵀ/√d)V, the reference.
type Exact struct {
	// Causal masks keys after each query (query t sees keys 0..t; needs as
	// many keys as queries).
	Causal bool
}

const exactBlock = 64

// Apply computes exact attention in blocks of query rows.
func (e Exact) Apply(q, k, v *mat.Dense) (*mat.Dense, error) {
	l, d, dv, err := checkQKV(q, k, v)
	if err != nil {
		return nil, err
	}
	lk, _ := k.Dims()
	if e.Causal && lk != l {
		return nil, fmt.Errorf("attention: causal attention needs as many keys as queries (%d, %d)", lk, l)
	}
	out := mat.NewDense(l, dv, nil)
	scale := 1 / math.Sqrt(float64(d))
	qr, kr, vr, or := q.RawMatrix(), k.RawMatrix(), v.RawMatrix(), out.RawMatrix()
	bufs := make([][]float64, parallel.Workers((l+exactBlock-1)/exactBlock))
	parallel.Chunks(l, exactBlock, func(w, lo, hi int) {
		rows := hi - lo
		if bufs[w] == nil {
			bufs[w] = make([]float64, exactBlock*lk)
		}
		s := bufs[w][:rows*lk]
		cols := lk
		if e.Causal {
			cols = hi // keys beyond the block's last query are masked for every row
		}
		sg := blas64.General{Rows: rows, Cols: cols, Stride: lk, Data: s}
		blas64.Gemm(blas.NoTrans, blas.Trans, scale,
			blas64.General{Rows: rows, Cols: d, Stride: qr.Stride, Data: qr.Data[lo*qr.Stride:]},
			blas64.General{Rows: cols, Cols: d, Stride: kr.Stride, Data: kr.Data}, 0, sg)
		for i := 0; i < rows; i++ {
			row := s[i*lk : i*lk+cols]
			n := cols
			if e.Causal {
				n = lo + i + 1
			}
			mx := math.Inf(-1)
			for _, x := range row[:n] {
				mx = math.Max(mx, x)
			}
			var sum float64
			for j := 0; j < n; j++ {
				row[j] = math.Exp(row[j] - mx)
				sum += row[j]
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

// Kernelized is exact attention with an arbitrary non-negative kernel:
// out_t = Σ_s κ(q_t, k_s) v_s / Σ_s κ(q_t, k_s), in O(L²) time. It is the
// reference for linear attention with a map that factorises κ exactly.
type Kernelized struct {
	Kernel func(q, k []float64) float64
	Causal bool
}

// Apply computes kernelized attention directly.
func (a Kernelized) Apply(q, k, v *mat.Dense) (*mat.Dense, error) {
	l, _, dv, err := checkQKV(q, k, v)
	if err != nil {
		return nil, err
	}
	lk, _ := k.Dims()
	out := mat.NewDense(l, dv, nil)
	for t := 0; t < l; t++ {
		n := lk
		if a.Causal {
			n = t + 1
		}
		var den float64
		o := out.RawRowView(t)
		for s := 0; s < n; s++ {
			w := a.Kernel(q.RawRowView(t), k.RawRowView(s))
			den += w
			for j, x := range v.RawRowView(s)[:dv] {
				o[j] += w * x
			}
		}
		for j := range o {
			o[j] /= den
		}
	}
	return out, nil
}

// Linear is linear attention D̃⁻¹(Q'(K'ᵀV)) with a random feature map.
type Linear struct {
	// Map is applied to the scaled queries and keys. If it implements
	// features.ScaledTransformer its scaled transform is used
	// (stabilisation).
	Map features.Transformer
	// Pair, if set instead of Map, gives asymmetric query and key features
	// (hybrid random features); no row scaling is applied to them. A pair
	// made by features.Symmetric is treated as its map.
	Pair features.Pair
	// Causal selects unidirectional attention by prefix sums.
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

// features returns the (scaled) features of x·d^(−1/4) and log-scales (nil
// when the map is not a ScaledTransformer).
func (a *Linear) features(x *mat.Dense, query bool) (*mat.Dense, []float64, error) {
	n, d := x.Dims()
	mp, pair := a.Map, a.Pair
	if pair != nil {
		if t, ok := features.AsTransformer(pair); ok {
			mp, pair = t, nil
		}
	}
	if mp == nil && pair == nil {
		return nil, nil, errors.New("attention: linear attention has no feature map")
	}
	in := 0
	if pair != nil {
		in = pair.InputDim()
	} else {
		in = mp.InputDim()
	}
	if d != in {
		return nil, nil, fmt.Errorf("attention: inputs have %d columns, feature map expects %d", d, in)
	}
	xs := x
	if !a.NoInputScale {
		xs = mat.NewDense(n, d, nil)
		xs.Scale(math.Pow(float64(d), -0.25), x)
	}
	if pair != nil {
		z := mat.NewDense(n, pair.Dim(), nil)
		if query {
			return z, nil, pair.Query(z, xs)
		}
		return z, nil, pair.Key(z, xs)
	}
	z := mat.NewDense(n, mp.Dim(), nil)
	if st, ok := mp.(features.ScaledTransformer); ok {
		s, err := st.TransformScaled(z, xs)
		return z, s, err
	}
	return z, nil, mp.Transform(z, xs)
}

func (a *Linear) eps() float64 {
	if a.Eps > 0 {
		return a.Eps
	}
	return 1e-30
}

func guard(den, eps float64) float64 {
	if den >= 0 {
		return math.Max(den, eps)
	}
	return math.Min(den, -eps)
}

// Apply computes linear attention.
func (a *Linear) Apply(q, k, v *mat.Dense) (*mat.Dense, error) {
	if a.Map == nil && a.Pair == nil {
		return nil, errors.New("attention: Linear has no feature map")
	}
	l, _, dv, err := checkQKV(q, k, v)
	if err != nil {
		return nil, err
	}
	lk, _ := k.Dims()
	if a.Causal && lk != l {
		return nil, fmt.Errorf("attention: causal attention needs as many keys as queries (%d, %d)", lk, l)
	}
	qf, _, err := a.features(q, true)
	if err != nil {
		return nil, err
	}
	kf, ks, err := a.features(k, false)
	if err != nil {
		return nil, err
	}
	if a.Causal {
		return a.causal(qf, kf, ks, v)
	}
	_, m := kf.Dims()
	// Rescale key rows to the common reference max_s ks.
	if ks != nil {
		ref := math.Inf(-1)
		for _, s := range ks {
			ref = math.Max(ref, s)
		}
		for i, s := range ks {
			row := kf.RawRowView(i)
			f := math.Exp(s - ref)
			for j := range row {
				row[j] *= f
			}
		}
	}
	// KV = K'ᵀV (m×dv) and ksum = K'ᵀ1 (m).
	kv := mat.NewDense(m, dv, nil)
	kv.Mul(kf.T(), v)
	ksum := make([]float64, m)
	for i := 0; i < lk; i++ {
		for j, x := range kf.RawRowView(i) {
			ksum[j] += x
		}
	}
	out := mat.NewDense(l, dv, nil)
	out.Mul(qf, kv)
	eps := a.eps()
	for i := 0; i < l; i++ {
		var den float64
		for j, x := range qf.RawRowView(i) {
			den += x * ksum[j]
		}
		den = guard(den, eps)
		o := out.RawRowView(i)
		for j := range o {
			o[j] /= den
		}
	}
	return out, nil
}

// causal runs the chunked prefix-sum form. With log-scales ks (key rows
// kf_s = exp(−ks_s)·φ(k_s)), row t is computed relative to its own
// reference r_t = max_{s≤t} ks_s, the running maximum of the key
// log-scales up to t: its terms are φ(k_s)·exp(−r_t) = kf_s·exp(ks_s − r_t)
// with factors at most 1 (exactly 1 for the key that set the maximum), so
// no term overflows, the largest cannot underflow, and nothing in row t —
// not even its reference — depends on a key after t. The carried state is
// kept relative to the reference of the last row before the chunk and is
// scaled down when the reference rises (as online softmax does). Inside a
// chunk the running maximum is piecewise constant; the factor of term (t,
// s) is exp(ks_s − r_s)·exp(r_s − r_t), the first applied to key row s
// before the C×C product and the second, 1 unless the maximum rose between
// s and t, computed once per pair of pieces. The C×C block is checked
// against limits.Matrix before it is allocated.
func (a *Linear) causal(qf, kf *mat.Dense, ks []float64, v *mat.Dense) (*mat.Dense, error) {
	l, m := qf.Dims()
	_, dv := v.Dims()
	c := a.Chunk
	if c <= 0 {
		c = 64
	}
	c = min(c, l)
	if _, err := limits.Matrix("attention: causal chunk block", c, c); err != nil {
		return nil, err
	}
	state := mat.NewDense(m, dv, nil) // Σ φ(k_s) v_sᵀ over earlier chunks, times exp(−ref)
	z := make([]float64, m)           // Σ φ(k_s) over earlier chunks, times exp(−ref)
	ref := math.Inf(-1)               // reference of state and z
	out := mat.NewDense(l, dv, nil)
	den := make([]float64, c)
	blkBuf := mat.NewDense(c, c, nil)
	kcBuf := mat.NewDense(c, m, nil)
	intraBuf := mat.NewDense(c, dv, nil)
	upd := mat.NewDense(m, dv, nil)
	piece := make([]int, c)           // piece of constant running maximum of each row
	pieceRef := make([]float64, 0, c) // running maximum on each piece
	rise := make([]float64, c)        // exp(pieceRef[p] − pieceRef[cur]) for p < cur
	eps := a.eps()
	for lo := 0; lo < l; lo += c {
		hi := min(lo+c, l)
		n := hi - lo
		kc := kcBuf.Slice(0, n, 0, m).(*mat.Dense)
		kc.Copy(kf.Slice(lo, hi, 0, m))
		qc := qf.Slice(lo, hi, 0, m).(*mat.Dense)
		oc := out.Slice(lo, hi, 0, dv).(*mat.Dense)
		vc := v.Slice(lo, hi, 0, dv).(*mat.Dense)
		np := 0
		if ks != nil {
			// Running maximum, its pieces, and key rows relative to it.
			pieceRef = pieceRef[:0]
			r := ref
			for i := 0; i < n; i++ {
				s := ks[lo+i]
				if i == 0 || s > r {
					r = math.Max(r, s)
					pieceRef = append(pieceRef, r)
				}
				piece[i] = len(pieceRef) - 1
				if s < r {
					f := math.Exp(s - r)
					row := kc.RawRowView(i)
					for j := range row {
						row[j] *= f
					}
				}
			}
			np = len(pieceRef)
		}
		cur := -1 // piece whose factors rise holds
		rises := func(pi int) {
			if pi != cur {
				for p := 0; p < pi; p++ {
					rise[p] = math.Exp(pieceRef[p] - pieceRef[pi])
				}
				cur = pi
			}
		}
		// Inter-chunk: the carried state, brought to each row's reference.
		oc.Mul(qc, state)
		for i := 0; i < n; i++ {
			var s float64
			for j, x := range qc.RawRowView(i) {
				s += x * z[j]
			}
			den[i] = s
			if ks != nil && pieceRef[piece[i]] != ref {
				f := math.Exp(ref - pieceRef[piece[i]]) // 0 before the first chunk, where the state is 0
				den[i] *= f
				o := oc.RawRowView(i)
				for j := range o {
					o[j] *= f
				}
			}
		}
		// Intra-chunk: masked C×C product.
		ab := blkBuf.Slice(0, n, 0, n).(*mat.Dense)
		ab.Mul(qc, kc.T())
		for i := 0; i < n; i++ {
			row := ab.RawRowView(i)
			for j := i + 1; j < n; j++ {
				row[j] = 0
			}
			if ks != nil && piece[i] > 0 {
				pi := piece[i]
				rises(pi)
				for j := 0; j <= i && piece[j] != pi; j++ {
					row[j] *= rise[piece[j]]
				}
			}
			for j := 0; j <= i; j++ {
				den[i] += row[j]
			}
		}
		intra := intraBuf.Slice(0, n, 0, dv).(*mat.Dense)
		intra.Mul(ab, vc)
		oc.Add(oc, intra)
		for i := 0; i < n; i++ {
			d := guard(den[i], eps)
			o := oc.RawRowView(i)
			for j := range o {
				o[j] /= d
			}
		}
		// Carry the chunk into the state, relative to the reference of its
		// last row.
		if ks != nil {
			last := np - 1
			if f := math.Exp(ref - pieceRef[last]); f != 1 {
				state.Scale(f, state)
				for j := range z {
					z[j] *= f
				}
			}
			ref = pieceRef[last]
			rises(last)
			for i := 0; i < n && piece[i] != last; i++ {
				f := rise[piece[i]]
				row := kc.RawRowView(i)
				for j := range row {
					row[j] *= f
				}
			}
		}
		upd.Mul(kc.T(), vc)
		state.Add(state, upd)
		for i := 0; i < n; i++ {
			for j, x := range kc.RawRowView(i) {
				z[j] += x
			}
		}
	}
	return out, nil
}

// MultiHead applies att to each of heads column blocks of q, k, v (d_model
// = heads·d_head) and concatenates the outputs, heads in parallel.
func MultiHead(att Attention, q, k, v *mat.Dense, heads int) (*mat.Dense, error) {
	if heads <= 0 {
		return nil, fmt.Errorf("attention: heads must be positive, got %d", heads)
	}
	l, d, dv, err := checkQKV(q, k, v)
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
