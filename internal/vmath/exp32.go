package vmath

import "math"

// Constants of Exp32 (see the package documentation): Cephes' expf.
const (
	exp32Log2e float32 = 1.44269504088896341
	exp32Ln2Hi float32 = 0.693359375
	exp32Ln2Lo float32 = -2.12194440e-4
	exp32Lo    float32 = -86.5
	exp32Hi    float32 = 88
	exp32C5    float32 = 1.9875691500e-4
	exp32C4    float32 = 1.3981999507e-3
	exp32C3    float32 = 8.3334519073e-3
	exp32C2    float32 = 4.1665795894e-2
	exp32C1    float32 = 1.6666665459e-1
	exp32C0    float32 = 5.0000001201e-1
)

// Exp32 returns exp(x) in float32 arithmetic: for x in (−86.5, 88) by
// Exp32Normal, elsewhere (overflow, subnormal results, NaN) by math.Exp.
func Exp32(x float32) float32 {
	if !(x > exp32Lo && x < exp32Hi) {
		return float32(math.Exp(float64(x)))
	}
	return Exp32Normal(x)
}

// Exp32Normal is Exp32 for x in (−86.5, 88): exp(x) = 2ⁿ·exp(r), n =
// round(x/ln 2) (half away from zero), r = x − n·ln 2 in two parts, and
// exp(r) = 1 + r + r²·P(r) with Cephes' degree-5 P; relative error below
// 2 ulp of float32. Every operation is rounded to float32 as written (the
// conversions keep the compiler from fusing a product and a sum), the
// operations Sigmoid32's AVX2 kernel performs.
func Exp32Normal(x float32) float32 {
	fx := float32(x * exp32Log2e)
	var n int32
	if fx >= 0 {
		n = int32(fx + 0.5)
	} else {
		n = int32(fx - 0.5)
	}
	fn := float32(n)
	r := x - float32(fn*exp32Ln2Hi)
	r -= float32(fn * exp32Ln2Lo)
	p := float32(exp32C5*r) + exp32C4
	p = float32(p*r) + exp32C3
	p = float32(p*r) + exp32C2
	p = float32(p*r) + exp32C1
	p = float32(p*r) + exp32C0
	y := float32(float32(p*r)*r) + r
	y++
	return y * math.Float32frombits(uint32(n+127)<<23)
}

// Sigmoid32 sets dst[i] = 1/(1 + Exp32(−src[i])) for every i of src,
// eight at a time with AVX2 where the CPU has it (the same operations in
// the same order as the scalar form, so the same bits on every CPU); dst
// must be at least as long as src (it panics otherwise) and may be src.
func Sigmoid32(dst, src []float32) {
	dst = dst[:len(src)]
	i := 0
	for i < len(src) {
		if haveAVX2 {
			i += sigmoid32Kernel(dst[i:], src[i:])
			if i >= len(src) {
				return
			}
		}
		end := min(i+8, len(src))
		if !haveAVX2 {
			end = len(src)
		}
		for ; i < end; i++ {
			dst[i] = 1 / (1 + Exp32(-src[i]))
		}
	}
}
