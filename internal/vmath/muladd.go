package vmath

// MulAdd32 adds the element-wise product of a and b to dst (dst[i] +=
// a[i]·b[i] for every i of dst; a and b must be at least as long, it
// panics otherwise), eight at a time with AVX2 where the CPU has it. The
// product is rounded to float32 before the addition (no fused
// multiply-add) either way, so the same bits on every CPU.
func MulAdd32(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	i := mulAdd32Kernel(dst, a, b)
	for ; i < len(dst); i++ {
		dst[i] += float32(a[i] * b[i])
	}
}
