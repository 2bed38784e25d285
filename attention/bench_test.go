package attention

import (
	"fmt"
	"testing"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/testblas"
	"github.com/kernelkit/kernelkit/sampler"
)

func TestMain(m *testing.M) { testblas.Main(m, "attention") }

// BenchmarkAttention times exact and linear (positive ORF features, m = 256)
// attention, d = 64, bidirectional and causal. `kernelkit attention
// --timing` runs the same comparison up to L = 65536 with memory.
func BenchmarkAttention(b *testing.B) {
	const d, m = 64, 256
	mp, _ := features.New(features.Config{Kernel: "softmax", Features: m, Sampler: sampler.Orthogonal{}, Seed: 1}, d)
	for _, l := range []int{256, 1024, 4096, 16384} {
		q, k, v := gauss(l, d, 1, 1), gauss(l, d, 2, 1), gauss(l, d, 3, 1)
		for _, causal := range []bool{false, true} {
			if l <= 4096 {
				b.Run(fmt.Sprintf("exact/L=%d/causal=%v", l, causal), func(b *testing.B) {
					b.ReportAllocs()
					for i := 0; i < b.N; i++ {
						if _, err := (Exact{Causal: causal}).Apply(q, k, v); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			b.Run(fmt.Sprintf("linear/L=%d/causal=%v", l, causal), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := (&Linear{Map: mp, Causal: causal}).Apply(q, k, v); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
