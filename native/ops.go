package native

import (
	"math"
	"unsafe"

	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/internal/vmath"
)

// Layer is the contract of the engine's layers: Forward maps x (B·L rows
// of the layer's input width, row-major) to the layer's output, kept in a
// buffer the layer owns and reuses (valid until the next Forward); Backward
// takes the gradient of the loss with respect to that output and returns
// the gradient with respect to x (also layer-owned), accumulating the
// gradients of the layer's parameters into their Grad slices; Params lists
// those parameters. Backward must follow the Forward whose input it
// differentiates.
type Layer[T Float] interface {
	Forward(x []T, B, L int) []T
	Backward(dy []T) []T
	Params() []*Param[T]
}

// rowChunk and colChunk are the fixed chunk sizes in which products and
// element-wise loops are split over the cores: fixed, so that every
// element is computed by the same sequence of operations whatever the
// number of cores.
const (
	rowChunk  = 256  // element-wise loops
	gemmChunk = 1024 // rows per product call
	colChunk  = 64   // columns per parameter-gradient product call
)

// grow returns buf resized to n elements, reallocating only when its
// capacity is too small (work buffers are reused across steps).
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}

// gemmRows is gemm with the m rows of op(A) and C split into fixed chunks
// run on all cores.
func gemmRows[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m*n*k < 1<<16 {
		gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	chunks(m, gemmChunk, func(_, lo, hi int) {
		off := lo * lda
		if tA {
			off = lo
		}
		gemm(tA, tB, hi-lo, n, k, alpha, a[off:], lda, b, ldb, beta, c[lo*ldc:], ldc)
	})
}

// gemmCols is gemm with the n columns of op(B) and C split into fixed
// chunks run on all cores: the form for parameter gradients AᵀB, whose
// long contraction over the rows stays inside one call.
func gemmCols[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m*n*k < 1<<16 {
		gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	chunks(n, colChunk, func(_, lo, hi int) {
		off := lo
		if tB {
			off = lo * ldb
		}
		gemm(tA, tB, m, hi-lo, k, alpha, a, lda, b[off:], ldb, beta, c[lo:], ldc)
	})
}

// chunks calls fn(worker, lo, hi) for the consecutive ranges [lo, hi) of
// size chunk (the last shorter) covering [0, n), on parallel.Workers
// goroutines that take the next range as they become free (a shared
// counter), so that a core slowed by other processes does not hold the
// others back. The worker index (for scratch space) does not decide what
// a range computes: every call site writes each range's results apart
// from the others' (partial sums are kept per range or per sequence and
// merged in order), so the bytes do not depend on the scheduling.
func chunks(n, chunk int, fn func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	chunk = max(chunk, 1)
	parallel.Tasks((n+chunk-1)/chunk, func(worker, c int) {
		lo := c * chunk
		fn(worker, lo, min(lo+chunk, n))
	})
}

// forRows calls fn on fixed chunks of [0, n) on all cores.
func forRows(n int, fn func(lo, hi int)) {
	chunks(n, rowChunk, func(_, lo, hi int) { fn(lo, hi) })
}

// sigmoid is the logistic function 1/(1 + e^(−x)).
func sigmoid[T Float](x T) T {
	return T(1 / (1 + math.Exp(-float64(x))))
}

// sigmoidSlice sets dst[i] to the logistic function of x[i]: float64 by
// math.Exp, float32 by vmath.Sigmoid32 (1/(1 + exp32(−x)), within 2
// float32 ulps, eight at a time with AVX2 and the same bits on every CPU).
func sigmoidSlice[T Float](dst, x []T) {
	if len(x) == 0 {
		return
	}
	var z T
	if unsafe.Sizeof(z) == 4 {
		vmath.Sigmoid32(unsafe.Slice((*float32)(unsafe.Pointer(&dst[0])), len(dst)),
			unsafe.Slice((*float32)(unsafe.Pointer(&x[0])), len(x)))
		return
	}
	for i, v := range x {
		dst[i] = sigmoid(v)
	}
}

// linear is an affine map y = xW + b on rows (W in×out, b out entries or
// nil), with its backward pass.
type linear[T Float] struct {
	w, b    *Param[T]
	in, out int
	x       []T // the input of the last Forward
	rows    int
	y, dx   []T
	gs      gradScratch[T]
}

// newLinear returns an affine map in→out with zeroed weight wName and
// bias bName (empty: none) under scope.
func newLinear[T Float](scope, wName, bName string, in, out int, trainable bool) *linear[T] {
	l := &linear[T]{w: newParam[T](scope, wName, trainable, in, out), in: in, out: out}
	if bName != "" {
		l.b = newParam[T](scope, bName, trainable, out)
	}
	return l
}

// params lists the weight and, if any, the bias.
func (l *linear[T]) params() []*Param[T] {
	if l.b == nil {
		return []*Param[T]{l.w}
	}
	return []*Param[T]{l.w, l.b}
}

// forward returns xW + b for rows rows of x.
func (l *linear[T]) forward(x []T, rows int) []T {
	l.x, l.rows = x, rows
	l.y = grow(l.y, rows*l.out)
	var beta T
	if l.b != nil {
		forRows(rows, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				copy(l.y[r*l.out:(r+1)*l.out], l.b.Value)
			}
		})
		beta = 1
	}
	gemmRows(false, false, rows, l.out, l.in, 1, x, l.in, l.w.Value, l.out, beta, l.y, l.out)
	return l.y
}

