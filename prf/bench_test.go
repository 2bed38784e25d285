package prf

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
)

// BenchmarkTransform compares the scaled features of 4096 rows (d = 64,
// m = 256) of FAVOR+ (features.Map), OPRF and SDERF, and the fit.
func BenchmarkTransform(b *testing.B) {
	const n, d, m = 4096, 64, 256
	x, err := sampler.Gaussian{}.Sample(n, d, 1)
	if err != nil {
		b.Fatal(err)
	}
	x.Scale(0.35, x)
	st, err := NewStats(x, x)
	if err != nil {
		b.Fatal(err)
	}
	dst := mat.NewDense(n, m, nil)
	fav, err := features.New(features.Config{Kernel: "softmax", Features: m, Sampler: sampler.Orthogonal{}, Seed: 1}, d)
	if err != nil {
		b.Fatal(err)
	}
	maps := []features.ScaledTransformer{fav}
	for _, fam := range []string{OPRF, SDERF} {
		mp, err := New(Config{Family: fam, Features: m, Sampler: sampler.Orthogonal{}, Seed: 1}, st)
		if err != nil {
			b.Fatal(err)
		}
		maps = append(maps, mp)
	}
	for i, name := range []string{"favor+", "oprf", "sderf"} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				if _, err := maps[i].TransformScaled(dst, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("fit-sderf", func(b *testing.B) {
		for range b.N {
			if _, err := NewStats(x, x); err != nil {
				b.Fatal(err)
			}
			if _, _, err := FitSDERF(st); err != nil {
				b.Fatal(err)
			}
		}
	})
}
