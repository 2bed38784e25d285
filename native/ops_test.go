package native

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDot checks dot against the float64 sum of the float32 products for
// lengths around its blocks of eight: the error of a sum of n terms in
// any order is within (n−1)·u·Σ|aⱼbⱼ| (Higham 2002, §4.2), u = 2⁻²⁴, plus
// u·Σ|aⱼbⱼ| for the rounding of each product.
func TestDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 5, 7, 8, 9, 15, 16, 17, 128, 257} {
		a, b := make([]float32, n), make([]float32, n+3)
		var exact, abs float64
		for j := range a {
			a[j], b[j] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			p := float64(a[j]) * float64(b[j])
			exact += p
			abs += math.Abs(p)
		}
		got := float64(dot(a, b))
		if tol := float64(n) * 0x1p-24 * abs; math.Abs(got-exact) > tol {
			t.Errorf("n = %d: dot %v, exact %v, tolerance %.3g", n, got, exact, tol)
		}
	}
}