// backward accumulates ∂W = xᵀ·dy and ∂b = Σ dy and returns dx = dy·Wᵀ.
// The rows are taken gemmChunk at a time, each chunk's ∂W and ∂b partial
// summed in chunk order (affineBackward), with ∂x of the same rows in the
// same task. Alone, this split and the column split of the full
// contraction (gemmCols) run at about the same rate
// (BenchmarkLinearBackward); in the FD-TNN step the row split was faster
// in five of six alternated runs (min 0.565 against 0.641 s/step).
func (l *linear[T]) backward(dy []T) []T {
	l.dx = grow(l.dx, l.rows*l.in)
	affineBackward(&l.gs, gemmChunk, l.dx, false, dy, l.x, l.w, l.b, l.rows, l.in, l.out)
	return l.dx
}

// rmsEps is nn.RMSNorm's ε.
const rmsEps = 1e-6

// rmsNorm is nn.RMSNorm, y = x/√(mean(x²) + ε) on rows, with its backward
// pass.
type rmsNorm[T Float] struct {
	x        []T
	r        []T // 1/√(mean(x²) + ε) per row
	y, dx    []T
	rows, cs int
}

// forward normalises the rows of x (rows×cols), keeping x and the
// inverse norms for backward.
func (n *rmsNorm[T]) forward(x []T, rows, cols int) []T {
	n.x, n.rows, n.cs = x, rows, cols
	n.r = grow(n.r, rows)
	n.y = grow(n.y, rows*cols)
	forRows(rows, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := x[i*cols : (i+1)*cols]
			s := dot(row, row)
			r := T(1 / math.Sqrt(float64(s/T(cols))+rmsEps))
			n.r[i] = r
			scaleTo(n.y[i*cols:(i+1)*cols], row, r)
		}
	})
	return n.y
}

// backward returns dx = r·dy − r³·x·(dy·x)/D.
func (n *rmsNorm[T]) backward(dy []T) []T {
	cols := n.cs
	n.dx = grow(n.dx, n.rows*cols)
	forRows(n.rows, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := n.x[i*cols : (i+1)*cols]
			g := dy[i*cols : (i+1)*cols]
			s := dot(x, g)
			r := n.r[i]
			c := r * r * r * s / T(cols)
			scaleSubTo(n.dx[i*cols:(i+1)*cols], g, r, x, c)
		}
	})
	return n.dx
}

