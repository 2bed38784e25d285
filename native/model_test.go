package native

import (
	"bytes"
	"math"
	"runtime"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/nn"
)

// tinyModels are the TNN-kind configurations of the whole-model tests.
func tinyModels() []arch.ModelConfig {
	base := arch.ModelConfig{Vocab: 7, Classes: 3, Length: 8, Width: 4, Depth: 2, Hidden: 6, RPEHidden: 5,
		SKIRank: 4, SKIFilter: 3, SKIGrid: 7}
	var out []arch.ModelConfig
	for _, c := range []struct {
		kind, act string
		causal    bool
		expand    int
	}{
		{arch.KindTNN, "relu", false, 1}, {arch.KindTNN, "gelu", true, 2}, {arch.KindSKITNN, "", false, 1},
		{arch.KindFDTNN, "silu", true, 1}, {arch.KindFDTNN, "relu", false, 2},
	} {
		cfg := base
		cfg.Kind, cfg.RPEAct, cfg.Causal, cfg.Expand = c.kind, c.act, c.causal, c.expand
		out = append(out, cfg)
	}
	return out
}

// tinyOtherModels are the attention kinds and the adapter configurations
// of the whole-model tests (their layers are those of attention.go,
// ffn.go and adapter.go).
func tinyOtherModels() []arch.ModelConfig {
	base := arch.ModelConfig{Vocab: 7, Classes: 3, Length: 8, Width: 4, Depth: 2, Hidden: 6, Heads: 2, Features: 3, Chunk: 4,
		RPEHidden: 5}
	var out []arch.ModelConfig
	for _, c := range []struct {
		kind, adapter  string
		causal, frozen bool
	}{
		{arch.KindTransformer, "", false, false}, {arch.KindPerformer, "", true, false}, {arch.KindHRF, "", false, false},
		{arch.KindTNN, arch.AdapterBottleneck, false, true}, {arch.KindPerformer, arch.AdapterSNNK, false, true},
	} {
		cfg := base
		cfg.Kind, cfg.Adapter, cfg.Causal, cfg.FreezeBackbone, cfg.AdapterSize = c.kind, c.adapter, c.causal, c.frozen, 3
		out = append(out, cfg)
	}
	return out
}

// tinyBatch is a batch of 3 sequences of length 8 with padding (0) at the
// end of two of them, one entirely padding.
var (
	tinyTokens = []int32{1, 2, 3, 4, 5, 6, 1, 2, 3, 3, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	tinyLabels = []int32{2, 0, 1}
	// tinyAttnTokens has a real token in every sequence: attention over
	// no real key is 0/0 in nn's graphs (FAVOR+, HRF) and not compared.
	tinyAttnTokens = []int32{1, 2, 3, 4, 5, 6, 1, 2, 3, 3, 6, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0}
)

// gomlxLossAndGrads evaluates nn.LogitsDType (float64) with the
// model's parameter values and returns the logits, GoMLX's mean sparse
// cross-entropy and its gradients (autodiff) for every parameter, in the
// order of m.Params().
func gomlxLossAndGrads(t *testing.T, m *Model[float64], tokens, labels []int32) (logits []float64, loss float64, grads [][]float64) {
	t.Helper()
	cfg := m.Config()
	ctx := context.New()
	for _, p := range m.Params() {
		ctx.InAbsPath(p.Scope).VariableWithValue(p.Name, tensors.FromFlatDataAndDimensions(append([]float64(nil), p.Value...), p.Dims...))
	}
	B := len(labels)
	exec, err := context.NewExec(testBackend(t), ctx.Reuse(), func(ctx *context.Context, tok *Node) []*Node {
		g := tok.Graph()
		z := nn.LogitsDType(&cfg, ctx, tok, dtypes.Float64)
		lab := Reshape(Const(g, labels), B, 1)
		l := ReduceAllMean(losses.SparseCategoricalCrossEntropyLogits([]*Node{lab}, []*Node{z}))
		var vs []*Node
		for _, p := range m.Params() {
			vs = append(vs, ctx.GetVariableByScopeAndName(p.Scope, p.Name).ValueGraph(g))
		}
		return append([]*Node{Reshape(z, B*cfg.Classes), l}, Gradient(l, vs...)...)
	})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(tokens, B, cfg.Length))
	if err != nil {
		t.Fatal(err)
	}
	logits = tensors.MustCopyFlatData[float64](outs[0])
	loss = tensors.ToScalar[float64](outs[1])
	for _, o := range outs[2:] {
		grads = append(grads, tensors.MustCopyFlatData[float64](o))
	}
	return logits, loss, grads
}

