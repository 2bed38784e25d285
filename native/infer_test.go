package native

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
)

// trainedTiny returns a float32 trainer of cfg after two steps on the tiny
// batch (weights away from their initialisation, random features drawn)
// and the model's variables as a predictor takes them.
func trainedTiny(t *testing.T, cfg arch.ModelConfig) (*Trainer[float32], []Variable) {
	t.Helper()
	tr, err := New[float32](cfg, Options{LR: 1e-2, Warmup: 1, Steps: 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 2; s++ {
		if _, err := tr.Step(tinyAttnTokens, tinyLabels); err != nil {
			t.Fatal(err)
		}
	}
	return tr, modelVariables(tr.Model())
}

// modelVariables returns m's parameters as variables (float32 data).
func modelVariables(m *Model[float32]) []Variable {
	var out []Variable
	for _, p := range m.Params() {
		out = append(out, Variable{Scope: p.Scope, Name: p.Name, DType: "float32", Dims: append([]int(nil), p.Dims...), Data: encodeValues(p.Value)})
	}
	return out
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestPredictorMatchesTrainer: a predictor runs the training engine's
// forward code, so its logits equal Trainer.Logits on the same batch bit
// for bit, for every kind, adapter and batch size (buffers grown and
// reused), with two residual buffers and no gradient buffers.
func TestPredictorMatchesTrainer(t *testing.T) {
	for _, cfg := range append(tinyModels(), tinyOtherModels()...) {
		name := fmt.Sprintf("%s/causal=%v/%s", cfg.Kind, cfg.Causal, cfg.Adapter)
		t.Run(name, func(t *testing.T) {
			tr, vars := trainedTiny(t, cfg)
			p, err := NewPredictor[float32](cfg, vars, 4)
			if err != nil {
				t.Fatal(err)
			}
			L := cfg.Length
			for _, tokens := range [][]int32{tinyAttnTokens, tinyAttnTokens[:L], append(append([]int32(nil), tinyAttnTokens...), tinyAttnTokens[:L]...), tinyAttnTokens[L : 2*L]} {
				want, err := tr.Logits(tokens)
				if err != nil {
					t.Fatal(err)
				}
				got, err := p.Logits(tokens)
				if err != nil {
					t.Fatal(err)
				}
				if !sameBits(got, want) {
					t.Errorf("%d sequences: predictor logits %v, trainer's %v", len(tokens)/L, got, want)
				}
			}
			if len(p.m.xs) != len(p.m.subs)+1 {
				t.Fatalf("%d residual buffers for %d sub-blocks", len(p.m.xs), len(p.m.subs))
			}
			for i, x := range p.m.xs {
				if &x[:1][0] != &p.res[i%2][:1][0] {
					t.Errorf("residual buffer %d is not the predictor's buffer %d", i, i%2)
				}
			}
			for _, q := range p.Params() {
				if q.Grad != nil {
					t.Errorf("%s/%s has a gradient buffer", q.Scope, q.Name)
				}
			}
		})
	}
}

// TestPredictorClonesConcurrently runs a predictor and two clones at once
// (the race detector watches the shared weights) and requires each call's
// logits to equal the serial ones bit for bit.
func TestPredictorClonesConcurrently(t *testing.T) {
	for _, cfg := range []arch.ModelConfig{tinyModels()[4], tinyModels()[2], tinyOtherModels()[1], tinyOtherModels()[2], tinyOtherModels()[4]} {
		_, vars := trainedTiny(t, cfg)
		p, err := NewPredictor[float32](cfg, vars, 3)
		if err != nil {
			t.Fatal(err)
		}
		L := cfg.Length
		inputs := [][]int32{tinyAttnTokens, tinyAttnTokens[:L], tinyAttnTokens[L:]}
		want := make([][]float32, len(inputs))
		for i, in := range inputs {
			z, err := p.Logits(in)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = append([]float32(nil), z...)
		}
		ps := []*Predictor[float32]{p}
		for range 2 {
			c, err := p.Clone(3)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, c)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for w, q := range ps {
			wg.Go(func() {
				for k := range 6 {
					i := (w + k) % len(inputs)
					z, err := q.Logits(inputs[i])
					if err != nil {
						errs <- err.Error()
						return
					}
					if !sameBits(z, want[i]) {
						errs <- fmt.Sprintf("%s: predictor %d, input %d: logits %v, serial %v", cfg.Kind, w, i, z, want[i])
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

func TestPredictorRejectsBadInputs(t *testing.T) {
	cfg := tinyModels()[0]
	_, vars := trainedTiny(t, cfg)
	p, err := NewPredictor[float32](cfg, vars, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		tokens     []int32
	}{
		{"empty", "positive multiple", nil}, {"ragged", "positive multiple", make([]int32, 9)},
		{"over the batch bound", "batch bound of 2", make([]int32, 24)},
		{"token past the vocabulary", "outside the vocabulary", append(make([]int32, 7), 7)},
	} {
		if _, err := p.Logits(c.tokens); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	wrongDims := append([]Variable(nil), vars...)
	wrongDims[0].Dims = []int{wrongDims[0].Dims[1], wrongDims[0].Dims[0]}
	renamed := append([]Variable(nil), vars...)
	renamed[1].Name = "other"
	short := append([]Variable(nil), vars...)
	short[2].Data = short[2].Data[:len(short[2].Data)-4]
	for _, c := range []struct {
		name, want string
		vars       []Variable
		batch      int
	}{
		{"missing variable", "variables for a tnn model", vars[1:], 2},
		{"extra variable", "variables for a tnn model", append(append([]Variable(nil), vars...), vars[0]), 2},
		{"duplicate variable", "given twice", append(append([]Variable(nil), vars[:1]...), vars[:len(vars)-1]...), 2},
		{"renamed variable", "lack", renamed, 2},
		{"wrong dimensions", "dimensions", wrongDims, 2},
		{"short data", "bytes", short, 2},
		{"zero batch bound", "must be positive", vars, 0},
	} {
		if _, err := NewPredictor[float32](cfg, c.vars, c.batch); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}
