package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulps32 returns |got − want| in units of float32's last place at want.
func ulps32(got float32, want float64) float64 {
	_, e := math.Frexp(want)
	return math.Abs(float64(got)-want) / math.Ldexp(1, e-24)
}

// TestExp32AgainstMathExp checks Exp32 within 2 ulp of float32 of the
// exactly rounded exp on its polynomial range and its fallbacks.
func TestExp32AgainstMathExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	worst := 0.0
	for i := 0; i < 1<<16; i++ {
		x := float32(-86 + 173.5*rng.Float64())
		if i%2 == 0 {
			x = float32(rng.NormFloat64())
		}
		u := ulps32(Exp32(x), math.Exp(float64(x)))
		worst = max(worst, u)
		if u > 2 {
			t.Fatalf("Exp32(%v) = %v, math.Exp %v: %.2f ulp", x, Exp32(x), math.Exp(float64(x)), u)
		}
	}
	t.Logf("worst %.2f ulp", worst)
	for _, x := range []float32{-200, -87, 89, 1000, float32(math.Inf(1)), float32(math.Inf(-1))} {
		if got, want := Exp32(x), float32(math.Exp(float64(x))); got != want {
			t.Errorf("Exp32(%v) = %v, want %v", x, got, want)
		}
	}
	if !math.IsNaN(float64(Exp32(float32(math.NaN())))) {
		t.Error("Exp32(NaN) is not NaN")
	}
}

// expArgs returns n arguments for the exponential kernels' tests: normal
// values of scales 1 and 4 and values across (−90, 90), beyond the
// kernels' range at both ends, and, for n > 40, out-of-range values in
// two blocks (100 and −95).
func expArgs(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch i % 5 {
		case 0:
			x[i] = float32(4 * rng.NormFloat64())
		case 1:
			x[i] = float32(-90 + 180*rng.Float64())
		default:
			x[i] = float32(rng.NormFloat64())
		}
	}
	if n > 40 {
		x[17], x[33] = 100, -95
	}
	return x
}

// TestSigmoid32SameBits checks that Sigmoid32 (the AVX2 kernel where the
// CPU has it) gives the bits of the scalar form 1/(1 + Exp32(−x)) for
// every value, in blocks with and without out-of-range values and tails
// of every length, and that the result is within 3 ulp of the logistic
// function computed in float64.
func TestSigmoid32SameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 1000} {
		src := expArgs(rng, n)
		if n > 40 {
			src[n-1] = float32(math.Inf(1))
		}
		dst := make([]float32, n)
		Sigmoid32(dst, src)
		for i, x := range src {
			want := 1 / (1 + Exp32(-x))
			if math.Float32bits(dst[i]) != math.Float32bits(want) {
				t.Fatalf("n=%d: Sigmoid32(%v) = %v, scalar %v", n, x, dst[i], want)
			}
			exact := 1 / (1 + math.Exp(-float64(x)))
			if exact > 1e-30 && ulps32(dst[i], exact) > 3 {
				t.Fatalf("Sigmoid32(%v) = %v, exact %v", x, dst[i], exact)
			}
		}
	}
	in := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	Sigmoid32(in, in) // in place
	if in[0] != 1/(1+Exp32(-1)) || in[8] != 1/(1+Exp32(-9)) {
		t.Error("in-place Sigmoid32 differs")
	}
}

// TestSiLU32SameBits checks that SiLU32 gives the bits of Sigmoid32
// followed by MulTo32 for every value (the inputs of
// TestSigmoid32SameBits: blocks with out-of-range and special values and
// tails of every length), and in place (out = x).
func TestSiLU32SameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 1000} {
		x := expArgs(rng, n)
		if n > 40 {
			x[n-1] = float32(math.Inf(-1))
			x[n-2] = float32(math.NaN())
		}
		wantSig, wantOut := make([]float32, n), make([]float32, n)
		Sigmoid32(wantSig, x)
		MulTo32(wantOut, x, wantSig)
		sig, out := make([]float32, n), make([]float32, n)
		SiLU32(out, sig, x)
		for i := range x {
			if math.Float32bits(sig[i]) != math.Float32bits(wantSig[i]) || math.Float32bits(out[i]) != math.Float32bits(wantOut[i]) {
				t.Fatalf("n=%d: SiLU32(%v) = (%v, σ %v), want (%v, σ %v)", n, x[i], out[i], sig[i], wantOut[i], wantSig[i])
			}
		}
		in := append([]float32(nil), x...)
		SiLU32(in, sig, in)
		for i := range in {
			if math.Float32bits(in[i]) != math.Float32bits(wantOut[i]) {
				t.Fatalf("n=%d: in-place SiLU32(%v) = %v, want %v", n, x[i], in[i], wantOut[i])
			}
		}
		// SiLUMul32: the same with a factor, against SiLU32 then MulTo32,
		// and in place on the factor.
		c := make([]float32, n)
		for i := range c {
			c[i] = float32(rng.NormFloat64())
		}
		if n > 40 {
			c[5] = float32(math.Inf(1))
		}
		wantMul := make([]float32, n)
		MulTo32(wantMul, wantOut, c)
		SiLUMul32(out, sig, x, c)
		for i := range x {
			if !sameBits32(sig[i], wantSig[i]) || !sameBits32(out[i], wantMul[i]) {
				t.Fatalf("n=%d: SiLUMul32(%v, %v) = (%v, σ %v), want (%v, σ %v)", n, x[i], c[i], out[i], sig[i], wantMul[i], wantSig[i])
			}
		}
		SiLUMul32(c, sig, x, c)
		for i := range c {
			if !sameBits32(c[i], wantMul[i]) {
				t.Fatalf("n=%d: SiLUMul32 in place on c: %v, want %v", n, c[i], wantMul[i])
			}
		}
	}
}

