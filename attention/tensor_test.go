package attention

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/sampler"
)

// randTensor returns a tensor of N(0, scale²) entries.
func randTensor(t testing.TB, b, h, l, d int, seed uint64, scale float64) Tensor {
	t.Helper()
	x, err := NewTensor(b, h, l, d)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(seed)
	for i := range x.Data {
		x.Data[i] = scale * r.NormFloat64()
	}
	return x
}

func tensor32(x Tensor) Tensor32 {
	out := Tensor32{Batch: x.Batch, Heads: x.Heads, Len: x.Len, Dim: x.Dim, Data: make([]float32, len(x.Data))}
	for i, v := range x.Data {
		out.Data[i] = float32(v)
	}
	return out
}

// TestTensorBitForBit: the batched multi-head call on [B, H, L, d] tensors
// equals, bit for bit, the loop over (sequence, head) pairs of ApplyMasked
// (Apply32 in float32) on copies of each pair's matrices, with a different
// key padding mask per sequence and Lq ≠ Lk, for exact attention and
// linear attention (bidirectional, causal with chunk 4).
func TestTensorBitForBit(t *testing.T) {
	const b, h, lq, lk, d, dv = 3, 4, 9, 13, 8, 5
	q, k, v := randTensor(t, b, h, lq, d, 1, 0.5), randTensor(t, b, h, lk, d, 2, 0.5), randTensor(t, b, h, lk, dv, 3, 1)
	pad := make([]bool, b*lk)
	for i := range pad {
		pad[i] = (i*7)%5 == 0
	}
	p, err := catalog.Default().Pair("positive", features.Options{InputDim: d, Features: 32, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, att := range []Masked{Exact{}, Exact{Causal: true}, &Linear{Pair: p}, &Linear{Pair: p, Causal: true, Chunk: 4}} {
		out, err := ApplyTensor(context.Background(), att, q, k, v, pad)
		if err != nil {
			t.Fatal(err)
		}
		if out.Batch != b || out.Heads != h || out.Len != lq || out.Dim != dv {
			t.Fatalf("%T: output shape [%d %d %d %d]", att, out.Batch, out.Heads, out.Len, out.Dim)
		}
		for i := 0; i < b; i++ {
			for j := 0; j < h; j++ {
				want, err := att.ApplyMasked(mat.DenseCopyOf(q.Head(i, j)), mat.DenseCopyOf(k.Head(i, j)), mat.DenseCopyOf(v.Head(i, j)), pad[i*lk:(i+1)*lk])
				if err != nil {
					t.Fatal(err)
				}
				if !mat.Equal(out.Head(i, j), want) {
					t.Errorf("%T: sequence %d head %d differs from the per-head call", att, i, j)
				}
			}
		}
		lin, ok := att.(*Linear)
		if !ok {
			continue
		}
		q32, k32, v32 := tensor32(q), tensor32(k), tensor32(v)
		out32, err := lin.ApplyTensor32(context.Background(), q32, k32, v32, pad)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < b; i++ {
			for j := 0; j < h; j++ {
				want, err := lin.Apply32(to32(from32(q32.Head(i, j))), to32(from32(k32.Head(i, j))), to32(from32(v32.Head(i, j))), pad[i*lk:(i+1)*lk])
				if err != nil {
					t.Fatal(err)
				}
				if !floatsEqual32(out32.Head(i, j).Data, want.Data) {
					t.Errorf("float32 %T: sequence %d head %d differs from the per-head call", att, i, j)
				}
			}
		}
	}
}

// TestTensorErrors: inconsistent shapes, a mask of the wrong length and a
// cancelled context are errors.
func TestTensorErrors(t *testing.T) {
	q, k, v := randTensor(t, 2, 2, 3, 4, 1, 1), randTensor(t, 2, 2, 5, 4, 2, 1), randTensor(t, 2, 2, 5, 3, 3, 1)
	ctx := context.Background()
	bad := []struct {
		name    string
		q, k, v Tensor
		pad     []bool
	}{
		{"heads differ", q, randTensor(t, 2, 3, 5, 4, 2, 1), v, nil},
		{"dims differ", q, randTensor(t, 2, 2, 5, 3, 2, 1), v, nil},
		{"values length", q, k, randTensor(t, 2, 2, 4, 3, 3, 1), nil},
		{"mask length", q, k, v, make([]bool, 5)},
		{"data length", Tensor{Batch: 2, Heads: 2, Len: 3, Dim: 4, Data: make([]float64, 23)}, k, v, nil},
		{"zero dimension", Tensor{Batch: 0, Heads: 2, Len: 3, Dim: 4}, k, v, nil},
	}
	for _, c := range bad {
		if _, err := ApplyTensor(ctx, Exact{}, c.q, c.k, c.v, c.pad); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	if _, err := NewTensor(1<<20, 1<<20, 1<<20, 1<<20); err == nil {
		t.Error("huge tensor accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ApplyTensor(cctx, Exact{}, q, k, v, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// TestFloat32Error measures the single-precision path against float64 on
// a typical attention layer (L = 1024, d = dv = 64, m = 256 positive ORF
// features, inputs N(0, 1/d) so ‖q‖ ≈ 1): the relative error (Frobenius)
// of Apply32 against Apply on the same float32 inputs stays below 1e-5 —
// bidirectional and causal — while the random-feature error against exact
// softmax attention is about 1e-2, three orders larger.
func TestFloat32Error(t *testing.T) {
	const l, d, m = 1024, 64, 256
	q, k, v := gauss(l, d, 151, 1/math.Sqrt(d)), gauss(l, d, 152, 1/math.Sqrt(d)), gauss(l, d, 153, 1)
	q, k, v = round32(q), round32(k), round32(v)
	mp, err := features.New(features.Config{Kernel: "softmax", Features: m, Sampler: sampler.Orthogonal{}, Seed: 5}, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, causal := range []bool{false, true} {
		att := &Linear{Map: mp, Causal: causal}
		o64, err := att.Apply(q, k, v)
		if err != nil {
			t.Fatal(err)
		}
		o32, err := att.Apply32(to32(q), to32(k), to32(v), nil)
		if err != nil {
			t.Fatal(err)
		}
		exact, err := Exact{Causal: causal}.Apply(q, k, v)
		if err != nil {
			t.Fatal(err)
		}
		e32 := relErr(from32(o32), o64)
		worst := maxAbsDiff(from32(o32), o64) / maxAbs(o64)
		eRF := relErr(o64, exact)
		t.Logf("causal=%v: float32 vs float64 relative error %.2g (largest entry %.2g of max|out|); float64 vs exact softmax %.2g", causal, e32, worst, eRF)
		if !(e32 < 1e-5) || !(eRF > 100*e32) {
			t.Errorf("causal=%v: float32 error %.3g, random-feature error %.3g", causal, e32, eRF)
		}
	}
}
