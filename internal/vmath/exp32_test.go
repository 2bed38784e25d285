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

// TestSigmoid32SameBits checks that Sigmoid32 (the AVX2 kernel where the
// CPU has it) gives the bits of the scalar form 1/(1 + Exp32(−x)) for
// every value, in blocks with and without out-of-range values and tails
// of every length, and that the result is within 3 ulp of the logistic
// function computed in float64.
func TestSigmoid32SameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 1000} {
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
		if n > 40 { // out-of-range and special values in some blocks
			src[17], src[33] = 100, -95
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
