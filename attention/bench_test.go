package attention

import (
	"context"
	"fmt"
	"testing"
	"time"

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

// BenchmarkDecode times one decoding step (State.Step: key and query
// features, rank-one update of S and z, one output) with positive ORF
// features, m = 256, d = dv = 64, after a context of 1024 tokens; it
// reports steps/s, which does not depend on the context length, and steps
// per CPU second of the process (the rate on an idle core, which a busy
// machine does not lower).
func BenchmarkDecode(b *testing.B) {
	const d, m, ctx = 64, 256, 1024
	mp, err := features.New(features.Config{Kernel: "softmax", Features: m, Sampler: sampler.Orthogonal{}, Seed: 1}, d)
	if err != nil {
		b.Fatal(err)
	}
	q, k, v := gauss(ctx, d, 1, 0.125), gauss(ctx, d, 2, 0.125), gauss(ctx, d, 3, 1)
	for _, single := range []bool{false, true} {
		b.Run(fmt.Sprintf("float32=%v", single), func(b *testing.B) {
			st, err := (&Linear{Map: mp}).NewState()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := st.Extend(q, k, v, nil); err != nil {
				b.Fatal(err)
			}
			out, out32 := make([]float64, d), make([]float32, d)
			q32, k32, v32 := f32(q.RawRowView(0)), f32(k.RawRowView(0)), f32(v.RawRowView(0))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				if single {
					err = st.Step32(out32, q32, k32, v32)
				} else {
					err = st.Step(out, q.RawRowView(i%ctx), k.RawRowView(i%ctx), v.RawRowView(i%ctx))
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
			if c := cpuTime() - cpu; c > 0 {
				b.ReportMetric(float64(b.N)/c.Seconds(), "steps/cpu-s")
			}
		})
	}
}

// BenchmarkTensor times the batched multi-head call on [B, H, L, d] =
// [4, 8, 512, 64] tensors with positive ORF features (m = 256), float64
// (ApplyTensor) and float32 (ApplyTensor32), bidirectional and causal,
// with the CPU time per call.
func BenchmarkTensor(b *testing.B) {
	const bs, h, l, d, m = 4, 8, 512, 64, 256
	mp, err := features.New(features.Config{Kernel: "softmax", Features: m, Sampler: sampler.Orthogonal{}, Seed: 1}, d)
	if err != nil {
		b.Fatal(err)
	}
	q, k, v := randTensor(b, bs, h, l, d, 1, 0.125), randTensor(b, bs, h, l, d, 2, 0.125), randTensor(b, bs, h, l, d, 3, 1)
	q32, k32, v32 := tensor32(q), tensor32(k), tensor32(v)
	ctx := context.Background()
	for _, causal := range []bool{false, true} {
		att := &Linear{Map: mp, Causal: causal}
		b.Run(fmt.Sprintf("float64/causal=%v", causal), func(b *testing.B) {
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := ApplyTensor(ctx, att, q, k, v, nil); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
		b.Run(fmt.Sprintf("float32/causal=%v", causal), func(b *testing.B) {
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := att.ApplyTensor32(ctx, q32, k32, v32, nil); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// reportCPU reports the CPU seconds of the process per iteration since
// start (see cpuTime).
func reportCPU(b *testing.B, start time.Duration) {
	if c := cpuTime() - start; c > 0 {
		b.ReportMetric(c.Seconds()/float64(b.N), "cpu-s/op")
	}
}
