package native

import (
	"fmt"

	"github.com/kernelkit/kernelkit/internal/parallel"
)

// gtu is TNN's gated Toeplitz unit (nn.GTU): u = SiLU(xW_u + b_u), v =
// SiLU(xW_v + b_v), output (u ⊙ TNO(v))W_o + b_o, the token mixer acting
// on the expanded width e. The two input maps run as one product
// (pairLinear): row r of their output holds u's pre-activation, then v's.
//
// Only the token mixer couples rows, so the row-local parts on either side
// of it run gemmChunk rows at a time, each chunk from its product to its
// element-wise pass while the chunk is in the core's cache: forward the
// fused input product with both SiLUs, then the gate with the output
// product; backward the output map's backward with the gate's gradients,
// then v's SiLU gradient with the input maps' backward. The chunks and
// their products are those of linear's forward and backward
// (affineBackward, gemmChunk rows, partial parameter gradients summed in
// chunk order), so the fusion keeps their bits.
type gtu[T Float] struct {
	d, e   int
	luv    *pairLinear[T]
	lo     *linear[T]
	tno    Layer[T]
	su, sv []T // σ of the pre-activations
	u, v   []T // SiLU outputs
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
	rows, d, e := B*L, l.d, l.e
	in, out := &l.luv.cat, l.lo
	l.luv.join()
	in.x, in.rows = x, rows
	in.y = grow(in.y, rows*2*e)
	l.u, l.v = grow(l.u, rows*e), grow(l.v, rows*e)
	l.su, l.sv = grow(l.su, rows*e), grow(l.sv, rows*e)
	wuv, buv, uv := in.w.Value, in.b.Value, in.y
	chunks(rows, gemmChunk, func(_, lo, hi int) {
		m := hi - lo
		c := uv[lo*2*e : hi*2*e]
		for r := 0; r < m; r++ {
			copy(c[r*2*e:(r+1)*2*e], buv)
		}
		gemm(false, false, m, 2*e, d, 1, x[lo*d:hi*d], d, wuv, 2*e, 1, c, 2*e)
		for r := lo; r < hi; r++ {
			o := r * e
			siluRow(uv[2*o:2*o+e], l.u[o:o+e], l.su[o:o+e])
			siluRow(uv[2*o+e:2*o+2*e], l.v[o:o+e], l.sv[o:o+e])
		}
	})
	l.t = l.tno.Forward(l.v, B, L)
	g := grow(out.x, rows*e)
	out.x, out.rows = g, rows
	out.y = grow(out.y, rows*d)
	chunks(rows, gemmChunk, func(_, lo, hi int) {
		m := hi - lo
		mulTo(g[lo*e:hi*e], l.u[lo*e:hi*e], l.t[lo*e:hi*e])
		y := out.y[lo*d : hi*d]
		for r := 0; r < m; r++ {
			copy(y[r*d:(r+1)*d], out.b.Value)
		}
		gemm(false, false, m, d, e, 1, g[lo*e:hi*e], e, out.w.Value, d, 1, y, d)
	})
	return out.y
}

