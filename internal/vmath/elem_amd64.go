package vmath

//go:noescape
func mulTo32AVX2(dst, a, b *float32, blocks int)

//go:noescape
func addTo32AVX2(dst, a, b *float32, blocks int)

//go:noescape
func scaleTo32AVX2(dst, a *float32, s float32, blocks int)

//go:noescape
func scaleSubTo32AVX2(dst, u *float32, r float32, v *float32, c float32, blocks int)

//go:noescape
func siluGradMulTo32AVX2(dst, dy, x, s *float32, blocks int)

//go:noescape
func cmul32AVX2(dst, a, k *float32, conj, add bool, blocks int)

// The kernels below do the first multiple of eight elements with AVX2 and
// return how many they did (0 without AVX2).

func mulTo32Kernel(dst, a, b []float32) int {
	if !haveAVX2 || len(dst) < 8 {
		return 0
	}
	mulTo32AVX2(&dst[0], &a[0], &b[0], len(dst)/8)
	return len(dst) &^ 7
}

func addTo32Kernel(dst, a, b []float32) int {
	if !haveAVX2 || len(dst) < 8 {
		return 0
	}
	addTo32AVX2(&dst[0], &a[0], &b[0], len(dst)/8)
	return len(dst) &^ 7
}

func scaleTo32Kernel(dst, a []float32, s float32) int {
	if !haveAVX2 || len(dst) < 8 {
		return 0
	}
	scaleTo32AVX2(&dst[0], &a[0], s, len(dst)/8)
	return len(dst) &^ 7
}

func scaleSubTo32Kernel(dst, g []float32, r float32, x []float32, c float32) int {
	if !haveAVX2 || len(dst) < 8 {
		return 0
	}
	scaleSubTo32AVX2(&dst[0], &g[0], r, &x[0], c, len(dst)/8)
	return len(dst) &^ 7
}

func siluGradMulTo32Kernel(dst, dy, x, s []float32) int {
	if !haveAVX2 || len(dst) < 8 {
		return 0
	}
	siluGradMulTo32AVX2(&dst[0], &dy[0], &x[0], &s[0], len(dst)/8)
	return len(dst) &^ 7
}

func cmul32Kernel(dst, a, k []float32, conj, add bool) int {
	if !haveAVX2 || len(dst) < 8 {
		return 0
	}
	cmul32AVX2(&dst[0], &a[0], &k[0], conj, add, len(dst)/8)
	return len(dst) &^ 7
}

//go:noescape
func dot32AVX2(a, b *float32, blocks int, lanes *[8]float32)

//go:noescape
func sum32AVX2(x *float32, blocks int, lanes *[8]float32)

// dot32Kernel sets the eight partial sums of Dot32 over the first multiple
// of eight elements and returns how many it did (0 without AVX2).
func dot32Kernel(a, b []float32, s *[8]float32) int {
	if !haveAVX2 || len(a) < 8 {
		return 0
	}
	dot32AVX2(&a[0], &b[0], len(a)/8, s)
	return len(a) &^ 7
}

// sum32Kernel is dot32Kernel for Sum32.
func sum32Kernel(x []float32, s *[8]float32) int {
	if !haveAVX2 || len(x) < 8 {
		return 0
	}
	sum32AVX2(&x[0], len(x)/8, s)
	return len(x) &^ 7
}

//go:noescape
func addConst32AVX2(dst, a *float32, c float32, blocks int)

//go:noescape
func subMulTo32AVX2(dst, a *float32, c float32, p *float32, blocks int)

func addConst32Kernel(dst, a []float32, c float32) int {
	if !haveAVX2 || len(dst) < 8 {
		return 0
	}
	addConst32AVX2(&dst[0], &a[0], c, len(dst)/8)
	return len(dst) &^ 7
}

func subMulTo32Kernel(dst, a []float32, c float32, p []float32) int {
	if !haveAVX2 || len(dst) < 8 {
		return 0
	}
	subMulTo32AVX2(&dst[0], &a[0], c, &p[0], len(dst)/8)
	return len(dst) &^ 7
}