func TestModelMatchesGoMLX(t *testing.T) {
	for _, cfg := range append(tinyModels(), tinyOtherModels()...) {
		name := cfg.Kind
		if cfg.Causal {
			name += "/causal"
		}
		if cfg.Adapter != "" {
			name += "/" + cfg.Adapter
		}
		t.Run(name, func(t *testing.T) {
			var tr *Trainer[float64]
			var err error
			// The bidirectional kinds in the FFT form, the others by dense
			// DFT products.
			withToeplitzForm(cfg.Causal, func() { tr, err = New[float64](cfg, Options{LR: 1e-3}, 3) })
			if err != nil {
				t.Fatal(err)
			}
			m := tr.Model()
			if cfg.Adapter != "" { // adapters start as the identity: perturb them
				for i, p := range m.Params() {
					if p.Trainable && p.Scope != "/head" {
						copy(p.Value, randArr(uint64(40+i), 0.3, len(p.Value)).data)
					}
				}
			}
			tokens := tinyTokens
			if cfg.IsAttention() {
				tokens = tinyAttnTokens
			}
			z, err := m.Forward(tokens)
			if err != nil {
				t.Fatal(err)
			}
			loss, err := m.Loss(tinyLabels)
			if err != nil {
				t.Fatal(err)
			}
			m.ZeroGrad()
			m.Backward()
			wz, wl, wg := gomlxLossAndGrads(t, m, tokens, tinyLabels)
			assertClose(t, "logits", z, wz, fwdTol)
			assertClose(t, "loss", []float64{loss}, []float64{wl}, fwdTol)
			if len(wg) != len(m.Params()) {
				t.Fatalf("%d gradients for %d parameters", len(wg), len(m.Params()))
			}
			// Gradients are compared relative to their own scale, but not
			// below 1e-3 of the largest gradient: some vanish by
			// cancellation (the key bias of softmax attention shifts all
			// logits of a row alike), and their rounding is that of the
			// terms that cancel.
			var global float64
			for _, g := range wg {
				for _, v := range g {
					global = math.Max(global, math.Abs(v))
				}
			}
			for i, p := range m.Params() {
				if !p.Trainable {
					continue
				}
				var local, diff float64
				for j, v := range wg[i] {
					local = math.Max(local, math.Abs(v))
					diff = math.Max(diff, math.Abs(p.Grad[j]-v))
				}
				if d := diff / math.Max(local, 1e-3*global); !(d <= gradTol) {
					t.Errorf("∂%s/%s: relative difference %.3g exceeds %.1g", p.Scope, p.Name, d, gradTol)
				}
			}
		})
	}
}

func TestModelRejectsBadInputs(t *testing.T) {
	m, err := NewModel[float64](tinyModels()[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		tokens []int32
	}{
		{"empty", nil}, {"ragged", make([]int32, 9)}, {"token past the vocabulary", append(make([]int32, 7), 7)},
		{"negative token", append(make([]int32, 7), -1)},
	} {
		if _, err := m.Forward(c.tokens); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if _, err := m.Forward(tinyTokens); err != nil {
		t.Fatal(err)
	}
	for _, labels := range [][]int32{{0, 1}, {0, 1, 3}, {0, -1, 1}} {
		if _, err := m.Loss(labels); err == nil {
			t.Errorf("labels %v: no error", labels)
		}
	}
	for _, cfg := range []arch.ModelConfig{{Kind: "rnn", Vocab: 3, Classes: 2, Length: 4, Width: 2, Depth: 1}, {Kind: arch.KindTNN}} {
		if _, err := NewModel[float32](cfg); err == nil {
			t.Errorf("config %+v: no error", cfg)
		}
	}
}

// TestStepsAreReproducible trains a few float32 steps twice, on all cores
// and on one, and requires the same bytes: ranges of work are fixed by
// the shapes, not by the scheduling or the number of cores.
func TestStepsAreReproducible(t *testing.T) {
	for _, cfg := range []arch.ModelConfig{tinyModels()[2], tinyModels()[4], tinyOtherModels()[1]} {
		cfg.Length, cfg.Width = 64, 8 // enough rows for several work ranges
		tokens := make([]int32, 40*cfg.Length)
		for i := range tokens {
			tokens[i] = int32(i*7%cfg.Vocab) * int32(min(1, i%cfg.Length/5))
		}
		labels := make([]int32, 40)
		for i := range labels {
			labels[i] = int32(i % cfg.Classes)
		}
		run := func(procs int) []Variable {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			tr, err := New[float32](cfg, Options{LR: 1e-2, WeightDecay: 0.01, Warmup: 1, Steps: 3}, 7)
			if err != nil {
				t.Fatal(err)
			}
			for s := 0; s < 3; s++ {
				if _, err := tr.Step(tokens, labels); err != nil {
					t.Fatal(err)
				}
			}
			vars, err := tr.ExportVariables()
			if err != nil {
				t.Fatal(err)
			}
			return vars
		}
		a, b := run(max(2, runtime.GOMAXPROCS(0))), run(1)
		for i := range a {
			if !bytes.Equal(a[i].Data, b[i].Data) {
				t.Errorf("%s: %s/%s differs between runs on several cores and on one", cfg.Kind, a[i].Scope, a[i].Name)
			}
		}
	}
}
