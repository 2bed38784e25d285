package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

func ulpDiff(a, b float64) float64 {
	if a == b {
		return 0
	}
	u := math.Abs(math.Nextafter(b, math.Inf(1)) - b)
	// Near zeros of cos the relative size of an ulp is meaningless; measure
	// against an ulp of 1 there (absolute error 1.1e-16).
	u = math.Max(u, 0x1p-53)
	return math.Abs(a-b) / u
}

func TestAgainstMath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	for i := 0; i < 2_000_000; i++ {
		var x float64
		switch i % 3 {
		case 0:
			x = rng.NormFloat64() * 3
		case 1:
			x = (rng.Float64() - 0.5) * 200
		default:
			x = (rng.Float64() - 0.5) * 2 * limit
		}
		s, c := Sincos(x)
		ms, mc := math.Sincos(x)
		worst = max(worst, ulpDiff(c, mc), ulpDiff(s, ms), ulpDiff(Cos(x), mc))
	}
	if worst > 2 {
		t.Errorf("worst difference from math: %.2f ulp", worst)
	}
	for _, x := range []float64{0, math.Pi / 4, math.Pi / 2, math.Pi, 1e5, 1e6, 1e300, -1e7} {
		if d := ulpDiff(Cos(x), math.Cos(x)); d > 2 {
			t.Errorf("Cos(%v) = %v, math %v", x, Cos(x), math.Cos(x))
		}
	}
	if !math.IsNaN(Cos(math.NaN())) || !math.IsNaN(Cos(math.Inf(1))) {
		t.Error("Cos of NaN or Inf is not NaN")
	}
}

var sink float64

func args() []float64 {
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, 4096)
	for i := range x {
		x[i] = rng.NormFloat64() * 3
	}
	return x
}

func BenchmarkCos(b *testing.B) {
	x := args()
	for i := 0; i < b.N; i++ {
		s := 0.0
		for _, v := range x {
			s += Cos(v)
		}
		sink = s
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/value")
}

func BenchmarkMathCos(b *testing.B) {
	x := args()
	for i := 0; i < b.N; i++ {
		s := 0.0
		for _, v := range x {
			s += math.Cos(v)
		}
		sink = s
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/value")
}

func BenchmarkSincos(b *testing.B) {
	x := args()
	for i := 0; i < b.N; i++ {
		s := 0.0
		for _, v := range x {
			a, c := Sincos(v)
			s += a + c
		}
		sink = s
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/value")
}

func BenchmarkMathSincos(b *testing.B) {
	x := args()
	for i := 0; i < b.N; i++ {
		s := 0.0
		for _, v := range x {
			a, c := math.Sincos(v)
			s += a + c
		}
		sink = s
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/value")
}
