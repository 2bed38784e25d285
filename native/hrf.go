package native

import (
	"math"
)

// Scratch buffer indices of the HRF head passes.
const (
	hrQ   = iota // q·d_h^(−1/4), L×d_h
	hrK          // k·d_h^(−1/4), L×d_h
	hrU          // projections ωᵢᵀx, L×M
	hrT          // projections of the trigonometric base, L×M
	hrSg         // sgn projections, L×N
	hrV1         // [v, 1], L×W (W = d_h+1)
	hrCV         // c ⊗ [v, 1], L×PW (P = 1+N)
	hrStP        // positive key state, 2M×PW
	hrStT        // trigonometric key state, 2M×PW
	hrS1         // chunk scores and factors, c×c each
	hrC1
	hrS2
	hrC2
	hrDS
	hrUp   // query-side products, L×PW
	hrDout // gradient of [num, den], L×W
	hrDqp  // feature gradients, L×2M each
	hrDqt
	hrDkp
	hrDkt
	hrDcv // L×PW
	hrDst // per-chunk state gradients, nc×2×2M×PW
	hrDv  // value gradient [dv, d1], L×W
	hrDx  // gradients of the scaled queries and keys, L×d_h
)

// hrfEps is the smallest denominator magnitude of hybrid attention (nn's
// guardDen).
const hrfEps = 1e-30

// hrfGuard clamps a denominator of magnitude below 1e-30 to ±1e-30,
// keeping its sign (zero counts as positive); the second result reports
// whether the gradient passes (the denominator was not clamped).
func hrfGuard[T Float](den T) (T, bool) {
	if den >= 0 {
		if den > hrfEps {
			return den, true
		}
		return hrfEps, false
	}
	if den < -hrfEps {
		return den, true
	}
	return -hrfEps, false
}

// hrfFeatures computes the factors of the angular hybrid features of the
// rows of x (L×d, already scaled by d^(−1/4)), as nn's newHybridParts:
// the positive base posf (L×2M) = exp([u, −u] − ‖x‖²/2 − ½log 2M − shift)
// with u = x·ωᵀ, the trigonometric base trigf (L×2M) = exp(‖x‖²/2 − ½log
// M − shift)·[sin t, cos t] with t = x·ω_trigᵀ, and the λ factors from s
// = sgn(x·τᵀ)/√(2N): queries fa = (½, −s), fb = (½, s); keys fa = (1, s)
// (fb unused). shift is the row's largest log feature magnitude, max(max
// |uᵢ| − ‖x‖²/2 − ½log 2M, ‖x‖²/2 − ½log M), for queries, and its maximum
// over the rows for keys.
func (a *Attention[T]) hrfFeatures(s *headScratch[T], x []T, query bool, posf, trigf, fa, fb []T) {
	L, d, M, N := a.l, a.dh, a.m, a.n
	P := 1 + N
	u, t, sg := s.buf(hrU, L*M), s.buf(hrT, L*M), s.buf(hrSg, L*N)
	gemm(false, true, L, M, d, 1, x, d, a.Omega.Value, d, 0, u, M)
	gemm(false, true, L, M, d, 1, x, d, a.OmegaTrig.Value, d, 0, t, M)
	gemm(false, true, L, N, d, 1, x, d, a.Tau.Value, d, 0, sg, N)
	cPos, cTrig := 0.5*math.Log(2*float64(M)), 0.5*math.Log(float64(M))
	sqOf := func(l int) float64 {
		var sq float64
		for _, v := range x[l*d : (l+1)*d] {
			sq += float64(v) * float64(v)
		}
		return 0.5 * sq
	}
	rowMax := func(l int, sq float64) float64 {
		var mx T
		for _, v := range u[l*M : (l+1)*M] {
			if v > mx {
				mx = v
			} else if -v > mx {
				mx = -v
			}
		}
		return max(float64(mx)-sq-cPos, sq-cTrig)
	}
	shift := math.Inf(-1)
	if !query {
		for l := 0; l < L; l++ {
			shift = max(shift, rowMax(l, sqOf(l)))
		}
	}
	sgScale := 1 / math.Sqrt(2*float64(N))
	for l := 0; l < L; l++ {
		sq := sqOf(l)
		sh := shift
		if query {
			sh = rowMax(l, sq)
		}
		pr, tr := posf[l*2*M:(l+1)*2*M], trigf[l*2*M:(l+1)*2*M]
		e := math.Exp(sq - cTrig - sh)
		off := T(sq + cPos + sh)
		for i, v := range u[l*M : (l+1)*M] {
			pr[i] = v - off
			pr[M+i] = -v - off
		}
		expSlice(pr)
		for i := range u[l*M : (l+1)*M] {
			sin, cos := math.Sincos(float64(t[l*M+i]))
			tr[i] = T(e * sin)
			tr[M+i] = T(e * cos)
		}
		ar := fa[l*P : (l+1)*P]
		var br []T
		if query {
			ar[0] = 0.5
			br = fb[l*P : (l+1)*P]
			br[0] = 0.5
		} else {
			ar[0] = 1
		}
		for j, v := range sg[l*N : (l+1)*N] {
			var sv float64
			switch {
			case v > 0:
				sv = sgScale
			case v < 0:
				sv = -sgScale
			}
			if query {
				ar[1+j], br[1+j] = T(-sv), T(sv)
			} else {
				ar[1+j] = T(sv)
			}
		}
	}
}

