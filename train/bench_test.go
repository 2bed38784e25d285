package train

import (
	"context"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
)

// BenchmarkTrainStep times one training step of every model kind at
// length 128, width 32, depth 2, batch 16 on the default backend.
func BenchmarkTrainStep(b *testing.B) {
	data := toyData(b, 64, 1)
	for _, kind := range arch.Kinds {
		b.Run(kind, func(b *testing.B) {
			cfg := toyConfig(kind)
			cfg.Model.Length, cfg.Model.Width, cfg.Model.Depth, cfg.Model.Hidden = 128, 32, 2, 64
			cfg.Model.SKIRank, cfg.Model.SKIFilter, cfg.Model.SKIGrid, cfg.Model.Features, cfg.Model.Chunk = 32, 16, 33, 32, 64
			cfg.Steps = 1
			tr, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tr.Fit(context.Background(), data, nil); err != nil { // compile
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				tr.cfg.Steps = 2 + i
				if _, err := tr.Fit(context.Background(), data, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
