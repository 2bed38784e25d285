package vmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTranspose32 checks Transpose32 against the definition, bit for bit,
// for shapes around the 8×8 blocks and the 16-row tiles, with strides
// larger than the rows, on the AVX2 path (where the CPU has it) and the
// scalar one; elements outside the transposed block must stay untouched.
func TestTranspose32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 3, 7, 8, 9, 15, 16, 17, 24, 31, 33, 40}
	for _, avx := range []bool{true, false} {
		if avx && !haveAVX2 {
			continue
		}
		for _, rows := range sizes {
			for _, cols := range sizes {
				for _, s := range []float32{1, 0.37} {
					lds, ldd := cols+3, rows+5
					src := make([]float32, rows*lds)
					for i := range src {
						src[i] = float32(rng.NormFloat64())
					}
					src[0] = float32(math.Inf(-1))
					dst := make([]float32, cols*ldd)
					for i := range dst {
						dst[i] = -7
					}
					transpose(dst, ldd, src, lds, rows, cols, s, avx)
					for j := 0; j < cols; j++ {
						for i := 0; i < ldd; i++ {
							want := float32(-7)
							if i < rows {
								want = s * src[i*lds+j]
							}
							if got := dst[j*ldd+i]; math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("avx %v, %d×%d, s = %v: dst[%d][%d] = %v, want %v", avx, rows, cols, s, j, i, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestTranspose32Panics checks the documented panic on short slices.
func TestTranspose32Panics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for a destination too short")
		}
	}()
	Transpose32(make([]float32, 10), 4, make([]float32, 64), 8, 8, 8, 1)
}

// BenchmarkTranspose32 transposes 512 rows of 128 channels into channel
// rows of 1024 (the FD-TNN benchmark's pad): bytes moved per second.
func BenchmarkTranspose32(b *testing.B) {
	const n, e, N = 512, 128, 1024
	src, dst := make([]float32, n*e), make([]float32, e*N)
	for _, avx := range []bool{true, false} {
		if avx && !haveAVX2 {
			continue
		}
		name := "scalar"
		if avx {
			name = "avx2"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				transpose(dst, N, src, e, n, e, 1, avx)
			}
			b.ReportMetric(float64(8*n*e)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
