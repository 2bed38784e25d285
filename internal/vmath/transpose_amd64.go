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
