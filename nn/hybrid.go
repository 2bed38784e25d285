package nn

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// HybridFeatures returns the query (query = true) or key features of the
// angular hybrid estimator of the softmax kernel (HRF Eq. 8, 12 and 19;
// the graph form of hybrid.Angular's Query and Key) for the rows of x
// (B×H×L×d, already scaled by d^(−1/4)) with projections pos, trig (M×d)
// and tau (N×d). With the positive base φ⁺(x) = exp(−‖x‖²/2)/√(2M)·
// [exp(ωᵢᵀx), exp(−ωᵢᵀx)]ᵢ, the trigonometric base φᵗ(x) =
// exp(‖x‖²/2)/√M·[sin ωᵢᵀx, cos ωᵢᵀx]ᵢ and s(x) = (sgn τⱼᵀx)ⱼ/√(2N),
//
//	Φ₁(q) = [φ⁺(q) ⊗ (½, −s(q)), φᵗ(q) ⊗ (½, s(q))],
//	Φ₂(k) = [φ⁺(k) ⊗ (1, s(k)),  φᵗ(k) ⊗ (1, s(k))],
//
// so that Φ₁(q)ᵀΦ₂(k) = λ̂·SM̂⁺⁺ + (1−λ̂)·SM̂ᵗʳⁱᵍ with λ̂ = ½ − s(q)ᵀs(k),
// whose mean is θ/π (Eq. 19). The outer products are taken per row,
// O(L(M+N)d + LMN) for L rows: the estimator stays linear in L.
//
// For numerical range every row is divided by exp of its largest log
// feature magnitude, max(max|ωᵢᵀx| − ‖x‖²/2, ‖x‖²/2): queries by their own
// row's, keys by the maximum over the sequence (axis −2), so that the
// factors cancel in attention's normalisation; they are constants to the
// gradient (StopGradient), which is exact for the same reason. The sgn
// features carry no gradient (their derivative is zero almost
// everywhere). It panics on mismatched shapes.
func HybridFeatures(x, pos, trig, tau *Node, query bool) *Node {
	hp := newHybridParts(x, pos, trig, tau, query)
	return Concatenate([]*Node{flatOuter(hp.pos, hp.a), flatOuter(hp.trig, hp.b)}, -1)
}

// hybridParts are the factors of one side's hybrid features: Φ = [pos ⊗
// a, trig ⊗ b] with pos, trig (…×2M) the row-scaled base features and a,
// b (…×(1+N)) the λ factors ((½, −s), (½, s) for queries; (1, s) twice for
// keys).
type hybridParts struct {
	pos, trig, a, b *Node
}

func newHybridParts(x, pos, trig, tau *Node, query bool) hybridParts {
	g := x.Graph()
	dt := x.DType()
	m, n := pos.Shape().Dim(0), tau.Shape().Dim(0)
	if trig.Shape().Dim(0) != m || pos.Shape().Dim(1) != x.Shape().Dim(-1) || trig.Shape().Dim(1) != x.Shape().Dim(-1) || tau.Shape().Dim(1) != x.Shape().Dim(-1) {
		panic(fmt.Sprintf("nn: hybrid projections %s, %s, %s for inputs %s", pos.Shape(), trig.Shape(), tau.Shape(), x.Shape()))
	}
	sq := MulScalar(ReduceAndKeep(Square(x), ReduceSum, -1), 0.5) // …×1
	u := einsum("bhld,md->bhlm", x, pos)
	logPos := Sub(Concatenate([]*Node{u, Neg(u)}, -1), sq) // …×2M, without the 1/√(2M)
	// Largest log magnitude of the row's features.
	rowMax := Max(AddScalar(Sub(ReduceAndKeep(Abs(u), ReduceMax, -1), sq), -0.5*math.Log(2*float64(m))),
		AddScalar(sq, -0.5*math.Log(float64(m))))
	var shift *Node
	if query {
		shift = StopGradient(rowMax)
	} else {
		shift = StopGradient(ReduceAndKeep(rowMax, ReduceMax, -2))
	}
	var hp hybridParts
	hp.pos = Exp(Sub(AddScalar(logPos, -0.5*math.Log(2*float64(m))), shift))
	t := einsum("bhld,md->bhlm", x, trig)
	hp.trig = Mul(Exp(Sub(AddScalar(sq, -0.5*math.Log(float64(m))), shift)), Concatenate([]*Node{Sin(t), Cos(t)}, -1))
	sg := MulScalar(Sign(StopGradient(einsum("bhld,nd->bhln", x, tau))), 1/math.Sqrt(2*float64(n)))
	dims := sg.Shape().Dimensions
	col := func(v float64) *Node {
		return BroadcastToShape(Scalar(g, dt, v), shapes.Make(dt, append(append([]int(nil), dims[:len(dims)-1]...), 1)...))
	}
	if query {
		hp.a = Concatenate([]*Node{col(0.5), Neg(sg)}, -1)
		hp.b = Concatenate([]*Node{col(0.5), sg}, -1)
	} else {
		hp.a = Concatenate([]*Node{col(1), sg}, -1)
		hp.b = hp.a
	}
	return hp
}

