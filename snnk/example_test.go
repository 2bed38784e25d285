package snnk_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/snnk"
)

// An SNNK layer initialised from a dense cos layer approximates it with
// input and parameter towers disentangled.
func ExampleNewLayer() {
	w := mat.NewDense(2, 3, []float64{0.2, -0.1, 0.3, 0.1, 0.4, -0.2})
	b := []float64{0.5, -0.3}
	x := mat.NewDense(1, 3, []float64{0.3, 0.2, -0.1})
	tw, _ := snnk.NewURF(snnk.Cos, 3, 4000, snnk.DefaultA(3), nil, 7)
	ly, _ := snnk.NewLayer(tw, w, b)
	y, _ := ly.Forward(x)
	for j := 0; j < 2; j++ {
		exact := math.Cos(mat.Dot(w.RowView(j), x.RowView(0)) + b[j])
		fmt.Printf("SNNK %.2f, exact %.2f\n", y.At(0, j), exact)
	}
	// Output:
	// SNNK 0.88, exact 0.87
	// SNNK 0.99, exact 0.99
}
