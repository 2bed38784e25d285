package linear

import (
	"fmt"
	"testing"

	"github.com/kernelkit/kernelkit/internal/testblas"
)

func TestMain(m *testing.M) { testblas.Main(m, "linear") }

// BenchmarkAccumulate measures Stats.Add on 2048-row chunks of D features
// and 26 targets (one core); GFLOP/s counts n·D² for the SYRK and 2·n·D·K
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