// Backward returns the gradient for x.
func (l *gtu[T]) Backward(dy []T) []T {
	in, out := &l.luv.cat, l.lo
	rows, d, e := out.rows, l.d, l.e
	if len(dy) != rows*d || rows == 0 {
		panic(fmt.Sprintf("native: GTU output gradient has %d elements, want %d (after Forward)", len(dy), rows*d))
	}
	uv, g := in.y, out.x
	l.duv, l.dv = grow(l.duv, 2*rows*e), grow(l.dv, rows*e)
	out.dx = grow(out.dx, rows*e)
	dg := out.dx
	orderedRows(&out.gs, gemmChunk, rows, out.w, out.b, e, d, func(lo, hi int, part []T) {
		dyc := dy[lo*d : hi*d]
		gemm(false, true, hi-lo, e, d, 1, dyc, d, out.w.Value, d, 0, dg[lo*e:hi*e], e)
		if part != nil {
			affinePart(part, g[lo*e:hi*e], dyc, hi-lo, e, d)
		}
		for r := lo; r < hi; r++ {
			o := r * e
			du, up := l.duv[2*o:2*o+e], uv[2*o:2*o+e:2*o+e]
			dgr, tr, sur := dg[o:o+e:o+e], l.t[o:o+e:o+e], l.su[o:o+e:o+e]
			ur, dvr := l.u[o:o+e:o+e], l.dv[o:o+e:o+e]
			mulTo(du, dgr, tr)
			siluGradMulTo(du, du, up, sur)
			mulTo(dvr, dgr, ur)
		}
	})
	dt := l.tno.Backward(l.dv)
	train := in.w.Trainable
	if train {
		clear(in.w.Grad)
		clear(in.b.Grad)
	}
	in.dx = grow(in.dx, rows*d)
	orderedRows(&in.gs, gemmChunk, rows, in.w, in.b, d, 2*e, func(lo, hi int, part []T) {
		for r := lo; r < hi; r++ {
			o := r * e
			dv, vp := l.duv[2*o+e:2*o+2*e], uv[2*o+e:2*o+2*e:2*o+2*e]
			dtr, svr := dt[o:o+e:o+e], l.sv[o:o+e:o+e]
			siluGradMulTo(dv, dtr, vp, svr)
		}
		dc := l.duv[lo*2*e : hi*2*e]
		gemm(false, true, hi-lo, d, 2*e, 1, dc, 2*e, in.w.Value, 2*e, 0, in.dx[lo*d:hi*d], d)
		if part != nil {
			affinePart(part, in.x[lo*d:hi*d], dc, hi-lo, d, 2*e)
		}
	})
	if train {
		l.luv.split()
	}
	return in.dx
}

// glu is the gated linear unit of the TNN block (nn.GLU): (SiLU(xW₁ + b₁)
// ⊙ (xW₂ + b₂))W₃ + b₃. The two input maps run as one product
// (pairLinear): row r of their output holds xW₁ + b₁, then xW₂ + b₂.
//
// The unit is row-local, so forward and backward run it gluChunk rows at
// a time, each chunk from its first product to its last while its
// intermediates are in the core's cache: forward keeps only the fused
// pre-activations and σ(xW₁ + b₁) for backward (the SiLU and the gated
// product are recomputed from them, with the same operations and so the
// same bits); backward sums each chunk's parameter gradients in chunk
// order (parallel.Ordered).
type glu[T Float] struct {
	h, d   int
	l12    *pairLinear[T]
	l3     *linear[T]
	x      []T // the input of the last Forward
	rows   int
	ac, sa []T // fused pre-activations (rows×2h), σ(xW₁ + b₁)
	y, dx  []T
	work   [][]T // per-worker scratch
}

// gluChunk is the number of rows per work item of the GLU: it decides
// the partial sums of the parameter gradients, so it is a constant.
const gluChunk = 1024

// newGLU returns a GLU of the given hidden width under scope.
func newGLU[T Float](scope string, d, hidden int, trainable bool) *glu[T] {
	return &glu[T]{h: hidden, d: d,
		l12: newPairLinear[T](scope, "w1", "b1", "w2", "b2", d, hidden, hidden, trainable),
		l3:  newLinear[T](scope, "w3", "b3", hidden, d, trainable)}
}

// Params lists the unit's parameters.
func (l *glu[T]) Params() []*Param[T] {
	return append(l.l12.params(), l.l3.params()...)
}

// scratch returns worker k's scratch space of n elements for w workers.
func (l *glu[T]) scratch(w, k, n int) []T {
	if len(l.work) < w {
		l.work = append(l.work, make([][]T, w-len(l.work))...)
	}
	l.work[k] = grow(l.work[k], n)
	return l.work[k]
}

// Forward applies the unit to x (B·L×d).
func (l *glu[T]) Forward(x []T, B, L int) []T {
	rows, h, d := B*L, l.h, l.d
	l.l12.join()
	w12, b12 := l.l12.cat.w.Value, l.l12.cat.b.Value
	w3, b3 := l.l3.w.Value, l.l3.b.Value
	l.x, l.rows = x, rows
	l.ac, l.sa, l.y = grow(l.ac, rows*2*h), grow(l.sa, rows*h), grow(l.y, rows*d)
	w := parallel.Workers((rows + gluChunk - 1) / gluChunk)
	for k := 0; k < w; k++ {
		l.scratch(w, k, gluChunk*h)
	}
	parallel.Chunks(rows, gluChunk, func(k, lo, hi int) {
		m := hi - lo
		ac, y := l.ac[lo*2*h:hi*2*h], l.y[lo*d:hi*d]
		for r := 0; r < m; r++ {
			copy(ac[r*2*h:(r+1)*2*h], b12)
			copy(y[r*d:(r+1)*d], b3)
		}
		gemm(false, false, m, 2*h, d, 1, x[lo*d:hi*d], d, w12, 2*h, 1, ac, 2*h)
		g := l.work[k][:m*h]
		for r := 0; r < m; r++ {
			a, c := ac[r*2*h:r*2*h+h], ac[r*2*h+h:(r+1)*2*h]
			sa, gr := l.sa[(lo+r)*h:(lo+r+1)*h], g[r*h:(r+1)*h:(r+1)*h]
			siluMulRow(a, c, gr, sa)
		}
		gemm(false, false, m, d, h, 1, g, h, w3, d, 1, y, d)
	})
	return l.y
}

