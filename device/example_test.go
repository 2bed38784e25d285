package device_test

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/prf"
)

// A feature map runs on a device as one graph per batch of rows; on the
// pure-Go backend ("go") in float64 it gives the CPU map's features to
// rounding. On a GPU, open "cuda" instead (a program built with -tags xla).
func Example() {
	dev, err := device.Open(device.Go)
	if err != nil {
		panic(err)
	}
	mp, err := features.New(features.Config{Kernel: "softmax", Form: "positive", Features: 4, Seed: 1}, 2)
	if err != nil {
		panic(err)
	}
	x := mat.NewDense(2, 2, []float64{0.5, -0.25, 1, 0.75})
	z, err := dev.Transform(context.Background(), mp, x)
	if err != nil {
		panic(err)
	}
	cpu, err := features.Apply(mp, x)
	if err != nil {
		panic(err)
	}
	fmt.Printf("device %.6f, CPU %.6f\n", z.At(1, 2), cpu.At(1, 2))
	// Output: device 0.425930, CPU 0.425930
}

// The ridge statistics of a fit run on the device through
// model.Options.Accumulator; the solve stays on the host.
func ExampleDevice_Accumulator() {
	dev, err := device.Open(device.Go)
	if err != nil {
		panic(err)
	}
	// Two classes: inside or outside the unit circle.
	const n = 400
	x := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		a, r := 2.4*float64(i), 0.2+1.6*float64(i%7)/6
		x.Set(i, 0, r*math.Cos(a))
		x.Set(i, 1, r*math.Sin(a))
		if r > 1 {
			y[i] = 1
		}
	}
	train := &data.Dataset{X: x, Y: y}
	opt := model.Options{Task: model.Classification, Lambda: 1e-3,
		Features:    features.Config{Kernel: "rbf", Gamma: 2, Features: 64, Seed: 3},
		Accumulator: dev.Accumulator(device.RidgeOptions{BatchRows: 128})}
	m, err := model.Fit(context.Background(), opt, train)
	if err != nil {
		panic(err)
	}
	opt.Accumulator = nil // kernelkit's CPU statistics
	cpu, err := model.Fit(context.Background(), opt, train)
	if err != nil {
		panic(err)
	}
	var diff mat.Dense
	diff.Sub(m.Linear.W, cpu.Linear.W)
	ev, err := m.Evaluate(train, 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("training accuracy %.3f, weights as the CPU fit's: %v\n", ev.Accuracy, mat.Norm(&diff, math.Inf(1)) < 1e-9*mat.Norm(cpu.Linear.W, math.Inf(1)))
	// Output: training accuracy 1.000, weights as the CPU fit's: true
}

// The ADERF pair of package prf (fitted on the CPU to query and key
// statistics) compiles as a query map and a key map; its kernel estimates
// Query(x)ᵀKey(y) on the device equal the CPU pair's to rounding (here an
// estimate from 8 features of exp(qᵀk) for one query and one key).
func ExampleDevice_Pair() {
	dev, err := device.Open(device.Go)
	if err != nil {
		panic(err)
	}
	q := mat.NewDense(3, 2, []float64{0.5, -0.25, 0.1, 0.3, -0.4, 0.2})
	k := mat.NewDense(3, 2, []float64{0.6, 0.3, -0.2, 0.1, 0.4, -0.5})
	st, err := prf.NewStats(q, k)
	if err != nil {
		panic(err)
	}
	p, err := prf.NewPair(prf.Config{Features: 8, Seed: 1}, st)
	if err != nil {
		panic(err)
	}
	dp, err := dev.Pair(p)
	if err != nil {
		panic(err)
	}
	got, err := features.EstimatePair(dp, q.RawRowView(0), k.RawRowView(0))
	if err != nil {
		panic(err)
	}
	want, err := features.EstimatePair(p, q.RawRowView(0), k.RawRowView(0))
	if err != nil {
		panic(err)
	}
	fmt.Printf("device %.6f, CPU %.6f (exp(qᵀk) = %.6f)\n", got, want, math.Exp(0.5*0.6-0.25*0.3))
	// Output: device 1.074508, CPU 1.074508 (exp(qᵀk) = 1.252323)
}
