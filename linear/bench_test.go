package linear

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/internal/testblas"
)

func TestMain(m *testing.M) { testblas.Main(m, "linear") }

// BenchmarkAccumulate measures Stats.Add on 2048-row chunks of D features
// and 26 targets (all cores); GFLOP/s counts n·D² for the SYRK and 2·n·D·K
// for the Zᵀy product.
func BenchmarkAccumulate(b *testing.B) {
	for _, D := range []int{512, 1024} {
		b.Run(fmt.Sprintf("D=%d", D), func(b *testing.B) {
			z := randDense(2048, D, 1)
			y := randDense(2048, 26, 2)
			s := NewStats(D, 26)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.Add(z, y); err != nil {
					b.Fatal(err)
				}
			}
			fl := 2048 * float64(D) * (float64(D) + 2*26)
			b.ReportMetric(fl*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkSolve measures the Cholesky solve of a fit from statistics.
func BenchmarkSolve(b *testing.B) {
	for _, D := range []int{512, 2048} {
		b.Run(fmt.Sprintf("D=%d", D), func(b *testing.B) {
			s := NewStats(D, 26)
			_ = s.Add(randDense(D+100, D, 1), randDense(D+100, 26, 2))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Fit(s, 0.5, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStatistics reports the rate of the statistics stage of a fit —
// Stats.Add and Stats.AddFloat32 on one chunk of 2048 rows, D features and
// 26 targets, on all cores, and the fit's own way (package model's two
// lanes): two such chunks at once, each by AddSerial or AddFloat32Serial
// on one goroutine — next to the machine's matrix-product rate
// measured in the same run: OpenBLAS's DGEMM and SGEMM of the same shape
// (C = ZᵀZ as a full D×D product, 2·n·D² flops) with OpenBLAS's threads
// set to GOMAXPROCS, as a program that makes one big call would run it.
// The statistics stage computes the upper triangle only, so its GFLOP/s
// counts n·D·(D+1) for ZᵀZ plus 2·n·D·K for Zᵀy, the flops it must do;
// "of-gemm" is that rate over the GEMM's. With the pure-Go backend the
// GEMMs are gonum's (already parallel).
func BenchmarkStatistics(b *testing.B) {
	const n, k = 2048, 26
	procs := runtime.GOMAXPROCS(0)
	for _, D := range []int{512, 2048, 4096} {
		z := randDense(n, D, 1)
		y := randDense(n, k, 2)
		zr := z.RawMatrix()
		z32 := blas32.General{Rows: n, Cols: D, Stride: D, Data: make([]float32, n*D)}
		for i, v := range zr.Data {
			z32.Data[i] = float32(v)
		}
		c := make([]float64, D*D)
		c32 := make([]float32, D*D)
		rate := func(b *testing.B, flops float64) float64 {
			r := flops * float64(b.N) / b.Elapsed().Seconds() / 1e9
			b.ReportMetric(r, "GFLOP/s")
			return r
		}
		var gemm64, gemm32 float64
		blas.SetThreads(procs)
		b.Run(fmt.Sprintf("D=%d/dgemm-%dthreads", D, procs), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				blas64.Gemm(gblas.Trans, gblas.NoTrans, 1, zr, zr, 0, blas64.General{Rows: D, Cols: D, Stride: D, Data: c})
			}
			gemm64 = rate(b, 2*n*float64(D)*float64(D))
		})
		b.Run(fmt.Sprintf("D=%d/sgemm-%dthreads", D, procs), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				blas32.Gemm(gblas.Trans, gblas.NoTrans, 1, z32, z32, 0, blas32.General{Rows: D, Cols: D, Stride: D, Data: c32})
			}
			gemm32 = rate(b, 2*n*float64(D)*float64(D))
		})
		blas.SetThreads(1)
		flops := n*float64(D)*float64(D+1) + 2*n*float64(D)*k
		s := NewStats(D, k)
		b.Run(fmt.Sprintf("D=%d/Add", D), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := s.Add(z, y); err != nil {
					b.Fatal(err)
				}
			}
			if gemm64 > 0 {
				b.ReportMetric(rate(b, flops)/gemm64, "of-dgemm")
			}
		})
		// The fit's way (package model): two chunks at once, one
		// single-threaded SYRK each into statistics of their own.
		lanes := []*Stats{NewStats(D, k), NewStats(D, k)}
		b.Run(fmt.Sprintf("D=%d/2xAddSerial", D), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				for _, l := range lanes {
					wg.Go(func() {
						if err := l.AddSerial(z, y); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
			}
			if gemm64 > 0 {
				b.ReportMetric(rate(b, 2*flops)/gemm64, "of-dgemm")
			}
		})
		b.Run(fmt.Sprintf("D=%d/2xAddFloat32Serial", D), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				for _, l := range lanes {
					wg.Go(func() {
						if err := l.AddFloat32Serial(z32, y); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
			}
			if gemm64 > 0 && gemm32 > 0 {
				r := rate(b, 2*flops)
				b.ReportMetric(r/gemm64, "of-dgemm")
				b.ReportMetric(r/gemm32, "of-sgemm")
			}
		})
		b.Run(fmt.Sprintf("D=%d/AddFloat32", D), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := s.AddFloat32(z32, y); err != nil {
					b.Fatal(err)
				}
			}
			if gemm64 > 0 && gemm32 > 0 {
				r := rate(b, flops)
				b.ReportMetric(r/gemm64, "of-dgemm")
				b.ReportMetric(r/gemm32, "of-sgemm")
			}
		})
	}
}

// BenchmarkAddWeighted measures Stats.AddWeighted on 2048-row chunks of
// D = 512 features and 26 targets with weights 0…3 (a quarter of the rows
// weigh zero and are left out), next to Stats.Add on the same rows; GFLOP/s
// counts n·D² + 2·n·D·K over all the rows.
func BenchmarkAddWeighted(b *testing.B) {
	const n, D, k = 2048, 512, 26
	z := randDense(n, D, 1)
	y := randDense(n, k, 2)
	w := make([]float64, n)
	for i := range w {
		w[i] = float64(i % 4)
	}
	for _, weighted := range []bool{false, true} {
		b.Run(fmt.Sprintf("D=%d/weighted=%v", D, weighted), func(b *testing.B) {
			s := NewStats(D, k)
			var wi []float64
			if weighted {
				wi = w
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.AddWeighted(z, y, wi); err != nil {
					b.Fatal(err)
				}
			}
			fl := n * float64(D) * (float64(D) + 2*k)
			b.ReportMetric(fl*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
