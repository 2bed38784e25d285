package seqmodel_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/seqmodel"
	"github.com/kernelkit/kernelkit/tasks"
	"github.com/kernelkit/kernelkit/train"
)

// Train a small FD-TNN for a few steps, write its inference file, load it
// and score a batch of ListOps sequences given as text.
func Example() {
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
	tr, err := train.New(train.Config{Model: arch.ModelConfig{Kind: arch.KindFDTNN, Vocab: tasks.VocabSize, Classes: tasks.Classes,
		Length: 32, Width: 16, Depth: 1}, Steps: 4, Batch: 16, LR: 3e-3, Seed: 1})
	if err != nil {
		panic(err)
	}
	if _, err := tr.Fit(context.Background(), exs, nil); err != nil {
		panic(err)
	}
	exported, err := tr.Export()
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "seqmodel")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "listops"+seqmodel.Ext)
	if err := exported.WriteFile(path); err != nil {
		panic(err)
	}

	// A service loads the file and scores batches.
	m, err := seqmodel.LoadFile(path)
	if err != nil {
		panic(err)
	}
	s, err := m.NewScorer(seqmodel.ScorerOptions{})
	if err != nil {
		panic(err)
	}
	var seqs [][]int32
	for _, text := range []string{"( ( [MAX 2 ) 9 ) ]", "[SM 3 4 [MIN 8 5 ] ]"} {
		ids, err := m.Tokenize(text)
		if err != nil {
			panic(err)
		}
		fmt.Println(text, "→", ids)
		seqs = append(seqs, ids)
	}
	logits, err := s.Logits(context.Background(), seqs)
	if err != nil {
		panic(err)
	}
	k := len(m.Classes())
	probs := seqmodel.Probabilities(logits, k)
	for i, label := range seqmodel.Labels(logits, k) {
		sum := 0.0
		for _, p := range probs[i*k : (i+1)*k] {
			sum += p
		}
		fmt.Printf("sequence %d: a class of %d (%t), probabilities sum to 1: %t\n", i, k, label >= 0 && label < k, math.Abs(sum-1) < 1e-12)
	}
	_, bad := m.Tokenize("[MAX 2 x99 ]")
	fmt.Println(bad)
	// Output:
	// ( ( [MAX 2 ) 9 ) ] → [12 3 10 15]
	// [SM 3 4 [MIN 8 5 ] ] → [14 4 5 11 9 6 15 15]
	// sequence 0: a class of 10 (true), probabilities sum to 1: true
	// sequence 1: a class of 10 (true), probabilities sum to 1: true
	// unknown token "x99" at token 2: not in the model's vocabulary
}
