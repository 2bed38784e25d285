package native

import (
	"fmt"
	"testing"
)

// BenchmarkLinearBackward times the parameter gradient ∂W = xᵀ·dy of a
// float32 linear map on 8192 rows (the FD-TNN benchmark's batch of 16
// sequences of 512) in the two splits over the cores: over row chunks
// with the partials summed in order (affineBackward, what linear uses)
// and over 64-column chunks of the full contraction (gemmCols).
func BenchmarkLinearBackward(b *testing.B) {
	const rows = 8192
	for _, sh := range [][2]int{{128, 128}, {128, 256}, {256, 128}} {
		in, out := sh[0], sh[1]
		x, dy := make([]float32, rows*in), make([]float32, rows*out)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		for i := range dy {
			dy[i] = float32(i%5) - 2
		}
		w := newParam[float32]("", "w", true, in, out)
		fl := 2 * float64(rows*in*out)
		b.Run(fmt.Sprintf("%dx%d/rows", in, out), func(b *testing.B) {
			var gs gradScratch[float32]
			for i := 0; i < b.N; i++ {
				affineBackward(&gs, gemmChunk, nil, false, dy, x, w, nil, rows, in, out)
			}
			b.ReportMetric(fl*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("%dx%d/cols", in, out), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				gemmCols(true, false, in, out, rows, 1, x, in, dy, out, 1, w.Grad, out)
			}
			b.ReportMetric(fl*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// benchUnitStep times forward and backward of a row-local unit (width
// d, product FLOPs flops per row and step) on a float32 batch of 32
// sequences of 512 = 16384 rows, the replication benchmark's shape, with
// fixed parameter and input values.
func benchUnitStep(b *testing.B, l Layer[float32], d int, flops float64) {
	const B, L = 32, 512
	for k, p := range l.Params() {
		for i := range p.Value {
			p.Value[i] = float32((i+k)%11-5) / 16
		}
	}
	x, dy := make([]float32, B*L*d), make([]float32, B*L*d)
	for i := range x {
		x[i] = float32(i%7-3) / 4
		dy[i] = float32(i%5-2) / 4
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.Forward(x, B, L)
		l.Backward(dy)
	}
	b.ReportMetric(B*L*flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkGLUStep times the GLU of the replication benchmark's shape
// (width 64, hidden 128), with its product FLOPs per second: 6·d·h a row
// forward, twice that backward.
func BenchmarkGLUStep(b *testing.B) {
	const d, h = 64, 128
	benchUnitStep(b, newGLU[float32]("/glu", d, h, true), d, 3*2*3*d*h)
}

// BenchmarkGTUStep times the GTU of the replication benchmark's shape
// (width 64, expanded width 64) around an identity mixer, with its
// product FLOPs per second: 6·d·e a row forward, twice that backward.
func BenchmarkGTUStep(b *testing.B) {
	const d, e = 64, 64
	benchUnitStep(b, newGTU[float32]("/gtu", d, e, identityMixer[float32]{}, true), d, 3*2*3*d*e)
}