// hrfFeaturesBackward sets dx (L×d) to the gradient of the rows x for the
// gradients dposf and dtrigf of hrfFeatures' bases (shift constant, the
// sgn factors without gradient).
func (a *Attention[T]) hrfFeaturesBackward(s *headScratch[T], dx, x, posf, trigf, dposf, dtrigf []T) {
	L, d, M := a.l, a.dh, a.m
	du, dt, dsq := s.buf(hrU, L*M), s.buf(hrT, L*M), s.buf(hrSg, L)
	for l := 0; l < L; l++ {
		pr, tr := posf[l*2*M:(l+1)*2*M], trigf[l*2*M:(l+1)*2*M]
		dp, dtr := dposf[l*2*M:(l+1)*2*M], dtrigf[l*2*M:(l+1)*2*M]
		var g T
		for i := 0; i < M; i++ {
			g1, g2 := dp[i]*pr[i], dp[M+i]*pr[M+i]
			du[l*M+i] = g1 - g2
			g -= g1 + g2
			g += dtr[i]*tr[i] + dtr[M+i]*tr[M+i]
			dt[l*M+i] = dtr[i]*tr[M+i] - dtr[M+i]*tr[i]
		}
		dsq[l] = g
	}
	gemm(false, false, L, d, M, 1, du, M, a.Omega.Value, d, 0, dx, d)
	gemm(false, false, L, d, M, 1, dt, M, a.OmegaTrig.Value, d, 1, dx, d)
	for l := 0; l < L; l++ {
		g := dsq[l]
		xr, dr := x[l*d:(l+1)*d], dx[l*d:(l+1)*d]
		for j, v := range xr {
			dr[j] += g * v
		}
	}
}

// hrfParts returns head z's saved state: query bases and λ factors, key
// bases, the masked key factor c and [num, den].
func (a *Attention[T]) hrfParts(z int) (qpos, qtrig, qa, qb, kpos, ktrig, c, out1 []T) {
	L, M, P, W := a.l, a.m, 1+a.n, a.dh+1
	st := a.headState(z)
	take := func(n int) []T {
		r := st[:n]
		st = st[n:]
		return r
	}
	qpos, qtrig, kpos, ktrig = take(2*L*M), take(2*L*M), take(2*L*M), take(2*L*M)
	qa, qb, c = take(L*P), take(L*P), take(L*P)
	return qpos, qtrig, qa, qb, kpos, ktrig, c, take(L * W)
}

