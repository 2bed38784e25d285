package native

import (
	"fmt"
	"testing"

	"github.com/kernelkit/kernelkit/fft"
)

// BenchToeplitzForms is BenchmarkToeplitzForms (bench_test.go), here for
// the unexported forms.
func BenchToeplitzForms(b *testing.B) {
	const B, e = 16, 128
	forms := []string{"dft", "go"}
	if fft.Load() == nil {
		forms = append(forms, "")
	}
	for _, n := range []int{256, 512, 1024, 2048} {
		for _, form := range forms {
			name := form
			if name == "" {
				name = "fftw"
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, name), func(b *testing.B) {
				var tp *toeplitzFFT[float32]
				withForm(form, func() { tp = newToeplitzFFT[float32](n, e) })
				x := make([]float32, B*n*e)
				coef := make([]float32, (2*n-1)*e)
				for i := range x {
					x[i] = float32(i%7) - 3
				}
				for i := range coef {
					coef[i] = float32(i%5) - 2
				}
				for i := 0; i < b.N; i++ {
					tp.forward(x, B, coef)
					tp.backward(x)
				}
				b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/op")
			})
		}
	}
}

// ProcessCPU is processCPU for the external benchmarks: the process's CPU
// time so far in nanoseconds (0 where unavailable).
var ProcessCPU = processCPU
