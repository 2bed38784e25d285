package model_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/sampler"
)

// Fit a kernel ridge classifier on random features, save it and load it
// back.
func Example() {
	train, test, _ := data.Letter().SplitAt(16000)
	m, err := model.Fit(context.Background(), model.Options{
		Task:        model.Classification,
		Features:    features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 512, Sampler: sampler.Orthogonal{}, Seed: 0},
		Lambda:      0.5,
		Standardize: true,
	}, train)
	if err != nil {
		panic(err)
	}
	var file bytes.Buffer
	if err := m.Save(&file); err != nil {
		panic(err)
	}
	loaded, err := model.Load(&file)
	if err != nil {
		panic(err)
	}
	pred, _ := loaded.Classify(test.X)
	correct := 0
	for i, p := range pred {
		if float64(p) == test.Y[i] {
			correct++
		}
	}
	fmt.Printf("test accuracy %.3f\n", float64(correct)/float64(len(pred)))
	// Output: test accuracy 0.881
}
