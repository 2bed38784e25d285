package native

// gtu is TNN's gated Toeplitz unit (nn.GTU): u = SiLU(xW_u + b_u), v =
// SiLU(xW_v + b_v), output (u ⊙ TNO(v))W_o + b_o, the token mixer acting
// on the expanded width e.
type gtu[T Float] struct {
	d, e       int
	lu, lv, lo *linear[T]
	tno        Layer[T]
	su, sv     []T // σ of the pre-activations
	u, v, g    []T // SiLU outputs and the gated product
	t          []T // TNO output (owned by the mixer)
	du, dv, dh []T
}

// newGTU returns a GTU from width d to e and back under scope, with the
// token mixer tno.
func newGTU[T Float](scope string, d, e int, tno Layer[T], trainable bool) *gtu[T] {
	return &gtu[T]{d: d, e: e, tno: tno,
		lu: newLinear[T](scope, "wu", "bu", d, e, trainable),
		lv: newLinear[T](scope, "wv", "bv", d, e, trainable),
		lo: newLinear[T](scope, "wo", "bo", e, d, trainable)}
}

// Params lists the unit's parameters (the mixer's included).
func (l *gtu[T]) Params() []*Param[T] {
	ps := append(l.lu.params(), l.lv.params()...)
	ps = append(ps, l.lo.params()...)
	return append(ps, l.tno.Params()...)
}

// Forward applies the unit to x (B·L×d).
func (l *gtu[T]) Forward(x []T, B, L int) []T {
	rows := B * L
	up := l.lu.forward(x, rows)
	vp := l.lv.forward(x, rows)
	l.u, l.v = grow(l.u, rows*l.e), grow(l.v, rows*l.e)
	l.su, l.sv = grow(l.su, rows*l.e), grow(l.sv, rows*l.e)
	siluFwd(up, l.u, l.su)
	siluFwd(vp, l.v, l.sv)
	l.t = l.tno.Forward(l.v, B, L)
	l.g = grow(l.g, rows*l.e)
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
	n := len(dg)
	l.du, l.dv = grow(l.du, n), grow(l.dv, n)
	chunks(n, rowChunk*64, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			l.du[i] = dg[i] * l.t[i] * siluGrad(l.lu.y[i], l.su[i])
			l.dv[i] = dg[i] * l.u[i]
		}
	})
	dt := l.tno.Backward(l.dv)
	chunks(n, rowChunk*64, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			l.dv[i] = dt[i] * siluGrad(l.lv.y[i], l.sv[i])
		}
	})
	dx := l.lu.backward(l.du)
	l.dh = grow(l.dh, len(dx))
	copy(l.dh, dx)
	dx = l.lv.backward(l.dv)
	for i, v := range dx {
		l.dh[i] += v
	}
	return l.dh
}

// glu is the gated linear unit of the TNN block (nn.GLU): (SiLU(xW₁ + b₁)
// ⊙ (xW₂ + b₂))W₃ + b₃.
type glu[T Float] struct {
	l1, l2, l3 *linear[T]
	sa, s, g   []T // σ(xW₁ + b₁), its SiLU, the gated product
	d1, d2, dh []T
}

// newGLU returns a GLU of the given hidden width under scope.
func newGLU[T Float](scope string, d, hidden int, trainable bool) *glu[T] {
	return &glu[T]{
		l1: newLinear[T](scope, "w1", "b1", d, hidden, trainable),
		l2: newLinear[T](scope, "w2", "b2", d, hidden, trainable),
		l3: newLinear[T](scope, "w3", "b3", hidden, d, trainable)}
}

// Params lists the unit's parameters.
func (l *glu[T]) Params() []*Param[T] {
	return append(append(l.l1.params(), l.l2.params()...), l.l3.params()...)
}

// Forward applies the unit to x (B·L×d).
func (l *glu[T]) Forward(x []T, B, L int) []T {
	rows := B * L
	a := l.l1.forward(x, rows)
	c := l.l2.forward(x, rows)
	l.sa, l.s, l.g = grow(l.sa, len(a)), grow(l.s, len(a)), grow(l.g, len(a))
	chunks(len(a), rowChunk*64, func(_, lo, hi int) {
		sigmoidSlice(l.sa[lo:hi], a[lo:hi])
		for i := lo; i < hi; i++ {
			l.s[i] = a[i] * l.sa[i]
			l.g[i] = l.s[i] * c[i]
		}
	})
	return l.l3.forward(l.g, rows)
}

// Backward returns the gradient for x.
func (l *glu[T]) Backward(dy []T) []T {
	dg := l.l3.backward(dy)
	n := len(dg)
	l.d1, l.d2 = grow(l.d1, n), grow(l.d2, n)
	a, c := l.l1.y, l.l2.y
	chunks(n, rowChunk*64, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			l.d1[i] = dg[i] * c[i] * siluGrad(a[i], l.sa[i])
			l.d2[i] = dg[i] * l.s[i]
		}
	})
	dx := l.l1.backward(l.d1)
	l.dh = grow(l.dh, len(dx))
	copy(l.dh, dx)
	dx = l.l2.backward(l.d2)
	for i, v := range dx {
		l.dh[i] += v
	}
	return l.dh
}
