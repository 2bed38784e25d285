package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kernelkit/kernelkit/nn"
	"github.com/kernelkit/kernelkit/serve"
	"github.com/kernelkit/kernelkit/tasks"
	"github.com/kernelkit/kernelkit/train"
)

// Mount a sequence classifier in a Go service's HTTP mux and score two
// ListOps sequences sent as text (BYTES), asking for the probabilities
// too. A service would load the model with seqmodel.LoadFile or name its
// file in ModelSpec.Path (kernelkit export writes one).
func Example_sequenceModel() {
	c := tasks.DefaultListOps()
	c.MinLength, c.MaxLength = 4, 32
	samples, err := tasks.GenerateListOps(c, 64, 1)
	if err != nil {
		panic(err)
	}
	exs, err := train.FromSamples(samples)
	if err != nil {
		panic(err)
	}
	tr, err := train.New(train.Config{Model: nn.ModelConfig{Kind: nn.KindPerformer, Vocab: tasks.VocabSize, Classes: tasks.Classes,
		Length: 32, Width: 16, Depth: 1}, Steps: 4, Batch: 16, LR: 3e-3, Seed: 1})
	if err != nil {
		panic(err)
	}
	if _, err := tr.Fit(context.Background(), exs, nil); err != nil {
		panic(err)
	}
	m, err := tr.Export()
	if err != nil {
		panic(err)
	}
	s, err := serve.New(serve.Config{Models: []serve.ModelSpec{{Name: "listops", Sequence: m}}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	mux := http.NewServeMux()
	mux.Handle("/v2/", s) // the service's own routes live beside it
	ts := httptest.NewServer(mux)
	defer ts.Close()

	body := `{"inputs": [{"name": "input", "shape": [2], "datatype": "BYTES",
	  "data": ["( ( [MAX 2 ) 9 ) ]", "[SM 3 4 [MIN 8 5 ] ]"]}],
	  "parameters": {"probabilities": true}}`
	resp, err := http.Post(ts.URL+"/v2/models/listops/infer", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var r serve.InferResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		panic(err)
	}
	fmt.Println(resp.StatusCode, r.ModelName, r.ModelVersion)
	for _, o := range r.Outputs {
		fmt.Println(o.Name, o.Datatype, o.Shape)
	}
	p := r.Outputs[1].Data
	for i := range 2 {
		sum := 0.0
		for _, v := range p[10*i : 10*(i+1)] {
			sum += v
		}
		fmt.Printf("sequence %d: label %t, probabilities sum to 1: %t\n", i, r.Outputs[0].Data[i] >= 0 && r.Outputs[0].Data[i] < 10, math.Abs(sum-1) < 1e-12)
	}
	// Output:
	// 200 listops 1
	// label INT64 [2]
	// probabilities FP64 [2 10]
	// sequence 0: label true, probabilities sum to 1: true
	// sequence 1: label true, probabilities sum to 1: true
}
