//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/kernelkit/kernelkit/serve/oippb"
	"github.com/kernelkit/kernelkit/tasks"
)

// TestServeSequenceModel: train --export, then kernelkit serve --model
// NAME=m.kks with --grpc-addr answers the test rows, sent as text over
// REST and over gRPC, with the labels and probabilities of kernelkit
// predict on the same file (the same forward passes: the rows in passes
// of the scorers' default batch bound), and SIGTERM ends it with success.
func TestServeSequenceModel(t *testing.T) {
	model, _, dir := seqModel(t)
	test := filepath.Join(dir, "listops_test.tsv")
	// The BLAS of the server (startServe: gonum's), whose products round as
	// predict's then do.
	pred, _, err := runCtx(t, context.Background(), "--blas", "gonum", "predict", "--model", model, "--data", test, "--scores")
	if err != nil {
		t.Fatal(err)
	}
	var wantLabels []float64
	var wantProbs []float64
	for _, line := range strings.Split(strings.TrimSpace(pred), "\n")[1:] {
		f := strings.Split(line, ",")
		for i, v := range append(f[:1:1], f[11:]...) {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				wantLabels = append(wantLabels, x)
			} else {
				wantProbs = append(wantProbs, x)
			}
		}
	}
	f, err := os.Open(test)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := tasks.ReadTSV(f, 10)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(samples))
	for i, s := range samples {
		texts[i] = s.Source
	}
	addr, logs, done := startServe(t, "--model", "listops="+model, "--grpc-addr", "127.0.0.1:0", "--log-level", "info")
	body, err := json.Marshal(map[string]any{"inputs": []any{map[string]any{"name": "input", "datatype": "BYTES", "shape": []int{len(texts)}, "data": texts}},
		"parameters": map[string]any{"probabilities": true}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+addr+"/v2/models/listops/infer", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Outputs []struct {
			Name string    `json:"name"`
			Data []float64 `json:"data"`
		} `json:"outputs"`
	}
	err = json.NewDecoder(resp.Body).Decode(&r)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil || resp.StatusCode != http.StatusOK || len(r.Outputs) != 2 {
		t.Fatalf("REST: %d, %v, %+v", resp.StatusCode, err, r)
	}
	if !equalFloats(r.Outputs[0].Data, wantLabels) || !equalFloats(r.Outputs[1].Data, wantProbs) {
		t.Errorf("REST labels %v, predict's %v (or the probabilities differ)", r.Outputs[0].Data, wantLabels)
	}
	var gaddr string
	for deadline := time.Now().Add(20 * time.Second); gaddr == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := grpcServingRE.FindStringSubmatch(logs.String()); m != nil {
			gaddr = m[1]
		}
	}
	conn, err := grpc.NewClient(gaddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	bs := make([][]byte, len(texts))
	for i, s := range texts {
		bs[i] = []byte(s)
	}
	gr, err := oippb.NewGRPCInferenceServiceClient(conn).ModelInfer(t.Context(), &oippb.ModelInferRequest{ModelName: "listops",
		Inputs:  []*oippb.ModelInferRequest_InferInputTensor{{Name: "input", Datatype: "BYTES", Shape: []int64{int64(len(texts))}, Contents: &oippb.InferTensorContents{BytesContents: bs}}},
		Outputs: []*oippb.ModelInferRequest_InferRequestedOutputTensor{{Name: "label"}, {Name: "probabilities"}}})
	if err != nil {
		t.Fatal(err)
	}
	var labels []float64
	for _, l := range gr.Outputs[0].GetContents().GetInt64Contents() {
		labels = append(labels, float64(l))
	}
	if !equalFloats(labels, wantLabels) || !equalFloats(gr.Outputs[1].GetContents().GetFp64Contents(), wantProbs) {
		t.Errorf("gRPC labels %v, predict's %v (or the probabilities differ)", labels, wantLabels)
	}
	if err := sigterm(t, done); err != nil {
		t.Errorf("serve after SIGTERM: %v\n%s", err, logs.String())
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
