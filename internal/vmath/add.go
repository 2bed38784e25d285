package vmath

// Add32 adds src to dst element-wise (dst[i] += src[i] for every i of
// dst; src must be at least as long, it panics otherwise), 32 at a time
// with AVX2 where the CPU has it: one float32 addition per element either
// way, so the same bits on every CPU.
func Add32(dst, src []float32) {
	src = src[:len(dst)]
	i := add32Kernel(dst, src)
	for ; i < len(dst); i++ {
		dst[i] += src[i]
	}
}
