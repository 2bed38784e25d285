package calibrate

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/rng"
)

// BenchmarkFit fits the calibration of letter-sized out-of-fold scores:
// 16000 rows, 26 classes (26 sigmoid fits of 16000 rows each).
func BenchmarkFit(b *testing.B) {
	const n, k = 16000, 26
	r := rng.New(1)
	scores := mat.NewDense(n, k, nil)
	labels := make([]int, n)
	for i := range n {
		labels[i] = r.IntN(k)
		for c := range k {
			v := 0.2 * r.NormFloat64()
			if c == labels[i] {
				v += 0.6
			}
			scores.Set(i, c, v)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Fit(scores, labels); err != nil {
			b.Fatal(err)
		}
	}
}
