package nn

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/kernelkit/kernelkit/arch"
)

// FamilyAttention returns the performer's linear attention D̃⁻¹(Q'((K')ᵀV))
// with the features of family for q, k (B×H×L×d) and v (B×H×L×dv) and the
// projection omega (m×d): LinearAttention itself for favor+ and simrf
// (whose difference is the draw of omega), and for oprf and sderf the
// features of FitFeatureFamily's effective projection and offsets,
//
//	φ(x) = exp(W_eff x + off − ‖x‖²/2),
//
// fitted to each sequence's and head's queries and keys scaled by
// d^(−1/4). The fitted parameters are constants to the gradient
// (StopGradient): they are recomputed from every batch, as FAVOR++ fits
// per batch, and the estimate is unbiased for any value of them, so the
// gradient is that of attention with the parameters of the step. Queries
// are divided by exp of their row's largest exponent and keys by exp of
// the largest over the sequence (constants that cancel, as in
// FavorFeatures). Causal attention and keyMask are as in LinearAttention;
// the fit uses the queries and keys of the real tokens (keyMask) of the
// whole sequence, also when causal (see FitFeatureFamily). It panics on
// an unknown family or mismatched shapes.
func FamilyAttention(q, k, v, omega *Node, family string, causal bool, chunk int, keyMask *Node) *Node {
	fam, err := arch.FeatureFamily(family)
	if err != nil {
		panic(err)
	}
	if !arch.FittedFamily(fam) {
		return LinearAttention(q, k, v, omega, causal, chunk, keyMask)
	}
	d := q.Shape().Dim(-1)
	sc := math.Pow(float64(d), -0.25)
	xq, xk := MulScalar(q, sc), MulScalar(k, sc)
	weff, off := FitFeatureFamily(xq, xk, omega, fam, keyMask)
	return fittedAttention(xq, xk, v, weff, off, causal, chunk, keyMask)
}

// fittedAttention is FamilyAttention on the scaled queries xq and keys xk
// with the fitted parameters given.
func fittedAttention(xq, xk, v, weff, off *Node, causal bool, chunk int, keyMask *Node) *Node {
	qf := fittedFeatures(xq, weff, off, true)
	kf := fittedFeatures(xk, weff, off, false)
	if keyMask != nil {
		km := ConvertDType(keyMask, kf.DType())
		kf = Mul(kf, Reshape(km, km.Shape().Dim(0), 1, km.Shape().Dim(1), 1))
	}
	if !causal {
		kv := einsum("bhlm,bhlv->bhmv", kf, v)
		ks := ReduceSum(kf, 2)
		num := einsum("bhlm,bhmv->bhlv", qf, kv)
		den := einsum("bhlm,bhm->bhl", qf, ks)
		return Div(num, InsertAxes(den, -1))
	}
	return causalLinear(qf, kf, v, chunk)
}

// fittedFeatures returns exp(u − shift) for the exponents u = x·W_effᵀ +
// off − ‖x‖²/2 (…×L×m), shift the row's largest exponent (queries) or the
// largest over the sequence (keys), a constant to the gradient.
func fittedFeatures(x, weff, off *Node, rowwise bool) *Node {
	proj := einsum("bhld,bhmd->bhlm", x, weff)
	sq := MulScalar(ReduceAndKeep(Square(x), ReduceSum, -1), 0.5)
	u := Sub(Add(proj, InsertAxes(off, 2)), sq)
	var shift *Node
	if rowwise {
		shift = StopGradient(ReduceAndKeep(u, ReduceMax, -1))
	} else {
		shift = StopGradient(ReduceAndKeep(u, ReduceMax, -1, -2))
	}
	return Exp(Sub(u, shift))
}

