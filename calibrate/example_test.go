package calibrate_test

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/calibrate"
)

// Fit a three-class calibration on held-out decision scores and turn new
// scores into probabilities.
func Example() {
	r := rand.New(rand.NewPCG(1, 2))
	const n, k = 3000, 3
	scores := mat.NewDense(n, k, nil)
	labels := make([]int, n)
	for i := range n {
		labels[i] = i % k
		for c := range k {
			v := 0.4 * r.NormFloat64()
			if c == labels[i] {
				v++
			}
			scores.Set(i, c, v)
		}
	}
	p, err := calibrate.Fit(scores, labels)
	if err != nil {
		fmt.Println(err)
		return
	}
	probs, err := p.Probabilities(mat.NewDense(2, k, []float64{
		1.1, 0.1, -0.2, // clearly class 0
		0.5, 0.5, 0.0, // class 0 or 1
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.3f\n", mat.Formatted(probs))
	// Output:
	// ⎡0.954  0.041  0.005⎤
	// ⎣0.507  0.466  0.027⎦
}
