package vmath

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// sameBits32 reports whether a and b are the same float32 (any NaN equals
// any NaN: payloads are not specified).
func sameBits32(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// TestElementwise32 checks every element-wise kernel against its scalar
// form, computed here element by element with each product rounded, bit
// for bit: lengths around the kernels' blocks of eight, infinities, NaN
// and signed zeros among the values, and dst aliasing the first input.
func TestElementwise32(t *testing.T) {
	const r, c = float32(0.75), float32(-1.3e-3)
	cases := []struct {
		name string
		run  func(dst, a, b, x []float32)
		want func(i int, a, b, x []float32) float32
	}{
		{"MulTo32", func(dst, a, b, _ []float32) { MulTo32(dst, a, b) },
			func(i int, a, b, _ []float32) float32 { return a[i] * b[i] }},
		{"AddTo32", func(dst, a, b, _ []float32) { AddTo32(dst, a, b) },
			func(i int, a, b, _ []float32) float32 { return a[i] + b[i] }},
		{"ScaleTo32", func(dst, a, _, _ []float32) { ScaleTo32(dst, a, r) },
			func(i int, a, _, _ []float32) float32 { return a[i] * r }},
		{"ScaleSubTo32", func(dst, a, b, _ []float32) { ScaleSubTo32(dst, a, r, b, c) },
			func(i int, a, b, _ []float32) float32 { return float32(r*a[i]) - float32(c*b[i]) }},
		{"SiLUGradMulTo32", func(dst, a, b, x []float32) { SiLUGradMulTo32(dst, a, x, b) },
			func(i int, a, b, x []float32) float32 {
				one_s := 1 - b[i]
				p := float32(x[i] * one_s)
				return a[i] * (b[i] * (1 + p))
			}},
		{"CMulTo32", func(dst, a, b, _ []float32) { CMulTo32(dst, a, b, false) },
			func(i int, a, b, _ []float32) float32 {
				j := i &^ 1
				if i%2 == 0 {
					return float32(a[j]*b[j]) - float32(a[j+1]*b[j+1])
				}
				return float32(a[j+1]*b[j]) + float32(a[j]*b[j+1])
			}},
		{"CMulTo32/conj", func(dst, a, b, _ []float32) { CMulTo32(dst, a, b, true) },
			func(i int, a, b, _ []float32) float32 {
				j := i &^ 1
				if i%2 == 0 {
					return float32(a[j]*b[j]) + float32(a[j+1]*b[j+1])
				}
				return float32(a[j+1]*b[j]) - float32(a[j]*b[j+1])
			}},
		{"CMulAdd32", func(dst, a, b, x []float32) { copy(dst, x); CMulAdd32(dst, a, b, false) },
			func(i int, a, b, x []float32) float32 {
				j := i &^ 1
				if i%2 == 0 {
					return x[i] + (float32(a[j]*b[j]) - float32(a[j+1]*b[j+1]))
				}
				return x[i] + (float32(a[j+1]*b[j]) + float32(a[j]*b[j+1]))
			}},
		{"CMulAdd32/conj", func(dst, a, b, x []float32) { copy(dst, x); CMulAdd32(dst, a, b, true) },
			func(i int, a, b, x []float32) float32 {
				j := i &^ 1
				if i%2 == 0 {
					return x[i] + (float32(a[j]*b[j]) + float32(a[j+1]*b[j+1]))
				}
				return x[i] + (float32(a[j+1]*b[j]) - float32(a[j]*b[j+1]))
			}},
		{"AddConst32", func(dst, a, _, _ []float32) { AddConst32(dst, a, c) },
			func(i int, a, _, _ []float32) float32 { return a[i] + c }},
		{"SubMulTo32", func(dst, a, b, _ []float32) { SubMulTo32(dst, a, r, b) },
			func(i int, a, b, _ []float32) float32 { return (a[i] - r) * b[i] }},
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range cases {
		for _, n := range []int{0, 2, 6, 8, 10, 16, 18, 64, 100, 258} {
			a, b, x := make([]float32, n+2), make([]float32, n+4), make([]float32, n+6)
			for i := range a {
				a[i] = float32(rng.NormFloat64() * 3)
			}
			for i := range b {
				b[i] = float32(rng.Float64()) // a sigmoid's range, for SiLUGradMulTo32
			}
			for i := range x {
				x[i] = float32(rng.NormFloat64() * 1e2)
			}
			if n > 12 {
				a[1], b[2], x[3] = float32(math.Inf(1)), float32(math.NaN()), float32(math.Inf(-1))
				a[5], b[6], a[9] = float32(math.Copysign(0, -1)), 0, float32(math.Copysign(0, -1))
			}
			want := make([]float32, n)
			for i := range want {
				want[i] = tc.want(i, a, b, x)
			}
			dst := make([]float32, n)
			tc.run(dst, a, b, x)
			for i := range want {
				if !sameBits32(dst[i], want[i]) {
					t.Fatalf("%s, n = %d: dst[%d] = %v, scalar %v", tc.name, n, i, dst[i], want[i])
				}
			}
			if strings.HasPrefix(tc.name, "CMulAdd") {
				continue // dst is an accumulator, not an input
			}
			in := append([]float32(nil), a[:n]...) // dst aliasing the first input
			tc.run(in, in, b, x)
			for i := range want {
				if !sameBits32(in[i], want[i]) {
					t.Fatalf("%s in place, n = %d: dst[%d] = %v, scalar %v", tc.name, n, i, in[i], want[i])
				}
			}
		}
	}
}

// TestElementwise32Panics checks the documented panics: an input shorter
// than dst, and an odd length for CMulTo32.
func TestElementwise32Panics(t *testing.T) {
	for name, f := range map[string]func(){
		"short input": func() { MulTo32(make([]float32, 9), make([]float32, 9), make([]float32, 8)) },
		"odd complex": func() {
			//lint:ignore SA5012 the odd length is the point: it must panic
			CMulTo32(make([]float32, 9), make([]float32, 9), make([]float32, 9), false)
		},
		"odd complex sum": func() {
			//lint:ignore SA5012 the odd length is the point: it must panic
			CMulAdd32(make([]float32, 9), make([]float32, 9), make([]float32, 9), true)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func BenchmarkSiLUGradMulTo32(b *testing.B) {
	n := 1 << 14
	dst, dy, x, s := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		dy[i], x[i], s[i] = 1, float32(i%13)-6, 0.5
	}
	b.SetBytes(int64(16 * n))
	for b.Loop() {
		SiLUGradMulTo32(dst, dy, x, s)
	}
}

// TestDot32Sum32 checks Dot32 and Sum32 bit for bit against the eight
// interleaved partial sums written out element by element, for lengths
// around the blocks of eight, with infinities and NaN in some inputs, and
// against float64 sums within the error bound of the summation.
func TestDot32Sum32(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	ref := func(n int, term func(j int) float32) float32 {
		var s [8]float32
		for j := 0; j < n; j++ {
			s[j%8] += term(j)
		}
		return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
	}
	for _, n := range []int{0, 1, 5, 7, 8, 9, 15, 16, 17, 63, 64, 100, 1000} {
		for _, special := range []bool{false, true} {
			a, b := make([]float32, n), make([]float32, n+3)
			for i := range a {
				a[i] = float32(rng.NormFloat64())
			}
			for i := range b {
				b[i] = float32(rng.NormFloat64())
			}
			if special && n > 9 {
				a[3], b[9] = float32(math.Inf(1)), float32(math.NaN())
			}
			d := Dot32(a, b)
			if w := ref(n, func(j int) float32 { return float32(a[j] * b[j]) }); !sameBits32(d, w) {
				t.Fatalf("n = %d: Dot32 = %v, partial sums %v", n, d, w)
			}
			s := Sum32(a)
			if w := ref(n, func(j int) float32 { return a[j] }); !sameBits32(s, w) {
				t.Fatalf("n = %d: Sum32 = %v, partial sums %v", n, s, w)
			}
			if special {
				continue
			}
			var ed, es, ad, as float64
			for j := range a {
				ed += float64(a[j]) * float64(b[j])
				ad += math.Abs(float64(a[j]) * float64(b[j]))
				es += float64(a[j])
				as += math.Abs(float64(a[j]))
			}
			// |error| ≤ (n/8 + 4)·u·Σ|terms| (+ the products' rounding), u = 2⁻²⁴.
			tol := float64(n/8+5) * 0x1p-24
			if math.Abs(float64(d)-ed) > tol*ad || math.Abs(float64(s)-es) > tol*as {
				t.Fatalf("n = %d: Dot32 %v (exact %v), Sum32 %v (exact %v)", n, d, ed, s, es)
			}
		}
	}
}
