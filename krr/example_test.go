package krr_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/krr"
)

// Exact kernel ridge regression of sin on 50 points: the prediction at
// x = 1 is close to sin(1), and the kernel matrix of 100 000 rows is
// refused with the memory it would need.
func Example() {
	x := mat.NewDense(50, 1, nil)
	y := mat.NewDense(50, 1, nil)
	for i := 0; i < 50; i++ {
		v := -3 + 6*float64(i)/49
		x.Set(i, 0, v)
		y.Set(i, 0, math.Sin(v))
	}
	m, err := krr.Fit(x, y, krr.Config{Kernel: kernel.RBF{Gamma: 1}, Lambda: 1e-3, Intercept: true})
	if err != nil {
		panic(err)
	}
	p, err := m.Predict(mat.NewDense(1, 1, []float64{1}))
	if err != nil {
		panic(err)
	}
	fmt.Printf("f(1) = %.4f, sin(1) = %.4f\n", p.At(0, 0), math.Sin(1))
	fmt.Println(krr.CheckRows(100000))
	// Output:
	// f(1) = 0.8412, sin(1) = 0.8415
	// krr: exact kernel ridge on 100000 rows needs the 100000×100000 kernel matrix, 74.5 GiB (limit 32768 rows, 8 GiB); use random features or Nyström features instead
}
