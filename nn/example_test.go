package nn_test

import (
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/kernelkit/kernelkit/nn"
)

// ExampleToeplitzDense applies the Toeplitz matrix with t_0 = 1, t_1 = 0.5
// (one lag back) and t_{−1} = 0 to the sequence 1, 2, 3, and the gradient
// of the sum of the outputs with respect to the coefficients.
func ExampleToeplitzDense() {
	b, err := nn.Backend("")
	if err != nil {
		fmt.Println(err)
		return
	}
	exec, err := NewExec(b, func(x, coef *Node) (*Node, *Node) {
		y := nn.ToeplitzDense(x, coef)
		return y, Gradient(ReduceAllSum(y), coef)[0]
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	x := tensors.FromValue([][][]float64{{{1}, {2}, {3}}})            // 1 sequence, n = 3, d = 1
	coef := tensors.FromValue([][]float64{{0}, {0}, {1}, {0.5}, {0}}) // t_{−2} … t_2
	out, err := exec.Exec(x, coef)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("y =", out[0].Value())
	fmt.Println("∂Σy/∂t =", out[1].Value())
	// Output:
	// y = [[[1] [2.5] [4]]]
	// ∂Σy/∂t = [[3] [5] [6] [3] [1]]
}
