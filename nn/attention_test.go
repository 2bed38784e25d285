package nn

import (
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
)

// refAttention applies a kernelkit attention to every (batch, head) slice
// of q, k, v (B×H×L×d) and returns the flat outputs.
func refAttention(t *testing.T, a attention.Attention, q, k, v arr) []float64 {
	t.Helper()
	b, h, l, d := q.dims[0], q.dims[1], q.dims[2], q.dims[3]
	dv := v.dims[3]
	var out []float64
	for i := 0; i < b*h; i++ {
		qm := mat.NewDense(l, d, append([]float64(nil), q.data[i*l*d:(i+1)*l*d]...))
		km := mat.NewDense(l, d, append([]float64(nil), k.data[i*l*d:(i+1)*l*d]...))
		vm := mat.NewDense(l, dv, append([]float64(nil), v.data[i*l*dv:(i+1)*l*dv]...))
		y, err := a.Apply(qm, km, vm)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, y.RawMatrix().Data...)
	}
	return out
}

func TestSoftmaxAttentionMatchesExact(t *testing.T) {
	const b, h, l, d, dv = 2, 2, 6, 4, 3
	q, k, v := randArr(1, 1, b, h, l, d), randArr(2, 1, b, h, l, d), randArr(3, 1, b, h, l, dv)
	for _, causal := range []bool{false, true} {
		fn := func(in []*Node) *Node { return SoftmaxAttention(in[0], in[1], in[2], causal, nil) }
		assertClose(t, "softmax attention", eval1(t, fn, q, k, v), refAttention(t, attention.Exact{Causal: causal}, q, k, v), 1e-12)
		checkGradient(t, "softmax attention", fn, q, k, v)
	}
}

func TestLinearAttentionMatchesAttentionLinear(t *testing.T) {
	const b, h, l, d, dv, m = 2, 2, 8, 4, 3, 16
	mp, err := features.New(features.Config{Kernel: "softmax", Features: m, Sampler: sampler.Orthogonal{}, Seed: 4}, d)
	if err != nil {
		t.Fatal(err)
	}
	om, err := arch.DrawFavorProjection(m, d, 4)
	if err != nil {
		t.Fatal(err)
	}
	omega := arr{data: om, dims: []int{m, d}}
	q, k, v := randArr(1, 1, b, h, l, d), randArr(2, 1, b, h, l, d), randArr(3, 1, b, h, l, dv)
	for _, tc := range []struct {
		name   string
		causal bool
		chunk  int
	}{{"bidirectional", false, 0}, {"causal one block", true, 0}, {"causal chunks of 2", true, 2}, {"causal chunks of 4", true, 4}} {
		fn := func(in []*Node) *Node { return LinearAttention(in[0], in[1], in[2], in[3], tc.causal, tc.chunk, nil) }
		ref := refAttention(t, &attention.Linear{Map: mp, Causal: tc.causal, Chunk: 3}, q, k, v)
		assertClose(t, tc.name, eval1(t, fn, q, k, v, omega), ref, 1e-12)
		checkGradient(t, tc.name, fn, q, k, v, omega)
	}
}

// TestKeyMask checks that masked keys are ignored: attention over a padded
// sequence equals attention over its unpadded prefix, for the queries of
// the prefix.
func TestKeyMask(t *testing.T) {
	const l, keep, d, m = 6, 4, 4, 8
	om, err := arch.DrawFavorProjection(m, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	omega := arr{data: om, dims: []int{m, d}}
	q, k, v := randArr(1, 1, 1, 1, l, d), randArr(2, 1, 1, 1, l, d), randArr(3, 1, 1, 1, l, d)
	cut := func(a arr) arr { return arr{data: a.data[:keep*d], dims: []int{1, 1, keep, d}} }
	mask := arr{data: []float64{1, 1, 1, 1, 0, 0}, dims: []int{1, l}}
	for name, f := range map[string]func(q, k, v, om, mask *Node) *Node{
		"softmax": func(q, k, v, _, mask *Node) *Node { return SoftmaxAttention(q, k, v, false, mask) },
		"favor+":  func(q, k, v, om, mask *Node) *Node { return LinearAttention(q, k, v, om, false, 0, mask) },
	} {
		full := eval1(t, func(in []*Node) *Node { return f(in[0], in[1], in[2], in[3], in[4]) }, q, k, v, omega, mask)
		short := eval1(t, func(in []*Node) *Node { return f(in[0], in[1], in[2], in[3], nil) }, cut(q), cut(k), cut(v), omega)
		assertClose(t, name+" key mask", full[:keep*d], short, 1e-12)
	}
}