func BenchmarkSiLU32(b *testing.B) {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(i%200)/20 - 5
	}
	sig, out := make([]float32, len(x)), make([]float32, len(x))
	b.Run("fused", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			SiLU32(out, sig, x)
		}
		b.ReportMetric(float64(b.N*len(x))/b.Elapsed().Seconds()/1e9, "Gvalues/s")
	})
	b.Run("two-pass", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Sigmoid32(sig, x)
			MulTo32(out, x, sig)
		}
		b.ReportMetric(float64(b.N*len(x))/b.Elapsed().Seconds()/1e9, "Gvalues/s")
	})
}

func BenchmarkSigmoid32(b *testing.B) {
	src := make([]float32, 4096)
	for i := range src {
		src[i] = float32(i%200)/20 - 5
	}
	dst := make([]float32, len(src))
	b.Run("kernel", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Sigmoid32(dst, src)
		}
		b.ReportMetric(float64(b.N*len(src))/b.Elapsed().Seconds()/1e9, "Gvalues/s")
	})
	b.Run("scalar", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for j, x := range src {
				dst[j] = 1 / (1 + Exp32(-x))
			}
		}
		b.ReportMetric(float64(b.N*len(src))/b.Elapsed().Seconds()/1e9, "Gvalues/s")
	})
}

// testInputs returns n values mixing normal draws, wide uniform ones and,
// for n > 40, out-of-range and special values inside some blocks of eight.
func testInputs(n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	src := make([]float32, n)
	for i := range src {
		switch i % 5 {
		case 0:
			src[i] = float32(4 * rng.NormFloat64())
		case 1:
			src[i] = float32(-90 + 180*rng.Float64())
		default:
			src[i] = float32(rng.NormFloat64())
		}
	}
	if n > 40 {
		src[17], src[33] = 100, -95
		src[n-1] = float32(math.Inf(1))
		src[n-9] = float32(math.NaN())
	}
	return src
}

// same reports whether a and b have the same bits (NaNs of any payload
// count as equal).
func same(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// TestExp32SliceSameBits checks Exp32Slice against Exp32 bitwise.
func TestExp32SliceSameBits(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 1000} {
		src := testInputs(n, uint64(n))
		dst := make([]float32, n)
		Exp32Slice(dst, src)
		for i, x := range src {
			if !same(dst[i], Exp32(x)) {
				t.Fatalf("n=%d: Exp32Slice(%v) = %v, Exp32 %v", n, x, dst[i], Exp32(x))
			}
		}
	}
}

// TestGELU32 checks GELU32 against GELU and its derivative in float64
// (math.Erf): the A&S 7.1.26 erfc bound 1.5e-7 and float32 rounding give
// errors below 4e-7 relative to max(1, |x|); and GELU32Slice bitwise
// against GELU32.
func TestGELU32(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 1000, 1 << 14} {
		src := testInputs(n, uint64(n)+100)
		y, dy := make([]float32, n), make([]float32, n)
		GELU32Slice(y, dy, src)
		for i, x := range src {
			wy, wd := GELU32(x)
			if !same(y[i], wy) || !same(dy[i], wd) {
				t.Fatalf("n=%d: GELU32Slice(%v) = %v, %v; GELU32 %v, %v", n, x, y[i], dy[i], wy, wd)
			}
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				continue
			}
			xf := float64(x)
			cdf := 0.5 * (1 + math.Erf(xf/math.Sqrt2))
			ey := math.Abs(float64(wy)-xf*cdf) / max(1, math.Abs(xf))
			ed := math.Abs(float64(wd)-(cdf+xf*math.Exp(-xf*xf/2)/math.Sqrt(2*math.Pi))) / max(1, math.Abs(xf))
			if ey > 4e-7 || ed > 4e-7 {
				t.Fatalf("GELU32(%v) = %v, %v: errors %.3g, %.3g", x, wy, wd, ey, ed)
			}
		}
	}
}
