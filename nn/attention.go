package nn

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
)

// SoftmaxAttention returns softmax(QKᵀ/√d)V for q, k (B×H×L×d) and v
// (B×H×L×dv). Causal masks keys after each query; keyMask (B×L, 1 for a
// real token, 0 for padding; nil for none) masks padded keys. Every query
// must see at least one key.
func SoftmaxAttention(q, k, v *Node, causal bool, keyMask *Node) *Node {
	g := q.Graph()
	d := q.Shape().Dim(-1)
	l, lk := q.Shape().Dim(2), k.Shape().Dim(2)
	s := MulScalar(einsum("bhld,bhsd->bhls", q, k), 1/math.Sqrt(float64(d)))
	var ok *Node
	if causal {
		if l != lk {
			panic(fmt.Sprintf("nn: causal attention needs as many keys as queries (%d, %d)", lk, l))
		}
		ok = Reshape(LowerTriangular(g, l), 1, 1, l, l)
	}
	if keyMask != nil {
		km := GreaterThan(Reshape(keyMask, keyMask.Shape().Dim(0), 1, 1, lk), ScalarZero(g, keyMask.DType()))
		if ok == nil {
			ok = km
		} else {
			ok = LogicalAnd(ok, km)
		}
	}
	if ok != nil {
		ok = BroadcastToDims(ok, s.Shape().Dimensions...)
		s = Where(ok, s, BroadcastToShape(Scalar(g, s.DType(), -1e30), s.Shape()))
	}
	return einsum("bhls,bhsv->bhlv", Softmax(s, -1), v)
}

// FavorFeatures returns the positive random features of FAVOR+ for the
// rows of x (…×L×d, already scaled by d^(−1/4)) with projection omega
// (m×d): φ(x) = exp(ωᵢᵀx − ‖x‖²/2)/√m, so that E[φ(q)ᵀφ(k)] = exp(qᵀk)
// (analog paper Supplementary Note 2; features "softmax", form
// "positive"). For numerical range each row is divided by a factor that
// cancels in attention: queries by exp(max_i ωᵢᵀq) of their own row, keys
// by exp of the maximum over all keys of a sequence (rowwise = false). The
// factors are constants to the gradient (StopGradient), which is exact
// because the attention output does not depend on them.
func FavorFeatures(x, omega *Node, rowwise bool) *Node {
	m := omega.Shape().Dim(0)
	proj := einsum("bhld,md->bhlm", x, omega)
	sq := MulScalar(ReduceAndKeep(Square(x), ReduceSum, -1), 0.5)
	var shift *Node
	if rowwise {
		shift = StopGradient(ReduceAndKeep(proj, ReduceMax, -1))
	} else {
		shift = StopGradient(ReduceAndKeep(proj, ReduceMax, -1, -2))
	}
	return MulScalar(Exp(Sub(Sub(proj, sq), shift)), 1/math.Sqrt(float64(m)))
}

// LinearAttention returns FAVOR+ attention D̃⁻¹(Q'((K')ᵀV)) for q, k
// (B×H×L×d) and v (B×H×L×dv) with projection omega (m×d): queries and keys
// are scaled by d^(−1/4) and mapped by FavorFeatures (analog paper Sec.
// II.C; the graph form of attention.Linear with the "softmax"/"positive"
// map). Causal (unidirectional) attention runs in chunks of chunk rows
// (chunk must divide L; chunk ≤ 0 or chunk ≥ L: one masked L×L block):
// inside a chunk a masked chunk×chunk product, across chunks the prefix
// sums of the chunk states Σ φ(k_s)v_sᵀ and Σ φ(k_s), taken by a product
// with a strictly lower triangular matrix over the chunk index (no
// cumulative-sum op is needed). keyMask (B×L, 1 real, 0 padding; nil for
// none) removes padded keys from every sum.
func LinearAttention(q, k, v, omega *Node, causal bool, chunk int, keyMask *Node) *Node {
	d := q.Shape().Dim(-1)
	sc := math.Pow(float64(d), -0.25)
	qf := FavorFeatures(MulScalar(q, sc), omega, true)
	kf := FavorFeatures(MulScalar(k, sc), omega, false)
	if keyMask != nil {
		km := ConvertDType(keyMask, kf.DType())
		kf = Mul(kf, Reshape(km, km.Shape().Dim(0), 1, km.Shape().Dim(1), 1))
	}
	if !causal {
		kv := einsum("bhlm,bhlv->bhmv", kf, v)
		ks := ReduceSum(kf, 2) // B×H×m
		num := einsum("bhlm,bhmv->bhlv", qf, kv)
		den := einsum("bhlm,bhm->bhl", qf, ks)
		return Div(num, InsertAxes(den, -1))
	}
	return causalLinear(qf, kf, v, chunk)
}

// causalLinear is the chunked causal form of LinearAttention on features.
func causalLinear(qf, kf, v *Node, chunk int) *Node {
	g := qf.Graph()
	b, h, l, m := qf.Shape().Dim(0), qf.Shape().Dim(1), qf.Shape().Dim(2), qf.Shape().Dim(3)
	dv := v.Shape().Dim(-1)
	if chunk <= 0 || chunk > l {
		chunk = l
	}
	if l%chunk != 0 {
		panic(fmt.Sprintf("nn: causal chunk %d does not divide the length %d", chunk, l))
	}
	nc := l / chunk
	z := b * h
	qc := Reshape(qf, z, nc, chunk, m)
	kc := Reshape(kf, z, nc, chunk, m)
	vc := Reshape(v, z, nc, chunk, dv)
	tril := ConvertDType(Reshape(LowerTriangular(g, chunk), 1, 1, chunk, chunk), qf.DType())
	s := Mul(einsum("znci,znsi->zncs", qc, kc), tril)
	num := einsum("zncs,znsv->zncv", s, vc)
	den := ReduceSum(s, -1) // z×nc×chunk
	if nc > 1 {
		p := make([]float64, nc*nc) // P[a][c] = 1 for c < a: exclusive prefix
		for a := 0; a < nc; a++ {
			for c := 0; c < a; c++ {
				p[a*nc+c] = 1
			}
		}
		pm := constant(g, qf.DType(), p, nc, nc)
		st := einsum("znsi,znsv->zniv", kc, vc) // chunk states
		zs := ReduceSum(kc, 2)                  // z×nc×m
		pst := einsum("zniv,an->zaiv", st, pm)
		pzs := einsum("zni,an->zai", zs, pm)
		num = Add(num, einsum("znci,zniv->zncv", qc, pst))
		den = Add(den, einsum("znci,zni->znc", qc, pzs))
	}
	return Reshape(Div(num, InsertAxes(den, -1)), b, h, l, dv)
}
