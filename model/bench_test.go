package model

import (
	"context"
	"fmt"
	"testing"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/testblas"
)

func TestMain(m *testing.M) { testblas.Main(m, "model") }

// BenchmarkLetterFitPredict times the reference job: standardise, 512 RBF
// features, ridge classifier fit on 16000 rows, predict 4000 rows.
func BenchmarkLetterFitPredict(b *testing.B) {
	train, test, _ := data.Letter().SplitAt(16000)
	for _, D := range []int{512, 2048} {
		for _, f32 := range []bool{false, true} {
			b.Run(fmt.Sprintf("D=%d/float32=%v", D, f32), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					m, err := Fit(context.Background(), Options{Task: Classification, Standardize: true, Lambda: 0.5,
						Features: features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: D, Float32: f32}}, train)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := m.Classify(test.X); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
