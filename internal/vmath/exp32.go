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
	blocks8(len(src), func(i int) int { return sigmoid32Kernel(dst[i:], src[i:]) },
		func(i int) { dst[i] = 1 / (1 + Exp32(-src[i])) })
}

// SiLU32 sets sig[i] = 1/(1 + Exp32(−x[i])) (Sigmoid32's value) and
// out[i] = x[i]·sig[i] for every i of x in one pass, eight at a time with
// AVX2 where the CPU has it (the same bits as Sigmoid32 followed by
// MulTo32, on every CPU); out and sig must be at least as long as x (it
// panics otherwise); out may be x, sig may not alias either.
func SiLU32(out, sig, x []float32) { silu32(out, sig, x, nil) }

// SiLUMul32 is SiLU32 with out[i] = (x[i]·sig[i])·c[i], the product
// rounded before the second (the bits of SiLU32 followed by MulTo32 with
// c); c must be at least as long as x; out may be x or c.
func SiLUMul32(out, sig, x, c []float32) { silu32(out, sig, x, c[:len(x)]) }

// silu32 is SiLU32, times c unless c is nil.
func silu32(out, sig, x, c []float32) {
	out, sig = out[:len(x)], sig[:len(x)]
	blocks8(len(x), func(i int) int {
		var ci []float32
		if c != nil {
			ci = c[i:]
		}
		return silu32Kernel(out[i:], sig[i:], x[i:], ci)
	}, func(i int) {
		v := x[i]
		s := 1 / (1 + Exp32(-v))
		y := v * s
		if c != nil {
			y = float32(y) * c[i] // before the store: out may be c
		}
		sig[i] = s
		out[i] = y
	})
}

// blocks8 runs an AVX2 kernel over [0, n) and the scalar form on what it
// leaves: kernel(i) does elements from i on, eight at a time, and returns
// how many (a multiple of eight; it stops before a block it cannot take,
// an argument out of its range); scalar(i) does element i. The scalar
// form takes that block of eight, or the tail, and the kernel resumes
// after it. Without AVX2 the scalar form does everything.
func blocks8(n int, kernel func(i int) int, scalar func(i int)) {
	i := 0
	for i < n {
		if haveAVX2 {
			i += kernel(i)
			if i >= n {
				return
			}
		}
		end := min(i+8, n)
		if !haveAVX2 {
			end = n
		}
		for ; i < end; i++ {
			scalar(i)
		}
	}
}

// Exp32Slice sets dst[i] = Exp32(src[i]) for every i of src, eight at a
// time with AVX2 where the CPU has it (the same bits as Exp32); dst must be
// at least as long as src (it panics otherwise) and may be src.
func Exp32Slice(dst, src []float32) {
	dst = dst[:len(src)]
	blocks8(len(src), func(i int) int { return exp32Kernel(dst[i:], src[i:]) },
		func(i int) { dst[i] = Exp32(src[i]) })
}

// Constants of GELU32: Abramowitz and Stegun 7.1.26 for erf.
const (
	geluP          float32 = 0.3275911
	geluA1         float32 = 0.254829592
	geluA2         float32 = -0.284496736
	geluA3         float32 = 1.421413741
	geluA4         float32 = -1.453152027
	geluA5         float32 = 1.061405429
	geluInvSqrt2   float32 = 1 / math.Sqrt2
	geluInvSqrt2Pi float32 = 1 / 2.5066282746310002
)

// GELU32 returns GELU(x) = x·Φ(x), Φ the normal CDF, and its derivative
// Φ(x) + x·φ(x) in float32 arithmetic: 1 − Φ(|x|) = ½·erfc(|x|/√2) by
// Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7 of erfc) with
// exp by Exp32; every operation rounded to float32 as written, the
// operations of GELU32Slice's AVX2 kernel.
func GELU32(x float32) (y, dy float32) {
	ax := math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
	u := float32(geluP * ax)
	u = float32(u * geluInvSqrt2)
	t := 1 / (1 + u)
	e := Exp32(float32(-0.5*x) * x)
	q := float32(geluA5*t) + geluA4
	q = float32(q*t) + geluA3
	q = float32(q*t) + geluA2
	q = float32(q*t) + geluA1
	tail := float32(float32(float32(0.5*t)*q) * e)
	cdf := 1 - tail
	if x < 0 {
		cdf = tail
	}
	return x * cdf, cdf + float32(float32(x*e)*geluInvSqrt2Pi)
}

// GELU32Slice sets y[i], dy[i] = GELU32(x[i]) for every i of x, eight at
// a time with AVX2 where the CPU has it (the same bits as GELU32); y and
// dy must be at least as long as x (it panics otherwise).
func GELU32Slice(y, dy, x []float32) {
	y, dy = y[:len(x)], dy[:len(x)]
	blocks8(len(x), func(i int) int { return gelu32Kernel(y[i:], dy[i:], x[i:]) },
		func(i int) { y[i], dy[i] = GELU32(x[i]) })
}
