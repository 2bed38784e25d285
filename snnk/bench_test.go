package snnk

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/sampler"
)

// BenchmarkForward compares an SNNK layer's forward pass, O(md + ml) per
// input with the parameter tower precomputed, with the dense layer
// f(Wx + b) it replaces, O(ld): 256 inputs, d = l = 1024.
func BenchmarkForward(b *testing.B) {
	const n, d, l = 256, 1024, 1024
	x, _ := sampler.Gaussian{}.Sample(n, d, 1)
	x.Scale(1/math.Sqrt(d), x)
	w, _ := sampler.Gaussian{}.Sample(l, d, 2)
	w.Scale(1/math.Sqrt(d), w)
	bias := make([]float64, l)
	b.Run("dense", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var z mat.Dense
			z.Mul(x, w.T())
			z.Apply(func(_, j int, v float64) float64 { return math.Cos(v + bias[j]) }, &z)
		}
	})
	for _, m := range []int{8, 32, 128} {
		tw, _ := NewURF(Cos, d, m, DefaultA(d), nil, 3)
		ly, _ := NewLayer(tw, w, bias)
		b.Run(fmt.Sprintf("cos-snnk/m=%d/dim=%d", m, tw.Dim()), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := ly.Forward(x); err != nil {
					b.Fatal(err)
				}
			}
		})
		rt, _ := NewReLU(d, m, nil, 4)
		rl, _ := NewLayer(rt, w, nil)
		b.Run(fmt.Sprintf("relu-snnk/m=%d", m), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := rl.Forward(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
