package attention

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// State is the carried state of causal linear attention: the running sums
// S = Σ_s φ(k'_s)v_sᵀ (m×dv) and z = Σ_s φ(k'_s) (m) over the keys
// absorbed so far, kept relative to the reference c = max_s of their
// log-scales (S and z are stored times exp(−c); see the package
// documentation). It is the cache of autoregressive decoding: Step adds one
// token and returns its output in O(m·(d+dv)) time and memory whatever
// the number of tokens before it, Extend adds a block of tokens (a prompt)
// with the chunked form, and Append adds keys and values without queries.
// A call's outputs equal, up to rounding, the rows of one causal call
// (Linear.ApplyMasked with Causal set) on the whole sequence: decoding
// token by token, or in blocks of any size, gives the full causal result.
//
// A State belongs to one sequence and one head; it is not safe for
// concurrent use (Clone makes an independent copy, e.g. for beam search).
// Its map must not change while it is in use.
type State struct {
	mp      features.Transformer
	pair    features.Pair
	scaled  bool // mp is a ScaledTransformer: keys carry log-scales
	noScale bool
	eps     float64
	chunk   int

	m, d, dv int
	s        []float64 // m×dv, S·exp(−ref)
	z        []float64 // m, z·exp(−ref)
	ref      float64   // −∞ before the first key
	n        int       // positions absorbed

	s32  []float32  // float32 copy of s for single-precision chunks
	xs   *mat.Dense // 2×d scratch of Step: query and key
	fs   *mat.Dense // 2×m scratch of Step: their features
	in64 []float64  // scratch of Step32
}

// NewState returns the empty causal state of linear attention with a's map
// and settings (Map or Pair, NoInputScale, Chunk, Eps; a.Causal is not
// consulted, a State is always causal). The value dimension dv is fixed by
// the first call that adds values.
func (a *Linear) NewState() (*State, error) {
	mp, pair, err := a.maps()
	if err != nil {
		return nil, err
	}
	st := &State{mp: mp, pair: pair, noScale: a.NoInputScale, eps: a.eps(), chunk: a.Chunk, ref: math.Inf(-1)}
	if pair != nil {
		st.m, st.d = pair.Dim(), pair.InputDim()
	} else {
		st.m, st.d = mp.Dim(), mp.InputDim()
		_, st.scaled = mp.(features.ScaledTransformer)
	}
	if err := limits.Dim("attention: feature dimension", st.m); err != nil {
		return nil, err
	}
	if err := limits.Dim("attention: input dimension", st.d); err != nil {
		return nil, err
	}
	st.z = make([]float64, st.m)
	return st, nil
}

// Len returns the number of positions absorbed so far (padded ones
// included).
func (st *State) Len() int { return st.n }

// Reset empties the state, keeping its map and value dimension.
func (st *State) Reset() {
	clear(st.s)
	clear(st.z)
	st.ref = math.Inf(-1)
	st.n = 0
}

// Clone returns an independent copy of the state.
func (st *State) Clone() *State {
	c := &State{mp: st.mp, pair: st.pair, scaled: st.scaled, noScale: st.noScale, eps: st.eps, chunk: st.chunk,
		m: st.m, d: st.d, dv: st.dv, ref: st.ref, n: st.n}
	c.s = append([]float64(nil), st.s...)
	c.z = append([]float64(nil), st.z...)
	return c
}

// setDV fixes the value dimension at the first call and checks it after.
func (st *State) setDV(dv int) error {
	if dv <= 0 {
		return errors.New("attention: values have no columns")
	}
	if st.dv == 0 {
		if _, err := limits.Matrix("attention: causal state", st.m, dv); err != nil {
			return err
		}
		st.dv = dv
		st.s = make([]float64, st.m*dv)
		return nil
	}
	if dv != st.dv {
		return fmt.Errorf("attention: values have %d columns, the state holds %d", dv, st.dv)
	}
	return nil
}

// scale multiplies S and z by f.
func (st *State) scale(f float64) {
	for i := range st.s {
		st.s[i] *= f
	}
	for i := range st.z {
		st.z[i] *= f
	}
}

