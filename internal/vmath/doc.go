// Package vmath holds fast elementary functions for kernelkit's
// element-wise passes: over projected rows (random features) and over
// attention scores.
//
// # Cos and Sincos
//
// Go's math.Cos and math.Sincos choose their polynomial and sign by
// branches on the octant of the argument; with the random arguments of
// random features those branches are unpredictable and cost more than the
// arithmetic. Cos and Sincos here reduce by multiples of π/2 (three-part
// Cody-Waite, exact for |x| < 10⁵), evaluate both Cephes polynomials on
// [−π/4, π/4] (the coefficients math uses) and select by table lookup, so
// the loop has no data-dependent branch. Arguments beyond 10⁵ in magnitude,
// NaN and Inf fall back to the math package. The error is within 2 ulp of
// math's results on the tested range.
//
// # Exp
//
// Exp works on slices, four values at a time with AVX2 where the CPU has
// it; the kernel performs the same floating-point operations, in the same
// order, as its pure-Go fallback (no fused multiply-add), so results are
// the same bits on every amd64 CPU and every other architecture.
//
// exp(x) = 2ⁿ·exp(r) with n = round(x/ln 2) and r = x − n·ln 2, the
// product n·ln 2 taken in two parts (Cody–Waite) so that r is exact to
// about 2⁻⁶⁶; |r| ≤ ln 2/2, where the Taylor polynomial of degree 13
// (evaluated by Estrin's scheme) has a truncation error below 2⁻⁵⁶
// relative. 2ⁿ is added to the exponent field. Arguments outside
// [−707, 709] (where the result would overflow, be subnormal or is not a
// number) take math.Exp. The error against math.Exp is below 3 ulp (test).
//
// # Exp32, Sigmoid32 and GELU32
//
// The native training engine's float32 activations: Exp32 is Cephes' expf
// (degree-5 polynomial after the same two-part reduction; below 1 ulp of
// float32 measured, 2 tested); Sigmoid32 the logistic function
// 1/(1 + Exp32(−x)); GELU32 x·Φ(x) and its derivative with erf by
// Abramowitz and Stegun 7.1.26. Exp32Slice, Sigmoid32 and GELU32Slice
// work on slices, eight at a time with AVX2 — again the same operations
// in the same order as the scalar forms (written with conversions that
// forbid fused multiply-adds), so the same bits on every CPU (tested
// bitwise).
//
// # Transpose32
//
// The layout change of the engine's batched FFTs (rows of channels to
// channel-major signals and back, scaled on the way back): 8×8 blocks
// with AVX2 (unpack, shuffle, lane permute: no arithmetic but the one
// scaling multiplication, so again the same bits as the scalar loop),
// 64 source rows at a time. 18 GB/s against the scalar loop's 5.5 on
// 512×128 (BenchmarkTranspose32). Add32 (dst += src, 32 at a time) sums
// the engine's parameter-gradient partials, bias gradients and residual
// gradients; MulAdd32 (dst += a·b, eight at a time: a rounded product,
// then a rounded sum, no fused multiply-add, so the scalar loop's bits)
// runs SKI-TNN's sparse convolution.
//
// # Element-wise kernels
//
// The engine's other element-wise passes over rows, eight float32 at a
// time with AVX2 (elem.go): MulTo32 (a·b), AddTo32 (a + b), ScaleTo32
// (a·s), AddConst32 (a + c), SubMulTo32 ((a − c)·p), ScaleSubTo32
// (r·g − c·x), SiLUGradMulTo32 (dy·σ·(1 + x·(1 − σ)), the gradient
// through SiLU), CMulTo32 and CMulAdd32 (products of interleaved complex
// spectra, conjugated or not, by duplicate-and-swap and VADDSUBPS), Dot32
// and Sum32 (eight interleaved partial sums, element j into sum j mod 8,
// then ((s₀ + s₁) + (s₂ + s₃)) + ((s₄ + s₅) + (s₆ + s₇)); the eight sums are
// the lanes of one register). Every kernel rounds as its scalar form does,
// in the same order, with no fused multiply-add, so the same bits on every
// CPU; the scalar forms finish the tails and run where AVX2 is missing
// (TestElementwise32, TestDot32Sum32).
package vmath
