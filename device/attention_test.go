package device

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/sampler"
)

// randTensor returns a [b, h, l, d] tensor of N(0, scale²) values.
func randTensor(t testing.TB, seed uint64, scale float64, b, h, l, d int) attention.Tensor {
	t.Helper()
	x, err := attention.NewTensor(b, h, l, d)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(seed)
	for i := range x.Data {
		x.Data[i] = scale * r.NormFloat64()
	}
	return x
}

func to32(x attention.Tensor) attention.Tensor32 {
	y := attention.Tensor32{Batch: x.Batch, Heads: x.Heads, Len: x.Len, Dim: x.Dim, Data: make([]float32, len(x.Data))}
	for i, v := range x.Data {
		y.Data[i] = float32(v)
	}
	return y
}

// maxRelDiff returns max|a − b| relative to max(1, max|b|); +Inf for
// different lengths or a NaN.
func maxRelDiff[T float32 | float64](a []T, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	scale := 1.0
	for _, v := range b {
		scale = math.Max(scale, math.Abs(v))
	}
	var m float64
	for i := range a {
		d := math.Abs(float64(a[i]) - b[i])
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		m = math.Max(m, d)
	}
	return m / scale
}

// favorMap returns a FAVOR+ map (positive softmax features, orthogonal
// projections) from the catalog and its projection.
func favorMap(t testing.TB, d, m int, seed uint64) (features.Pair, Linear) {
	t.Helper()
	p, err := catalog.Default().Pair("positive", features.Options{InputDim: d, Features: m, Sampler: sampler.Orthogonal{}, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	om, err := FavorProjection(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, Linear{Omega: om}
}

type attnCase struct {
	name      string
	b, h      int
	lq, lk    int
	causal    bool
	chunk     int
	pad       func(b, lk int) []bool
	nanPadded bool // NaN in padded key and value rows
}

// padTail pads the last keys of each sequence: sequence i keeps lk − i − 1
// of them (at least none: a sequence entirely padded).
func padTail(b, lk int) []bool {
	p := make([]bool, b*lk)
	for i := 0; i < b; i++ {
		for s := max(0, lk-i-1); s < lk; s++ {
			p[i*lk+s] = true
		}
	}
	return p
}

// padFront pads the first keys of sequence 1 (queries before the first
// real key see none under the causal mask).
func padFront(b, lk int) []bool {
	p := make([]bool, b*lk)
	for s := 0; s < 3 && b > 1; s++ {
		p[lk+s] = true
	}
	p[lk/2] = true
	return p
}

var attnCases = []attnCase{
	{name: "plain", b: 2, h: 3, lq: 9, lk: 9},
	{name: "causal", b: 2, h: 3, lq: 9, lk: 9, causal: true},
	{name: "causal chunk 4 (padded to 12)", b: 2, h: 2, lq: 9, lk: 9, causal: true, chunk: 4},
	{name: "causal chunk 3", b: 1, h: 2, lq: 9, lk: 9, causal: true, chunk: 3},
	{name: "padded tail", b: 3, h: 2, lq: 7, lk: 7, pad: padTail, nanPadded: true},
	{name: "padded tail causal", b: 3, h: 2, lq: 7, lk: 7, causal: true, chunk: 2, pad: padTail, nanPadded: true},
	{name: "padded front causal", b: 2, h: 2, lq: 8, lk: 8, causal: true, pad: padFront, nanPadded: true},
	{name: "cross Lq<Lk", b: 2, h: 2, lq: 4, lk: 9},
	{name: "cross Lq<Lk causal (cached prefix)", b: 2, h: 2, lq: 4, lk: 9, causal: true, chunk: 3},
	{name: "cross Lq>Lk causal", b: 2, h: 2, lq: 9, lk: 5, causal: true},
	{name: "cross Lq>Lk causal padded", b: 2, h: 1, lq: 9, lk: 5, causal: true, chunk: 4, pad: padFront},
}

// TestAttentionMatchesCPU checks exact and FAVOR+ attention on every test
// device against attention.ApplyTensor (float64 tensors) and
// attention.Linear.ApplyTensor32 (float32 tensors): to 1e-10 of max(1,
// max|out|) in float64, within the float32 tolerance otherwise, over
// causal masks, chunk sizes that do and do not divide L, key padding (with
// NaN in padded rows, whole sequences padded, queries that see no key),
// and cross-attention with the bottom-right causal alignment.
func TestAttentionMatchesCPU(t *testing.T) {
	ctx := context.Background()
	const d, dv, m = 8, 5, 16
	mp, lin := favorMap(t, d, m, 3)
	for _, dev := range testDevices(t) {
		tol := tolerance(dev, 1e-10)
		for ci, c := range attnCases {
			q := randTensor(t, uint64(10*ci+1), 1, c.b, c.h, c.lq, d)
			k := randTensor(t, uint64(10*ci+2), 1, c.b, c.h, c.lk, d)
			v := randTensor(t, uint64(10*ci+3), 1, c.b, c.h, c.lk, dv)
			var pad []bool
			if c.pad != nil {
				pad = c.pad(c.b, c.lk)
			}
			if c.nanPadded {
				for i, p := range pad {
					if !p {
						continue
					}
					b, s := i/c.lk, i%c.lk
					for h := 0; h < c.h; h++ {
						k.Head(b, h).Set(s, 0, math.NaN())
						v.Head(b, h).Set(s, 1, math.Inf(1))
					}
				}
			}
			l := lin
			l.Causal, l.Chunk = c.causal, c.chunk
			for _, a := range []struct {
				name string
				dev  Attention
				cpu  attention.Masked
			}{
				{"exact", Exact{Causal: c.causal}, attention.Exact{Causal: c.causal}},
				{"favor+", l, &attention.Linear{Pair: mp, Causal: c.causal, Chunk: 3}},
			} {
				name := fmt.Sprintf("%v/%s/%s", dev, a.name, c.name)
				want, err := attention.ApplyTensor(ctx, a.cpu, q, k, v, pad)
				if err != nil {
					t.Fatal(err)
				}
				got, err := dev.Attention(ctx, a.dev, q, k, v, pad)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got.Batch != c.b || got.Heads != c.h || got.Len != c.lq || got.Dim != dv {
					t.Fatalf("%s: output shape %v", name, [4]int{got.Batch, got.Heads, got.Len, got.Dim})
				}
				if e := maxRelDiff(got.Data, want.Data); !(e <= tol) {
					t.Errorf("%s: differs from the CPU by %.3g (tolerance %.1g)", name, e, tol)
				}
				if a.name != "favor+" {
					continue
				}
				// float32 tensors in and out, against the CPU's float32 path.
				want32, err := (&attention.Linear{Pair: mp, Causal: c.causal}).ApplyTensor32(ctx, to32(q), to32(k), to32(v), pad)
				if err != nil {
					t.Fatal(err)
				}
				got32, err := dev.Attention32(ctx, a.dev, to32(q), to32(k), to32(v), pad)
				if err != nil {
					t.Fatalf("%s (float32 tensors): %v", name, err)
				}
				w := make([]float64, len(want32.Data))
				for i, x := range want32.Data {
					w[i] = float64(x)
				}
				if e := maxRelDiff(got32.Data, w); !(e <= 2e-3) {
					t.Errorf("%s (float32 tensors): differs from the CPU by %.3g (tolerance 2e-3)", name, e)
				}
			}
		}
	}
}

// TestAttentionUnseenRowsZero checks the convention for queries that see
// no key: a whole sequence padded gives rows of zeros, exactly.
func TestAttentionUnseenRowsZero(t *testing.T) {
	ctx := context.Background()
	const b, h, l, d = 2, 2, 6, 4
	_, lin := favorMap(t, d, 8, 1)
	q, k, v := randTensor(t, 1, 1, b, h, l, d), randTensor(t, 2, 1, b, h, l, d), randTensor(t, 3, 1, b, h, l, d)
	pad := make([]bool, b*l)
	for s := 0; s < l; s++ {
		pad[l+s] = true // sequence 1 entirely padded
	}
	for _, dev := range testDevices(t) {
		for _, att := range []Attention{Exact{}, Exact{Causal: true}, lin, Linear{Omega: lin.Omega, Causal: true}} {
			out, err := dev.Attention(ctx, att, q, k, v, pad)
			if err != nil {
				t.Fatal(err)
			}
			n := h * l * d
			for i, x := range out.Data[n:] {
				if x != 0 {
					t.Fatalf("%v %T: output %d of the padded sequence is %v, want 0", dev, att, i, x)
				}
			}
			var nz bool
			for _, x := range out.Data[:n] {
				nz = nz || x != 0
			}
			if !nz {
				t.Errorf("%v %T: the unpadded sequence's outputs are all zero", dev, att)
			}
		}
	}
}

// TestAttentionCached checks that a second call of the same shapes reuses
// the compiled graph (one executor per settings) and returns the same
// bits, and that other shapes run on the same executor.
func TestAttentionCached(t *testing.T) {
	ctx := context.Background()
	dev, err := Open(Go)
	if err != nil {
		t.Fatal(err)
	}
	q, k, v := randTensor(t, 1, 1, 1, 2, 5, 4), randTensor(t, 2, 1, 1, 2, 5, 4), randTensor(t, 3, 1, 1, 2, 5, 4)
	att := Exact{Causal: true}
	a, err := dev.Attention(ctx, att, q, k, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := seqKey{backend: dev.Backend(), dtype: dev.DType(), op: "exact", causal: true}
	e, ok := seqExecs.Load(key)
	if !ok {
		t.Fatal("no cached executor after the first call")
	}
	b, err := dev.Attention(ctx, att, q, k, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e2, _ := seqExecs.Load(key); e2 != e {
		t.Error("the executor was replaced")
	}
	for i := range a.Data {
		if a.Data[i] != b.Data[i] {
			t.Fatalf("second call differs at %d: %v, %v", i, a.Data[i], b.Data[i])
		}
	}
	q2, k2, v2 := randTensor(t, 4, 1, 2, 1, 3, 4), randTensor(t, 5, 1, 2, 1, 3, 4), randTensor(t, 6, 1, 2, 1, 3, 4)
	if _, err := dev.Attention(ctx, att, q2, k2, v2, nil); err != nil {
		t.Fatal(err)
	}
	if e2, _ := seqExecs.Load(key); e2 != e {
		t.Error("another shape made another executor")
	}
}

// TestAttentionErrors checks that bad shapes, masks, projections,
// non-finite inputs, sizes beyond the limits and a cancelled context are
// errors, not panics.
func TestAttentionErrors(t *testing.T) {
	dev, err := Open(Go)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, lin := favorMap(t, 4, 8, 1)
	q, k, v := randTensor(t, 1, 1, 2, 2, 5, 4), randTensor(t, 2, 1, 2, 2, 5, 4), randTensor(t, 3, 1, 2, 2, 5, 3)
	nanQ := randTensor(t, 1, 1, 2, 2, 5, 4)
	nanQ.Data[7] = math.NaN()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	huge := attention.Tensor{Batch: 1 << 12, Heads: 1, Len: 1 << 10, Dim: 1, Data: make([]float64, 1<<22)}
	for _, c := range []struct {
		name    string
		ctx     context.Context
		att     Attention
		q, k, v attention.Tensor
		pad     []bool
		want    string
	}{
		{"nil attention", ctx, nil, q, k, v, nil, "nil attention"},
		{"values", ctx, Exact{}, q, k, randTensor(t, 4, 1, 2, 2, 4, 3), nil, "keys but"},
		{"dims", ctx, Exact{}, q, randTensor(t, 4, 1, 2, 2, 5, 3), v, nil, "dimension"},
		{"heads", ctx, Exact{}, q, randTensor(t, 4, 1, 2, 1, 5, 4), v, nil, "heads"},
		{"short data", ctx, Exact{}, attention.Tensor{Batch: 1, Heads: 1, Len: 2, Dim: 2, Data: make([]float64, 3)}, k, v, nil, "values"},
		{"zero dim", ctx, Exact{}, attention.Tensor{Batch: 1, Heads: 0, Len: 2, Dim: 2}, k, v, nil, "below 1"},
		{"mask length", ctx, Exact{}, q, k, v, make([]bool, 9), "mask"},
		{"omega", ctx, Linear{Omega: lin.Omega}, randTensor(t, 5, 1, 2, 2, 5, 3), randTensor(t, 6, 1, 2, 2, 5, 3), v, nil, "projection"},
		{"no omega", ctx, Linear{}, q, k, v, nil, "Omega"},
		{"chunk", ctx, Linear{Omega: lin.Omega, Causal: true, Chunk: -1}, q, k, v, nil, "chunk"},
		{"NaN", ctx, Exact{}, nanQ, k, v, nil, "NaN"},
		{"scores", ctx, Exact{}, huge, huge, huge, nil, "scores"},
		{"cancelled", cancelled, Exact{}, q, k, v, nil, "canceled"},
	} {
		_, err := dev.Attention(c.ctx, c.att, c.q, c.k, c.v, c.pad)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if _, err := FavorProjection(features.Symmetric(mustMap(t, "trig"))); err == nil {
		t.Error("FavorProjection accepted a trigonometric map")
	}
}

func mustMap(t testing.TB, form string) *features.Map {
	t.Helper()
	mp, err := features.New(features.Config{Kernel: "softmax", Form: form, Features: 8, Seed: 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	return mp
}

func TestSeqChunk(t *testing.T) {
	for _, c := range []struct{ chunk, l, m, dv, want int }{
		{0, 9, 16, 5, 9},           // short: one block
		{0, 64, 256, 64, 64},       // still one block
		{0, 4096, 256, 64, 64},     // (2·4096·256·64/320)^(1/3) ≈ 75
		{0, 65536, 256, 64, 256},   // ≈ 189
		{0, 1 << 24, 256, 64, 512}, // capped
		{0, 100, 1, 1, 32},         // floor
		{5, 9, 16, 5, 5},           // given
		{20, 9, 16, 5, 9},          // given, longer than L
	} {
		if got := seqChunk(c.chunk, c.l, c.m, c.dv); got != c.want {
			t.Errorf("seqChunk(%d, %d, %d, %d) = %d, want %d", c.chunk, c.l, c.m, c.dv, got, c.want)
		}
	}
}

// ExampleDevice_Attention runs FAVOR+ causal attention on the pure-Go
// device with the projection of a CPU map and compares it with the CPU.
func ExampleDevice_Attention() {
	dev, err := Open(Go) // Open(CUDA) in a program built with -tags xla
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := catalog.Default().Pair("positive", features.Options{InputDim: 8, Features: 32, Sampler: sampler.Orthogonal{}, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	omega, err := FavorProjection(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Two sequences, four heads, 100 tokens, head dimension 8.
	q, _ := attention.NewTensor(2, 4, 100, 8)
	k, _ := attention.NewTensor(2, 4, 100, 8)
	v, _ := attention.NewTensor(2, 4, 100, 8)
	r := rng.New(1)
	for _, t := range []attention.Tensor{q, k, v} {
		for i := range t.Data {
			t.Data[i] = r.NormFloat64()
		}
	}
	ctx := context.Background()
	out, err := dev.Attention(ctx, Linear{Omega: omega, Causal: true}, q, k, v, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	cpu, err := attention.ApplyTensor(ctx, &attention.Linear{Pair: p, Causal: true}, q, k, v, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("output [%d, %d, %d, %d], equal to the CPU to 1e-12: %v\n", out.Batch, out.Heads, out.Len, out.Dim,
		maxRelDiff(out.Data, cpu.Data) < 1e-12)
	// Output:
	// output [2, 4, 100, 8], equal to the CPU to 1e-12: true
}
