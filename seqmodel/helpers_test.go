package seqmodel_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/seqmodel"
	"github.com/kernelkit/kernelkit/tasks"
	"github.com/kernelkit/kernelkit/train"
)

// toyConfig is a small model of the tasks' vocabulary and classes.
func toyConfig(kind string) arch.ModelConfig {
	return arch.ModelConfig{Kind: kind, Vocab: tasks.VocabSize, Classes: tasks.Classes, Length: 24, Width: 16, Depth: 2,
		Heads: 2, Hidden: 16, RPEHidden: 8, SKIRank: 5, SKIFilter: 3, SKIGrid: 9, Features: 8, Chunk: 8}
}

// toyData generates n ListOps examples of at most 23 tokens.
func toyData(t testing.TB, n int, seed uint64) ([]tasks.Sample, []train.Example) {
	t.Helper()
	c := tasks.DefaultListOps()
	c.MinLength, c.MaxLength = 2, 24
	s, err := tasks.GenerateListOps(c, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	exs, err := train.FromSamples(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, exs
}

// trained trains cfg for 3 steps of 8 examples on the native engine and
// returns the trainer and its inference model.
func trained(t testing.TB, cfg arch.ModelConfig) (*train.Trainer, *seqmodel.Model) {
	t.Helper()
	_, data := toyData(t, 32, 1)
	tr, err := train.New(train.Config{Model: cfg, Steps: 3, Batch: 8, LR: 3e-3, WeightDecay: 0.01, Warmup: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Fit(context.Background(), data, nil); err != nil {
		t.Fatal(err)
	}
	m, err := tr.Export()
	if err != nil {
		t.Fatal(err)
	}
	return tr, m
}

// encode returns the bytes of m's file.
func encode(t testing.TB, m *seqmodel.Model) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := m.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// ids returns the token ids of examples.
func ids(exs []train.Example) [][]int32 {
	out := make([][]int32, len(exs))
	for i, e := range exs {
		out[i] = e.Tokens
	}
	return out
}

// allConfigs are the kinds, a causal form and an adapter.
func allConfigs() []arch.ModelConfig {
	var out []arch.ModelConfig
	for _, k := range arch.Kinds {
		out = append(out, toyConfig(k))
	}
	c := toyConfig(arch.KindFDTNN)
	c.Causal = true
	a := toyConfig(arch.KindPerformer)
	a.Adapter, a.AdapterSize = arch.AdapterSNNK, 4
	return append(out, c, a)
}
