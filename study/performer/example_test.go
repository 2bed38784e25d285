package performer_test

import (
	"context"
	"fmt"

	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/study/performer"
)

// MSE compares linear attention through random features with exact
// softmax attention (the Performer paper's Fig. 4): here FAVOR+
// ("positive") and trigonometric features at m = 8 and 256 on 64 queries,
// keys and values of head dimension 8, over 4 seeds of the projections.
// The queries and keys are N(0, I/4) rows, where both estimators of
// exp(qᵀk/√d) have a relative variance of a few units over m (it grows
// like exp(‖q + k‖²/√d)), so 32 times the features cut the output MSE
// about 32-fold (35- and 184-fold here); the MSEs themselves, which
// depend on rounding in their last digits, are compared, not printed.
func ExampleMSE() {
	const n, d = 64, 8
	q, err := sampler.Gaussian{}.Sample(n, d, 1)
	if err != nil {
		panic(err)
	}
	k, err := sampler.Gaussian{}.Sample(n, d, 2)
	if err != nil {
		panic(err)
	}
	v, err := sampler.Gaussian{}.Sample(n, d, 3)
	if err != nil {
		panic(err)
	}
	q.Scale(0.5, q)
	k.Scale(0.5, k)
	res, err := performer.MSE(context.Background(), performer.MSEConfig{
		Features: []int{8, 256}, Variants: []string{"positive", "trig"},
		Seeds: 4, Seed: 1, Q: q, K: k, V: v,
	}, nil)
	if err != nil {
		panic(err)
	}
	for i := 0; i < len(res.Rows); i += 2 {
		lo, hi := res.Rows[i], res.Rows[i+1]
		fmt.Printf("%-8s L=%d d=%d, m = %d → %d: MSE at least 8 times smaller: %v\n",
			lo.Variant, lo.L, lo.D, lo.Features, hi.Features, hi.MSE < lo.MSE/8)
	}
	// Output:
	// positive L=64 d=8, m = 8 → 256: MSE at least 8 times smaller: true
	// trig     L=64 d=8, m = 8 → 256: MSE at least 8 times smaller: true
}
