package seqmodel_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/native"
	"github.com/kernelkit/kernelkit/seqmodel"
	"github.com/kernelkit/kernelkit/tasks"
)

// TestTokenizeMatchesTasks: the tokenizer of an exported model reads LRA
// ListOps and recall text as package tasks (and so train) does.
func TestTokenizeMatchesTasks(t *testing.T) {
	_, m := trained(t, toyConfig(arch.KindTNN))
	samples, _ := toyData(t, 50, 11)
	recall, err := tasks.GenerateRecall(tasks.RecallConfig{Length: 30, Pairs: 4}, 20, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(samples, recall...) {
		want, err := tasks.Encode(tasks.Tokenize(s.Source))
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Tokenize(s.Source)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%q: ids %v (%v), tasks' %v", s.Source, got, err, want)
		}
	}
	_, err = m.Tokenize("( [MAX 2 ( 3 ) ] ) [FOO 7")
	var ute *seqmodel.UnknownTokenError
	if !errors.As(err, &ute) || ute.Token != "[FOO" || ute.Position != 4 {
		t.Errorf("unknown token: error %v, want [FOO at token 4", err)
	}
	if _, err := m.Tokenize("<pad>"); err == nil {
		t.Error("the padding name was read as a token")
	}
	for _, c := range []struct {
		ids  []int32
		want string
	}{
		{nil, "no tokens"}, {make([]int32, 25), "25 tokens, more than the model's maximum length of 24"},
		{[]int32{3, 0, 4}, "token id 0 at token 1"}, {[]int32{3, 46}, "token id 46 at token 1 lies outside [1, 46)"},
		{[]int32{-2}, "token id -2"},
	} {
		if err := m.CheckSequence(c.ids); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one saying %q", c.ids, err, c.want)
		}
	}
}

// e32 is the float32 rounding of a model's logits as its own conditioning
// amplifies it, measured against the same weights in float64 (native
// float64 predictor): max |z32 − z64|/(1 + |z64|).
func e32(t *testing.T, m *seqmodel.Model, seqs [][]int32, z32 []float32) float64 {
	t.Helper()
	cfg := m.Config()
	raw := encode(t, m)
	var vars []native.Variable
	h := m.Header()
	off := 16 + int(binary.LittleEndian.Uint32(raw[12:]))
	for _, v := range h.Variables {
		n := 4
		for _, d := range v.Dims {
			n *= d
		}
		vars = append(vars, native.Variable{Scope: v.Scope, Name: v.Name, DType: "float32", Dims: v.Dims, Data: raw[off : off+n]})
		off += n
	}
	p, err := native.NewPredictor[float64](cfg, vars, len(seqs))
	if err != nil {
		t.Fatal(err)
	}
	tok := make([]int32, len(seqs)*cfg.Length)
	for i, q := range seqs {
		copy(tok[i*cfg.Length:], q)
	}
	z64, err := p.Logits(tok)
	if err != nil {
		t.Fatal(err)
	}
	e := 0.0
	for i, v := range z64 {
		e = math.Max(e, math.Abs(float64(z32[i])-v)/(1+math.Abs(v)))
	}
	return e
}

// TestScorerBatchLayouts scores the same sequences in forward passes of 1,
// 5 and 16 sequences. Within a pass of the same sequences the bits are
// the trainer's (TestExportMatchesEvaluate in package train); across
// layouts a sequence's logits differ only where a product or FFT call
// covering other rows sums in another order. Each layout is one float32
// evaluation of the same expression, off the exact logits by about the
// float32 error e32 that this model's conditioning gives (measured
// against the float64 forward pass of the same weights), so two layouts
// differ by at most about 2·e32; the bound is 4·e32 + 1e-6, twice that.
// (They do differ on OpenBLAS, by about one float32 rounding: its
// kernels for a product's last rows sum in another order.)
func TestScorerBatchLayouts(t *testing.T) {
	_, data := toyData(t, 16, 4)
	seqs := ids(data)
	for _, cfg := range allConfigs() {
		_, m := trained(t, cfg)
		ref := logits(t, m, 16, seqs)
		e := e32(t, m, seqs, ref)
		tol := 4*e + 1e-6
		for _, b := range []int{1, 5} {
			got := logits(t, m, b, seqs)
			d := 0.0
			for i := range got {
				d = math.Max(d, math.Abs(float64(got[i])-float64(ref[i]))/(1+math.Abs(float64(ref[i]))))
			}
			if testing.Verbose() {
				t.Logf("%s causal=%v %s: batch %d against 16: %.3g (e32 %.3g)", cfg.Kind, cfg.Causal, cfg.Adapter, b, d, e)
			}
			if !(d <= tol) {
				t.Errorf("%s causal=%v %s: batch %d differs from batch 16 by %.3g, bound %.3g", cfg.Kind, cfg.Causal, cfg.Adapter, b, d, tol)
			}
		}
	}
}

