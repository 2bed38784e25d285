package fft

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// exactDFT returns the half spectrum of signal c of x (h×N) in float64
// with the angles reduced exactly (mk mod N).
func exactDFT(x []float64, n, c int) []complex128 {
	out := make([]complex128, n/2+1)
	for m := range out {
		var s complex128
		for k := 0; k < n; k++ {
			a := -2 * math.Pi * float64((m*k)%n) / float64(n)
			s += complex(x[c*n+k]*math.Cos(a), x[c*n+k]*math.Sin(a))
		}
		out[m] = s
	}
	return out
}

// unit is the unit roundoff of T.
func unit[T Float]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 0x1p-24
	}
	return 0x1p-53
}

// plans returns the implementations to test for T.
func plans[T Float](t *testing.T, n, h int) []Plan[T] {
	ps := []Plan[T]{NewGo[T](n, h)}
	if lib, err := load[T](); err == nil {
		ps = append(ps, newFFTW[T](lib, n, h))
	} else {
		t.Logf("FFTW not tested: %v", err)
	}
	return ps
}

// testAccuracy checks Forward against the exact DFT and Inverse(Forward)
// against N·x, within 10·log₂N·u relative 2-norm error. Higham's Thm 24.2
// bounds a radix-2 FFT's error by log₂N·η/(1 − log₂N·η), η = μ + γ₄(√2 + μ)
// ≈ 6.7u with twiddles correctly rounded (μ ≤ u); the radix-3 and radix-5
// butterflies of n = 30 and 250 take a few more roundings per level, and
// the result's rounding to T adds u, which 10 per level covers. Errors
// seen are near u·√log₂N, far inside. The Go plan computes in float64 and
// rounds to T, inside the bound.
func testAccuracy[T Float](t *testing.T) {
	for _, n := range []int{2, 8, 30, 64, 250, 1024} {
		for _, h := range []int{1, 3, 16} {
			for _, p := range plans[T](t, n, h) {
				t.Run(fmt.Sprintf("%s/n=%d/h=%d", p.Impl(), n, h), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(n), uint64(h)))
					x := make([]T, n*h)
					x64 := make([]float64, n*h)
					for i := range x {
						x[i] = T(rng.NormFloat64())
						x64[i] = float64(x[i])
					}
					spec := make([]T, 2*(n/2+1)*h)
					p.Forward(spec, x)
					tol := 10 * math.Log2(float64(n)) * unit[T]()
					tol = max(tol, 2*unit[T]())
					var num, den float64
					for c := 0; c < h; c++ {
						ex := exactDFT(x64, n, c)
						for m, v := range ex {
							dr := float64(spec[2*(c*(n/2+1)+m)]) - real(v)
							di := float64(spec[2*(c*(n/2+1)+m)+1]) - imag(v)
							num += dr*dr + di*di
							den += real(v)*real(v) + imag(v)*imag(v)
						}
					}
					if e := math.Sqrt(num / den); e > tol {
						t.Errorf("forward relative error %.3g > %.3g", e, tol)
					}
					back := make([]T, n*h)
					p.Inverse(back, spec)
					num, den = 0, 0
					for i := range back {
						d := float64(back[i]) - float64(n)*x64[i]
						num += d * d
						den += float64(n) * float64(n) * x64[i] * x64[i]
					}
					if e := math.Sqrt(num / den); e > 2*tol {
						t.Errorf("round trip relative error %.3g > %.3g", e, 2*tol)
					}
				})
			}
		}
	}
}

func TestAccuracy32(t *testing.T) { testAccuracy[float32](t) }
func TestAccuracy64(t *testing.T) { testAccuracy[float64](t) }

// TestInverseIgnoresEdgeImaginary checks that the imaginary parts of bins
// 0 and N/2 do not change Inverse's result, on every implementation.
func TestInverseIgnoresEdgeImaginary(t *testing.T) {
	const n, h = 16, 2
	for _, p := range plans[float64](t, n, h) {
		rng := rand.New(rand.NewPCG(1, 2))
		spec := make([]float64, 2*(n/2+1)*h)
		for i := range spec {
			spec[i] = rng.NormFloat64()
		}
		a := append([]float64(nil), spec...)
		for c := 0; c < h; c++ {
			a[2*c*(n/2+1)+1] = 0
			a[2*(c*(n/2+1)+n/2)+1] = 0
		}
		x1, x2 := make([]float64, n*h), make([]float64, n*h)
		p.Inverse(x1, spec)
		p.Inverse(x2, a)
		for i := range x1 {
			if math.Abs(x1[i]-x2[i]) > 1e-12 {
				t.Fatalf("%s: Inverse depends on the imaginary parts of bins 0 and N/2: %v vs %v", p.Impl(), x1[i], x2[i])
			}
		}
	}
}

// TestSameBits checks that repeating a transform gives the same bits
// (FFTW plans by estimate) on slices of different alignment, aligned ones
// from Make and misaligned ones that go through an aligned copy.
func TestSameBits(t *testing.T) {
	const n, h = 512, 24
	for _, p := range plans[float32](t, n, h) {
		rng := rand.New(rand.NewPCG(3, 4))
		buf := make([]float32, n*h+1)
		for i := range buf {
			buf[i] = float32(rng.NormFloat64())
		}
		x1 := Make[float32](n * h)
		copy(x1, buf)
		x2 := make([]float32, n*h+3)[1 : n*h+1] // another alignment
		copy(x2, x1)
		s1, s2 := Make[float32](2*(n/2+1)*h), make([]float32, 2*(n/2+1)*h+1)[1:]
		if aligned(x2) || aligned(s2) {
			t.Fatal("test slices unexpectedly aligned")
		}
		p.Forward(s1, x1)
		p.Forward(s2, x2)
		for i := range s1 {
			if math.Float32bits(s1[i]) != math.Float32bits(s2[i]) {
				t.Fatalf("%s: bin value %d differs between runs: %v vs %v", p.Impl(), i, s1[i], s2[i])
			}
		}
	}
}

// TestPanics checks the documented programmer errors.
func TestPanics(t *testing.T) {
	for _, f := range []func(){
		func() { NewGo[float64](7, 1) },
		func() { NewGo[float64](0, 1) },
		func() { NewGo[float64](8, 0) },
		func() { NewGo[float64](8, 1).Forward(make([]float64, 9), make([]float64, 8)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}

// TestMake checks Make's alignment and length.
func TestMake(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		a, b := Make[float32](n), Make[float64](n)
		if len(a) != n || len(b) != n || cap(a) != n || !aligned(a) || !aligned(b) {
			t.Errorf("Make(%d): lengths %d, %d, aligned %v, %v", n, len(a), len(b), aligned(a), aligned(b))
		}
	}
}
