package native

import (
	"math"
)

// Scratch buffer indices of the FAVOR+ head passes.
const (
	fvQ    = iota // q·d_h^(−1/4), L×d_h
	fvK           // k·d_h^(−1/4), L×d_h
	fvKfm         // masked key features, L×m
	fvV1          // [v, 1], L×(d_h+1)
	fvDout        // gradient of [num, den], L×(d_h+1)
	fvDqf         // L×m
	fvDkf         // L×m
	fvDv1         // L×(d_h+1)
	fvDx          // feature input gradient, L×d_h
)

// Scratch buffer indices of linearCore and linearCoreBackward, apart from
// those of the kinds' own passes.
const (
	lcSt  = 100 + iota // key state Σ φ(k)[v, 1]ᵀ, F×W
	lcS                // chunk scores, c×c
	lcDS               // their gradient, c×c
	lcDst              // per-chunk state gradients, nc×F×W
	lcG                // suffix sum of the state gradients, F×W
)

// linearCore sets out1 (L×W) to [num, den] = Σ_s (qf_l·kf_s)[v_s, 1] of
// linear attention with query features qf (L×F), key features kf (L×F,
// masked) and values with a column of ones v1 (L×W), over all keys s
// (bidirectional) or the keys s ≤ l (causal), the latter in chunks of c
// rows (c divides L): inside a chunk a masked c×c product, across chunks
// the prefix state Σ kf_sᵀ[v_s, 1] of the chunks before. O(L·F·(W + c)).
// The key rows from nk on are zero (padding after a sequence's last real
// token) and are skipped.
func linearCore[T Float](s *headScratch[T], qf, kf, v1, out1 []T, L, F, W int, causal bool, c, nk int) {
	st := s.buf(lcSt, F*W)
	if !causal {
		clear(st)
		gemm(true, false, F, W, nk, 1, kf, F, v1, W, 0, st, W)
		gemm(false, false, L, W, F, 1, qf, F, st, W, 0, out1, W)
		return
	}
	sc := s.buf(lcS, c*c)
	clear(st)
	for r0 := 0; r0 < L; r0 += c {
		qc, kc, vc, oc := qf[r0*F:], kf[r0*F:], v1[r0*W:], out1[r0*W:]
		if r0 >= nk { // no key in the chunk: the state alone
			gemm(false, false, c, W, F, 1, qc, F, st, W, 0, oc, W)
			continue
		}
		gemm(false, true, c, c, F, 1, qc, F, kc, F, 0, sc, c)
		trilZero(sc, c)
		gemm(false, false, c, W, c, 1, sc, c, vc, W, 0, oc, W)
		if r0 > 0 {
			gemm(false, false, c, W, F, 1, qc, F, st, W, 1, oc, W)
		}
		gemm(true, false, F, W, c, 1, kc, F, vc, W, 1, st, W)
	}
}

// linearCoreBackward sets dqf, dkf (L×F) and dv1 (L×W) to the gradients of
// qf, kf and v1 for the gradient dout (L×W) of linearCore's out1; the rows
// of dkf and dv1 from nk on (zero keys) are set to zero.
func linearCoreBackward[T Float](s *headScratch[T], qf, kf, v1, dout, dqf, dkf, dv1 []T, L, F, W int, causal bool, c, nk int) {
	st := s.buf(lcSt, F*W)
	clear(dkf[nk*F : L*F])
	clear(dv1[nk*W : L*W])
	if !causal {
		dst := s.buf(lcDst, F*W)
		clear(st)
		gemm(true, false, F, W, nk, 1, kf, F, v1, W, 0, st, W)
		gemm(true, false, F, W, L, 1, qf, F, dout, W, 0, dst, W)
		gemm(false, true, L, F, W, 1, dout, W, st, W, 0, dqf, F)
		gemm(false, true, nk, F, W, 1, v1, W, dst, W, 0, dkf, F)
		gemm(false, false, nk, W, F, 1, kf, F, dst, W, 0, dv1, W)
		return
	}
	nc := L / c
	sc, ds := s.buf(lcS, c*c), s.buf(lcDS, c*c)
	dst := s.buf(lcDst, nc*F*W)
	clear(st)
	for n := 0; n < nc; n++ {
		r0 := n * c
		qc, kc, vc, doc := qf[r0*F:], kf[r0*F:], v1[r0*W:], dout[r0*W:]
		dqc, dkc, dvc := dqf[r0*F:], dkf[r0*F:], dv1[r0*W:]
		gemm(true, false, F, W, c, 1, qc, F, doc, W, 0, dst[n*F*W:(n+1)*F*W], W)
		if r0 >= nk { // no key in the chunk: the state alone
			gemm(false, true, c, F, W, 1, doc, W, st, W, 0, dqc, F)
			continue
		}
		gemm(false, true, c, c, F, 1, qc, F, kc, F, 0, sc, c)
		trilZero(sc, c)
		gemm(false, true, c, c, W, 1, doc, W, vc, W, 0, ds, c)
		trilZero(ds, c)
		gemm(false, false, c, F, c, 1, ds, c, kc, F, 0, dqc, F)
		if n > 0 {
			gemm(false, true, c, F, W, 1, doc, W, st, W, 1, dqc, F)
		}
		gemm(true, false, c, F, c, 1, ds, c, qc, F, 0, dkc, F)
		gemm(true, false, c, W, c, 1, sc, c, doc, W, 0, dvc, W)
		gemm(true, false, F, W, c, 1, kc, F, vc, W, 1, st, W)
	}
	// The state before chunk n sums the chunks before it, so chunk a's
	// keys and values get the state gradients of the chunks after it.
	g := s.buf(lcG, F*W)
	clear(g)
	for n := nc - 2; n >= 0; n-- {
		for i, v := range dst[(n+1)*F*W : (n+2)*F*W] {
			g[i] += v
		}
		r0 := n * c
		if r0 >= nk {
			continue
		}
		gemm(false, true, c, F, W, 1, v1[r0*W:], W, g, W, 1, dkf[r0*F:], F)
		gemm(false, false, c, W, F, 1, kf[r0*F:], F, g, W, 1, dv1[r0*W:], W)
	}
}