// FitFeatureFamily returns the fitted effective projection W_eff
// (B×H×m×d) and offsets off (B×H×m) of the oprf or sderf features of the
// scaled queries xq and keys xk (B×H×L×d) with the draw omega (m×d), one
// fit per sequence and head, as constants (StopGradient). The statistics
// are those of the real tokens (keyMask, B×L; nil: all), weighted alike
// for queries and keys: μ_x, M_x of the queries, μ_y, M_y of the keys and
// the pair moment M₃ = M_x + M_y + μ_xμ_yᵀ + μ_yμ_xᵀ (prf.Stats; a
// sequence without a real token has zero statistics, which give FAVOR+).
//
// oprf: a = prf.OptimalA(tr M₃, d) (prf.FitOPRF), W_eff = √(1−4a)·ω and
// off_j = a‖ω_j‖² + (d/4)·log(1−4a) − ½·log m.
//
// sderf: with M₃ = QΛQᵀ, the symmetric matrices 𝒜 = Q·diag(a)·Qᵀ and
// ℬ = Q·diag(√(1−4a))·Qᵀ, a_l = prf.OptimalA(λ_l, 1) (prf.FitSDERF), give
// W_eff = ω·ℬ and off_j = ω_jᵀ𝒜ω_j + ¼Σ_l log(1−4a_l) − ½·log m: the DERF
// f(ω, x) = D·exp(ωᵀ𝒜ω + ωᵀℬx − ‖x‖²/2), unbiased since ℬ(I−4𝒜)⁻¹ℬ = I
// (DERF paper Theorem 4.1). It is prf's SDERF (prf.FitSDERF's basis T =
// Qᵀ) with the draw rotated to ωQ, which has the law of ω (the rows of an
// orthogonal or simplex draw keep their coupling under a rotation), so it
// has the same variance; written as matrix functions of M₃ it does not
// depend on the signs or order an eigensolver gives the eigenvectors, and
// is continuous where eigenvalues repeat. The eigendecomposition is taken
// by parallel cyclic Jacobi sweeps in the graph (symEigen).
//
// It panics on an unknown or unfitted family and on mismatched shapes.
func FitFeatureFamily(xq, xk, omega *Node, family string, keyMask *Node) (weff, off *Node) {
	g := xq.Graph()
	dt := xq.DType()
	b, h, l, d := xq.Shape().Dim(0), xq.Shape().Dim(1), xq.Shape().Dim(2), xq.Shape().Dim(3)
	m := omega.Shape().Dim(0)
	if omega.Shape().Dim(1) != d || !xk.Shape().Equal(xq.Shape()) {
		panic(fmt.Sprintf("nn: feature fit of queries %s, keys %s with projection %s", xq.Shape(), xk.Shape(), omega.Shape()))
	}
	xq, xk = StopGradient(xq), StopGradient(xk)
	om := StopGradient(omega)
	var w *Node // B×1×L×1 weights
	if keyMask != nil {
		w = Reshape(ConvertDType(StopGradient(keyMask), dt), b, 1, l, 1)
	} else {
		w = Ones(g, shapes.Make(dt, b, 1, l, 1))
	}
	n := MaxScalar(ReduceSum(w, 2), 1) // B×1×1: rows counted, at least 1
	wq, wk := Mul(xq, w), Mul(xk, w)
	mux := Div(ReduceSum(wq, 2), n) // B×H×d
	muy := Div(ReduceSum(wk, 2), n)
	logM := -0.5 * math.Log(float64(m))
	switch family {
	case FeatureOPRF:
		// tr M₃ = mean ‖x‖² + mean ‖y‖² + 2μ_xᵀμ_y.
		tr := Add(Div(Add(ReduceSum(Mul(wq, xq), 2, 3), ReduceSum(Mul(wk, xk), 2, 3)), Reshape(n, b, 1)),
			MulScalar(ReduceSum(Mul(mux, muy), -1), 2)) // B×H
		a := optimalAGraph(MaxScalar(tr, 0), d) // B×H
		one4a := OneMinus(MulScalar(a, 4))
		weff = Mul(Reshape(Sqrt(one4a), b, h, 1, 1), Reshape(om, 1, 1, m, d))
		on := ReduceSum(Square(om), -1) // m
		off = Add(Mul(InsertAxes(a, -1), Reshape(on, 1, 1, m)),
			InsertAxes(AddScalar(MulScalar(Log(one4a), float64(d)/4), logM), -1))
		return StopGradient(weff), StopGradient(off)
	case FeatureSDERF:
		mx := Div(Einsum("bhld,bhle->bhde", wq, xq), Reshape(n, b, 1, 1, 1))
		my := Div(Einsum("bhld,bhle->bhde", wk, xk), Reshape(n, b, 1, 1, 1))
		cross := Einsum("bhd,bhe->bhde", mux, muy)
		m3 := Add(Add(mx, my), Add(cross, TransposeAllAxes(cross, 0, 1, 3, 2)))
		lam, vec := symEigen(Reshape(m3, b*h, d, d), JacobiSweeps(d))
		a := optimalAGraph(MaxScalar(lam, 0), 1) // Z×d
		one4a := OneMinus(MulScalar(a, 4))
		ov := Einsum("md,zdl->zml", om, vec)                                    // ωQ, Z×m×d
		weff = Einsum("zml,zdl->zmd", Mul(ov, InsertAxes(Sqrt(one4a), 1)), vec) // ωQ·diag(√(1−4a))·Qᵀ
		off = Add(ReduceSum(Mul(Square(ov), InsertAxes(a, 1)), -1),             // Σ_l a_l (ωQ)_jl²
			AddScalar(MulScalar(ReduceAndKeep(Log(one4a), ReduceSum, -1), 0.25), logM)) // Z×m
		return StopGradient(Reshape(weff, b, h, m, d)), StopGradient(Reshape(off, b, h, m))
	}
	panic(fmt.Sprintf("nn: feature family %q has no fitted parameters", family))
}