// features returns the (scaled) features of x·d^(−1/4) and the
// log-scales (nil unless the map is a ScaledTransformer).
func (st *State) features(x *mat.Dense, query bool) (dense[float64], []float64, error) {
	n, d := x.Dims()
	if d != st.d {
		return dense[float64]{}, nil, fmt.Errorf("attention: inputs have %d columns, feature map expects %d", d, st.d)
	}
	xs := x
	if !st.noScale {
		xs = mat.NewDense(n, d, nil)
		xs.Scale(math.Pow(float64(d), -0.25), x)
	}
	z := mat.NewDense(n, st.m, nil)
	if st.pair != nil {
		var err error
		if query {
			err = st.pair.Query(z, xs)
		} else {
			err = st.pair.Key(z, xs)
		}
		return fromMat(z), nil, err
	}
	if st.scaled {
		s, err := st.mp.(features.ScaledTransformer).TransformScaled(z, xs)
		return fromMat(z), s, err
	}
	return fromMat(z), nil, st.mp.Transform(z, xs)
}

// keyFeatures returns the features of the keys the mask keeps, with zero
// rows (and log-scale −∞) for the padded ones, whose features are never
// computed.
func (st *State) keyFeatures(k *mat.Dense, pad []bool) (dense[float64], []float64, error) {
	if !anyPadded(pad) {
		return st.features(k, false)
	}
	lk, d := k.Dims()
	var pos []int
	for s, p := range pad {
		if !p {
			pos = append(pos, s)
		}
	}
	kf := newDense[float64](lk, st.m)
	var ks []float64
	if st.scaled {
		ks = make([]float64, lk)
		for i := range ks {
			ks[i] = math.Inf(-1)
		}
	}
	if len(pos) == 0 {
		return kf, ks, nil
	}
	kk := mat.NewDense(len(pos), d, nil)
	for i, s := range pos {
		copy(kk.RawRowView(i), k.RawRowView(s))
	}
	f, s, err := st.features(kk, false)
	if err != nil {
		return dense[float64]{}, nil, err
	}
	for i, p := range pos {
		copy(kf.row(p), f.row(i))
		if ks != nil {
			ks[p] = s[i]
		}
	}
	return kf, ks, nil
}

// Append adds keys and values (Lk×d, Lk×dv) without queries: the prefix
// of a sequence whose outputs are not needed (a cached context). Rows with
// keyPadding[s] true are skipped but counted as positions (see Masked).
func (st *State) Append(k, v *mat.Dense, keyPadding []bool) error {
	if k == nil || v == nil {
		return errors.New("attention: nil input")
	}
	lk, d := k.Dims()
	lv, dv := v.Dims()
	if err := checkShapes(1, d, lk, d, lv, dv, keyPadding); err != nil {
		return err
	}
	if err := checkFinite(fromMat(k), keyPadding); err != nil {
		return err
	}
	if err := checkFinite(fromMat(v), keyPadding); err != nil {
		return err
	}
	kf, ks, err := st.keyFeatures(k, keyPadding)
	if err != nil {
		return err
	}
	if err := st.setDV(dv); err != nil {
		return err
	}
	absorb(st, kf, ks, zeroPadded(fromMat(v), keyPadding))
	return nil
}

