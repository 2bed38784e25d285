package vmath

import "math"

// sigmoidConsts holds Sigmoid32's kernel constants, each broadcast to
// eight lanes, in the order sigmoid32_amd64.s reads them.
var sigmoidConsts = func() (t [14][8]uint32) {
	vals := []float32{exp32Lo, exp32Hi, exp32Log2e, 0.5, exp32Ln2Hi, exp32Ln2Lo,
		exp32C5, exp32C4, exp32C3, exp32C2, exp32C1, exp32C0, 1}
	for i, v := range vals {
		b := math.Float32bits(v)
		t[i] = [8]uint32{b, b, b, b, b, b, b, b}
	}
	s := uint32(1) << 31 // the sign bit
	t[13] = [8]uint32{s, s, s, s, s, s, s, s}
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
	return sigmoid32AVX2(&dst[0], &src[0], len(src)/8, &sigmoidConsts)
}

//go:noescape
func sigmoid32AVX2(dst, src *float32, blocks int, k *[14][8]uint32) int