// TestScorerMemory: the scorer's memory estimate, checked before
// anything is allocated, bounds the buffers its forward passes keep (the
// heap they leave live, after a collection) and, except on the perturbed
// test BLAS, whose products allocate on every call, everything the first
// calls allocate (they grow every buffer); a budget below it is refused.
func TestScorerMemory(t *testing.T) {
	perturbed := strings.Contains(blas.Name(), "perturbed")
	for _, cfg := range allConfigs() {
		cfg.Length, cfg.Width = 128, 32
		if cfg.Kind == arch.KindSKITNN {
			cfg.SKIRank = 16
		}
		_, m := trained(t, cfg)
		s, err := m.NewScorer(seqmodel.ScorerOptions{MaxBatch: 6, Replicas: 2})
		if err != nil {
			t.Fatal(err)
		}
		seqs := make([][]int32, 12)
		for i := range seqs {
			seqs[i] = make([]int32, 100+i)
			for j := range seqs[i] {
				seqs[i][j] = int32(1 + (i+j)%40)
			}
		}
		var wg sync.WaitGroup
		runtime.GC()
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		for range 2 {
			wg.Go(func() {
				if _, err := s.Logits(context.Background(), seqs); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		runtime.ReadMemStats(&b)
		alloc := float64(b.TotalAlloc - a.TotalAlloc)
		runtime.GC()
		runtime.ReadMemStats(&b)
		live := float64(b.HeapAlloc) - float64(a.HeapAlloc)
		if testing.Verbose() {
			t.Logf("%s causal=%v %s: allocated %.1f MB, kept %.1f MB, estimate %.1f MB", cfg.Kind, cfg.Causal, cfg.Adapter, alloc/1e6, live/1e6, s.Memory()/1e6)
		}
		if live > s.Memory() || (!perturbed && alloc > s.Memory()) {
			t.Errorf("%s: two passes of 6 sequences allocated %.0f bytes and kept %.0f, the estimate is %.0f", cfg.Kind, alloc, live, s.Memory())
		}
		runtime.KeepAlive(s)
		if _, err := m.NewScorer(seqmodel.ScorerOptions{MaxBatch: 6, Replicas: 2, MaxMemory: int64(s.Memory()) - 1}); err == nil || !strings.Contains(err.Error(), "memory budget") {
			t.Errorf("%s: a budget one byte short: %v", cfg.Kind, err)
		}
		one, err := m.ForwardMemory(1)
		if err != nil {
			t.Fatal(err)
		}
		auto, err := m.NewScorer(seqmodel.ScorerOptions{MaxMemory: int64(3.5 * one)})
		if err != nil || auto.MaxBatch() < 3 || auto.Memory() > 3.5*one {
			t.Errorf("%s: a budget of 3.5 sequences gives a batch of %d, estimate %.0f (%v)", cfg.Kind, auto.MaxBatch(), auto.Memory(), err)
		}
	}
}

func TestScorerRefuses(t *testing.T) {
	_, m := trained(t, toyConfig(arch.KindPerformer))
	for _, c := range []struct {
		o    seqmodel.ScorerOptions
		want string
	}{
		{seqmodel.ScorerOptions{MaxBatch: -1}, "batch bound"}, {seqmodel.ScorerOptions{MaxMemory: -5}, "memory budget"},
		{seqmodel.ScorerOptions{Replicas: -1}, "replicas"}, {seqmodel.ScorerOptions{Replicas: 5000}, "replicas"},
		{seqmodel.ScorerOptions{MaxMemory: 100}, "memory budget"},
	} {
		if _, err := m.NewScorer(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.o, err, c.want)
		}
	}
	s, err := m.NewScorer(seqmodel.ScorerOptions{MaxBatch: 2})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Logits(context.Background(), [][]int32{{1, 2}, {3}, {}, {4}})
	var se *seqmodel.SequenceError
	if !errors.As(err, &se) || se.Index != 2 || !errors.Is(err, seqmodel.ErrEmpty) {
		t.Errorf("an empty third sequence: %v", err)
	}
	if _, err := s.Logits(context.Background(), nil); err == nil {
		t.Error("no sequences: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Logits(ctx, [][]int32{{1}, {2}, {3}}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v", err)
	}
}

// TestScorerConcurrent runs calls on 3 replicas and more goroutines at
// once (the race detector watches them) and requires every call's logits
// to equal the serial ones bit for bit.
func TestScorerConcurrent(t *testing.T) {
	_, data := toyData(t, 9, 6)
	seqs := ids(data)
	for _, cfg := range []arch.ModelConfig{toyConfig(arch.KindFDTNN), toyConfig(arch.KindHRF)} {
		_, m := trained(t, cfg)
		s, err := m.NewScorer(seqmodel.ScorerOptions{MaxBatch: 3, Replicas: 3})
		if err != nil {
			t.Fatal(err)
		}
		want := make([][]float32, len(seqs))
		for i := range seqs {
			if want[i], err = s.Logits(context.Background(), seqs[i:i+1]); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		errs := make(chan string, 100)
		for g := range 6 {
			wg.Go(func() {
				for k := range 4 {
					i := (g*4 + k) % len(seqs)
					z, err := s.Logits(context.Background(), seqs[i:i+1])
					if err != nil || !sameBits(z, want[i]) {
						errs <- fmt.Sprintf("%s: goroutine %d, sequence %d: %v (%v), serial %v", cfg.Kind, g, i, z, err, want[i])
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}

func TestLabelsAndProbabilities(t *testing.T) {
	z := []float32{1, 3, 3, -1e30, 0, 50, 50, 49.5, -2}
	if got := seqmodel.Labels(z, 3); !slices.Equal(got, []int{1, 2, 0}) {
		t.Errorf("labels %v, want [1 2 0] (first of a tie)", got)
	}
	p := seqmodel.Probabilities(z, 3)
	for i := 0; i < 3; i++ {
		s := p[3*i] + p[3*i+1] + p[3*i+2]
		if math.Abs(s-1) > 4e-16 {
			t.Errorf("row %d sums to %v", i, s)
		}
	}
	// Row 2 shifted by its largest logit: 1/(1 + e^−0.5 + e^−52).
	if w := 1 / (1 + math.Exp(-0.5) + math.Exp(-52)); math.Abs(p[6]-w) > 1e-15 || p[3] != 0 {
		t.Errorf("probabilities %v", p)
	}
}
