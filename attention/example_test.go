package attention_test

import (
	"fmt"

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
