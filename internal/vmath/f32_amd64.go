package vmath

import "math"

// f32Consts holds the float32 kernels' constants (f32_amd64.s), each
// broadcast to eight lanes, in the order the C_ offsets name them.
var f32Consts = func() (t [24][8]uint32) {
	vals := []float32{exp32Lo, exp32Hi, exp32Log2e, 0.5, exp32Ln2Hi, exp32Ln2Lo,
		exp32C5, exp32C4, exp32C3, exp32C2, exp32C1, exp32C0, 1, 0, 0,
		geluP, geluInvSqrt2, -0.5, geluA1, geluA2, geluA3, geluA4, geluA5, geluInvSqrt2Pi}
	for i, v := range vals {
		b := math.Float32bits(v)
		t[i] = [8]uint32{b, b, b, b, b, b, b, b}
	}
	s := uint32(1) << 31
	t[13] = [8]uint32{s, s, s, s, s, s, s, s} // the sign bit
	a := s - 1
	t[14] = [8]uint32{a, a, a, a, a, a, a, a} // all but the sign bit
	return t
}()

// sigmoid32Kernel computes dst[j] = 1/(1 + Exp32Normal(−src[j])) eight at
// a time from j = 0 while eight values remain, stopping early at a block
// of eight with −src[j] out of (−86.5, 88) (or NaN); it returns the number
// done, a multiple of eight.
func sigmoid32Kernel(dst, src []float32) int {
	if len(src) < 8 {
		return 0
	}
	return sigmoid32AVX2(&dst[0], &src[0], len(src)/8, &f32Consts)
}

// silu32Kernel is sigmoid32Kernel for sig[j] = 1/(1 + Exp32Normal(−x[j]))
// and out[j] = x[j]·sig[j], times c[j] (the first product rounded) unless
// c is nil.
func silu32Kernel(out, sig, x, c []float32) int {
	if len(x) < 8 {
		return 0
	}
	var cp *float32
	if c != nil {
		cp = &c[0]
	}
	return silu32AVX2(&out[0], &sig[0], &x[0], cp, len(x)/8, &f32Consts)
}

// exp32Kernel is sigmoid32Kernel for dst[j] = Exp32Normal(src[j]), src[j]
// in (−86.5, 88).
func exp32Kernel(dst, src []float32) int {
	if len(src) < 8 {
		return 0
	}
	return exp32AVX2(&dst[0], &src[0], len(src)/8, &f32Consts)
}

// gelu32Kernel is sigmoid32Kernel for (y[j], dy[j]) = GELU32(x[j]), with
// −x[j]²/2 > −86.5.
func gelu32Kernel(y, dy, x []float32) int {
	if len(x) < 8 {
		return 0
	}
	return gelu32AVX2(&y[0], &dy[0], &x[0], len(x)/8, &f32Consts)
}

//go:noescape
func sigmoid32AVX2(dst, src *float32, blocks int, k *[24][8]uint32) int

//go:noescape
func silu32AVX2(out, sig, x, c *float32, blocks int, k *[24][8]uint32) int

//go:noescape
func exp32AVX2(dst, src *float32, blocks int, k *[24][8]uint32) int

//go:noescape
func gelu32AVX2(y, dy, x *float32, blocks int, k *[24][8]uint32) int