// optimalAGraph is prf.OptimalA(sum, k) elementwise (sum ≥ 0): with φ =
// sum/k, −φ/(1 + (12φ+1)/(2φ + √((2φ+1)² + 8φ))), zero at φ = 0.
func optimalAGraph(sum *Node, k int) *Node {
	phi := MulScalar(sum, 1/float64(k))
	r := Sqrt(Add(Square(AddScalar(MulScalar(phi, 2), 1)), MulScalar(phi, 8)))
	return Neg(Div(phi, OnePlus(Div(AddScalar(MulScalar(phi, 12), 1), Add(MulScalar(phi, 2), r)))))
}

// JacobiSweeps is the number of parallel cyclic Jacobi sweeps symEigen
// takes for d×d matrices: 6 + ⌈log₂ d⌉. Jacobi's convergence is quadratic
// once the off-diagonal part is small; measured on rank-deficient moment
// matrices (2 to 4d rows, entries of scales 10⁻² to 10²), the off-diagonal
// Frobenius mass after that many sweeps was at most 10⁻¹⁵ of the matrix's
// for d ≤ 4, 3·10⁻¹⁵ for d = 8, 2·10⁻¹⁴ for d = 16 and 7·10⁻¹¹ for
// d ≤ 64 — below float32's precision for every head width. The matrix
// functions of the fit err by about as much (their derivatives are
// bounded: |a'| ≤ 1, |(√(1−4a))'| ≤ 2).
func JacobiSweeps(d int) int {
	s := 6
	for p := 1; p < d; p *= 2 {
		s++
	}
	return s
}

// jacobiRounds returns the rounds of a parallel cyclic Jacobi sweep over
// d indices (the round-robin tournament: n−1 rounds of n/2 disjoint pairs
// for n = d rounded up to even, pairs with the extra index dropped), each
// pair (p, q) with p < q.
func jacobiRounds(d int) [][][2]int {
	n := d + d%2
	var rounds [][][2]int
	for r := 0; r < n-1; r++ {
		var ps [][2]int
		add := func(p, q int) {
			if p >= d || q >= d {
				return
			}
			ps = append(ps, [2]int{min(p, q), max(p, q)})
		}
		add(n-1, r)
		for i := 1; i < n/2; i++ {
			add((r+i)%(n-1), (r-i+n-1)%(n-1))
		}
		if len(ps) > 0 {
			rounds = append(rounds, ps)
		}
	}
	return rounds
}

