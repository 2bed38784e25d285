package serve_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/serve"
)

// Serve a letter classifier and classify two rows with one V2 infer call.
func Example() {
	train, _, err := data.Letter().SplitAt(4000)
	if err != nil {
		panic(err)
	}
	m, err := model.Fit(context.Background(), model.Options{
		Task:        model.Classification,
		Features:    features.Config{Kernel: "rbf", Gamma: 1.0 / 16, Features: 128, Seed: 1},
		Lambda:      0.5,
		Standardize: true,
	}, train)
	if err != nil {
		panic(err)
	}
	s, err := serve.New(serve.Config{Models: []serve.ModelSpec{{Name: "letter", Model: m}}})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s)
	defer ts.Close()

	// Rows 16001 and 16007 of the letter data (classes 13 and 24, N and
	// Y), one array per row.
	body := `{"id": "demo", "inputs": [{"name": "input", "shape": [2, 16], "datatype": "FP64",
	  "data": [[6, 9, 8, 4, 3, 8, 7, 3, 4, 13, 5, 8, 6, 8, 0, 8],
	           [1, 0, 2, 0, 0, 7, 10, 3, 1, 7, 12, 8, 1, 11, 0, 8]]}]}`
	resp, err := http.Post(ts.URL+"/v2/models/letter/infer", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		panic(err)
	}
	fmt.Print(resp.StatusCode, " ", string(out))
	// Output:
	// 200 {"model_name":"letter","model_version":"1","id":"demo","outputs":[{"name":"label","datatype":"INT64","shape":[2],"data":[13,24]}]}
}