// favorFromProjection sets f (L×m), which holds the projections x·Ωᵀ of
// the rows of x (L×d, already scaled by d^(−1/4); Attention.projectFeatures
// computes them), to FAVOR+'s positive random features
// exp(ωᵢᵀx − ‖x‖²/2 − shift)/√m with shift the row's largest ωᵢᵀx
// (rowwise, queries) or the largest over all rows (keys), as
// nn.FavorFeatures.
func favorFromProjection[T Float](f, x []T, L, d, m int, rowwise bool) {
	var shift float64
	if !rowwise {
		shift = float64(sliceMax(f[:L*m]))
	}
	norm := T(1 / math.Sqrt(float64(m)))
	for l := 0; l < L; l++ {
		var sq float64
		for _, v := range x[l*d : (l+1)*d] {
			sq += float64(v) * float64(v)
		}
		sq *= 0.5
		row := f[l*m : (l+1)*m]
		sh := shift
		if rowwise {
			sh = float64(sliceMax(row))
		}
		addConst(row, row, -T(sq+sh)) // x + (−o) is x − o, bit for bit
	}
	// The exponential and the scale element-wise over the whole block
	// (rows of m are short; the same values as row by row).
	expSlice(f[:L*m])
	scaleTo(f[:L*m], f[:L*m], norm)
}

// favorFeaturesBackward sets dx (L×d) to the gradient of the rows x for
// the gradient df of FAVOR+'s features f of x (favorFromProjection; the shift is a
// constant): with dp = df ⊙ f, dx = dp·ω − (Σᵢ dpᵢ)·x. It overwrites df
// with dp.
func favorFeaturesBackward[T Float](dx, df, f, x, omega []T, L, d, m int) {
	mulTo(df[:L*m], df, f)
	gemm(false, false, L, d, m, 1, df, m, omega, d, 0, dx, d)
	for l := 0; l < L; l++ {
		var s T
		for _, v := range df[l*m : (l+1)*m] {
			s += v
		}
		xr, dr := x[l*d:(l+1)*d], dx[l*d:(l+1)*d]
		for j, v := range xr {
			dr[j] -= s * v
		}
	}
}

// favorParts returns head z's saved query features, key features (before
// masking) and numerators with denominators [num, den] (L×(d_h+1)).
func (a *Attention[T]) favorParts(z int) (qf, kf, out1 []T) {
	L, m := a.l, a.m
	st := a.headState(z)
	return st[:L*m], st[L*m : 2*L*m], st[2*L*m : 2*L*m+L*(a.dh+1)]
}

// favorInputs fills the scaled queries and keys, the masked key features
// and [v, 1] of head z into s; the features themselves are computed when
// compute is set, else read from the saved state.
func (a *Attention[T]) favorInputs(s *headScratch[T], z int, compute bool) (xq, xk, kfm, v1 []T) {
	L, dh, m := a.l, a.dh, a.m
	w := dh + 1
	sc := T(math.Pow(float64(dh), -0.25))
	xq, xk = s.buf(fvQ, L*dh), s.buf(fvK, L*dh)
	a.gather(xq, dh, a.qn, z, sc)
	a.gather(xk, dh, a.kn, z, sc)
	qf, kf, _ := a.favorParts(z)
	if compute {
		a.headFeatures(z, qf, kf, xq, xk)
	}
	kfm = kf
	if mask := a.headMask(z); mask != nil {
		kfm = s.buf(fvKfm, L*m)
		for l := 0; l < L; l++ {
			for i := 0; i < m; i++ {
				kfm[l*m+i] = kf[l*m+i] * mask[l]
			}
		}
	}
	v1 = s.buf(fvV1, L*w)
	a.gather(v1, w, a.v, z, 1)
	for l := 0; l < L; l++ {
		v1[l*w+dh] = 1
	}
	return xq, xk, kfm, v1
}

