package vmath

// The element-wise float32 kernels below take n = len(dst) elements; their
// inputs must be at least as long (they panic otherwise) and may be dst
// itself. Each runs eight elements at a time with AVX2 where the CPU has
// it and finishes with its scalar form. Both forms perform the same
// roundings in the same order (each product is rounded before it is added:
// no fused multiply-add, which the scalar forms forbid by their explicit
// conversions), so the results are the same bits on every CPU.

// MulTo32 sets dst[i] = a[i]·b[i].
func MulTo32(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	i := mulTo32Kernel(dst, a, b)
	for ; i < len(dst); i++ {
		dst[i] = a[i] * b[i]
	}
}

// AddTo32 sets dst[i] = a[i] + b[i].
func AddTo32(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	i := addTo32Kernel(dst, a, b)
	for ; i < len(dst); i++ {
		dst[i] = a[i] + b[i]
	}
}

// ScaleTo32 sets dst[i] = a[i]·s.
func ScaleTo32(dst, a []float32, s float32) {
	a = a[:len(dst)]
	i := scaleTo32Kernel(dst, a, s)
	for ; i < len(dst); i++ {
		dst[i] = a[i] * s
	}
}

// ScaleSubTo32 sets dst[i] = r·g[i] − c·x[i], each product rounded.
func ScaleSubTo32(dst, g []float32, r float32, x []float32, c float32) {
	g, x = g[:len(dst)], x[:len(dst)]
	i := scaleSubTo32Kernel(dst, g, r, x, c)
	for ; i < len(dst); i++ {
		dst[i] = float32(r*g[i]) - float32(c*x[i])
	}
}

// SiLUGradMulTo32 sets dst[i] = dy[i]·(s[i]·(1 + x[i]·(1 − s[i]))): the
// gradient dy through SiLU at x, given s = σ(x).
func SiLUGradMulTo32(dst, dy, x, s []float32) {
	dy, x, s = dy[:len(dst)], x[:len(dst)], s[:len(dst)]
	i := siluGradMulTo32Kernel(dst, dy, x, s)
	for ; i < len(dst); i++ {
		dst[i] = dy[i] * (s[i] * (1 + float32(x[i]*(1-s[i]))))
	}
}

// CMulTo32 sets dst = a ⊙ k, or a ⊙ conj(k) when conj is set, for complex
// vectors stored as (re, im) pairs: re = ar·kr − ai·ki and im = ai·kr +
// ar·ki (re = ar·kr + ai·ki and im = ai·kr − ar·ki for the conjugate),
// each product rounded. len(dst) must be even.
func CMulTo32(dst, a, k []float32, conj bool) {
	if len(dst)%2 != 0 {
		panic("vmath: CMulTo32 of an odd length")
	}
	a, k = a[:len(dst)], k[:len(dst)]
	i := cmulTo32Kernel(dst, a, k, conj)
	for ; i < len(dst); i += 2 {
		ar, ai, kr, ki := a[i], a[i+1], k[i], k[i+1]
		if conj {
			dst[i], dst[i+1] = float32(ar*kr)+float32(ai*ki), float32(ai*kr)-float32(ar*ki)
		} else {
			dst[i], dst[i+1] = float32(ar*kr)-float32(ai*ki), float32(ai*kr)+float32(ar*ki)
		}
	}
}

// CMulAdd32 adds a ⊙ k, or a ⊙ conj(k), to dst, for complex vectors stored
// as (re, im) pairs: each sum of two rounded products as in CMulTo32, then
// added to dst. len(dst) must be even.
func CMulAdd32(dst, a, k []float32, conj bool) {
	if len(dst)%2 != 0 {
		panic("vmath: CMulAdd32 of an odd length")
	}
	a, k = a[:len(dst)], k[:len(dst)]
	i := cmulAdd32Kernel(dst, a, k, conj)
	for ; i < len(dst); i += 2 {
		ar, ai, kr, ki := a[i], a[i+1], k[i], k[i+1]
		if conj {
			dst[i] += float32(ar*kr) + float32(ai*ki)
			dst[i+1] += float32(ai*kr) - float32(ar*ki)
		} else {
			dst[i] += float32(ar*kr) - float32(ai*ki)
			dst[i+1] += float32(ai*kr) + float32(ar*ki)
		}
	}
}
