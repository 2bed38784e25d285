package native_test

import (
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/native"
)

// exampleTokens are four sequences of eight tokens (0 pads), one after the
// other, and exampleLabels their classes.
var (
	exampleTokens = []int32{
		1, 2, 3, 4, 0, 0, 0, 0,
		5, 6, 7, 5, 6, 7, 0, 0,
		2, 2, 2, 0, 0, 0, 0, 0,
		7, 1, 7, 1, 7, 1, 7, 1,
	}
	exampleLabels = []int32{0, 1, 0, 1}
)

// exampleConfig is a one-block TNN small enough to train in milliseconds.
func exampleConfig() arch.ModelConfig {
	return arch.ModelConfig{Kind: arch.KindTNN, Vocab: 8, Classes: 2, Length: 8, Width: 8, Depth: 1, Hidden: 8, RPEHidden: 4}
}

// A Trainer trains a sequence classifier of package nn with AdamW on the
// CPU: Step takes one batch of token sequences and their labels and
// returns the loss before the update. Forty steps on one batch of four
// sequences drive the loss from near ln 2 (a fresh model's guess between
// two classes; 0.61 here) to below a tenth of it (0.006); the exact values
// depend on the BLAS's rounding and are not printed.
func Example() {
	cfg := exampleConfig()
	tr, err := native.New[float32](cfg, native.Options{LR: 1e-2, Warmup: 2, Steps: 40}, 1)
	if err != nil {
		panic(err)
	}
	trainable, all := tr.Model().ParamCounts()
	fmt.Println("parameters:", trainable, "trainable of", all)
	var first, last float64
	for s := 0; s < 40; s++ {
		loss, err := tr.Step(exampleTokens, exampleLabels)
		if err != nil {
			panic(err)
		}
		if s == 0 {
			first = loss
		}
		last = loss
	}
	fmt.Println("first loss within 0.2 of ln 2:", math.Abs(first-math.Ln2) < 0.2)
	fmt.Println("last loss below a tenth of the first:", last < first/10)
	logits, err := tr.Logits(exampleTokens)
	if err != nil {
		panic(err)
	}
	fmt.Println("logits:", len(logits), "= 4 sequences × 2 classes; steps taken:", tr.StepCount())
	// Output:
	// parameters: 562 trainable of 562
	// first loss within 0.2 of ln 2: true
	// last loss below a tenth of the first: true
	// logits: 8 = 4 sequences × 2 classes; steps taken: 40
}

// A Predictor is a trained model's forward pass alone: it takes the
// model's variables (here the trainer's parameters, as an inference file
// holds them) and returns the logits of Trainer.Logits bit for bit,
// without gradients or optimiser state.
func ExampleNewPredictor() {
	cfg := exampleConfig()
	tr, err := native.New[float32](cfg, native.Options{LR: 1e-2, Warmup: 2, Steps: 10}, 1)
	if err != nil {
		panic(err)
	}
	for s := 0; s < 10; s++ {
		if _, err := tr.Step(exampleTokens, exampleLabels); err != nil {
			panic(err)
		}
	}
	all, err := tr.ExportVariables() // the model's and the optimiser's
	if err != nil {
		panic(err)
	}
	model := map[string]bool{}
	for _, p := range tr.Model().Params() {
		model[p.Scope+"/"+p.Name] = true
	}
	var vars []native.Variable
	for _, v := range all {
		if model[v.Scope+"/"+v.Name] {
			vars = append(vars, v)
		}
	}
	p, err := native.NewPredictor[float32](cfg, vars, 4)
	if err != nil {
		panic(err)
	}
	got, err := p.Logits(exampleTokens)
	if err != nil {
		panic(err)
	}
	want, err := tr.Logits(exampleTokens)
	if err != nil {
		panic(err)
	}
	same := len(got) == len(want)
	for i := range got {
		same = same && math.Float32bits(got[i]) == math.Float32bits(want[i])
	}
	fmt.Println(len(vars), "model variables; the same logits:", same)
	// Output: 19 model variables; the same logits: true
}
