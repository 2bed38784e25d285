package native

// gtu is TNN's gated Toeplitz unit (nn.GTU): u = SiLU(xW_u + b_u), v =
// SiLU(xW_v + b_v), output (u ⊙ TNO(v))W_o + b_o, the token mixer acting
// on the expanded width e. The two input maps run as one product
// (pairLinear): row r of their output holds u's pre-activation, then v's.
type gtu[T Float] struct {
	d, e   int
	luv    *pairLinear[T]
	lo     *linear[T]
	tno    Layer[T]
	su, sv []T // σ of the pre-activations
	u, v   []T // SiLU outputs
	g      []T // the gated product
	t      []T // TNO output (owned by the mixer)
	duv    []T // gradient of the fused pre-activations (rows×2e)
	dv     []T
}

// newGTU returns a GTU from width d to e and back under scope, with the
// token mixer tno.
func newGTU[T Float](scope string, d, e int, tno Layer[T], trainable bool) *gtu[T] {
	return &gtu[T]{d: d, e: e, tno: tno,
		luv: newPairLinear[T](scope, "wu", "bu", "wv", "bv", d, e, e, trainable),
		lo:  newLinear[T](scope, "wo", "bo", e, d, trainable)}
}

// Params lists the unit's parameters (the mixer's included).
func (l *gtu[T]) Params() []*Param[T] {
	ps := append(l.luv.params(), l.lo.params()...)
	return append(ps, l.tno.Params()...)
}

// Forward applies the unit to x (B·L×d).
func (l *gtu[T]) Forward(x []T, B, L int) []T {
	rows, e := B*L, l.e
	uv := l.luv.forward(x, rows)
	l.u, l.v = grow(l.u, rows*e), grow(l.v, rows*e)
	l.su, l.sv = grow(l.su, rows*e), grow(l.sv, rows*e)
	chunks(rows, rowChunk, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			o := r * e
			siluRow(uv[2*o:2*o+e], l.u[o:o+e], l.su[o:o+e])
			siluRow(uv[2*o+e:2*o+2*e], l.v[o:o+e], l.sv[o:o+e])
		}
	})
	l.t = l.tno.Forward(l.v, B, L)
	l.g = grow(l.g, rows*e)
	chunks(len(l.g), rowChunk*64, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			l.g[i] = l.u[i] * l.t[i]
		}
	})
	return l.lo.forward(l.g, rows)
}

// Backward returns the gradient for x.
func (l *gtu[T]) Backward(dy []T) []T {
	dg := l.lo.backward(dy)
	n, e := len(dg), l.e
	rows := n / e
	uv := l.luv.cat.y
	l.duv, l.dv = grow(l.duv, 2*n), grow(l.dv, n)
	chunks(rows, rowChunk, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			o := r * e
			du, up := l.duv[2*o:2*o+e], uv[2*o:2*o+e:2*o+e]
			dgr, tr, sur := dg[o:o+e:o+e], l.t[o:o+e:o+e], l.su[o:o+e:o+e]
			ur, dvr := l.u[o:o+e:o+e], l.dv[o:o+e:o+e]
			for j := range du {
				du[j] = dgr[j] * tr[j] * siluGrad(up[j], sur[j])
				dvr[j] = dgr[j] * ur[j]
			}
		}
	})
	dt := l.tno.Backward(l.dv)
	chunks(rows, rowChunk, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			o := r * e
			dv, vp := l.duv[2*o+e:2*o+2*e], uv[2*o+e:2*o+2*e:2*o+2*e]
			dtr, svr := dt[o:o+e:o+e], l.sv[o:o+e:o+e]
			for j := range dv {
				dv[j] = dtr[j] * siluGrad(vp[j], svr[j])
			}
		}
	})
	return l.luv.backward(l.duv)
}

// glu is the gated linear unit of the TNN block (nn.GLU): (SiLU(xW₁ + b₁)
// ⊙ (xW₂ + b₂))W₃ + b₃. The two input maps run as one product
// (pairLinear): row r of their output holds xW₁ + b₁, then xW₂ + b₂.
type glu[T Float] struct {
	h        int
	l12      *pairLinear[T]
	l3       *linear[T]
	sa, s, g []T // σ(xW₁ + b₁), its SiLU, the gated product
	d12      []T // gradient of the fused pre-activations (rows×2h)
}

// newGLU returns a GLU of the given hidden width under scope.
func newGLU[T Float](scope string, d, hidden int, trainable bool) *glu[T] {
	return &glu[T]{h: hidden,
		l12: newPairLinear[T](scope, "w1", "b1", "w2", "b2", d, hidden, hidden, trainable),
		l3:  newLinear[T](scope, "w3", "b3", hidden, d, trainable)}
}

// Params lists the unit's parameters.
func (l *glu[T]) Params() []*Param[T] {
	return append(l.l12.params(), l.l3.params()...)
}

// Forward applies the unit to x (B·L×d).
func (l *glu[T]) Forward(x []T, B, L int) []T {
	rows, h := B*L, l.h
	ac := l.l12.forward(x, rows)
	n := rows * h
	l.sa, l.s, l.g = grow(l.sa, n), grow(l.s, n), grow(l.g, n)
	chunks(rows, rowChunk, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			o := r * h
			a, c := ac[2*o:2*o+h], ac[2*o+h:2*o+2*h]
			sa, s, g := l.sa[o:o+h], l.s[o:o+h], l.g[o:o+h]
			siluRow(a, s, sa)
			for j := range g {
				g[j] = s[j] * c[j]
			}
		}
	})
	return l.l3.forward(l.g, rows)
}

// Backward returns the gradient for x.
func (l *glu[T]) Backward(dy []T) []T {
	dg := l.l3.backward(dy)
	n, h := len(dg), l.h
	ac := l.l12.cat.y
	l.d12 = grow(l.d12, 2*n)
	chunks(n/h, rowChunk, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			o := r * h
			a, c := ac[2*o:2*o+h], ac[2*o+h:2*o+2*h]
			d1, d2 := l.d12[2*o:2*o+h], l.d12[2*o+h:2*o+2*h:2*o+2*h]
			dgr, sar, sr := dg[o:o+h:o+h], l.sa[o:o+h:o+h], l.s[o:o+h:o+h]
			for j := range d1 {
				d1[j] = dgr[j] * c[j] * siluGrad(a[j], sar[j])
				d2[j] = dgr[j] * sr[j]
			}
		}
	})
	return l.l12.backward(l.d12)
}
