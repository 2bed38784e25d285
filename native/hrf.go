package native

import (
	"math"
)

// Scratch buffer indices of the HRF head passes.
const (
	hrQ    = iota // q·d_h^(−1/4), L×d_h
	hrK           // k·d_h^(−1/4), L×d_h
	hrU           // projections ωᵢᵀx, L×M
	hrT           // projections of the trigonometric base, L×M
	hrSg          // sgn projections, L×N
	hrV1          // [v, 1], L×W (W = d_h+1)
	hrPhq         // query features Φ₁(q), L×F (F = 4M(1+N))
	hrPhk         // key features Φ₂(k) (masked), L×F
	hrDout        // gradient of [num, den], L×W
	hrDphq        // gradient of Φ₁(q), L×F
	hrDphk        // gradient of Φ₂(k), L×F
	hrDv1         // gradient of [v, 1], L×W
	hrDqp         // gradients of the bases, L×2M each
	hrDqt
	hrDkp
	hrDkt
	hrDx // gradients of the scaled queries and keys, L×d_h
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

// hrfExpanded forms head z's hybrid features from the saved factors, as
// nn.HybridFeatures: Φ₁(q) = [φ⁺(q) ⊗ a, φᵗ(q) ⊗ b] and Φ₂(k) = [φ⁺(k) ⊗
// c, φᵗ(k) ⊗ c] (L×F each, F = 4M(1+N), the base index major; c masked),
// and gathers [v, 1] (L×W). Formed per head, they take L·F entries each:
// small beside the products, and they make hybrid attention linear
// attention on them (linearCore).
func (a *Attention[T]) hrfExpanded(s *headScratch[T], z int) (phq, phk, v1 []T) {
	L, dh, M2, P := a.l, a.dh, 2*a.m, 1+a.n
	W, F := dh+1, 2*2*a.m*(1+a.n)
	qpos, qtrig, qa, qb, kpos, ktrig, c, _ := a.hrfParts(z)
	phq, phk = s.buf(hrPhq, L*F), s.buf(hrPhk, L*F)
	outer := func(dst, f, g []T) { // dst (2M·P) = f (2M) ⊗ g (P)
		for i, fv := range f {
			d := dst[i*P : (i+1)*P]
			for n, gv := range g {
				d[n] = fv * gv
			}
		}
	}
	for l := 0; l < L; l++ {
		rq, rk := phq[l*F:(l+1)*F], phk[l*F:(l+1)*F]
		cl := c[l*P : (l+1)*P]
		outer(rq[:M2*P], qpos[l*M2:(l+1)*M2], qa[l*P:(l+1)*P])
		outer(rq[M2*P:], qtrig[l*M2:(l+1)*M2], qb[l*P:(l+1)*P])
		outer(rk[:M2*P], kpos[l*M2:(l+1)*M2], cl)
		outer(rk[M2*P:], ktrig[l*M2:(l+1)*M2], cl)
	}
	v1 = s.buf(hrV1, L*W)
	a.gather(v1, W, a.v, z, 1)
	for l := 0; l < L; l++ {
		v1[l*W+dh] = 1
	}
	return phq, phk, v1
}

// hrfForward computes head z's angular hybrid attention as
// nn.HybridAttention: linear attention (linearCore, bidirectional or
// chunked causal) on the hybrid features of hrfExpanded, output num/den
// with small denominators clamped (hrfGuard).
func (a *Attention[T]) hrfForward(s *headScratch[T], z int) {
	L, dh, P := a.l, a.dh, 1+a.n
	W, F := dh+1, 2*2*a.m*(1+a.n)
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
	phq, phk, v1 := a.hrfExpanded(s, z)
	linearCore(s, phq, phk, v1, out1, L, F, W, a.causal, a.coreChunk(), a.keyRows(z))
	o := a.headRange(a.o, z)
	for l := 0; l < L; l++ {
		g, _ := hrfGuard(out1[l*W+dh])
		for j := 0; j < dh; j++ {
			o[l*dh+j] = out1[l*W+j] / g
		}
	}
}

// hrfBackward computes head z's gradients of q, k and v from that of its
// output: through linearCoreBackward to the features, then to the bases by
// contraction with their λ factors (which carry no gradient: sgn), then
// to the rows (shifts constant; clamped denominators pass none).
func (a *Attention[T]) hrfBackward(s *headScratch[T], z int) {
	L, dh, M2, P := a.l, a.dh, 2*a.m, 1+a.n
	W, F := dh+1, 2*2*a.m*(1+a.n)
	qpos, qtrig, qa, qb, kpos, ktrig, c, out1 := a.hrfParts(z)
	xq, xk := a.hrfQK(s, z)
	phq, phk, v1 := a.hrfExpanded(s, z)
	dout := s.buf(hrDout, L*W)
	linearOutputGrad(dout, a.headRange(a.do, z), out1, L, dh, hrfGuard[T])
	dphq, dphk, dv1 := s.buf(hrDphq, L*F), s.buf(hrDphk, L*F), s.buf(hrDv1, L*W)
	linearCoreBackward(s, phq, phk, v1, dout, dphq, dphk, dv1, L, F, W, a.causal, a.coreChunk(), a.keyRows(z))
	dqp, dqt, dkp, dkt := s.buf(hrDqp, L*M2), s.buf(hrDqt, L*M2), s.buf(hrDkp, L*M2), s.buf(hrDkt, L*M2)
	contract := func(dst, dph, g []T) { // dst (2M) = Σ_n dph[i·P + n]·g[n]
		for i := range dst {
			var acc T
			for n, gv := range g {
				acc += dph[i*P+n] * gv
			}
			dst[i] = acc
		}
	}
	for l := 0; l < L; l++ {
		rq, rk := dphq[l*F:(l+1)*F], dphk[l*F:(l+1)*F]
		cl := c[l*P : (l+1)*P]
		contract(dqp[l*M2:(l+1)*M2], rq[:M2*P], qa[l*P:(l+1)*P])
		contract(dqt[l*M2:(l+1)*M2], rq[M2*P:], qb[l*P:(l+1)*P])
		contract(dkp[l*M2:(l+1)*M2], rk[:M2*P], cl)
		contract(dkt[l*M2:(l+1)*M2], rk[M2*P:], cl)
	}
	a.scatter(a.dv, dv1, W, z, 1)
	dx := s.buf(hrDx, L*dh)
	sc := T(math.Pow(float64(dh), -0.25))
	a.hrfFeaturesBackward(s, dx, xq, qpos, qtrig, dqp, dqt)
	a.scatter(a.dq, dx, dh, z, sc)
	a.hrfFeaturesBackward(s, dx, xk, kpos, ktrig, dkp, dkt)
	a.scatter(a.dk, dx, dh, z, sc)
}