// HybridAttention returns angular hybrid linear attention D̃⁻¹(Q'((K')ᵀV))
// for q, k (B×H×L×d) and v (B×H×L×dv) with the features of HybridFeatures
// of q and k scaled by d^(−1/4): the graph form of attention.Linear with
// the Pair hybrid.Angular (the HRF paper's angular hybrid, Eq. 19). The
// features are never formed: with Φ = [φ⁺ ⊗ a, φᵗ ⊗ b] (HybridFeatures),
// the key side enters as Σ_s φ_s ⊗ (c_s ⊗ [v_s, 1]) (2M×(1+N)(dv+1) per
// base estimator) and the query side contracts φ_l with it and then a_l
// or b_l, O(L·M·N·dv) like the explicit features but without their
// 4M(1+N)-wide tensors; the appended 1 gives the denominator. The hybrid
// estimate is not positive, so, as attention.Linear does, denominators of
// magnitude below 1e-30 are clamped to ±1e-30 (sign kept, zero counted as
// positive). Causal attention runs in chunks of chunk rows (chunk must
// divide L; chunk ≤ 0 or ≥ L: one masked block), as LinearAttention.
// keyMask (B×L, 1 real, 0 padding; nil for none) removes padded keys from
// every sum. It panics on mismatched shapes.
func HybridAttention(q, k, v, pos, trig, tau *Node, causal bool, chunk int, keyMask *Node) *Node {
	g := q.Graph()
	d := q.Shape().Dim(-1)
	b, h, l, dv := v.Shape().Dim(0), v.Shape().Dim(1), v.Shape().Dim(2), v.Shape().Dim(3)
	sc := math.Pow(float64(d), -0.25)
	qp := newHybridParts(MulScalar(q, sc), pos, trig, tau, true)
	kp := newHybridParts(MulScalar(k, sc), pos, trig, tau, false)
	c := kp.a // B×H×L×(1+N), the same for both bases
	if keyMask != nil {
		km := ConvertDType(keyMask, c.DType())
		c = Mul(c, Reshape(km, km.Shape().Dim(0), 1, km.Shape().Dim(1), 1))
	}
	v1 := Concatenate([]*Node{v, Ones(g, shapes.Make(v.DType(), b, h, l, 1))}, -1) // values and the 1 of the denominator
	var out *Node                                                                  // B×H×L×(dv+1)
	if !causal {
		cv := flatOuter(c, v1) // B×H×L×(1+N)(dv+1)
		kvp := einsum("bhlm,bhlw->bhmw", kp.pos, cv)
		kvt := einsum("bhlm,bhlw->bhmw", kp.trig, cv)
		out = Add(hybridQuery(einsum("bhlm,bhmw->bhlw", qp.pos, kvp), qp.a), hybridQuery(einsum("bhlm,bhmw->bhlw", qp.trig, kvt), qp.b))
	} else {
		out = causalHybrid(qp, kp.pos, kp.trig, c, v1, chunk)
	}
	num := sliceAxes(out, []int{0, 0, 0, 0}, []int{b, h, l, dv})
	den := sliceAxes(out, []int{0, 0, 0, dv}, []int{b, h, l, dv + 1})
	return Div(num, guardDen(den, 1e-30))
}

