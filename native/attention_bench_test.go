package native

import (
	"fmt"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
)

// BenchmarkAttention times one forward and backward pass of the attention
// mixer in float32 at L = 512, width 64, 2 heads, batch 16 (FAVOR+: 32
// features; HRF: the default M and N, FLOP-matched to them; causal:
// chunks of 64), with a key mask padding a quarter of the sequences'
// ends.
func BenchmarkAttention(b *testing.B) {
	const B, L, d = 16, 512, 64
	for _, kind := range []string{arch.KindTransformer, arch.KindPerformer, arch.KindHRF} {
		for _, causal := range []bool{false, true} {
			name := "bidirectional"
			if causal {
				name = "causal"
			}
			b.Run(fmt.Sprintf("%s/%s", kind, name), func(b *testing.B) {
				cfg := &arch.ModelConfig{Kind: kind, Vocab: 16, Classes: 10, Length: L, Width: d, Depth: 1, Causal: causal}
				cfg.Defaults()
				if err := cfg.Validate(); err != nil {
					b.Fatal(err)
				}
				a := NewAttention[float32](cfg, "/block_0/mix")
				for i, p := range a.Params() {
					for j, v := range mixRand(uint64(i+1), 0.125, len(p.Value)) {
						p.Value[j] = float32(v)
					}
				}
				x, dy := make([]float32, B*L*d), make([]float32, B*L*d)
				for i, v := range mixRand(2, 1, len(x)) {
					x[i] = float32(v)
				}
				for i, v := range mixRand(3, 1, len(dy)) {
					dy[i] = float32(v)
				}
				mask := make([]float32, B*L)
				for i := range mask {
					if i%L < L-L/4 {
						mask[i] = 1
					}
				}
				a.SetMask(mask)
				a.Forward(x, B, L) // allocate the buffers
				a.Backward(dy)
				cpu := processCPU()
				for b.Loop() {
					a.Forward(x, B, L)
					a.Backward(dy)
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// BenchmarkAttentionLength times a forward and backward pass of causal
// FAVOR+ and HRF attention (width 64, 2 heads, batch 4, float32) at L =
// 512 and 2048: linear in L, the longer run should take about four times
// as long.
func BenchmarkAttentionLength(b *testing.B) {
	const B, d = 4, 64
	for _, kind := range []string{arch.KindPerformer, arch.KindHRF} {
		for _, L := range []int{512, 2048} {
			b.Run(fmt.Sprintf("%s/L=%d", kind, L), func(b *testing.B) {
				cfg := &arch.ModelConfig{Kind: kind, Vocab: 16, Classes: 10, Length: L, Width: d, Depth: 1, Causal: true}
				cfg.Defaults()
				if err := cfg.Validate(); err != nil {
					b.Fatal(err)
				}
				a := NewAttention[float32](cfg, "/block_0/mix")
				for i, p := range a.Params() {
					for j, v := range mixRand(uint64(i+1), 0.125, len(p.Value)) {
						p.Value[j] = float32(v)
					}
				}
				x := make([]float32, B*L*d)
				for i, v := range mixRand(2, 1, len(x)) {
					x[i] = float32(v)
				}
				a.Backward(a.Forward(x, B, L))
				cpu := processCPU()
				for b.Loop() {
					a.Backward(a.Forward(x, B, L))
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// BenchmarkFFN times one forward and backward pass of the FFN block in
// float32 at L = 512, width 64 (hidden 128), batch 16.
func BenchmarkFFN(b *testing.B) {
	const B, L, d = 16, 512, 64
	cfg := &arch.ModelConfig{Kind: arch.KindTransformer, Vocab: 16, Classes: 10, Length: L, Width: d, Depth: 1}
	cfg.Defaults()
	f := NewFFN[float32](cfg, "/block_0/ffn")
	for i, p := range f.Params() {
		for j, v := range mixRand(uint64(i+1), 0.125, len(p.Value)) {
			p.Value[j] = float32(v)
		}
	}
	x := make([]float32, B*L*d)
	for i, v := range mixRand(2, 1, len(x)) {
		x[i] = float32(v)
	}
	f.Backward(f.Forward(x, B, L))
	cpu := processCPU()
	for b.Loop() {
		f.Backward(f.Forward(x, B, L))
	}
	reportCPU(b, cpu)
}

// reportCPU reports the process CPU time per operation since cpu (all
// cores together; where it exceeds ns/op the work ran in parallel).
func reportCPU(b *testing.B, cpu int64) {
	if now := processCPU(); cpu > 0 && now > cpu {
		b.ReportMetric(float64(now-cpu)/float64(b.N), "cpu-ns/op")
	}
}
