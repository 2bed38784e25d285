package vmath

import "math"

// Constants of Exp (see the package documentation).
const (
	expLog2e = 1.4426950408889634         // 1/ln 2
	expRound = 1.5 * (1 << 52)            // adding it rounds to an integer
	expLn2Hi = 6.93147180369123816490e-01 // ln 2, high part (32 bits)
	expLn2Lo = 1.90821492927058770002e-10 // ln 2 − expLn2Hi
	expLo    = -707.0
	expHi    = 709.0
)

// expC are the Taylor coefficients 1/k! of exp, k = 0…13.
var expC = [14]float64{
	1, 1, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
	1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800,
	1.0 / 479001600, 1.0 / 6227020800,
}

// Exp sets dst[i] = exp(src[i]) for every i of src; dst must be at least
// as long as src (it panics otherwise) and may be src itself.
func Exp(dst, src []float64) {
	dst = dst[:len(src)]
	i := 0
	for i < len(src) {
		if haveAVX2 {
			i += expKernel(dst[i:], src[i:])
			if i >= len(src) {
				return
			}
		}
		// A block of four the kernel left (an argument out of its range),
		// or the tail, or no kernel at all.
		end := min(i+4, len(src))
		if !haveAVX2 {
			end = len(src)
		}
		for ; i < end; i++ {
			dst[i] = exp1(src[i])
		}
	}
}

// exp1 is Exp of one value, the same operations as the AVX2 kernel.
func exp1(x float64) float64 {
	if !(x >= expLo && x <= expHi) {
		return math.Exp(x)
	}
	t := float64(x*expLog2e) + expRound
	n := t - expRound
	r := x - float64(n*expLn2Hi)
	r -= float64(n * expLn2Lo)
	p := poly(r)
	return math.Float64frombits(math.Float64bits(p) + math.Float64bits(t)<<52)
}

// poly is the Taylor polynomial of degree 13 by Estrin's scheme, in the
// order the AVX2 kernel evaluates it (the conversions keep the compiler
// from fusing a product and a sum).
func poly(r float64) float64 {
	c := &expC
	r2 := r * r
	r4 := r2 * r2
	r8 := r4 * r4
	p01 := float64(c[1]*r) + c[0]
	p23 := float64(c[3]*r) + c[2]
	p45 := float64(c[5]*r) + c[4]
	p67 := float64(c[7]*r) + c[6]
	p89 := float64(c[9]*r) + c[8]
	p1011 := float64(c[11]*r) + c[10]
	p1213 := float64(c[13]*r) + c[12]
	q0 := float64(p23*r2) + p01
	q1 := float64(p67*r2) + p45
	q2 := float64(p1011*r2) + p89
	s0 := float64(q1*r4) + q0
	s1 := float64(p1213*r4) + q2
	return float64(s1*r8) + s0
}
