package native

import (
	"math"
	"unsafe"

	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/internal/vmath"
)

// mixRowChunk is the number of rows per work item of the row-parallel
// affine maps and activations of the attention, FFN and adapter layers.
// It is a constant, so that the parameter-gradient partial sums, one per
// chunk merged in chunk order, are the same on every machine.
const mixRowChunk = 256

// growSlice returns s resized to n elements, reallocated only when its
// capacity is too small; the contents are not cleared.
func growSlice[T Float](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// rowAffineForward sets y (n×out) to x·W + b for x (n×in), W (in×out) and
// b (out entries; nil for none), row chunks in parallel.
func rowAffineForward[T Float](y, x, w, b []T, n, in, out int) {
	parallel.Chunks(n, mixRowChunk, func(_, lo, hi int) {
		yc := y[lo*out : hi*out]
		var beta T
		if b != nil {
			for r := 0; r < hi-lo; r++ {
				copy(yc[r*out:(r+1)*out], b)
			}
			beta = 1
		}
		gemm(false, false, hi-lo, out, in, 1, x[lo*in:hi*in], in, w, out, beta, yc, out)
	})
}

// gradScratch holds per-worker partial parameter gradients of the
// row-parallel backward passes, reused across calls.
type gradScratch[T Float] struct {
	parts [][]T
}

// get returns worker scratch of n elements for workers workers.
func (g *gradScratch[T]) get(workers, worker, n int) []T {
	if len(g.parts) < workers {
		g.parts = append(g.parts, make([][]T, workers-len(g.parts))...)
	}
	g.parts[worker] = growSlice(g.parts[worker], n)
	return g.parts[worker]
}

// rowAffineBackward is the backward pass of rowAffineForward for the
// output gradient dy (n×out): it sets dx (n×in) to dy·Wᵀ, or adds it when
// accumulate is set (dx nil: not computed), and, when w is trainable, adds
// xᵀ·dy to w.Grad and the column sums of dy to b.Grad (b nil: no bias).
// w and b share their trainability. The parameter gradients are summed
// over fixed row chunks, each chunk's partial added in chunk order
// (parallel.Ordered), so the result does not depend on scheduling or on
// the number of cores.
func rowAffineBackward[T Float](gs *gradScratch[T], dx []T, accumulate bool, dy, x []T, w, b *Param[T], n, in, out int) {
	affineBackward(gs, mixRowChunk, dx, accumulate, dy, x, w, b, n, in, out)
}

// affineBackward is rowAffineBackward with rows taken chunk at a time:
// the chunk size decides the partial sums, so each call site passes a
// constant.
func affineBackward[T Float](gs *gradScratch[T], chunk int, dx []T, accumulate bool, dy, x []T, w, b *Param[T], n, in, out int) {
	if !w.Trainable && dx == nil {
		return
	}
	var beta T
	if accumulate {
		beta = 1
	}
	orderedRows(gs, chunk, n, w, b, in, out, func(lo, hi int, part []T) {
		dyc := dy[lo*out : hi*out]
		if dx != nil {
			gemm(false, true, hi-lo, in, out, 1, dyc, out, w.Value, out, beta, dx[lo*in:hi*in], in)
		}
		if part != nil {
			affinePart(part, x[lo*in:hi*in], dyc, hi-lo, in, out)
		}
	})
}

// orderedRows runs work(lo, hi, part) on the chunks [lo, hi) of [0, n)
// on all cores, for the backward pass of an affine map in→out with weight
// w and bias b (nil: none) that shares w's trainability. When w is
// trainable, part is the worker's scratch of in·out + out entries, which
// work sets to the chunk's partial ∂W and ∂b (affinePart); the partials
// are added to w.Grad and b.Grad in chunk order (parallel.Ordered), so the
// sums do not depend on scheduling or on the number of cores. Otherwise
// part is nil and the chunks run in any order.
func orderedRows[T Float](gs *gradScratch[T], chunk, n int, w, b *Param[T], in, out int, work func(lo, hi int, part []T)) {
	if !w.Trainable {
		parallel.Chunks(n, chunk, func(_, lo, hi int) { work(lo, hi, nil) })
		return
	}
	workers := parallel.Workers((n + chunk - 1) / chunk)
	for k := 0; k < workers; k++ {
		gs.get(workers, k, in*out+out)
	}
	parallel.Ordered(n, chunk, func(worker, lo, hi int) {
		work(lo, hi, gs.parts[worker][:in*out+out])
	}, func(worker, _, _ int) {
		part := gs.parts[worker][:in*out+out]
		addTo(w.Grad[:in*out], part[:in*out])
		if b != nil && b.Trainable {
			addTo(b.Grad[:out], part[in*out:])
		}
	})
}

// affinePart sets part to the parameter gradients of an affine map in→out
// over m rows x (m×in) with output gradient dy (m×out): xᵀ·dy in its
// first in·out entries, the column sums of dy (added row by row) in its
// last out.
func affinePart[T Float](part, x, dy []T, m, in, out int) {
	gemm(true, false, in, out, m, 1, x, in, dy, out, 0, part, out)
	pb := part[in*out : in*out+out]
	clear(pb)
	for r := 0; r < m; r++ {
		addTo(pb, dy[r*out:(r+1)*out])
	}
}

// addTo adds src to dst element-wise (src at least as long as dst):
// float32 by vmath.Add32 (AVX2), float64 four independent additions per
// iteration; one addition per element either way.
func addTo[T Float](dst, src []T) {
	if d, ok := any(dst).([]float32); ok {
		vmath.Add32(d, any(src).([]float32))
		return
	}
	src = src[:len(dst)]
	j := 0
	for ; j+4 <= len(dst); j += 4 {
		d, s := dst[j:j+4:j+4], src[j:j+4:j+4]
		d[0] += s[0]
		d[1] += s[1]
		d[2] += s[2]
		d[3] += s[3]
	}
	for ; j < len(dst); j++ {
		dst[j] += src[j]
	}
}

// mulAddTo adds the element-wise product of a and b to dst (a and b at
// least as long): float32 by vmath.MulAdd32 (AVX2), float64 in a loop;
// the product rounded before the sum either way.
func mulAddTo[T Float](dst, a, b []T) {
	if d, ok := any(dst).([]float32); ok {
		vmath.MulAdd32(d, any(a).([]float32), any(b).([]float32))
		return
	}
	a, b = a[:len(dst)], b[:len(dst)]
	for j := range dst {
		dst[j] += T(a[j] * b[j])
	}
}

// exp32 returns eˣ in float32 arithmetic (vmath.Exp32: Cephes' expf,
// within 2 ulp of float32(math.Exp(x)); results that would be subnormal
// or overflow by math.Exp).
func exp32(x float32) float32 { return vmath.Exp32(x) }

// expSlice replaces every element of x by its exponential (float32 by
// vmath.Exp32Slice: exp32, eight at a time with AVX2; float64 by math.Exp).
func expSlice[T Float](x []T) {
	if len(x) == 0 {
		return
	}
	var z T
	if unsafe.Sizeof(z) == 4 {
		f := unsafe.Slice((*float32)(unsafe.Pointer(&x[0])), len(x))
		vmath.Exp32Slice(f, f)
		return
	}
	for i, v := range x {
		x[i] = T(math.Exp(float64(v)))
	}
}

// geluExact returns GELU(x) = x·Φ(x) with the normal CDF Φ, the exact
// (erf) form of GoMLX's activations.Gelu, and its derivative Φ(x) +
// x·φ(x): by math.Erf in float64; in float32 by gelu32.
func geluExact[T Float](x T) (y, dy T) {
	var z T
	if unsafe.Sizeof(z) == 4 {
		g, d := gelu32(float32(x))
		return T(g), T(d)
	}
	xf := float64(x)
	cdf := 0.5 * (1 + math.Erf(xf/math.Sqrt2))
	pdf := math.Exp(-0.5*xf*xf) / math.Sqrt(2*math.Pi)
	return T(xf * cdf), T(cdf + xf*pdf)
}

// gelu32 is geluExact in float32 arithmetic (vmath.GELU32: erf by
// Abramowitz and Stegun 7.1.26, exp by exp32).
func gelu32(x float32) (y, dy float32) { return vmath.GELU32(x) }

// rowGELUForward sets y = GELU(h) and dg = GELU'(h) elementwise (n rows of
// width w), row chunks in parallel.
func rowGELUForward[T Float](y, dg, h []T, n, w int) {
	var z T
	f32 := unsafe.Sizeof(z) == 4
	parallel.Chunks(n, mixRowChunk, func(_, lo, hi int) {
		if f32 && hi > lo {
			m := (hi - lo) * w
			vmath.GELU32Slice(unsafe.Slice((*float32)(unsafe.Pointer(&y[lo*w])), m),
				unsafe.Slice((*float32)(unsafe.Pointer(&dg[lo*w])), m),
				unsafe.Slice((*float32)(unsafe.Pointer(&h[lo*w])), m))
			return
		}
		for i := lo * w; i < hi*w; i++ {
			y[i], dg[i] = geluExact(h[i])
		}
	})
}

// rowMul sets dst = a ⊙ b elementwise (n rows of width w).
func rowMul[T Float](dst, a, b []T, n, w int) {
	parallel.Chunks(n, mixRowChunk, func(_, lo, hi int) {
		mulTo(dst[lo*w:hi*w], a[lo*w:hi*w], b[lo*w:hi*w])
	})
}
