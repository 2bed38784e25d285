package nn

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/sampler"
)

// hybridInputs draws the projections of hybrid.Angular(d, o) and returns
// them as test arrays with the kernelkit estimator itself.
func hybridInputs(t *testing.T, d int, o hybrid.Options) (pos, trig, tau arr, ref *hybrid.HRF) {
	t.Helper()
	p, err := arch.DrawHybridProjections(d, o)
	if err != nil {
		t.Fatal(err)
	}
	ref, err = hybrid.Angular(d, o)
	if err != nil {
		t.Fatal(err)
	}
	return arr{p.Pos, []int{o.M, d}}, arr{p.Trig, []int{o.M, d}}, arr{p.Tau, []int{o.N, d}}, ref
}

// TestHybridFeaturesMatchAngular checks that the graph features' dot
// products Φ₁(q)ᵀΦ₂(k) equal hybrid.Angular's estimates Query(q)ᵀKey(k)
// up to the row factors (which cancel in attention): the ratio of the two
// Gram matrices is a rank-one product a_i·b, checked by normalising both
// by their first row and column.
func TestHybridFeaturesMatchAngular(t *testing.T) {
	const l, d = 5, 4
	o := hybrid.Options{M: 6, N: 3, Seed: 11}
	pos, trig, tau, ref := hybridInputs(t, d, o)
	x := randArr(5, 0.7, 1, 1, l, d)
	y := randArr(6, 0.7, 1, 1, l, d)
	fn := func(in []*Node) []*Node {
		return []*Node{HybridFeatures(in[0], in[2], in[3], in[4], true), HybridFeatures(in[1], in[2], in[3], in[4], false)}
	}
	out := eval(t, fn, x, y, pos, trig, tau)
	dim := arch.HybridFeatureDim(o.M, o.N)
	if len(out[0]) != l*dim || ref.Dim() != dim {
		t.Fatalf("feature dimension %d (graph), %d (hybrid.Angular), want %d", len(out[0])/l, ref.Dim(), dim)
	}
	gq := mat.NewDense(l, dim, out[0])
	gk := mat.NewDense(l, dim, out[1])
	var got, want mat.Dense
	got.Mul(gq, gk.T())
	rq, err := hrfSide(ref, mat.NewDense(l, d, x.data), true)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := hrfSide(ref, mat.NewDense(l, d, y.data), false)
	if err != nil {
		t.Fatal(err)
	}
	want.Mul(rq, rk.T())
	norm := func(m *mat.Dense) []float64 {
		var out []float64
		for i := 0; i < l; i++ {
			for j := 0; j < l; j++ {
				out = append(out, m.At(i, j)*m.At(0, 0)/(m.At(i, 0)*m.At(0, j)))
			}
		}
		return out
	}
	assertClose(t, "normalised Gram matrix", norm(&got), norm(&want), 1e-12)
}

func hrfSide(h *hybrid.HRF, x *mat.Dense, query bool) (*mat.Dense, error) {
	r, _ := x.Dims()
	out := mat.NewDense(r, h.Dim(), nil)
	if query {
		return out, h.Query(out, x)
	}
	return out, h.Key(out, x)
}

// TestHybridAttentionMatchesAttentionLinear checks HybridAttention against
// kernelkit's attention.Linear with the Pair hybrid.Angular on the same
// projections (bidirectional, causal in one block and in chunks, shared
// and independent base projections, iid and orthogonal rows) to 1e-10,
// and its gradient with respect to q, k, v and the base projections
// against central differences.
func TestHybridAttentionMatchesAttentionLinear(t *testing.T) {
	const b, h, l, d, dv = 2, 2, 8, 4, 3
	q, k, v := randArr(1, 1, b, h, l, d), randArr(2, 1, b, h, l, d), randArr(3, 1, b, h, l, dv)
	for _, tc := range []struct {
		name   string
		causal bool
		chunk  int
		o      hybrid.Options
	}{
		{"bidirectional", false, 0, hybrid.Options{M: 8, N: 4, Seed: 3}},
		{"bidirectional shared orthogonal", false, 0, hybrid.Options{M: 8, N: 4, Seed: 3, Shared: true, Sampler: sampler.Orthogonal{}}},
		{"causal one block", true, 0, hybrid.Options{M: 6, N: 2, Seed: 5}},
		{"causal chunks of 2", true, 2, hybrid.Options{M: 6, N: 2, Seed: 5, Sampler: sampler.Orthogonal{}}},
		{"causal chunks of 4", true, 4, hybrid.Options{M: 4, N: 8, Seed: 7}},
	} {
		pos, trig, tau, ref := hybridInputs(t, d, tc.o)
		fn := func(in []*Node) *Node {
			return HybridAttention(in[0], in[1], in[2], in[3], in[4], in[5], tc.causal, tc.chunk, nil)
		}
		want := refAttention(t, &attention.Linear{Pair: ref, Causal: tc.causal, Chunk: 3}, q, k, v)
		assertClose(t, tc.name, eval1(t, fn, q, k, v, pos, trig, tau), want, 1e-10)
		checkGradient(t, tc.name, fn, q, k, v, pos, trig, tau)
	}
}

