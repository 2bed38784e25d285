package train

import (
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/native"
	"github.com/kernelkit/kernelkit/train/graphtrain"
)

// TestCommittedCheckpoint reads the committed ListOps checkpoint of step
// 5000 (runs/listops-1m) with the pure-Go reader and compares what it
// reads with what the reader of GoMLX tensors (the loader before package
// train dropped GoMLX) read: the model, the seed and step, a SHA-256 of
// every variable's scope, name, dtype, dimensions and bytes, and the sum
// of the float32 values as graphtrain.Tensor decodes them (a sum of the
// same values in the same order: exact). It then evaluates the model on
// eight fixed sequences on both engines: accuracy and loss as the
// version before measured them (loss 2.75537395933012 native and
// 2.755374717922426 on GoMLX's pure-Go backend), to 1e-4 — float32
// logits through four blocks, which another CPU's BLAS rounds a few ulps
// apart, far inside it.
func TestCommittedCheckpoint(t *testing.T) {
	path := filepath.Join("..", "runs", "listops-1m", "snap-5000.ckpt")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no committed checkpoint: %v", err)
	}
	ck, err := ReadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	want := arch.ModelConfig{Kind: arch.KindFDTNN, Vocab: 46, Classes: 10, Length: 512, Width: 64, Depth: 4, Heads: 2, Expand: 1,
		Hidden: 128, RPEHidden: 32, RPELayers: 1, RPEAct: "relu", Lambda: 0.99, SKIRank: 32, SKIFilter: 16, SKIGrid: 33,
		Features: 32, Chunk: 64, AdapterSize: 16}
	if ck.Model != want || ck.Step != 5000 || ck.Seed != 1 || len(ck.Variables) != 205 {
		t.Fatalf("checkpoint of %+v, step %d, seed %d, %d variables", ck.Model, ck.Step, ck.Seed, len(ck.Variables))
	}
	h := sha256.New()
	var sum float64
	for _, v := range ck.Variables {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%v\x00", v.Scope, v.Name, v.DType, v.Dims)
		h.Write(v.Data)
		tv, err := graphtrain.Tensor(native.Variable(v))
		if err != nil {
			t.Fatal(err)
		}
		if v.DType == "float32" {
			for _, x := range tensors.MustCopyFlatData[float32](tv) {
				sum += float64(x)
			}
		}
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != "67437ee360e60cfce60911b1acedee950601856376a6bb7ee06e2aa3bb41f5c6" {
		t.Errorf("variables hash to %s", got)
	}
	if sum != -23.699549841729699 {
		t.Errorf("float32 values sum to %.17g", sum)
	}
	set := make([]Example, 8)
	for i := range set {
		toks := make([]int32, 12)
		for j := range toks {
			toks[j] = int32(1 + (uint64(i*31+j*7)+3)%45)
		}
		set[i] = Example{Tokens: append(toks, toks...), Label: i % 10}
	}
	for device, wantLoss := range map[string]float64{DeviceCPU: 2.75537395933012, "go": 2.755374717922426} {
		tr, err := New(Config{Model: ck.Model, Steps: 5000, Batch: 4, LR: 1e-3, Seed: 1, Checkpoint: path, Device: device})
		if err != nil {
			t.Fatal(err)
		}
		acc, loss, err := tr.Evaluate(set)
		if err != nil {
			t.Fatal(err)
		}
		if acc != 0.125 || math.Abs(loss-wantLoss) > 1e-4 {
			t.Errorf("%s: accuracy %v, loss %.15g; want 0.125 and %.15g", device, acc, loss, wantLoss)
		}
	}
}
