package attention_test

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
)

// Linear attention with FAVOR+ features against exact softmax attention.
func Example() {
	const l, d = 512, 8
	q, _ := sampler.Gaussian{}.Sample(l, d, 1)
	k, _ := sampler.Gaussian{}.Sample(l, d, 2)
	v, _ := sampler.Gaussian{}.Sample(l, d, 3)
	q.Scale(0.5, q)
	k.Scale(0.5, k)
	exact, _ := attention.Exact{}.Apply(q, k, v)
	mp, _ := features.New(features.Config{Kernel: "softmax", Features: 1024, Sampler: sampler.Orthogonal{}, Seed: 4}, d)
	approx, err := (&attention.Linear{Map: mp}).Apply(q, k, v)
	if err != nil {
		panic(err)
	}
	var diff mat.Dense
	diff.Sub(approx, exact)
	fmt.Printf("relative error %.2f\n", mat.Norm(&diff, 2)/mat.Norm(exact, 2))
	// Output: relative error 0.03
}

// Causal linear attention with FAVOR+ features on keys of very different
// norms (30 for the first 64 rows, 1 after): each output row depends only on
// the keys and values up to its own position, so changing those after row
// 40 leaves rows 0…40 unchanged to the last bit.
func ExampleLinear_causal() {
	const l, d, t = 96, 16, 40
	q, _ := sampler.Gaussian{}.Sample(l, d, 1)
	k, _ := sampler.Gaussian{}.Sample(l, d, 2)
	v, _ := sampler.Gaussian{}.Sample(l, 2, 3)
	q.Scale(0.25, q)
	for s := 0; s < l; s++ {
		norm := 30.0
		if s >= 64 {
			norm = 1
		}
		row := k.RawRowView(s)
		floats.Scale(norm/floats.Norm(row, 2), row)
	}
	p, err := catalog.Default().Pair("positive", features.Options{InputDim: d, Features: 64, Seed: 1})
	if err != nil {
		panic(err)
	}
	att := &attention.Linear{Pair: p, Causal: true}
	out, err := att.Apply(q, k, v)
	if err != nil {
		panic(err)
	}
	// Later keys of norm 1 instead of 30, and other values.
	k2, v2 := mat.DenseCopyOf(k), mat.DenseCopyOf(v)
	for s := t + 1; s < l; s++ {
		floats.Scale(1/floats.Norm(k2.RawRowView(s), 2), k2.RawRowView(s))
		floats.Scale(-10, v2.RawRowView(s))
	}
	out2, err := att.Apply(q, k2, v2)
	if err != nil {
		panic(err)
	}
	fmt.Println("rows 0-40 unchanged:", mat.Equal(out.Slice(0, t+1, 0, 2), out2.Slice(0, t+1, 0, 2)))
	// Output: rows 0-40 unchanged: true
}

// Decoding with a cache: the prompt goes through State.Extend, then each
// new token through State.Step, whose cost does not grow with the number
// of tokens before it. The outputs equal those of one causal call on the
// whole sequence.
func ExampleState() {
	const l, prompt, d, dv = 64, 16, 8, 4
	q, _ := sampler.Gaussian{}.Sample(l, d, 1)
	k, _ := sampler.Gaussian{}.Sample(l, d, 2)
	v, _ := sampler.Gaussian{}.Sample(l, dv, 3)
	mp, err := features.New(features.Config{Kernel: "softmax", Features: 128, Sampler: sampler.Orthogonal{}, Seed: 4}, d)
	if err != nil {
		panic(err)
	}
	att := &attention.Linear{Map: mp, Causal: true}
	full, err := att.Apply(q, k, v)
	if err != nil {
		panic(err)
	}

	st, err := att.NewState()
	if err != nil {
		panic(err)
	}
	head := func(m *mat.Dense) *mat.Dense { return mat.DenseCopyOf(m.Slice(0, prompt, 0, m.RawMatrix().Cols)) }
	out, err := st.Extend(head(q), head(k), head(v), nil) // the prompt
	if err != nil {
		panic(err)
	}
	worst := 0.0
	for i := 0; i < prompt; i++ {
		worst = max(worst, floats.Distance(out.RawRowView(i), full.RawRowView(i), math.Inf(1)))
	}
	o := make([]float64, dv)
	for i := prompt; i < l; i++ { // one token at a time
		if err := st.Step(o, q.RawRowView(i), k.RawRowView(i), v.RawRowView(i)); err != nil {
			panic(err)
		}
		worst = max(worst, floats.Distance(o, full.RawRowView(i), math.Inf(1)))
	}
	fmt.Println("tokens:", st.Len())
	fmt.Println("decoding equals the full causal call to 1e-12:", worst < 1e-12)
	// Output:
	// tokens: 64
	// decoding equals the full causal call to 1e-12: true
}

// Cross-attention over a batch of padded sequences: queries [B, H, Lq, d],
// keys and values [B, H, Lk, d], and a key padding mask per sequence (true
// marks padding). Padded keys take no part in the output.
func ExampleApplyTensor() {
	const b, h, lq, lk, d = 2, 4, 3, 5, 8
	q, _ := attention.NewTensor(b, h, lq, d)
	k, _ := attention.NewTensor(b, h, lk, d)
	v, _ := attention.NewTensor(b, h, lk, d)
	for i := range k.Data {
		q.Data[i%len(q.Data)] = math.Sin(float64(i))
		k.Data[i] = math.Cos(float64(i))
		v.Data[i] = float64(i % 7)
	}
	pad := []bool{
		false, false, false, true, true, // sequence 0 has 3 keys
		false, false, false, false, false, // sequence 1 has 5
	}
	out, err := attention.ApplyTensor(context.Background(), attention.Exact{}, q, k, v, pad)
	if err != nil {
		panic(err)
	}
	fmt.Println("output shape:", out.Batch, out.Heads, out.Len, out.Dim)
	// Other values in the padded keys of sequence 0 change nothing.
	for hd := 0; hd < h; hd++ {
		k.Head(0, hd).Set(3, 0, 1e6)
		v.Head(0, hd).Set(4, 1, -1e6)
	}
	out2, err := attention.ApplyTensor(context.Background(), attention.Exact{}, q, k, v, pad)
	if err != nil {
		panic(err)
	}
	fmt.Println("unchanged:", floats.Equal(out.Data, out2.Data))
	// Output:
	// output shape: 2 4 3 8
	// unchanged: true
}
