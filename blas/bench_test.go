package blas

import (
	"fmt"
	"testing"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// BenchmarkGemm reports GFLOP/s of float64 and float32 GEMM for gonum's
// pure-Go implementation and OpenBLAS (one thread and all threads), on a
// square 2048³ product and on the random-feature projection shape
// (20000×64)·(64×1024)ᵀ.
func BenchmarkGemm(b *testing.B) {
	o, err := LoadOpenBLAS()
	type impl struct {
		name    string
		threads int
		i64     gblas.Float64Level3
		i32     gblas.Float32Level3
	}
	impls := []impl{{"gonum", 0, gonum.Implementation{}, gonum.Implementation{}}}
	if err == nil {
		impls = append(impls, impl{"openblas-1thread", 1, o, o}, impl{"openblas-2threads", 2, o, o})
	}
	for _, sh := range []struct{ m, n, k int }{{2048, 2048, 2048}, {20000, 1024, 64}} {
		a := make([]float64, sh.m*sh.k)
		w := make([]float64, sh.n*sh.k)
		c := make([]float64, sh.m*sh.n)
		a32 := make([]float32, len(a))
		w32 := make([]float32, len(w))
		c32 := make([]float32, len(c))
		for i := range a {
			a[i] = float64(i%7) - 3
			a32[i] = float32(a[i])
		}
		for i := range w {
			w[i] = float64(i%5) - 2
			w32[i] = float32(w[i])
		}
		flops := 2 * float64(sh.m) * float64(sh.n) * float64(sh.k)
		for _, im := range impls {
			if im.threads > 0 && o.setThreads != nil {
				o.setThreads(int32(im.threads))
			}
			b.Run(fmt.Sprintf("%dx%dx%d/%s/float64", sh.m, sh.n, sh.k, im.name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					im.i64.Dgemm(gblas.NoTrans, gblas.Trans, sh.m, sh.n, sh.k, 1, a, sh.k, w, sh.k, 0, c, sh.n)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
			b.Run(fmt.Sprintf("%dx%dx%d/%s/float32", sh.m, sh.n, sh.k, im.name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					im.i32.Sgemm(gblas.NoTrans, gblas.Trans, sh.m, sh.n, sh.k, 1, a32, sh.k, w32, sh.k, 0, c32, sh.n)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
	if o != nil && o.setThreads != nil {
		o.setThreads(1)
	}
}

// BenchmarkGemmEngineShapes reports the float32 GFLOP/s of OpenBLAS on one
// thread for the products of a native-engine FD-TNN step at width 128
// (GLU hidden 256, GTU width 128, gemmChunk = 1024 rows a call; package
// native's BenchmarkFDTNNStep), beside the square 2048³ product that
// that benchmark's SGEMM rate uses. The engine runs one product per core
// at a time, so these one-thread rates are the ones its steps meet.
func BenchmarkGemmEngineShapes(b *testing.B) {
	o, err := LoadOpenBLAS()
	if err != nil {
		b.Skip("OpenBLAS not installed:", err)
	}
	if o.setThreads != nil {
		o.setThreads(1)
	}
	N, T := gblas.NoTrans, gblas.Trans
	for _, sh := range []struct {
		name    string
		tA, tB  gblas.Transpose
		m, n, k int
		beta    float32
	}{
		{"square", N, N, 2048, 2048, 2048, 0},
		{"glu-in", N, N, 1024, 512, 128, 1},
		{"glu-out", N, N, 1024, 128, 256, 1},
		{"glu-dg", N, T, 1024, 256, 128, 0},
		{"glu-dx", N, T, 1024, 128, 512, 0},
		{"glu-dw3", T, N, 256, 128, 1024, 0},
		{"glu-dw12", T, N, 128, 512, 1024, 0},
		{"gtu-in", N, N, 1024, 256, 128, 1},
		{"gtu-out", N, N, 1024, 128, 128, 1},
	} {
		ra, ca := sh.m, sh.k
		if sh.tA == T {
			ra, ca = sh.k, sh.m
		}
		rb, cb := sh.k, sh.n
		if sh.tB == T {
			rb, cb = sh.n, sh.k
		}
		a, w, c := make([]float32, ra*ca), make([]float32, rb*cb), make([]float32, sh.m*sh.n)
		for i := range a {
			a[i] = float32(i%7) - 3
		}
		for i := range w {
			w[i] = float32(i%5) - 2
		}
		flops := 2 * float64(sh.m) * float64(sh.n) * float64(sh.k)
		b.Run(fmt.Sprintf("%s/%dx%dx%d", sh.name, sh.m, sh.n, sh.k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				o.Sgemm(sh.tA, sh.tB, sh.m, sh.n, sh.k, 1, a, ca, w, cb, sh.beta, c, sh.n)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