// flatOuter returns the row-wise outer products of a (…×p) and b (…×q),
// flattened (…×pq, a's index major).
func flatOuter(a, b *Node) *Node {
	o := Mul(InsertAxes(a, -1), InsertAxes(b, -2))
	od := o.Shape().Dimensions
	return Reshape(o, append(append([]int(nil), od[:len(od)-2]...), od[len(od)-2]*od[len(od)-1])...)
}

// hybridQuery returns Σ_n a[…, n]·u[…, n, :] for u (…×(1+N)(dv+1), n
// major) and the query's λ factor a (…×(1+N)).
func hybridQuery(u, a *Node) *Node {
	dims := u.Shape().Dimensions
	np := a.Shape().Dim(-1)
	lead := append([]int(nil), dims[:len(dims)-1]...)
	u = Reshape(u, append(lead, np, dims[len(dims)-1]/np)...)
	return ReduceSum(Mul(u, InsertAxes(a, -1)), -2)
}

// guardDen clamps denominators of magnitude below eps to ±eps, keeping
// the sign (zero counts as positive), as attention.Linear does.
func guardDen(den *Node, eps float64) *Node {
	g := den.Graph()
	pos := GreaterOrEqual(den, ScalarZero(g, den.DType()))
	return Where(pos, MaxScalar(den, eps), MinScalar(den, -eps))
}

// causalHybrid is the chunked causal form of HybridAttention on the
// factors: inside a chunk the masked scores (φ⁺_l·φ⁺_s)(a_l·c_s) +
// (φᵗ_l·φᵗ_s)(b_l·c_s) times [v_s, 1]; across chunks the exclusive prefix
// sums of the chunk states Σ_s φ_s ⊗ c_s ⊗ [v_s, 1], taken by a product
// with a strictly lower triangular matrix over the chunk index. It
// returns B×H×L×(dv+1).
func causalHybrid(qp hybridParts, kpos, ktrig, c, v1 *Node, chunk int) *Node {
	g := v1.Graph()
	dt := v1.DType()
	b, h, l, w := v1.Shape().Dim(0), v1.Shape().Dim(1), v1.Shape().Dim(2), v1.Shape().Dim(3)
	np := c.Shape().Dim(3)
	if chunk <= 0 || chunk > l {
		chunk = l
	}
	if l%chunk != 0 {
		panic(fmt.Sprintf("nn: causal chunk %d does not divide the length %d", chunk, l))
	}
	nc := l / chunk
	z := b * h
	rs := func(x *Node) *Node { return Reshape(x, z, nc, chunk, x.Shape().Dim(3)) }
	qpos, qtrig, qa, qb := rs(qp.pos), rs(qp.trig), rs(qp.a), rs(qp.b)
	kp, kt, cc, vc := rs(kpos), rs(ktrig), rs(c), rs(v1)
	tril := ConvertDType(Reshape(LowerTriangular(g, chunk), 1, 1, chunk, chunk), dt)
	s := Add(Mul(einsum("znci,znsi->zncs", qpos, kp), einsum("znci,znsi->zncs", qa, cc)),
		Mul(einsum("znci,znsi->zncs", qtrig, kt), einsum("znci,znsi->zncs", qb, cc)))
	out := einsum("zncs,znsv->zncv", Mul(s, tril), vc) // z×nc×chunk×w
	if nc > 1 {
		pm := make([]float64, nc*nc) // P[a][c] = 1 for c < a: exclusive prefix
		for a := 0; a < nc; a++ {
			for c := 0; c < a; c++ {
				pm[a*nc+c] = 1
			}
		}
		p := constant(g, dt, pm, nc, nc)
		cv := Reshape(flatOuter(cc, vc), z, nc, chunk, np*w)
		prefix := func(phi *Node) *Node { // z×nc×2M×(1+N)w, exclusive over chunks
			st := einsum("znsi,znsw->zniw", phi, cv)
			return einsum("zniw,an->zaiw", st, p)
		}
		out = Add(out, Add(hybridQuery(einsum("znci,zniw->zncw", qpos, prefix(kp)), qa),
			hybridQuery(einsum("znci,zniw->zncw", qtrig, prefix(kt)), qb)))
	}
	return Reshape(out, b, h, l, w)
}
