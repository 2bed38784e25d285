package vmath

import "math"

// haveAVX2 reports whether the CPU and the operating system support the
// AVX2 kernels of exp_amd64.s.
var haveAVX2 = hasAVX2()

// expConsts holds the kernel's constants, each broadcast to four lanes, in
// the order exp_amd64.s reads them.
var expConsts = func() (t [21][4]uint64) {
	vals := []float64{expLog2e, expRound, expLn2Hi, expLn2Lo, expLo, expHi, 0}
	vals = append(vals, expC[:]...)
	for i, v := range vals {
		b := math.Float64bits(v)
		t[i] = [4]uint64{b, b, b, b}
	}
	return t
}()

// hasAVX2 reports whether the CPU has AVX2 and the operating system saves
// the YMM registers.
func hasAVX2() bool

// HasAVX2 reports whether the CPU has AVX2 and the operating system saves
// the YMM registers (the condition of the AVX2 kernels here and in package
// features).
func HasAVX2() bool { return haveAVX2 }

// expKernel computes dst[j] = exp1(src[j]) four at a time from j = 0 while
// four values remain, stopping early at a block of four with an argument
// out of [expLo, expHi] (or NaN); it returns the number done, a multiple of
// four.
func expKernel(dst, src []float64) int {
	if len(src) < 4 {
		return 0
	}
	return expAVX2(&dst[0], &src[0], len(src)/4, &expConsts)
}

//go:noescape
func expAVX2(dst, src *float64, blocks int, k *[21][4]uint64) int
