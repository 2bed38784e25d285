package hybrid

import (
	"fmt"
	"testing"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/testblas"
	"github.com/kernelkit/kernelkit/sampler"
)

func TestMain(m *testing.M) { testblas.Main(m, "hybrid") }

// BenchmarkBuild compares building Θ(mn)-dimensional hybrid features, cost
// O(nd + md + mn) per row (HRF App. L), with a plain positive map of the
// same dimension, cost O(mnd): 2048 rows, d = 64.
func BenchmarkBuild(b *testing.B) {
	const rows, d = 2048, 64
	x, _ := sampler.Gaussian{}.Sample(rows, d, 1)
	x.Scale(0.1, x)
	for _, c := range []struct{ m, n int }{{16, 16}, {32, 32}, {64, 16}} {
		h, err := Angular(d, Options{M: c.m, N: c.n, Shared: true, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("angular/M=%d/N=%d/dim=%d", c.m, c.n, h.Dim()), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := features.Queries(h, x); err != nil {
					b.Fatal(err)
				}
			}
		})
		mp, err := features.New(features.Config{Kernel: "softmax", Form: "positive", Features: h.Dim(), Seed: 1}, d)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("positive/dim=%d", h.Dim()), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := features.Apply(mp, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	ce, _ := NewComplexExp(identityC(d), mustSample(256, d, 2))
	b.Run("complexexp/m=256", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := features.Queries(ce, x); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func identityC(d int) []complex128 {
	a := make([]complex128, d*d)
	for i := 0; i < d; i++ {
		a[i*d+i] = 1 + 0.5i
	}
	return a
}