// hrfQK gathers head z's queries and keys scaled by d_h^(−1/4) into s.
func (a *Attention[T]) hrfQK(s *headScratch[T], z int) (xq, xk []T) {
	L, dh := a.l, a.dh
	sc := T(math.Pow(float64(dh), -0.25))
	xq, xk = s.buf(hrQ, L*dh), s.buf(hrK, L*dh)
	a.gather(xq, dh, a.qn, z, sc)
	a.gather(xk, dh, a.kn, z, sc)
	return xq, xk
}

// hrfValues gathers head z's [v, 1] (L×W) into s and forms c ⊗ [v, 1]
// (L×PW, c's index major).
func (a *Attention[T]) hrfValues(s *headScratch[T], z int, c []T) (v1, cv []T) {
	L, dh, P := a.l, a.dh, 1+a.n
	W := dh + 1
	v1 = s.buf(hrV1, L*W)
	a.gather(v1, W, a.v, z, 1)
	for l := 0; l < L; l++ {
		v1[l*W+dh] = 1
	}
	cv = s.buf(hrCV, L*P*W)
	a.hrfOuter(cv, c, v1)
	return v1, cv
}

// hrfOuter sets dst (L×PW) to the row-wise outer products of f (L×P) and
// g (L×W), f's index major.
func (a *Attention[T]) hrfOuter(dst, f, g []T) {
	L, P, W := a.l, 1+a.n, a.dh+1
	a.hrfOuterRows(dst, f, g, L, P, W)
}

func (a *Attention[T]) hrfOuterRows(dst, f, g []T, rows, P, W int) {
	for l := 0; l < rows; l++ {
		gr := g[l*W : (l+1)*W]
		for n, fv := range f[l*P : (l+1)*P] {
			d := dst[(l*P+n)*W : (l*P+n+1)*W]
			for j, v := range gr {
				d[j] = fv * v
			}
		}
	}
}

// hrfContract adds Σₙ f[l, n]·u[l, n, :] to out (rows×W) for u
// (rows×PW) and f (rows×P), nn's hybridQuery.
func hrfContract[T Float](out, u, f []T, rows, P, W int) {
	for l := 0; l < rows; l++ {
		or := out[l*W : (l+1)*W]
		for n, fv := range f[l*P : (l+1)*P] {
			for j, v := range u[(l*P+n)*W : (l*P+n+1)*W] {
				or[j] += fv * v
			}
		}
	}
}

