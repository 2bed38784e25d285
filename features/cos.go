package features

import "math"

// The element-wise pass of the cos form (rbf/cos, the form of Rahimi and
// Recht's random Fourier features, Eq. 2 of the analog paper), the
// hottest loop of a fit after the statistics: out[j] = c·cos(a[j] + b[j])
// for a row of projections a and phases b.
//
// Argument reduction: x = kπ + r with |r| ≤ π/2 (to rounding), k =
// round(x/π) read off the low bit of x/π + 1.5·2⁵², and π split into three
// parts whose products with |k| < 2¹⁵ (|x| < 10⁵) are exact in the first
// two; then cos x = (−1)ᵏ cos r, with cos r from its Taylor polynomial in
// z = r², evaluated by Estrin's scheme: one polynomial and no quadrant
// selection. Arguments beyond 10⁵ in magnitude go to math.Cos.
//
// Every product is rounded before it is added (the float64 conversions
// forbid the fused multiply-adds Go may otherwise emit on some
// architectures), in the order that the AVX2 kernel of cos_amd64.s
// follows lane by lane, so the pure-Go loop and the kernel give the same
// bits and a model's features do not depend on the CPU it runs on.
const (
	invPi    = 0.318309886183790671537767526745028724
	piA      = 3.14159265346825122834     // first 33 bits of π
	piB      = 1.21542010126079319532e-10 // next 33 bits
	piC      = 4.04453249759190126308e-21 // π − piA − piB
	roundK   = 0x1.8p52
	cosLimit = 1e5
)

// Taylor coefficients (−1)ⁱ/(2i)! of cos r in z = r².
const (
	cosC1  = -1.0 / 2
	cosC2  = 1.0 / 24
	cosC3  = -1.0 / 720
	cosC4  = 1.0 / 40320
	cosC5  = -1.0 / 3628800
	cosC6  = 1.0 / 479001600
	cosC7  = -1.0 / 87178291200
	cosC8  = 1.0 / 20922789888000
	cosC9  = -1.0 / 6402373705728000
	cosC10 = 1.0 / 2432902008176640000
)

// cosReduce returns t = x/π + 1.5·2⁵² (whose lowest bit is the parity of
// k) and r = x − kπ.
func cosReduce(x float64) (t, r float64) {
	t = float64(x*invPi) + roundK
	k := t - roundK
	r = x - float64(k*piA)
	r -= float64(k * piB)
	r -= float64(k * piC)
	return t, r
}

// cos64 returns c·cos(x) for |x| < cosLimit: the Taylor polynomial of
// degree 20, truncated below 2·10⁻¹⁷, for an absolute error below
// 3·10⁻¹⁶·|c|.
func cos64(x, c float64) float64 {
	t, r := cosReduce(x)
	z := r * r
	z2 := z * z
	z4 := z2 * z2
	q0 := (float64(cosC1*z) + 1) + float64((float64(cosC3*z)+cosC2)*z2)
	q1 := (float64(cosC5*z) + cosC4) + float64((float64(cosC7*z)+cosC6)*z2)
	q2 := (float64(cosC9*z) + cosC8) + float64(cosC10*z2)
	p := (q0 + float64(q1*z4)) + float64(q2*float64(z4*z4))
	return math.Float64frombits(math.Float64bits(float64(c*p)) ^ math.Float64bits(t)<<63)
}

// cos32 returns c·cos(x) for |x| < cosLimit before its rounding to
// float32: the Taylor polynomial of degree 12, truncated below 7·10⁻⁹, a
// tenth of a float32 ulp at 1.
func cos32(x, c float64) float64 {
	t, r := cosReduce(x)
	z := r * r
	z2 := z * z
	z4 := z2 * z2
	q0 := (float64(cosC1*z) + 1) + float64((float64(cosC3*z)+cosC2)*z2)
	q1 := (float64(cosC5*z) + cosC4) + float64(cosC6*z2)
	p := q0 + float64(q1*z4)
	return math.Float64frombits(math.Float64bits(float64(c*p)) ^ math.Float64bits(t)<<63)
}

// cosRowGo is the pure-Go cosRow.
func cosRowGo(out, a, b []float64, c float64) {
	b = b[:len(a)]
	out = out[:len(a)]
	for j, v := range a {
		x := v + b[j]
		if !(math.Abs(x) < cosLimit) {
			out[j] = c * math.Cos(x)
			continue
		}
		out[j] = cos64(x, c)
	}
}

// cosRow32Go is the pure-Go cosRow32.
func cosRow32Go(out []float32, a, b []float64, c float64) {
	b = b[:len(a)]
	out = out[:len(a)]
	for j, v := range a {
		x := v + b[j]
		if !(math.Abs(x) < cosLimit) {
			out[j] = float32(c * math.Cos(x))
			continue
		}
		out[j] = float32(cos32(x, c))
	}
}

// cosRow writes out[j] = c·cos(a[j] + b[j]) (len(b) and len(out) at
// least len(a)), with the AVX2 kernel where the CPU has one.
func cosRow(out, a, b []float64, c float64) {
	i := 0
	for haveCosKernel && len(a)-i >= 4 {
		i += cosKernel(out[i:len(a)], a[i:], b[i:len(a)], c)
		if len(a)-i >= 4 {
			// The kernel stopped at a block with an argument beyond
			// cosLimit.
			cosRowGo(out[i:i+4], a[i:i+4], b[i:i+4], c)
			i += 4
		}
	}
	cosRowGo(out[i:len(a)], a[i:], b[i:len(a)], c)
}

// cosRow32 writes out[j] = float32(c·cos(a[j] + b[j])), with the AVX2
// kernel where the CPU has one.
func cosRow32(out []float32, a, b []float64, c float64) {
	i := 0
	for haveCosKernel && len(a)-i >= 4 {
		i += cos32Kernel(out[i:len(a)], a[i:], b[i:len(a)], c)
		if len(a)-i >= 4 {
			cosRow32Go(out[i:i+4], a[i:i+4], b[i:i+4], c)
			i += 4
		}
	}
	cosRow32Go(out[i:len(a)], a[i:], b[i:len(a)], c)
}
