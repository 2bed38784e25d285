package mlp

import (
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/sampler"
)

// BenchmarkMatMul compares a 512³ float32 product in GoMLX's pure-Go
// backend with gonum's float64 product (pure Go unless OpenBLAS is
// installed by the caller).
func BenchmarkMatMul(b *testing.B) {
	const n = 512
	a, _ := sampler.Gaussian{}.Sample(n, n, 1)
	c, _ := sampler.Gaussian{}.Sample(n, n, 2)
	b.Run("gomlx-simplego-f32", func(b *testing.B) {
		be, err := Backend()
		if err != nil {
			b.Fatal(err)
		}
		exec := graph.MustNewExec(be, func(x, y *graph.Node) *graph.Node { return graph.MatMul(x, y) })
		ta, tc := tensors.FromValue(toF32(a)), tensors.FromValue(toF32(c))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			exec.MustExec(ta, tc)[0].FinalizeAll()
		}
		b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("gonum-f64", func(b *testing.B) {
		var out mat.Dense
		for i := 0; i < b.N; i++ {
			out.Mul(a, c)
		}
		b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}
