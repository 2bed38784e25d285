package features

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/testblas"
)

func TestMain(m *testing.M) { testblas.Main(m, "features") }

// BenchmarkTransform measures each feature map on a letter-sized batch:
// 20000 rows of dimension 16 to D = 1024 features, and a wider projection
// (d = 64). The reported GFLOP/s counts the projection's 2·n·d·m flops only.
func BenchmarkTransform(b *testing.B) {
	for _, shape := range []struct{ n, d, D int }{{20000, 16, 1024}, {20000, 64, 1024}} {
		x := randomRows(shape.n, shape.d, 1, 0.3)
		for _, c := range []Config{
			{Kernel: "rbf", Form: "cos", Gamma: 0.1},
			{Kernel: "rbf", Form: "sincos", Gamma: 0.1},
			{Kernel: "softmax", Form: "positive"},
			{Kernel: "softmax", Form: "hyperbolic"},
			{Kernel: "softmax", Form: "trig"},
			{Kernel: "arccos0"},
			{Kernel: "arccos1"},
			{Kernel: "rbf", Form: "cos", Gamma: 0.1, Float32: true},
		} {
			c.Features = shape.D
			name := fmt.Sprintf("n=%d/d=%d/D=%d/%s-%s", shape.n, shape.d, shape.D, c.Kernel, c.Form)
			if c.Float32 {
				name += "-f32"
			}
			b.Run(name, func(b *testing.B) {
				mp, err := New(c, shape.d)
				if err != nil {
					b.Fatal(err)
				}
				z := mat.NewDense(shape.n, mp.Dim(), nil)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := mp.Transform(z, x); err != nil {
						b.Fatal(err)
					}
				}
				flops := 2 * float64(shape.n) * float64(shape.d) * float64(mp.Projections())
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "proj-GFLOP/s")
				b.ReportMetric(float64(shape.n)*float64(mp.Dim())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mfeatures/s")
			})
		}
	}
}

// BenchmarkTransformOneRow measures the per-call cost of a map on a single
// row (the serving path), with its allocations: d = 16, D = 1024.
func BenchmarkTransformOneRow(b *testing.B) {
	for _, c := range []Config{
		{Kernel: "rbf", Form: "cos", Gamma: 0.1, Features: 1024},
		{Kernel: "softmax", Form: "positive", Features: 1024},
	} {
		b.Run(c.Kernel+"-"+c.Form, func(b *testing.B) {
			mp, err := New(c, 16)
			if err != nil {
				b.Fatal(err)
			}
			x := randomRows(1, 16, 1, 0.3)
			z := mat.NewDense(1, mp.Dim(), nil)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := mp.Transform(z, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