// TestHybridAttentionKeyMask checks the key mask against
// attention.Linear.ApplyMasked (whose padded keys are never featurised),
// bidirectional and causal, and that the outputs of the real queries do
// not move when the padded keys and values change.
func TestHybridAttentionKeyMask(t *testing.T) {
	const l, d, dv = 6, 4, 2
	o := hybrid.Options{M: 5, N: 3, Seed: 9}
	pos, trig, tau, ref := hybridInputs(t, d, o)
	q, k, v := randArr(1, 1, 1, 1, l, d), randArr(2, 1, 1, 1, l, d), randArr(3, 1, 1, 1, l, dv)
	maskVals := []float64{1, 1, 0, 1, 0, 0}
	mask := arr{maskVals, []int{1, l}}
	pad := make([]bool, l)
	for i, m := range maskVals {
		pad[i] = m == 0
	}
	for _, causal := range []bool{false, true} {
		fn := func(in []*Node) *Node {
			return HybridAttention(in[0], in[1], in[2], in[3], in[4], in[5], causal, 0, in[6])
		}
		got := eval1(t, fn, q, k, v, pos, trig, tau, mask)
		a := &attention.Linear{Pair: ref, Causal: causal}
		want, err := a.ApplyMasked(mat.NewDense(l, d, q.data), mat.NewDense(l, d, k.data), mat.NewDense(l, dv, v.data), pad)
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, "masked", got, want.RawMatrix().Data, 1e-10)
		// Padded keys and values changed: the outputs stay.
		k2, v2 := randArr(20, 3, 1, 1, l, d), randArr(21, 3, 1, 1, l, dv)
		for i, p := range pad {
			if !p {
				copy(k2.data[i*d:(i+1)*d], k.data[i*d:(i+1)*d])
				copy(v2.data[i*dv:(i+1)*dv], v.data[i*dv:(i+1)*dv])
			}
		}
		// The key factor (the sequence's largest key) may change with the
		// padded keys; it cancels, so the outputs agree to rounding.
		assertClose(t, "padding ignored", eval1(t, fn, q, k2, v2, pos, trig, tau, mask), got, 1e-12)
	}
}

// TestHybridAttentionFloat32 runs the layer in float32, as training does:
// at unit-scale inputs it agrees with kernelkit's float64 attention.Linear
// to float32 accuracy (1e-4 relative), and at inputs of squared norm ~200
// after the d^(−1/4) scaling, where the trigonometric base's factor
// exp(‖x‖²/2) is beyond float32 (exp(88) overflows), its outputs stay
// finite thanks to the row factors.
func TestHybridAttentionFloat32(t *testing.T) {
	const l, d, dv = 8, 4, 2
	o := hybrid.Options{M: 6, N: 3, Seed: 2}
	pos, trig, tau, ref := hybridInputs(t, d, o)
	v := randArr(3, 1, 1, 1, l, dv)
	f32 := func(causal bool) func(in []*Node) *Node {
		return func(in []*Node) *Node {
			c := make([]*Node, len(in))
			for i, x := range in {
				c[i] = ConvertDType(x, dtypes.Float32)
			}
			return ConvertDType(HybridAttention(c[0], c[1], c[2], c[3], c[4], c[5], causal, 4, nil), dtypes.Float64)
		}
	}
	for _, causal := range []bool{false, true} {
		q, k := randArr(1, 1, 1, 1, l, d), randArr(2, 1, 1, 1, l, d)
		want := refAttention(t, &attention.Linear{Pair: ref, Causal: causal}, q, k, v)
		assertClose(t, "float32", eval1(t, f32(causal), q, k, v, pos, trig, tau), want, 1e-4)
		q, k = randArr(1, 10, 1, 1, l, d), randArr(2, 10, 1, 1, l, d)
		for i, y := range eval1(t, f32(causal), q, k, v, pos, trig, tau) {
			if math.IsNaN(y) || math.IsInf(y, 0) {
				t.Fatalf("causal %v: float32 output %d is %v at large inputs", causal, i, y)
			}
		}
	}
}

// TestDrawHybridProjectionsErrors checks that non-positive counts are
// errors.
func TestDrawHybridProjectionsErrors(t *testing.T) {
	for _, o := range []hybrid.Options{{M: 0, N: 1}, {M: 1, N: 0}, {M: -1, N: 2}} {
		if _, err := arch.DrawHybridProjections(4, o); err == nil {
			t.Errorf("M=%d, N=%d: no error", o.M, o.N)
		}
	}
	if _, err := arch.DrawHybridProjections(0, hybrid.Options{M: 1, N: 1}); err == nil {
		t.Error("d=0: no error")
	}
}