// trilZero zeroes the entries above the diagonal of the c×c matrix s.
func trilZero[T Float](s []T, c int) {
	for i := 0; i < c; i++ {
		clear(s[i*c+i+1 : (i+1)*c])
	}
}

// favorForward computes head z's FAVOR+ attention D̃⁻¹(Q'((K')ᵀV)) as
// nn.LinearAttention: [num, den] = φ(q)·Σ_s φ(k_s)[v_s, 1]ᵀ over all keys
// (bidirectional) or, causal, by chunks: a masked chunk×chunk product
// inside the chunk plus the state of the chunks before.
func (a *Attention[T]) favorForward(s *headScratch[T], z int) {
	L, dh, m := a.l, a.dh, a.m
	w := dh + 1
	_, _, kfm, v1 := a.favorInputs(s, z, true)
	qf, _, out1 := a.favorParts(z)
	linearCore(s, qf, kfm, v1, out1, L, m, w, a.causal, a.coreChunk(), a.keyRows(z))
	o := a.headRange(a.o, z)
	for l := 0; l < L; l++ {
		inv := 1 / out1[l*w+dh]
		for j := 0; j < dh; j++ {
			o[l*dh+j] = out1[l*w+j] * inv
		}
	}
}

// linearOutputGrad sets dout (L×(dv+1)) to the gradient of [num, den] for
// the gradient dres (L×dv) of res = num/g(den), with out1 = [num, den]:
// d num = dres/g, d den = −(dres·res)/g where pass(den), else 0. FAVOR+
// has g(den) = den; HRF clamps small denominators.
func linearOutputGrad[T Float](dout, dres, out1 []T, L, dv int, guard func(T) (T, bool)) {
	w := dv + 1
	for l := 0; l < L; l++ {
		g, pass := guard(out1[l*w+dv])
		var dd T
		for j := 0; j < dv; j++ {
			dn := dres[l*dv+j] / g
			dout[l*w+j] = dn
			dd -= dn * out1[l*w+j] / g
		}
		if !pass {
			dd = 0
		}
		dout[l*w+dv] = dd
	}
}

// favorGuard is FAVOR+'s denominator: the denominator itself.
func favorGuard[T Float](den T) (T, bool) { return den, true }

// favorBackward computes head z's gradients of q, k and v from that of its
// output, through the features with their shifts held constant (exact:
// the output does not depend on them).
func (a *Attention[T]) favorBackward(s *headScratch[T], z int) {
	L, dh, m := a.l, a.dh, a.m
	w := dh + 1
	xq, xk, kfm, v1 := a.favorInputs(s, z, false)
	qf, kf, out1 := a.favorParts(z)
	dres := a.headRange(a.do, z)
	dout := s.buf(fvDout, L*w)
	linearOutputGrad(dout, dres, out1, L, dh, favorGuard[T])
	dqf, dkf, dv1 := s.buf(fvDqf, L*m), s.buf(fvDkf, L*m), s.buf(fvDv1, L*w)
	linearCoreBackward(s, qf, kfm, v1, dout, dqf, dkf, dv1, L, m, w, a.causal, a.coreChunk(), a.keyRows(z))
	dx := s.buf(fvDx, L*dh)
	sc := T(math.Pow(float64(dh), -0.25))
	favorFeaturesBackward(dx, dqf, qf, xq, a.featureProjection(z), L, dh, m)
	a.scatter(a.dq, dx, dh, z, sc)
	if mask := a.headMask(z); mask != nil {
		for l := 0; l < L; l++ {
			for i := 0; i < m; i++ {
				dkf[l*m+i] *= mask[l]
			}
		}
	}
	favorFeaturesBackward(dx, dkf, kf, xk, a.featureProjection(z), L, dh, m)
	a.scatter(a.dk, dx, dh, z, sc)
	a.scatter(a.dv, dv1, w, z, 1)
}

// sliceMax returns the largest element of the non-empty slice v (NaNs
// are skipped unless v[0] is one; the features are NaN then anyway).
func sliceMax[T Float](v []T) T {
	m := v[0]
	for _, x := range v[1:] {
		if x > m {
			m = x
		}
	}
	return m
}