// hrfForward computes head z's angular hybrid attention as
// nn.HybridAttention: with Φ(q) = [φ⁺ ⊗ a, φᵗ ⊗ b] and Φ(k) = [φ⁺ ⊗ c,
// φᵗ ⊗ c] never formed, [num, den] = Σ over the bases of contract(φ_q ·
// Σ_s φ_s ⊗ (c_s ⊗ [v_s, 1]), a or b); causal: masked chunk×chunk scores
// (φ⁺_l·φ⁺_s)(a_l·c_s) + (φᵗ_l·φᵗ_s)(b_l·c_s) inside a chunk plus the
// states of the chunks before. Output num/den with small denominators
// clamped (hrfGuard).
func (a *Attention[T]) hrfForward(s *headScratch[T], z int) {
	L, dh, P := a.l, a.dh, 1+a.n
	W, M2, PW := dh+1, 2*a.m, (1+a.n)*(dh+1)
	qpos, qtrig, qa, qb, kpos, ktrig, c, out1 := a.hrfParts(z)
	xq, xk := a.hrfQK(s, z)
	a.hrfFeatures(s, xq, true, qpos, qtrig, qa, qb)
	a.hrfFeatures(s, xk, false, kpos, ktrig, c, nil)
	if mask := a.headMask(z); mask != nil {
		for l := 0; l < L; l++ {
			for n := 0; n < P; n++ {
				c[l*P+n] *= mask[l]
			}
		}
	}
	v1, cv := a.hrfValues(s, z, c)
	stp, stt := s.buf(hrStP, M2*PW), s.buf(hrStT, M2*PW)
	if !a.causal {
		up := s.buf(hrUp, L*PW)
		gemm(true, false, M2, PW, L, 1, kpos, M2, cv, PW, 0, stp, PW)
		gemm(true, false, M2, PW, L, 1, ktrig, M2, cv, PW, 0, stt, PW)
		clear(out1)
		gemm(false, false, L, PW, M2, 1, qpos, M2, stp, PW, 0, up, PW)
		hrfContract(out1, up, qa, L, P, W)
		gemm(false, false, L, PW, M2, 1, qtrig, M2, stt, PW, 0, up, PW)
		hrfContract(out1, up, qb, L, P, W)
	} else {
		ch := a.chunkLen(L)
		s1, c1, s2, c2 := s.buf(hrS1, ch*ch), s.buf(hrC1, ch*ch), s.buf(hrS2, ch*ch), s.buf(hrC2, ch*ch)
		up := s.buf(hrUp, ch*PW)
		clear(stp)
		clear(stt)
		for r0 := 0; r0 < L; r0 += ch {
			a.hrfChunkScores(s1, c1, s2, c2, qpos, qtrig, qa, qb, kpos, ktrig, c, r0, ch)
			oc := out1[r0*W : (r0+ch)*W]
			gemm(false, false, ch, W, ch, 1, s1, ch, v1[r0*W:], W, 0, oc, W)
			if r0 > 0 {
				gemm(false, false, ch, PW, M2, 1, qpos[r0*M2:], M2, stp, PW, 0, up, PW)
				hrfContract(oc, up, qa[r0*P:], ch, P, W)
				gemm(false, false, ch, PW, M2, 1, qtrig[r0*M2:], M2, stt, PW, 0, up, PW)
				hrfContract(oc, up, qb[r0*P:], ch, P, W)
			}
			gemm(true, false, M2, PW, ch, 1, kpos[r0*M2:], M2, cv[r0*PW:], PW, 1, stp, PW)
			gemm(true, false, M2, PW, ch, 1, ktrig[r0*M2:], M2, cv[r0*PW:], PW, 1, stt, PW)
		}
	}
	o := a.headRange(a.o, z)
	for l := 0; l < L; l++ {
		g, _ := hrfGuard(out1[l*W+dh])
		for j := 0; j < dh; j++ {
			o[l*dh+j] = out1[l*W+j] / g
		}
	}
}

// hrfChunkScores computes, for the chunk of ch rows from r0, the factor
// products s1 = φ⁺_q·φ⁺_kᵀ, c1 = a·cᵀ, s2 = φᵗ_q·φᵗ_kᵀ and c2 = b·cᵀ
// (ch×ch each) and overwrites s1 with the masked scores (s1⊙c1 +
// s2⊙c2)⊙tril.
func (a *Attention[T]) hrfChunkScores(s1, c1, s2, c2, qpos, qtrig, qa, qb, kpos, ktrig, c []T, r0, ch int) {
	M2, P := 2*a.m, 1+a.n
	gemm(false, true, ch, ch, M2, 1, qpos[r0*M2:], M2, kpos[r0*M2:], M2, 0, s1, ch)
	gemm(false, true, ch, ch, P, 1, qa[r0*P:], P, c[r0*P:], P, 0, c1, ch)
	gemm(false, true, ch, ch, M2, 1, qtrig[r0*M2:], M2, ktrig[r0*M2:], M2, 0, s2, ch)
	gemm(false, true, ch, ch, P, 1, qb[r0*P:], P, c[r0*P:], P, 0, c2, ch)
	for i := 0; i < ch; i++ {
		for j := 0; j < ch; j++ {
			k := i*ch + j
			if j > i {
				s1[k] = 0
				continue
			}
			s1[k] = s1[k]*c1[k] + s2[k]*c2[k]
		}
	}
}