// Extend adds a block of L tokens — queries, keys and values (L×d, L×d,
// L×dv), query t at the position of key t — and returns their outputs
// (L×dv): row t attends every key absorbed before plus keys 0…t of the
// block, by the chunked form. keyPadding (nil, or length L) pads keys of
// the block as in Masked.
func (st *State) Extend(q, k, v *mat.Dense, keyPadding []bool) (*mat.Dense, error) {
	l, _, dv, err := checkQKV(q, k, v, keyPadding)
	if err != nil {
		return nil, err
	}
	if lk, _ := k.Dims(); lk != l {
		return nil, fmt.Errorf("attention: Extend needs one key per query, got %d queries and %d keys", l, lk)
	}
	qf, _, err := st.features(q, true)
	if err != nil {
		return nil, err
	}
	kf, ks, err := st.keyFeatures(k, keyPadding)
	if err != nil {
		return nil, err
	}
	if err := st.setDV(dv); err != nil {
		return nil, err
	}
	out := mat.NewDense(l, dv, nil)
	if err := extend(st, qf, kf, ks, zeroPadded(fromMat(v), keyPadding), fromMat(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// Extend32 is Extend in single precision (see Linear.Apply32): float32
// inputs and outputs and float32 products, with the state summed in
// float64.
func (st *State) Extend32(q, k, v blas32.General, keyPadding []bool) (blas32.General, error) {
	if err := checkGeneral32(q, k, v); err != nil {
		return blas32.General{}, err
	}
	qd, kd, vd := fromGeneral32(q), fromGeneral32(k), fromGeneral32(v)
	if err := checkInputs(qd, kd, vd, keyPadding); err != nil {
		return blas32.General{}, err
	}
	if q.Rows != k.Rows {
		return blas32.General{}, fmt.Errorf("attention: Extend needs one key per query, got %d queries and %d keys", q.Rows, k.Rows)
	}
	qf, _, err := st.features(toMat(qd), true)
	if err != nil {
		return blas32.General{}, err
	}
	kf, ks, err := st.keyFeatures(toMat(kd), keyPadding)
	if err != nil {
		return blas32.General{}, err
	}
	if err := st.setDV(v.Cols); err != nil {
		return blas32.General{}, err
	}
	ks = single(qf, kf, ks)
	out := newDense[float32](q.Rows, v.Cols)
	if err := extend(st, convert[float32](qf), convert[float32](kf), ks, zeroPadded(vd, keyPadding), out); err != nil {
		return blas32.General{}, err
	}
	return blas32.General{Rows: out.rows, Cols: out.cols, Stride: out.stride, Data: out.data}, nil
}

// single prepares float64 features for rounding to float32. Features of a
// map without log-scales (an asymmetric pair, a Nyström map) can exceed
// the float32 range — the hybrid estimators' exponentials do for keys of
// norm 30 — so their rows are scaled here to a largest magnitude of 1, in
// float64, and the logs of the factors become the key log-scales (−∞ for a
// zero row, which contributes nothing); query rows are scaled likewise, a
// factor that cancels in each row's ratio. Maps with log-scales already
// give rows of magnitude at most 1 (features.ScaledTransformer). It
// returns the key log-scales.
func single(qf, kf dense[float64], ks []float64) []float64 {
	if ks != nil {
		return ks
	}
	normalise(qf)
	return normalise(kf)
}

// normalise scales each row of f to a largest magnitude of 1 and returns
// the logs of the magnitudes (−∞ for zero rows).
func normalise(f dense[float64]) []float64 {
	ls := make([]float64, f.rows)
	for i := range ls {
		row := f.row(i)
		var mx float64
		for _, x := range row {
			if a := math.Abs(x); a > mx || a != a { // NaN propagates, as math.Max would
				mx = a
			}
		}
		ls[i] = math.Log(mx)
		if mx > 0 {
			scaleRow(row, 1/mx)
		}
	}
	return ls
}

// stepFeatures writes the (scaled) features of one query and one key into
// the scratch of Step and returns them with the key's log-scale (0 for maps
// without one). A symmetric map transforms both rows in one call.
func (st *State) stepFeatures(q, k []float64) (fq, fk []float64, sk float64, err error) {
	if st.xs == nil {
		st.xs, st.fs = mat.NewDense(2, st.d, nil), mat.NewDense(2, st.m, nil)
	}
	copy(st.xs.RawRowView(0), q)
	copy(st.xs.RawRowView(1), k)
	if !st.noScale {
		f := math.Pow(float64(st.d), -0.25)
		for i := 0; i < 2; i++ {
			row := st.xs.RawRowView(i)
			for j := range row {
				row[j] *= f
			}
		}
	}
	fq, fk = st.fs.RawRowView(0), st.fs.RawRowView(1)
	switch {
	case st.pair != nil:
		x0, x1 := st.xs.Slice(0, 1, 0, st.d).(*mat.Dense), st.xs.Slice(1, 2, 0, st.d).(*mat.Dense)
		f0, f1 := st.fs.Slice(0, 1, 0, st.m).(*mat.Dense), st.fs.Slice(1, 2, 0, st.m).(*mat.Dense)
		if err = st.pair.Query(f0, x0); err == nil {
			err = st.pair.Key(f1, x1)
		}
	case st.scaled:
		var s []float64
		if s, err = st.mp.(features.ScaledTransformer).TransformScaled(st.fs, st.xs); err == nil {
			sk = s[1]
		}
	default:
		err = st.mp.Transform(st.fs, st.xs)
	}
	return fq, fk, sk, err
}

// Step adds one token — its key k (d) and value v (dv) — and writes the
// output of its query q (d), which attends every key so far including k,
// into dst (dv): S and z are updated by a rank-one term and the output is
// φ(q')ᵀS / φ(q')ᵀz, O(m·(d+dv)) work whatever the length. If the
// token's key log-scale exceeds the reference, S and z are first
// multiplied by exp(c_old − c_new). On an error the state is unchanged
// (so are those of Append and Extend).
func (st *State) Step(dst, q, k, v []float64) error {
	if len(q) != st.d || len(k) != st.d {
		return fmt.Errorf("attention: query and key of lengths %d and %d, feature map expects %d", len(q), len(k), st.d)
	}
	if st.dv != 0 && len(v) != st.dv {
		return fmt.Errorf("attention: values have %d columns, the state holds %d", len(v), st.dv)
	}
	if len(dst) != len(v) {
		return fmt.Errorf("attention: output of length %d for values of %d", len(dst), len(v))
	}
	for _, x := range [][]float64{q, k, v} {
		if err := checkFinite(dense[float64]{rows: 1, cols: len(x), stride: len(x), data: x}, nil); err != nil {
			return err
		}
	}
	fq, fk, sk, err := st.stepFeatures(q, k)
	if err != nil {
		return err
	}
	if err := st.setDV(len(v)); err != nil {
		return err
	}
	f := 1.0
	if st.scaled {
		r := math.Max(st.ref, sk)
		if g := rel(st.ref, r); g != 1 {
			st.scale(g)
		}
		st.ref = r
		f = rel(sk, r)
	}
	m, dv := st.m, st.dv
	impl := blas64.Implementation()
	impl.Dger(m, dv, f, fk, 1, v, 1, st.s, dv)
	impl.Daxpy(m, f, fk, 1, st.z, 1)
	impl.Dgemv(blas.Trans, m, dv, 1, st.s, dv, fq, 1, 0, dst, 1)
	d := guard(impl.Ddot(m, fq, 1, st.z, 1), st.eps)
	for j := range dst {
		dst[j] /= d
	}
	st.n++
	return nil
}

// Step32 is Step with float32 inputs and output. Its arithmetic is float64:
// a step costs O(m·(d+dv)) either way, and the state it updates is the
// float64 state (long sums stay accurate).
func (st *State) Step32(dst, q, k, v []float32) error {
	if len(dst) != len(v) {
		return fmt.Errorf("attention: output of length %d for values of %d", len(dst), len(v))
	}
	n := len(q) + len(k) + 2*len(v)
	if cap(st.in64) < n {
		st.in64 = make([]float64, n)
	}
	buf := st.in64[:n]
	for i, x := range q {
		buf[i] = float64(x)
	}
	for i, x := range k {
		buf[len(q)+i] = float64(x)
	}
	for i, x := range v {
		buf[len(q)+len(k)+i] = float64(x)
	}
	q64, k64 := buf[:len(q)], buf[len(q):len(q)+len(k)]
	v64, o64 := buf[len(q)+len(k):len(q)+len(k)+len(v)], buf[len(q)+len(k)+len(v):]
	if err := st.Step(o64, q64, k64, v64); err != nil {
		return err
	}
	for j, x := range o64 {
		dst[j] = float32(x)
	}
	return nil
}

// stateAs returns S in precision T: S itself for float64, a float32 copy
// (kept in st.s32) for float32.
func stateAs[T num](st *State) dense[T] {
	if s, ok := any(st.s).([]T); ok {
		return dense[T]{rows: st.m, cols: st.dv, stride: st.dv, data: s}
	}
	if len(st.s32) != len(st.s) {
		st.s32 = make([]float32, len(st.s))
	}
	for i, x := range st.s {
		st.s32[i] = float32(x)
	}
	return dense[T]{rows: st.m, cols: st.dv, stride: st.dv, data: any(st.s32).([]T)}
}

// addOuter adds kfᵀv to S and the rows of kf to z: one GEMM into S for
// float64; for float32 a float32 GEMM whose result is added to the float64
// S.
func addOuter[T num](st *State, kf, v dense[T]) {
	if kf.rows == 0 {
		return
	}
	m, dv := st.m, st.dv
	if s, ok := any(st.s).([]T); ok {
		gemm(true, false, 1, kf, v, 1, dense[T]{rows: m, cols: dv, stride: dv, data: s})
	} else {
		upd := newDense[T](m, dv)
		gemm(true, false, 1, kf, v, 0, upd)
		for i, x := range upd.data {
			st.s[i] += float64(x)
		}
	}
	for i := 0; i < kf.rows; i++ {
		for j, x := range kf.row(i) {
			st.z[j] += float64(x)
		}
	}
}

// absorb adds keys and values without queries (their feature rows kf are
// scratch, scaled in place): the reference rises to the largest new
// log-scale, then every row is brought to it.
func absorb[T num](st *State, kf dense[T], ks []float64, v dense[T]) {
	if kf.rows == 0 {
		return
	}
	if ks != nil {
		r := st.ref
		for _, s := range ks {
			r = math.Max(r, s)
		}
		if f := rel(st.ref, r); f != 1 {
			st.scale(f)
		}
		st.ref = r
		for i, s := range ks {
			if f := rel(s, r); f != 1 {
				scaleRow(kf.row(i), f)
			}
		}
	}
	addOuter(st, kf, v)
	st.n += kf.rows
}

// extend runs the chunked causal form over an aligned block — query row t
// at the position of key row t — starting from the carried state, and
// writes the outputs into out (zero on entry). The key feature rows kf are
// scratch, scaled in place.
//
// With log-scales ks (key rows kf_s = exp(−ks_s)·φ(k_s); −∞ for padded
// keys, whose rows are zero), row t is computed relative to its own
// reference r_t = max_{s≤t} ks_s, the running maximum of the key
// log-scales up to t (and over the keys absorbed before): its terms are
// φ(k_s)·exp(−r_t) = kf_s·exp(ks_s − r_t) with factors at most 1 (exactly
// 1 for the key that set the maximum), so no term overflows, the largest
// cannot underflow, and nothing in row t — not even its reference —
// depends on a key after t. The carried state is kept relative to the
// reference of the last row before the chunk and is scaled down when the
// reference rises (as online softmax does). Inside a chunk the running
// maximum is piecewise constant; the factor of term (t, s) is
// exp(ks_s − r_s)·exp(r_s − r_t), the first applied to key row s before
// the C×C product and the second, 1 unless the maximum rose between s and
// t, computed once per pair of pieces. The C×C block is checked against
// limits.Matrix before it is allocated.
func extend[T num](st *State, qf, kf dense[T], ks []float64, v, out dense[T]) error {
	l := qf.rows
	if l == 0 {
		return nil
	}
	c := st.chunk
	if c <= 0 {
		c = 64
	}
	c = min(c, l)
	if _, err := limits.Matrix("attention: causal chunk block", c, c); err != nil {
		return err
	}
	den := make([]float64, c)
	blkBuf := make([]T, c*c)
	piece := make([]int, c)           // piece of constant running maximum of each row
	pieceRef := make([]float64, 0, c) // running maximum on each piece
	rise := make([]float64, c)        // exp(pieceRef[p] − pieceRef[cur]) for p < cur
	for lo := 0; lo < l; lo += c {
		hi := min(lo+c, l)
		n := hi - lo
		kc, qc, oc, vc := kf.sliceRows(lo, hi), qf.sliceRows(lo, hi), out.sliceRows(lo, hi), v.sliceRows(lo, hi)
		np := 0
		if ks != nil {
			// Running maximum, its pieces, and key rows relative to it.
			pieceRef = pieceRef[:0]
			r := st.ref
			for i := 0; i < n; i++ {
				s := ks[lo+i]
				if i == 0 || s > r {
					r = math.Max(r, s)
					pieceRef = append(pieceRef, r)
				}
				piece[i] = len(pieceRef) - 1
				if s < r {
					scaleRow(kc.row(i), math.Exp(s-r))
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
		gemm(false, false, 1, qc, stateAs[T](st), 0, oc)
		for i := 0; i < n; i++ {
			den[i] = dot64(qc.row(i), st.z)
			if ks != nil && pieceRef[piece[i]] != st.ref {
				f := rel(st.ref, pieceRef[piece[i]]) // 0 before the first key, where the state is 0
				den[i] *= f
				scaleRow(oc.row(i), f)
			}
		}
		// Intra-chunk: masked C×C product.
		ab := block(blkBuf, n, n)
		gemm(false, true, 1, qc, kc, 0, ab)
		for i := 0; i < n; i++ {
			row := ab.row(i)
			clear(row[i+1:])
			if ks != nil && piece[i] > 0 {
				pi := piece[i]
				rises(pi)
				for j := 0; j <= i && piece[j] != pi; j++ {
					row[j] *= T(rise[piece[j]])
				}
			}
			for _, x := range row[:i+1] {
				den[i] += float64(x)
			}
		}
		gemm(false, false, 1, ab, vc, 1, oc)
		for i := 0; i < n; i++ {
			d := guard(den[i], st.eps)
			o := oc.row(i)
			for j := range o {
				o[j] = T(float64(o[j]) / d)
			}
		}
		// Carry the chunk into the state, relative to the reference of its
		// last row.
		if ks != nil {
			last := np - 1
			if f := rel(st.ref, pieceRef[last]); f != 1 {
				st.scale(f)
			}
			st.ref = pieceRef[last]
			rises(last)
			for i := 0; i < n && piece[i] != last; i++ {
				scaleRow(kc.row(i), rise[piece[i]])
			}
		}
		addOuter(st, kc, vc)
	}
	st.n += l
	return nil
}
