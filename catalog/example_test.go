package catalog_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/analog"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/snnk"
)

// One contract for every map: an RFF map, a hybrid (HRF) pair and the
// towers of an SNNK layer are all built, evaluated and moved onto the
// emulated analog hardware through the same interfaces of package features.
func Example() {
	const d = 8
	x, _ := sampler.Gaussian{}.Sample(200, d, 7)
	x.Scale(0.25, x)
	a, b := x.RawRowView(0), x.RawRowView(1)
	reg := catalog.Default()
	opt := features.Options{InputDim: d, Features: 4096, Gamma: 0.5, Sampler: sampler.Orthogonal{}, Seed: 1}
	// The hardware: INT8 inputs calibrated on x, no analog noise.
	hw := analog.Projectors(x, analog.Ideal())

	for _, name := range []string{"rbf", "angular"} {
		p, err := reg.Pair(name, opt)
		if err != nil {
			panic(err)
		}
		onHW, err := features.PairWithProjectors(p, hw)
		if err != nil {
			panic(err)
		}
		est, _ := features.EstimatePair(p, a, b)
		estHW, _ := features.EstimatePair(onHW, a, b)
		var exact float64
		if name == "rbf" {
			exact = kernel.RBF{Gamma: 0.5}.Eval(a, b)
		} else {
			exact = kernel.Softmax{}.Eval(a, b)
		}
		fmt.Printf("%-8s exact %.2f  float %.2f  analog %.2f\n", name, exact, est, estHW)
	}

	// An SNNK layer approximating cos(w·x) with 2048 random features; its
	// input tower is a features.Transformer, so the same seam applies.
	towers, err := snnk.NewURF(snnk.Cos, d, 2048, snnk.DefaultA(d), nil, 3)
	if err != nil {
		panic(err)
	}
	w := mat.NewDense(1, d, []float64{0.5, -0.5, 0.5, -0.5, 0.5, -0.5, 0.5, -0.5})
	layer, err := snnk.NewLayer(towers, w, nil)
	if err != nil {
		panic(err)
	}
	hwTowers, err := features.WithProjectors(towers, hw)
	if err != nil {
		panic(err)
	}
	hwLayer := &snnk.Layer{T: hwTowers.(snnk.Towers), A: layer.A}
	in := mat.NewDense(1, d, append([]float64(nil), a...))
	y, _ := layer.Forward(in)
	yHW, _ := hwLayer.Forward(in)
	fmt.Printf("%-8s exact %.2f  float %.2f  analog %.2f\n", "snnk/cos", math.Cos(mat.Dot(w.RowView(0), in.RowView(0))), y.At(0, 0), yHW.At(0, 0))
	// Output:
	// rbf      exact 0.64  float 0.64  analog 0.64
	// angular  exact 1.25  float 1.24  analog 1.24
	// snnk/cos exact 1.00  float 0.97  analog 0.97
}