// hrfBackward computes head z's gradients of q, k and v from that of its
// output (shifts constant, sgn factors without gradient, clamped
// denominators passing none).
func (a *Attention[T]) hrfBackward(s *headScratch[T], z int) {
	L, dh, P := a.l, a.dh, 1+a.n
	W, M2, PW := dh+1, 2*a.m, (1+a.n)*(dh+1)
	qpos, qtrig, qa, qb, kpos, ktrig, c, out1 := a.hrfParts(z)
	xq, xk := a.hrfQK(s, z)
	v1, cv := a.hrfValues(s, z, c)
	dres := a.headRange(a.do, z)
	dout := s.buf(hrDout, L*W)
	linearOutputGrad(dout, dres, out1, L, dh, hrfGuard[T])
	dqp, dqt, dkp, dkt := s.buf(hrDqp, L*M2), s.buf(hrDqt, L*M2), s.buf(hrDkp, L*M2), s.buf(hrDkt, L*M2)
	dcv := s.buf(hrDcv, L*PW)
	stp, stt := s.buf(hrStP, M2*PW), s.buf(hrStT, M2*PW)
	if !a.causal {
		up := s.buf(hrUp, L*PW)
		dst := s.buf(hrDst, 2*M2*PW)
		dsp, dstt := dst[:M2*PW], dst[M2*PW:]
		gemm(true, false, M2, PW, L, 1, kpos, M2, cv, PW, 0, stp, PW)
		gemm(true, false, M2, PW, L, 1, ktrig, M2, cv, PW, 0, stt, PW)
		// Positive base: dU = a ⊗ dout.
		a.hrfOuter(up, qa, dout)
		gemm(false, true, L, M2, PW, 1, up, PW, stp, PW, 0, dqp, M2)
		gemm(true, false, M2, PW, L, 1, qpos, M2, up, PW, 0, dsp, PW)
		a.hrfOuter(up, qb, dout)
		gemm(false, true, L, M2, PW, 1, up, PW, stt, PW, 0, dqt, M2)
		gemm(true, false, M2, PW, L, 1, qtrig, M2, up, PW, 0, dstt, PW)
		gemm(false, false, L, PW, M2, 1, kpos, M2, dsp, PW, 0, dcv, PW)
		gemm(false, false, L, PW, M2, 1, ktrig, M2, dstt, PW, 1, dcv, PW)
		gemm(false, true, L, M2, PW, 1, cv, PW, dsp, PW, 0, dkp, M2)
		gemm(false, true, L, M2, PW, 1, cv, PW, dstt, PW, 0, dkt, M2)
		dv := s.buf(hrDv, L*W)
		clear(dv)
		hrfContract(dv, dcv, c, L, P, W)
		a.scatter(a.dv, dv, W, z, 1)
	} else {
		ch := a.chunkLen(L)
		nc := L / ch
		s1, c1, s2, c2, ds := s.buf(hrS1, ch*ch), s.buf(hrC1, ch*ch), s.buf(hrS2, ch*ch), s.buf(hrC2, ch*ch), s.buf(hrDS, ch*ch)
		up := s.buf(hrUp, ch*PW)
		dst := s.buf(hrDst, nc*2*M2*PW)
		dv := s.buf(hrDv, L*W)
		clear(stp)
		clear(stt)
		for n := 0; n < nc; n++ {
			r0 := n * ch
			doc := dout[r0*W:]
			dqpc, dqtc, dkpc, dktc := dqp[r0*M2:], dqt[r0*M2:], dkp[r0*M2:], dkt[r0*M2:]
			a.hrfChunkScores(s1, c1, s2, c2, qpos, qtrig, qa, qb, kpos, ktrig, c, r0, ch)
			// s1 now holds the masked scores; ds = (dout·[v,1]ᵀ)⊙tril.
			gemm(false, true, ch, ch, W, 1, doc, W, v1[r0*W:], W, 0, ds, ch)
			trilZero(ds, ch)
			gemm(true, false, ch, W, ch, 1, s1, ch, doc, W, 0, dv[r0*W:], W)
			for k := range ds[:ch*ch] {
				c1[k] *= ds[k] // gradient of φ⁺_q·φ⁺_kᵀ
				c2[k] *= ds[k] // gradient of φᵗ_q·φᵗ_kᵀ
			}
			gemm(false, false, ch, M2, ch, 1, c1, ch, kpos[r0*M2:], M2, 0, dqpc, M2)
			gemm(true, false, ch, M2, ch, 1, c1, ch, qpos[r0*M2:], M2, 0, dkpc, M2)
			gemm(false, false, ch, M2, ch, 1, c2, ch, ktrig[r0*M2:], M2, 0, dqtc, M2)
			gemm(true, false, ch, M2, ch, 1, c2, ch, qtrig[r0*M2:], M2, 0, dktc, M2)
			dsp := dst[(2*n)*M2*PW : (2*n+1)*M2*PW]
			dstt := dst[(2*n+1)*M2*PW : (2*n+2)*M2*PW]
			a.hrfOuterRows(up, qa[r0*P:], doc, ch, P, W)
			if n > 0 {
				gemm(false, true, ch, M2, PW, 1, up, PW, stp, PW, 1, dqpc, M2)
			}
			gemm(true, false, M2, PW, ch, 1, qpos[r0*M2:], M2, up, PW, 0, dsp, PW)
			a.hrfOuterRows(up, qb[r0*P:], doc, ch, P, W)
			if n > 0 {
				gemm(false, true, ch, M2, PW, 1, up, PW, stt, PW, 1, dqtc, M2)
			}
			gemm(true, false, M2, PW, ch, 1, qtrig[r0*M2:], M2, up, PW, 0, dstt, PW)
			gemm(true, false, M2, PW, ch, 1, kpos[r0*M2:], M2, cv[r0*PW:], PW, 1, stp, PW)
			gemm(true, false, M2, PW, ch, 1, ktrig[r0*M2:], M2, cv[r0*PW:], PW, 1, stt, PW)
		}
		// Chunk n's keys get the state gradients of the chunks after it.
		gp, gt := s.buf(hrStP, M2*PW), s.buf(hrStT, M2*PW)
		clear(gp)
		clear(gt)
		for n := nc - 2; n >= 0; n-- {
			next := dst[(2*n+2)*M2*PW : (2*n+4)*M2*PW]
			for i := range gp {
				gp[i] += next[i]
				gt[i] += next[M2*PW+i]
			}
			r0 := n * ch
			gemm(false, true, ch, M2, PW, 1, cv[r0*PW:], PW, gp, PW, 1, dkp[r0*M2:], M2)
			gemm(false, true, ch, M2, PW, 1, cv[r0*PW:], PW, gt, PW, 1, dkt[r0*M2:], M2)
			dcvc := dcv[:ch*PW]
			gemm(false, false, ch, PW, M2, 1, kpos[r0*M2:], M2, gp, PW, 0, dcvc, PW)
			gemm(false, false, ch, PW, M2, 1, ktrig[r0*M2:], M2, gt, PW, 1, dcvc, PW)
			hrfContract(dv[r0*W:], dcvc, c[r0*P:], ch, P, W)
		}
		a.scatter(a.dv, dv, W, z, 1)
	}
	dxq := s.buf(hrDx, L*dh)
	a.hrfFeaturesBackward(s, dxq, xq, qpos, qtrig, dqp, dqt)
	sc := T(math.Pow(float64(dh), -0.25))
	a.scatter(a.dq, dxq, dh, z, sc)
	a.hrfFeaturesBackward(s, dxq, xk, kpos, ktrig, dkp, dkt)
	a.scatter(a.dk, dxq, dh, z, sc)
}