// symEigen returns the eigenvalues (Z×d) and eigenvectors (Z×d×d, in
// columns) of the symmetric matrices a (Z×d×d) after the given number of
// parallel cyclic Jacobi sweeps: in each round the disjoint pairs (p, q)
// are rotated at once by the symmetric Schur rotation of a's 2×2 block
// (Golub and Van Loan, Algorithm 8.5.1: τ = (a_qq − a_pp)/(2a_pq), t =
// sgn τ/(|τ| + √(1+τ²)), c = 1/√(1+t²), s = tc; t = 0 where a_pq = 0),
// a ← JᵀaJ and V ← VJ. The order and signs of the eigenvectors are those
// the sweeps leave; callers use matrix functions V·f(Λ)·Vᵀ, which do not
// depend on them. It is built without gradient (its callers stop it).
func symEigen(a *Node, sweeps int) (vals, vecs *Node) {
	g := a.Graph()
	dt := a.DType()
	z, d := a.Shape().Dim(0), a.Shape().Dim(1)
	eye := make([]float64, d*d)
	for i := 0; i < d; i++ {
		eye[i*d+i] = 1
	}
	vecs = BroadcastToDims(constant(g, dt, eye, 1, d, d), z, d, d)
	type roundConsts struct {
		epp, eqq, epq, cc, cs, rest *Node
	}
	var rcs []roundConsts
	for _, ps := range jacobiRounds(d) {
		k := len(ps)
		epp, eqq, epq := make([]float64, k*d*d), make([]float64, k*d*d), make([]float64, k*d*d)
		cs := make([]float64, k*d*d)
		rest := append([]float64(nil), eye...) // identity on the indices left out
		for i, p := range ps {
			epp[i*d*d+p[0]*d+p[0]] = 1
			eqq[i*d*d+p[1]*d+p[1]] = 1
			epq[i*d*d+p[0]*d+p[1]] = 1
			cs[i*d*d+p[0]*d+p[1]] = 1
			cs[i*d*d+p[1]*d+p[0]] = -1
			rest[p[0]*d+p[0]], rest[p[1]*d+p[1]] = 0, 0
		}
		cc := make([]float64, k*d*d)
		for i := range cc {
			cc[i] = epp[i] + eqq[i]
		}
		rcs = append(rcs, roundConsts{
			epp: constant(g, dt, epp, k, d, d), eqq: constant(g, dt, eqq, k, d, d), epq: constant(g, dt, epq, k, d, d),
			cc: constant(g, dt, cc, k, d, d), cs: constant(g, dt, cs, k, d, d), rest: constant(g, dt, rest, 1, d, d)})
	}
	zero := ScalarZero(g, dt)
	for s := 0; s < sweeps; s++ {
		for _, rc := range rcs {
			app := Einsum("zij,kij->zk", a, rc.epp)
			aqq := Einsum("zij,kij->zk", a, rc.eqq)
			apq := Einsum("zij,kij->zk", a, rc.epq)
			isZero := Equal(apq, ZerosLike(apq))
			safe := Where(isZero, OnesLike(apq), apq)
			tau := Div(Sub(aqq, app), MulScalar(safe, 2))
			sgn := Where(GreaterOrEqual(tau, zero), OnesLike(tau), Neg(OnesLike(tau)))
			t := Div(sgn, Add(Abs(tau), Sqrt(OnePlus(Square(tau)))))
			t = Where(isZero, ZerosLike(t), t)
			c := Inverse(Sqrt(OnePlus(Square(t))))
			sn := Mul(t, c)
			j := Add(Add(Einsum("zk,kij->zij", c, rc.cc), Einsum("zk,kij->zij", sn, rc.cs)), rc.rest)
			a = Einsum("zji,zjl->zil", j, Einsum("zjm,zml->zjl", a, j))
			vecs = Einsum("zij,zjl->zil", vecs, j)
		}
	}
	diag := constant(g, dt, eye, d, d)
	vals = Einsum("zij,ij->zi", a, diag)
	return vals, vecs
}
