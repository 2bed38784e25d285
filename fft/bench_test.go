package fft

import (
	"fmt"
	"math"
	"testing"
)

// BenchmarkForward times a forward and an inverse transform of e = 128
// signals (the FD-TNN width of issue 23) at sizes 2n for n =
// 256 … 4096, on each implementation, and reports the conventional rate
// 2 · 2.5·N·log₂N·h FLOP per pair.
func BenchmarkForward(b *testing.B) {
	const h = 128
	for _, n := range []int{512, 1024, 2048, 4096, 8192} {
		var ps []Plan[float32]
		ps = append(ps, NewGo[float32](n, h))
		if lib, err := load[float32](); err == nil {
			ps = append(ps, newFFTW[float32](lib, n, h))
		}
		for _, p := range ps {
			b.Run(fmt.Sprintf("%s/N=%d", p.Impl(), n), func(b *testing.B) {
				x := Make[float32](n * h)
				for i := range x {
					x[i] = float32(i%13) - 6
				}
				spec := Make[float32](2 * (n/2 + 1) * h)
				for i := 0; i < b.N; i++ {
					p.Forward(spec, x)
					p.Inverse(x, spec)
				}
				fl := 2 * 2.5 * float64(n) * math.Log2(float64(n)) * h
				b.ReportMetric(fl*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