// Backward returns the gradient for x.
func (l *glu[T]) Backward(dy []T) []T {
	rows, h, d := l.rows, l.h, l.d
	if len(dy) != rows*d || rows == 0 {
		panic(fmt.Sprintf("native: GLU output gradient has %d elements, want %d (after Forward)", len(dy), rows*d))
	}
	w12, w3 := l.l12.cat.w, l.l3.w
	train := w3.Trainable
	l.dx = grow(l.dx, rows*d)
	np3, np12 := h*d+d, d*2*h+2*h // parameter-gradient partials
	w := parallel.Workers((rows + gluChunk - 1) / gluChunk)
	size := gluChunk * 4 * h
	if train {
		size += np3 + np12
		clear(w12.Grad)
		clear(l.l12.cat.b.Grad)
	}
	for k := 0; k < w; k++ {
		l.scratch(w, k, size)
	}
	parallel.Ordered(rows, gluChunk, func(k, lo, hi int) {
		m := hi - lo
		s := l.work[k]
		dg, g, d12 := s[:m*h], s[gluChunk*h:gluChunk*h+m*h], s[2*gluChunk*h:2*gluChunk*h+2*m*h]
		dyc := dy[lo*d : hi*d]
		gemm(false, true, m, h, d, 1, dyc, d, w3.Value, d, 0, dg, h)
		for r := 0; r < m; r++ {
			o := (lo + r) * 2 * h
			a, c := l.ac[o:o+h:o+h], l.ac[o+h:o+2*h:o+2*h]
			sa := l.sa[(lo+r)*h : (lo+r+1)*h : (lo+r+1)*h]
			dgr, gr := dg[r*h:(r+1)*h:(r+1)*h], g[r*h:(r+1)*h:(r+1)*h]
			d1, d2 := d12[r*2*h:r*2*h+h:r*2*h+h], d12[r*2*h+h:(r+1)*2*h:(r+1)*2*h]
			mulTo(gr, a, sa) // the SiLU, then the gated product as in Forward
			mulTo(d2, dgr, gr)
			mulTo(gr, gr, c)
			mulTo(d1, dgr, c)
			siluGradMulTo(d1, d1, a, sa)
		}
		gemm(false, true, m, d, 2*h, 1, d12, 2*h, w12.Value, 2*h, 0, l.dx[lo*d:hi*d], d)
		if !train {
			return
		}
		p3, p12 := s[4*gluChunk*h:4*gluChunk*h+np3], s[4*gluChunk*h+np3:4*gluChunk*h+np3+np12]
		gemm(true, false, h, d, m, 1, g, h, dyc, d, 0, p3, d)
		gemm(true, false, d, 2*h, m, 1, l.x[lo*d:hi*d], d, d12, 2*h, 0, p12, 2*h)
		pb3, pb12 := p3[h*d:], p12[d*2*h:]
		clear(pb3)
		clear(pb12)
		for r := 0; r < m; r++ {
			addTo(pb3, dyc[r*d:(r+1)*d])
			addTo(pb12, d12[r*2*h:(r+1)*2*h])
		}
	}, func(k, _, _ int) {
		if !train {
			return
		}
		s := l.work[k][4*gluChunk*h:]
		addTo(w3.Grad, s[:h*d])
		addTo(l.l3.b.Grad, s[h*d:np3])
		addTo(w12.Grad, s[np3:np3+d*2*h])
		addTo(l.l12.cat.b.Grad, s[np3+d*2*h:np3+np12])
	})
	if train {
		l.l12.split()
	}
	return l.dx
}
