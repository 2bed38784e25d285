package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdd32 checks Add32 against the scalar sum bit for bit for lengths
// around its blocks of 32, with infinities and NaN among the values.
func TestAdd32(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 31, 32, 33, 64, 100, 257} {
		dst, src := make([]float32, n), make([]float32, n+2)
		for i := range dst {
			dst[i], src[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()*1e3)
		}
		if n > 3 {
			dst[1], src[2], src[3] = float32(math.Inf(1)), float32(math.NaN()), float32(math.Inf(-1))
		}
		want := make([]float32, n)
		for i := range want {
			want[i] = dst[i] + src[i]
		}
		Add32(dst, src)
		for i := range want {
			if math.Float32bits(dst[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(dst[i])) && math.IsNaN(float64(want[i]))) {
				t.Fatalf("n = %d: dst[%d] = %v, want %v", n, i, dst[i], want[i])
			}
		}
	}
}

// TestMulAdd32 checks MulAdd32 against the scalar form (product rounded,
// then the sum) bit for bit for lengths around its blocks of 8, with
// infinities and NaN among the values.
func TestMulAdd32(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 7, 8, 9, 16, 64, 100, 257} {
		dst, a, b := make([]float32, n), make([]float32, n+1), make([]float32, n+3)
		for i := range dst {
			dst[i], a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()*1e3), float32(rng.NormFloat64()*1e-3)
		}
		if n > 3 {
			dst[1], a[2], b[3] = float32(math.Inf(1)), float32(math.NaN()), float32(math.Inf(-1))
		}
		want := make([]float32, n)
		for i := range want {
			want[i] = dst[i] + float32(a[i]*b[i])
		}
		MulAdd32(dst, a, b)
		for i := range want {
			if math.Float32bits(dst[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(dst[i])) && math.IsNaN(float64(want[i]))) {
				t.Fatalf("n = %d: dst[%d] = %v, want %v", n, i, dst[i], want[i])
			}
		}
	}
}
