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
	fvSt          // key state Σ φ(k)[v, 1]ᵀ, m×(d_h+1)
	fvS           // chunk scores, c×c
	fvDS          // their gradient, c×c
	fvDout        // gradient of [num, den], L×(d_h+1)
	fvDqf         // L×m
	fvDkf         // L×m
	fvDv1         // L×(d_h+1)
	fvDst         // per-chunk state gradients, nc×m×(d_h+1)
	fvG           // suffix sum of the state gradients, m×(d_h+1)
	fvDx          // feature input gradient, L×d_h
)

// favorFeatures sets f (L×m) to FAVOR+'s positive random features of the
// rows of x (L×d, already scaled by d^(−1/4)) with projection omega (m×d):
// exp(ωᵢᵀx − ‖x‖²/2 − shift)/√m with shift the row's largest ωᵢᵀx
// (rowwise, queries) or the largest over all rows (keys), as
// nn.FavorFeatures.
func favorFeatures[T Float](f, x, omega []T, L, d, m int, rowwise bool) {
	gemm(false, true, L, m, d, 1, x, d, omega, d, 0, f, m)
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
		off := T(sq + sh)
		for i := range row {
			row[i] -= off
		}
		expSlice(row)
		for i := range row {
			row[i] *= norm
		}
	}
}

// favorFeaturesBackward sets dx (L×d) to the gradient of the rows x for
// the gradient df of the features f = favorFeatures(x) (the shift is a
// constant): with dp = df ⊙ f, dx = dp·ω − (Σᵢ dpᵢ)·x. It overwrites df
// with dp.
func favorFeaturesBackward[T Float](dx, df, f, x, omega []T, L, d, m int) {
	for i, v := range f[:L*m] {
		df[i] *= v
	}
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
		favorFeatures(qf, xq, a.Omega.Value, L, dh, m, true)
		favorFeatures(kf, xk, a.Omega.Value, L, dh, m, false)
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
	st := s.buf(fvSt, m*w)
	if !a.causal {
		gemm(true, false, m, w, L, 1, kfm, m, v1, w, 0, st, w)
		gemm(false, false, L, w, m, 1, qf, m, st, w, 0, out1, w)
	} else {
		c := a.chunkLen(L)
		sc := s.buf(fvS, c*c)
		clear(st)
		for r0 := 0; r0 < L; r0 += c {
			qc, kc, vc, oc := qf[r0*m:], kfm[r0*m:], v1[r0*w:], out1[r0*w:]
			gemm(false, true, c, c, m, 1, qc, m, kc, m, 0, sc, c)
			trilZero(sc, c)
			gemm(false, false, c, w, c, 1, sc, c, vc, w, 0, oc, w)
			if r0 > 0 {
				gemm(false, false, c, w, m, 1, qc, m, st, w, 1, oc, w)
			}
			gemm(true, false, m, w, c, 1, kc, m, vc, w, 1, st, w)
		}
	}
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
	st := s.buf(fvSt, m*w)
	if !a.causal {
		dst := s.buf(fvDst, m*w)
		gemm(true, false, m, w, L, 1, kfm, m, v1, w, 0, st, w)
		gemm(true, false, m, w, L, 1, qf, m, dout, w, 0, dst, w)
		gemm(false, true, L, m, w, 1, dout, w, st, w, 0, dqf, m)
		gemm(false, true, L, m, w, 1, v1, w, dst, w, 0, dkf, m)
		gemm(false, false, L, w, m, 1, kfm, m, dst, w, 0, dv1, w)
	} else {
		c := a.chunkLen(L)
		nc := L / c
		sc, ds := s.buf(fvS, c*c), s.buf(fvDS, c*c)
		dst := s.buf(fvDst, nc*m*w)
		clear(st)
		for n := 0; n < nc; n++ {
			r0 := n * c
			qc, kc, vc, doc := qf[r0*m:], kfm[r0*m:], v1[r0*w:], dout[r0*w:]
			dqc, dkc, dvc := dqf[r0*m:], dkf[r0*m:], dv1[r0*w:]
			gemm(false, true, c, c, m, 1, qc, m, kc, m, 0, sc, c)
			trilZero(sc, c)
			gemm(false, true, c, c, w, 1, doc, w, vc, w, 0, ds, c)
			trilZero(ds, c)
			gemm(false, false, c, m, c, 1, ds, c, kc, m, 0, dqc, m)
			if n > 0 {
				gemm(false, true, c, m, w, 1, doc, w, st, w, 1, dqc, m)
			}
			gemm(true, false, c, m, c, 1, ds, c, qc, m, 0, dkc, m)
			gemm(true, false, c, w, c, 1, sc, c, doc, w, 0, dvc, w)
			gemm(true, false, m, w, c, 1, qc, m, doc, w, 0, dst[n*m*w:(n+1)*m*w], w)
			gemm(true, false, m, w, c, 1, kc, m, vc, w, 1, st, w)
		}
		// The state before chunk n sums the chunks before it, so chunk a's
		// keys and values get the state gradients of the chunks after it.
		g := s.buf(fvG, m*w)
		clear(g)
		for n := nc - 2; n >= 0; n-- {
			for i, v := range dst[(n+1)*m*w : (n+2)*m*w] {
				g[i] += v
			}
			r0 := n * c
			gemm(false, true, c, m, w, 1, v1[r0*w:], w, g, w, 1, dkf[r0*m:], m)
			gemm(false, false, c, w, m, 1, kfm[r0*m:], m, g, w, 1, dv1[r0*w:], w)
		}
	}
	dx := s.buf(fvDx, L*dh)
	sc := T(math.Pow(float64(dh), -0.25))
	favorFeaturesBackward(dx, dqf, qf, xq, a.Omega.Value, L, dh, m)
	a.scatter(a.dq, dx, dh, z, sc)
	if mask := a.headMask(z); mask != nil {
		for l := 0; l < L; l++ {
			for i := 0; i < m; i++ {
				dkf[l*m+i] *= mask[l]
			}
		}
	}
	favorFeaturesBackward(dx, dkf, kf, xk, a.Omega.Value, L, dh, m)
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
