package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulps returns |got − want| in units of want's last place.
func ulps(got, want float64) float64 {
	if got == want {
		return 0
	}
	_, e := math.Frexp(want)
	return math.Abs(got-want) / math.Ldexp(1, e-53)
}

func TestExpAgainstMathExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1 << 16
	src := make([]float64, n)
	for i := range src {
		switch i % 3 {
		case 0:
			src[i] = expLo + (expHi-expLo)*rng.Float64()
		case 1:
			src[i] = rng.NormFloat64()
		default:
			src[i] = (rng.Float64() - 0.5) * 1e-3
		}
	}
	dst := make([]float64, n)
	Exp(dst, src)
	worst := 0.0
	for i, x := range src {
		u := ulps(dst[i], math.Exp(x))
		worst = max(worst, u)
		if u > 3 {
			t.Fatalf("Exp(%v) = %v, math.Exp %v: %.1f ulp", x, dst[i], math.Exp(x), u)
		}
		if g := exp1(x); g != dst[i] {
			t.Fatalf("Exp(%v): kernel %v, scalar %v: the two paths must give the same bits", x, dst[i], g)
		}
	}
	t.Logf("worst error %.2f ulp over %d arguments (AVX2 kernel: %v)", worst, n, haveAVX2)
}

func TestExpSpecialValues(t *testing.T) {
	// Blocks of four mixing in-range and out-of-range values, and a tail.
	src := []float64{0, 1, -1, 709, 709.5, -707.5, -745, -800,
		math.Inf(1), math.Inf(-1), math.NaN(), 710, math.Copysign(0, -1), 1e-300, -708, 2,
		0.5}
	dst := make([]float64, len(src))
	Exp(dst, src)
	for i, x := range src {
		want := math.Exp(x)
		if math.IsNaN(want) {
			if !math.IsNaN(dst[i]) {
				t.Errorf("Exp(NaN) = %v", dst[i])
			}
			continue
		}
		if ulps(dst[i], want) > 3 {
			t.Errorf("Exp(%v) = %v, want %v", x, dst[i], want)
		}
	}
	if dst[0] != 1 {
		t.Errorf("Exp(0) = %v, want exactly 1", dst[0])
	}
	// In place.
	Exp(src, src)
	for i := range src {
		if !(src[i] == dst[i] || math.IsNaN(src[i]) && math.IsNaN(dst[i])) {
			t.Errorf("in place: element %d is %v, want %v", i, src[i], dst[i])
		}
	}
}

func TestExpShortDst(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Exp with a short dst did not panic")
		}
	}()
	Exp(make([]float64, 3), make([]float64, 4))
}

func BenchmarkExp(b *testing.B) {
	src := make([]float64, 4096)
	for i := range src {
		src[i] = -20 + 40*float64(i)/float64(len(src))
	}
	dst := make([]float64, len(src))
	b.Run("vmath", func(b *testing.B) {
		for b.Loop() {
			Exp(dst, src)
		}
		b.ReportMetric(float64(b.N*len(src))/b.Elapsed().Seconds()/1e6, "Mexp/s")
	})
	b.Run("math.Exp", func(b *testing.B) {
		for b.Loop() {
			for i, x := range src {
				dst[i] = math.Exp(x)
			}
		}
		b.ReportMetric(float64(b.N*len(src))/b.Elapsed().Seconds()/1e6, "Mexp/s")
	})
}
