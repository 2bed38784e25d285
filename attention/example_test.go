package attention_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/attention"
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
