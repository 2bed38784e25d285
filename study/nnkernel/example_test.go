package nnkernel_test

import (
	"context"
	"fmt"

	"github.com/kernelkit/kernelkit/study/nnkernel"
)

// Pointwise estimates a neuron's output sin(wᵀx + 0.5) by the SNNK
// paper's universal random features (URF) and the ReLU kernel ½K₁(x, w)
// by ReLU-SNNK, over independent draws of the towers (Sec. 4.1). Both are
// Monte Carlo averages over m features, so their mean relative error falls
// like 1/√m, by √32 ≈ 5.7 from m = 8 to 256 (about 4 over these 20
// draws). The errors, which depend on rounding in their last digits, are
// compared, not printed.
func ExamplePointwise() {
	calls := 0
	res, err := nnkernel.Pointwise(context.Background(),
		nnkernel.PointwiseConfig{Features: []int{8, 256}, Draws: 20, Seed: 1},
		func(done, total int) { calls = done })
	if err != nil {
		panic(err)
	}
	fmt.Println("progress calls:", calls)
	for i := 0; i < len(res.Rows); i += 2 {
		lo, hi := res.Rows[i], res.Rows[i+1]
		fmt.Printf("%-4s m = %d → %d: error at least halved: %v\n",
			lo.Layer, lo.Features, hi.Features, hi.MeanRel < lo.MeanRel/2)
	}
	// Output:
	// progress calls: 80
	// sin  m = 8 → 256: error at least halved: true
	// relu m = 8 → 256: error at least halved: true
}
