package toeplitz

import (
	"fmt"
	"testing"

	"github.com/kernelkit/kernelkit/sampler"
)

// BenchmarkOperators times one application to n×64 inputs: FFT TNO, SKI
// (r = 64, m = 32) and causal FD; `kernelkit toeplitz` runs the full study
// up to n = 2^20 with the dense product.
func BenchmarkOperators(b *testing.B) {
	const d = 64
	rpe, _ := RandomPiecewiseLinear(33, d, 1)
	mlp, _ := NewMLP([]int{32}, d, GeLU, 2)
	for _, n := range []int{1024, 16384, 131072} {
		x, _ := sampler.Gaussian{}.Sample(n, d, 3)
		var ts []*Toeplitz
		var ks []func(float64) float64
		var fs [][]float64
		for l := 0; l < d; l++ {
			k := rpe.Kernel(l, 0.99)
			ks = append(ks, k)
			fs = append(fs, randVec(32, uint64(l)))
			t, _ := FromKernel(n, func(t int) float64 { return k(float64(t)) })
			ts = append(ts, t)
		}
		op, _ := NewOperator(ts)
		ski, _ := NewSKI(n, 64, Linear, ks, fs)
		fd, _ := NewCausalFD(n, MLPResponse(mlp))
		b.Run(fmt.Sprintf("fft/n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_, _ = op.Apply(x)
			}
		})
		b.Run(fmt.Sprintf("ski/n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_, _ = ski.Apply(x)
			}
		})
		b.Run(fmt.Sprintf("fd-causal/n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_, _ = fd.Apply(x)
			}
		})
	}
}