// dot returns Σ a[j]·b[j] over the length of a (b at least as long),
// summed in eight interleaved partial sums (element j into sum j mod 8,
// then the sums added pairwise in a fixed order): eight independent
// chains of additions instead of one, and the same bits on every run.
//
// float32 runs vmath.Dot32 (the eight sums in the lanes of an AVX2
// register), with the same bits.
func dot[T Float](a, b []T) T {
	if x, ok := any(a).([]float32); ok {
		return T(vmath.Dot32(x, any(b).([]float32)))
	}
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 T
	j := 0
	for ; j+8 <= len(a); j += 8 {
		x, y := a[j:j+8:j+8], b[j:j+8:j+8]
		s0 += T(x[0] * y[0])
		s1 += T(x[1] * y[1])
		s2 += T(x[2] * y[2])
		s3 += T(x[3] * y[3])
		s4 += T(x[4] * y[4])
		s5 += T(x[5] * y[5])
		s6 += T(x[6] * y[6])
		s7 += T(x[7] * y[7])
	}
	for k := j; k < len(a); k++ {
		p := T(a[k] * b[k])
		switch k - j {
		case 0:
			s0 += p
		case 1:
			s1 += p
		case 2:
			s2 += p
		case 3:
			s3 += p
		case 4:
			s4 += p
		case 5:
			s5 += p
		default:
			s6 += p
		}
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// sum returns Σ x[j] in the eight interleaved partial sums of dot (the
// same order, so the same bits on every run).
func sum[T Float](x []T) T {
	if v, ok := any(x).([]float32); ok {
		return T(vmath.Sum32(v))
	}
	var s0, s1, s2, s3, s4, s5, s6, s7 T
	j := 0
	for ; j+8 <= len(x); j += 8 {
		v := x[j : j+8 : j+8]
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
		s4 += v[4]
		s5 += v[5]
		s6 += v[6]
		s7 += v[7]
	}
	for k, v := range x[j:] {
		switch k {
		case 0:
			s0 += v
		case 1:
			s1 += v
		case 2:
			s2 += v
		case 3:
			s3 += v
		case 4:
			s4 += v
		case 5:
			s5 += v
		default:
			s6 += v
		}
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// softmaxRow replaces the entries of a non-empty row by their softmax,
// exp(x − max)/Σ exp(x − max): the maximum in four independent chains
// (exact, so in any order), the exponentials by expSlice, the sum by sum.
func softmaxRow[T Float](row []T) {
	m0, m1, m2, m3 := row[0], row[0], row[0], row[0]
	j := 0
	for ; j+4 <= len(row); j += 4 {
		v := row[j : j+4 : j+4]
		if v[0] > m0 {
			m0 = v[0]
		}
		if v[1] > m1 {
			m1 = v[1]
		}
		if v[2] > m2 {
			m2 = v[2]
		}
		if v[3] > m3 {
			m3 = v[3]
		}
	}
	for _, v := range row[j:] {
		if v > m0 {
			m0 = v
		}
	}
	addConst(row, row, -max(m0, m1, m2, m3)) // x + (−m) is x − m, bit for bit
	expSlice(row)
	scaleTo(row, row, 1/sum(row))
}

// activation is an element-wise non-linearity with its derivative.
type activation[T Float] struct {
	f  func(x T) T
	df func(x T) T
}

// siluMulRow sets out = (x·σ(x))·c and sig = σ(x) element-wise, the SiLU
// gate times its partner (GLU), as siluRow followed by mulTo(out, out, c).
func siluMulRow[T Float](x, c, out, sig []T) {
	if o, ok := any(out).([]float32); ok { // one pass, the same bits
		vmath.SiLUMul32(o, any(sig).([]float32), any(x).([]float32), any(c).([]float32))
		return
	}
	siluRow(x, out, sig)
	mulTo(out, out, c)
}

// siluRow sets out = x·σ(x) and sig = σ(x) element-wise on one goroutine
// (the caller splits the rows).
func siluRow[T Float](x, out, sig []T) {
	if o, ok := any(out).([]float32); ok { // one pass: the bits of the two below
		vmath.SiLU32(o, any(sig).([]float32), any(x).([]float32))
		return
	}
	sigmoidSlice(sig, x)
	mulTo(out, x, sig)
}

// siluGrad is the derivative of SiLU at x with σ(x) = s.
// The product x·(1 − s) is rounded before the sum (no fused multiply-add),
// as in vmath.SiLUGradMulTo32.
func siluGrad[T Float](x, s T) T { return s * (1 + T(x*(1-s))) }

// siluAct is SiLU, x·σ(x), with its derivative.
func siluAct[T Float]() activation[T] {
	return activation[T]{
		f: func(x T) T { return x * sigmoid(x) },
		df: func(x T) T {
			s := sigmoid(x)
			return s * (1 + x*(1-s))
		},
	}
}

// activationByName returns the activation of nn.ActivationByName: relu,
// gelu (exact, by erf) or silu.
func activationByName[T Float](name string) (activation[T], bool) {
	switch name {
	case "relu":
		return activation[T]{
			f: func(x T) T { return max(x, 0) },
			df: func(x T) T {
				if x > 0 {
					return 1
				}
				return 0
			},
		}, true
	case "gelu":
		return activation[T]{
			f: func(x T) T { return T(geluF(float64(x))) },
			df: func(x T) T {
				v := float64(x)
				return T(0.5*(1+math.Erf(v/math.Sqrt2)) + v*math.Exp(-v*v/2)/math.Sqrt(2*math.Pi))
			},
		}, true
	case "silu", "swish":
		return siluAct[T](), true
	}
	return activation[T]{}, false
}

// geluF is the exact GELU, x·Φ(x) = x·(1 + erf(x/√2))/2.
func geluF(x float64) float64 { return x * (math.Erf(x/math.Sqrt2) + 1) * 0.5 }

// pairLinear is two affine maps of the same input, x·[W₁ W₂] + [b₁ b₂],
// computed as one map of twice the width: one product of N = out₁ + out₂
// columns forward, one of K = out₁ + out₂ for ∂x (no sum of two input
// gradients) and one per row chunk for ∂W. The two maps keep their own
// parameters (names, checkpoints); before forward, join copies them side
// by side into the fused weight (in×(out₁+out₂) entries, negligible
// beside the product), and after backward, split adds the fused gradient
// back to each. The units that use it (GTU, GLU) run the fused map's
// products themselves, chunk by chunk; its output row r holds the first
// map's out₁ entries, then the second's.
type pairLinear[T Float] struct {
	p, q *linear[T] // the maps' parameters; their buffers are unused
	cat  linear[T]  // the fused map over rebuilt parameters
}

// newPairLinear returns the pair of maps in→outP (weight pw, bias pb) and
// in→outQ (qw, qb) under scope; both have biases.
func newPairLinear[T Float](scope, pw, pb, qw, qb string, in, outP, outQ int, trainable bool) *pairLinear[T] {
	l := &pairLinear[T]{p: newLinear[T](scope, pw, pb, in, outP, trainable), q: newLinear[T](scope, qw, qb, in, outQ, trainable)}
	out := outP + outQ
	l.cat = linear[T]{in: in, out: out,
		w: &Param[T]{Scope: scope, Name: pw + "+" + qw, Dims: []int{in, out}, Value: make([]T, in*out), Grad: make([]T, in*out), Trainable: trainable},
		b: &Param[T]{Scope: scope, Name: pb + "+" + qb, Dims: []int{out}, Value: make([]T, out), Grad: make([]T, out), Trainable: trainable}}
	return l
}

// params lists the first map's weight and bias, then the second's.
func (l *pairLinear[T]) params() []*Param[T] { return append(l.p.params(), l.q.params()...) }

// join copies both maps' parameters side by side into the fused map's.
func (l *pairLinear[T]) join() {
	a, b, out := l.p.out, l.q.out, l.cat.out
	w := l.cat.w.Value
	for r := 0; r < l.cat.in; r++ {
		copy(w[r*out:r*out+a], l.p.w.Value[r*a:(r+1)*a])
		copy(w[r*out+a:(r+1)*out], l.q.w.Value[r*b:(r+1)*b])
	}
	copy(l.cat.b.Value[:a], l.p.b.Value)
	copy(l.cat.b.Value[a:], l.q.b.Value)
}

// split adds the fused map's parameter gradients to both maps' Grad.
func (l *pairLinear[T]) split() {
	a, b, out := l.p.out, l.q.out, l.cat.out
	g := l.cat.w.Grad
	for r := 0; r < l.cat.in; r++ {
		for j, v := range g[r*out : r*out+a] {
			l.p.w.Grad[r*a+j] += v
		}
		for j, v := range g[r*out+a : (r+1)*out] {
			l.q.w.Grad[r*b+j] += v
		}
	}
	for j, v := range l.cat.b.Grad[:a] {
		l.p.b.Grad[j] += v
	}
	for j, v := range l.cat.b.Grad[a:] {
		l.q.b.Grad[j] += v
	}
}
