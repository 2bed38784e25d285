package native

import "github.com/kernelkit/kernelkit/internal/vmath"

// Element-wise passes over rows. float32 runs vmath's kernels (AVX2 where
// the CPU has it); float64 runs the same operations in Go. Each product is
// rounded before it is added or subtracted (the conversions forbid fused
// multiply-adds), so either form gives the same bits on every CPU. The
// inputs must be at least as long as dst and may be dst itself.

// mulTo sets dst[i] = a[i]·b[i].
func mulTo[T Float](dst, a, b []T) {
	if d, ok := any(dst).([]float32); ok {
		vmath.MulTo32(d, any(a).([]float32), any(b).([]float32))
		return
	}
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

// sumTo sets dst[i] = a[i] + b[i].
func sumTo[T Float](dst, a, b []T) {
	if d, ok := any(dst).([]float32); ok {
		vmath.AddTo32(d, any(a).([]float32), any(b).([]float32))
		return
	}
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

// scaleTo sets dst[i] = a[i]·s.
func scaleTo[T Float](dst, a []T, s T) {
	if d, ok := any(dst).([]float32); ok {
		vmath.ScaleTo32(d, any(a).([]float32), float32(s))
		return
	}
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * s
	}
}

// scaleSubTo sets dst[i] = r·g[i] − c·x[i].
func scaleSubTo[T Float](dst, g []T, r T, x []T, c T) {
	if d, ok := any(dst).([]float32); ok {
		vmath.ScaleSubTo32(d, any(g).([]float32), float32(r), any(x).([]float32), float32(c))
		return
	}
	g, x = g[:len(dst)], x[:len(dst)]
	for i := range dst {
		dst[i] = T(r*g[i]) - T(c*x[i])
	}
}

// siluGradMulTo sets dst[i] = dy[i]·siluGrad(x[i], s[i]), the gradient dy
// through SiLU at x given s = σ(x).
func siluGradMulTo[T Float](dst, dy, x, s []T) {
	if d, ok := any(dst).([]float32); ok {
		vmath.SiLUGradMulTo32(d, any(dy).([]float32), any(x).([]float32), any(s).([]float32))
		return
	}
	dy, x, s = dy[:len(dst)], x[:len(dst)], s[:len(dst)]
	for i := range dst {
		dst[i] = dy[i] * siluGrad(x[i], s[i])
	}
}

// addConst sets dst[i] = a[i] + c.
func addConst[T Float](dst, a []T, c T) {
	if d, ok := any(dst).([]float32); ok {
		vmath.AddConst32(d, any(a).([]float32), float32(c))
		return
	}
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + c
	}
}

// subMulTo sets dst[i] = (a[i] − c)·p[i].
func subMulTo[T Float](dst, a []T, c T, p []T) {
	if d, ok := any(dst).([]float32); ok {
		vmath.SubMulTo32(d, any(a).([]float32), float32(c), any(p).([]float32))
		return
	}
	a, p = a[:len(dst)], p[:len(dst)]
	for i := range dst {
		dst[i] = (a[i] - c) * p[i]
	}
}
