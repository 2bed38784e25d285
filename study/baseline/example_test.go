package baseline_test

import (
	"context"
	"fmt"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/study/baseline"
)

// rows returns rows [lo, hi) of d.
func rows(d *data.Dataset, lo, hi int) *data.Dataset {
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	return d.Subset(idx)
}

// Demo fits a ridge classifier on random features for each kernel,
// sampler and feature count D (what kernelkit demo runs), here the RBF
// kernel's random Fourier features at D = 16 and 1024 on 1000 training and
// 300 test rows of the letter data. Monte Carlo features estimate the
// kernel with a relative error of order 1/√D, so 64 times the features cut
// the Gram error about eightfold; the accuracies, which depend on the
// BLAS's rounding in their last digits, are compared, not printed.
func ExampleDemo() {
	letter := data.Letter()
	cfg := baseline.DefaultDemo()
	cfg.Kernels, cfg.Samplers, cfg.Features = []string{"rbf"}, []string{"iid"}, []int{16, 1024}
	cfg.Train, cfg.Test, cfg.Name = rows(letter, 0, 1000), rows(letter, 19700, 20000), "letter subset"
	res, err := baseline.Demo(context.Background(), cfg, nil)
	if err != nil {
		panic(err)
	}
	for _, r := range res.Rows {
		fmt.Printf("%s/%s/%s D=%d: %d train, %d test rows\n", r.Kernel, r.Form, r.Sampler, r.Features, r.TrainRows, r.TestRows)
	}
	small, large := res.Rows[0], res.Rows[1]
	fmt.Println("Gram error at least 4 times smaller at D=1024:", *large.GramError < *small.GramError/4)
	fmt.Println("test accuracy higher at D=1024:", *large.TestAccuracy > *small.TestAccuracy)
	// Output:
	// rbf/cos/iid D=16: 1000 train, 300 test rows
	// rbf/cos/iid D=1024: 1000 train, 300 test rows
	// Gram error at least 4 times smaller at D=1024: true
	// test accuracy higher at D=1024: true
}
