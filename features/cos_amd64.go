package features

import (
	"math"

	"github.com/kernelkit/kernelkit/internal/vmath"
)

// haveCosKernel reports whether the CPU and the operating system support
// the AVX2 kernels of cos_amd64.s.
var haveCosKernel = vmath.HasAVX2()

// cosConsts holds the constants of the kernels, each broadcast to the four
// lanes of a 256-bit register, in the order cos_amd64.s reads them.
var cosConsts = func() (t [18][4]uint64) {
	for i, v := range []float64{invPi, roundK, piA, piB, piC, cosLimit, 0, 1,
		cosC1, cosC2, cosC3, cosC4, cosC5, cosC6, cosC7, cosC8, cosC9, cosC10} {
		b := math.Float64bits(v)
		if i == 6 {
			b = 1<<63 - 1 // the mask that clears the sign
		}
		t[i] = [4]uint64{b, b, b, b}
	}
	return t
}()

// cosKernel computes out[j] = c·cos(a[j] + b[j]) as cos64 does, four at
// a time, for j from 0 while four values remain (len(b) and len(out) at
// least len(a)); it stops early at a block of four with an argument
// beyond cosLimit in magnitude. It returns the number of values done, a
// multiple of four.
func cosKernel(out, a, b []float64, c float64) int {
	return cosAVX2(&out[0], &a[0], &b[0], len(a)/4, c, &cosConsts)
}

// cos32Kernel is cosKernel for float32 output, as cos32 computes it.
func cos32Kernel(out []float32, a, b []float64, c float64) int {
	return cos32AVX2(&out[0], &a[0], &b[0], len(a)/4, c, &cosConsts)
}

//go:noescape
func cosAVX2(out, a, b *float64, blocks int, c float64, k *[18][4]uint64) int

//go:noescape
func cos32AVX2(out *float32, a, b *float64, blocks int, c float64, k *[18][4]uint64) int
