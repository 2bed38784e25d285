package nn

import (
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func f32(dims ...int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%7) * 0.1
	}
	return tensors.FromFlatDataAndDimensions(v, dims...)
}

func benchGraph(b *testing.B, fn func([]*Node) *Node, in ...*tensors.Tensor) {
	exec, err := NewExec(testBackend(b), fn)
	if err != nil {
		b.Fatal(err)
	}
	args := make([]any, len(in))
	for i := range in {
		args[i] = in[i]
	}
	if _, err := exec.Exec(args...); err != nil { // compile
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := exec.Exec(args...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAffineGrad compares the backward pass of a 2048×64 · 64×64
// layer with the fast DotGeneral VJP and with GoMLX's own.
func BenchmarkAffineGrad(b *testing.B) {
	x, w := f32(2048, 64), f32(64, 64)
	b.Run("fast", func(b *testing.B) {
		benchGraph(b, func(in []*Node) *Node { return Gradient(ReduceAllSum(matMul(in[0], in[1])), in[1])[0] }, x, w)
	})
	b.Run("gomlx", func(b *testing.B) {
		benchGraph(b, func(in []*Node) *Node { return Gradient(ReduceAllSum(Einsum("ij,jk->ik", in[0], in[1])), in[1])[0] }, x, w)
	})
}

// BenchmarkToeplitzDense times the dense Toeplitz product (B = 16, n =
// 256, d = 32) forward and with its gradient.
func BenchmarkToeplitzDense(b *testing.B) {
	x, coef := f32(16, 256, 32), f32(511, 32)
	b.Run("forward", func(b *testing.B) {
		benchGraph(b, func(in []*Node) *Node { return ToeplitzDense(in[0], in[1]) }, x, coef)
	})
	b.Run("gradient", func(b *testing.B) {
		benchGraph(b, func(in []*Node) *Node { return Gradient(ReduceAllSum(ToeplitzDense(in[0], in[1])), in[1])[0] }, x, coef)
	})
}
