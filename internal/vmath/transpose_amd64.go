package vmath

//go:noescape
func transpose8x8AVX2(dst *float32, ldd int, src *float32, lds int, s float32)

// transpose8x8 transposes and scales one 8×8 block with AVX2; it reports
// false (and does nothing) without AVX2.
func transpose8x8(dst []float32, ldd int, src []float32, lds int, s float32) bool {
	if !haveAVX2 {
		return false
	}
	_ = dst[7*ldd+7]
	_ = src[7*lds+7]
	transpose8x8AVX2(&dst[0], ldd, &src[0], lds, s)
	return true
}

//go:noescape
func add32AVX2(dst, src *float32, blocks int)

// add32Kernel adds src to dst 32 elements at a time with AVX2 and returns
// how many it did (a multiple of 32; 0 without AVX2).
func add32Kernel(dst, src []float32) int {
	if !haveAVX2 || len(dst) < 32 {
		return 0
	}
	n := len(dst) / 32
	add32AVX2(&dst[0], &src[0], n)
	return 32 * n
}

//go:noescape
func mulAdd32AVX2(dst, a, b *float32, blocks int)

// mulAdd32Kernel adds a[i]·b[i] to dst[i] eight elements at a time with
// AVX2 and returns how many it did (a multiple of 8; 0 without AVX2).
func mulAdd32Kernel(dst, a, b []float32) int {
	if !haveAVX2 || len(dst) < 8 {
		return 0
	}
	n := len(dst) / 8
	mulAdd32AVX2(&dst[0], &a[0], &b[0], n)
	return 8 * n
}
