package vmath

// The element-wise float32 kernels below take n = len(dst) elements (the
// sums Dot32 and Sum32: the length of their first argument); their inputs
// must be at least as long (they panic otherwise) and may be dst itself,
// except where a kernel adds into dst. Each runs eight elements at a time with AVX2 where the CPU has
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
func CMulTo32(dst, a, k []float32, conj bool) { cmul32(dst, a, k, conj, false) }

// CMulAdd32 adds a ⊙ k, or a ⊙ conj(k), to dst, for complex vectors stored
// as (re, im) pairs: each sum of two rounded products as in CMulTo32, then
// added to dst. len(dst) must be even.
func CMulAdd32(dst, a, k []float32, conj bool) { cmul32(dst, a, k, conj, true) }

// cmul32 is CMulTo32 (add false) and CMulAdd32 (add true).
func cmul32(dst, a, k []float32, conj, add bool) {
	if len(dst)%2 != 0 {
		panic("vmath: complex product of an odd length")
	}
	a, k = a[:len(dst)], k[:len(dst)]
	i := cmul32Kernel(dst, a, k, conj, add)
	for ; i < len(dst); i += 2 {
		ar, ai, kr, ki := a[i], a[i+1], k[i], k[i+1]
		var re, im float32
		if conj {
			re, im = float32(ar*kr)+float32(ai*ki), float32(ai*kr)-float32(ar*ki)
		} else {
			re, im = float32(ar*kr)-float32(ai*ki), float32(ai*kr)+float32(ar*ki)
		}
		if add {
			re, im = dst[i]+re, dst[i+1]+im
		}
		dst[i], dst[i+1] = re, im
	}
}

// Dot32 returns Σ a[j]·b[j] over the length of a (b must be at least as
// long) in eight interleaved partial sums: element j goes into sum j mod 8
// (each product rounded before it is added), and the sums are added as
// ((s₀ + s₁) + (s₂ + s₃)) + ((s₄ + s₅) + (s₆ + s₇)). The AVX2 kernel keeps
// the eight sums in the lanes of one register, so the same bits either
// way.
func Dot32(a, b []float32) float32 {
	b = b[:len(a)]
	var s [8]float32
	j := dot32Kernel(a, b, &s)
	for ; j+8 <= len(a); j += 8 {
		for l := range s {
			s[l] += float32(a[j+l] * b[j+l])
		}
	}
	for k := j; k < len(a); k++ {
		s[k-j] += float32(a[k] * b[k])
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// Sum32 returns Σ x[j] in the eight interleaved partial sums of Dot32 (the
// same order, so the same bits with and without AVX2).
func Sum32(x []float32) float32 {
	var s [8]float32
	j := sum32Kernel(x, &s)
	for ; j+8 <= len(x); j += 8 {
		for l := range s {
			s[l] += x[j+l]
		}
	}
	for k := j; k < len(x); k++ {
		s[k-j] += x[k]
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// AddConst32 sets dst[i] = a[i] + c.
func AddConst32(dst, a []float32, c float32) {
	a = a[:len(dst)]
	i := addConst32Kernel(dst, a, c)
	for ; i < len(dst); i++ {
		dst[i] = a[i] + c
	}
}

// SubMulTo32 sets dst[i] = (a[i] − c)·p[i].
func SubMulTo32(dst, a []float32, c float32, p []float32) {
	a, p = a[:len(dst)], p[:len(dst)]
	i := subMulTo32Kernel(dst, a, c, p)
	for ; i < len(dst); i++ {
		dst[i] = (a[i] - c) * p[i]
	}
}
