package native_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"
	gctx "github.com/gomlx/gomlx/pkg/ml/context"
	gtrain "github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/native"
	"github.com/kernelkit/kernelkit/nn"
	"github.com/kernelkit/kernelkit/tasks"
	"github.com/kernelkit/kernelkit/train"
	"github.com/kernelkit/kernelkit/train/graphtrain"
)

// toVariables converts train's saved variables to the engine's.
func toVariables(vs []train.SavedVariable) []native.Variable {
	out := make([]native.Variable, len(vs))
	for i, v := range vs {
		out[i] = native.Variable(v)
	}
	return out
}

// fromVariables converts the engine's variables to train's.
func fromVariables(vs []native.Variable) []train.SavedVariable {
	out := make([]train.SavedVariable, len(vs))
	for i, v := range vs {
		out[i] = train.SavedVariable(v)
	}
	return out
}

// randomBatches draws n batches of B sequences (tokens in [0, vocab), a
// padded tail of random length) and labels.
func randomBatches(cfg arch.ModelConfig, n, B int, seed uint64) (toks, labs [][]int32) {
	r := rng.New(seed)
	for i := 0; i < n; i++ {
		tok := make([]int32, B*cfg.Length)
		lab := make([]int32, B)
		for b := 0; b < B; b++ {
			real := 1 + r.IntN(cfg.Length)
			for l := 0; l < real; l++ {
				tok[b*cfg.Length+l] = int32(1 + r.IntN(cfg.Vocab-1))
			}
			lab[b] = int32(r.IntN(cfg.Classes))
		}
		toks, labs = append(toks, tok), append(labs, lab)
	}
	return toks, labs
}

// TestTrainingMatchesGoMLX runs 20 AdamW steps (warm-up and cosine
// schedule, weight decay, attention projections redrawn every 7 steps)
// in float64 on the engine and on GoMLX's trainer
// (train's model function and optimiser, with the model in float64),
// from the same weights, and compares the loss curves and the final
// weights. Both compute the same float64 expressions in different orders;
// Adam's normalised steps keep the differences near the rounding level
// (each step moves a weight by at most about lr), so 1e-8 relative holds
// with a wide margin.
func TestTrainingMatchesGoMLX(t *testing.T) {
	const steps, B = 20, 4
	for _, c := range []struct{ kind, adapter, features string }{
		{arch.KindTNN, "", ""}, {arch.KindSKITNN, "", ""}, {arch.KindFDTNN, "", ""}, {arch.KindTransformer, "", ""}, {arch.KindPerformer, "", ""},
		{arch.KindHRF, "", ""}, {arch.KindFDTNN, arch.AdapterSNNK, ""},
		{arch.KindPerformer, "", arch.FeatureSimRF}, {arch.KindPerformer, "", arch.FeatureOPRF}, {arch.KindPerformer, "", arch.FeatureSDERF},
	} {
		t.Run(c.kind+c.adapter+c.features, func(t *testing.T) {
			cfg := arch.ModelConfig{Kind: c.kind, Vocab: 7, Classes: 3, Length: 8, Width: 4, Depth: 2, Hidden: 6, RPEHidden: 5,
				SKIRank: 4, SKIFilter: 3, SKIGrid: 7, Causal: c.kind == arch.KindFDTNN || c.kind == arch.KindPerformer,
				Heads: 2, Features: 3, Chunk: 4, Adapter: c.adapter, AdapterSize: 3, FreezeBackbone: c.adapter != "", FeatureMap: c.features}
			cfg.Defaults()
			// The attention projections are redrawn every 7 steps (as
			// train.Fit does on GoMLX's side, below).
			opt := native.Options{LR: 3e-3, WeightDecay: 0.01, Warmup: 3, Steps: steps, Redraw: 7}
			tr, err := native.New[float64](cfg, opt, 5)
			if err != nil {
				t.Fatal(err)
			}
			be, err := nn.Backend("")
			if err != nil {
				t.Fatal(err)
			}
			ctx := gctx.New()
			for _, p := range tr.Model().Params() {
				ctx.InAbsPath(p.Scope).VariableWithValue(p.Name, tensors.FromFlatDataAndDimensions(append([]float64(nil), p.Value...), p.Dims...))
			}
			model := func(ctx *gctx.Context, _ any, inputs []*Node) []*Node {
				g := inputs[0].Graph()
				if ctx.IsTraining(g) {
					step := ConvertDType(optimizers.GetGlobalStepVar(ctx).ValueGraph(g), dtypes.Float64)
					optimizers.LearningRateVar(ctx, dtypes.Float64, opt.LR).SetValueGraph(graphtrain.Schedule(step, opt.LR, opt.Warmup, opt.Steps))
				}
				return []*Node{nn.LogitsDType(&cfg, ctx, inputs[0], dtypes.Float64)}
			}
			gt := gtrain.NewTrainer(be, ctx, model, losses.SparseCategoricalCrossEntropyLogits,
				optimizers.Adam().WeightDecay(opt.WeightDecay).Done(), nil, nil)
			toks, labs := randomBatches(cfg, steps, B, 9)
			var worstLoss, worstVar float64
			for s := 0; s < steps; s++ {
				if s > 0 && s%opt.Redraw == 0 {
					fixed, err := cfg.FixedVariables(5, s/opt.Redraw)
					if err != nil {
						t.Fatal(err)
					}
					for _, f := range fixed {
						if !f.Redrawn {
							continue
						}
						v := f.Value
						w := make([]float64, len(v))
						for i, x := range v {
							w[i] = float64(x)
						}
						if err := ctx.GetVariableByScopeAndName(f.Scope, f.Name).SetValue(
							tensors.FromFlatDataAndDimensions(w, f.Dims...)); err != nil {
							t.Fatal(err)
						}
					}
				}
				got, err := tr.Step(toks[s], labs[s])
				if err != nil {
					t.Fatal(err)
				}
				m, err := gt.TrainStep(nil, []*tensors.Tensor{tensors.FromFlatDataAndDimensions(toks[s], B, cfg.Length)},
					[]*tensors.Tensor{tensors.FromFlatDataAndDimensions(labs[s], B, 1)})
				if err != nil {
					t.Fatal(err)
				}
				want := tensors.ToScalar[float64](m[0])
				d := math.Abs(got-want) / math.Abs(want)
				worstLoss = math.Max(worstLoss, d)
				if !(d <= 1e-8) {
					t.Errorf("step %d: loss %.15g, GoMLX %.15g (relative difference %.3g)", s+1, got, want, d)
				}
			}
			// The state after the steps: weights and Adam's moments under
			// GoMLX's names.
			checked := 0
			vars, err := tr.ExportVariables()
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vars {
				if v.DType == "uint64" { // the generator state, unused here
					continue
				}
				gv := ctx.GetVariableByScopeAndName(v.Scope, v.Name)
				if gv == nil {
					t.Errorf("GoMLX has no variable %s/%s", v.Scope, v.Name)
					continue
				}
				val, err := gv.Value()
				if err != nil {
					t.Fatal(err)
				}
				mine, err := graphtrain.Tensor(v)
				if err != nil {
					t.Fatal(err)
				}
				// Softmax attention's key bias has a gradient that is zero
				// in exact arithmetic (it shifts every logit of a row
				// alike) and rounding noise in both engines; Adam
				// normalises that noise into steps of size lr, so the two
				// engines' bk (which the loss does not depend on) differ
				// by O(lr·steps). It is counted but not compared.
				skip := c.kind == arch.KindTransformer && strings.HasPrefix(v.Name, "bk")
				switch v.DType {
				case "float64":
					checked++
					if skip {
						continue
					}
					got, want := tensors.MustCopyFlatData[float64](mine), tensors.MustCopyFlatData[float64](val)
					var scale, diff float64
					for i := range want {
						scale = math.Max(scale, math.Abs(want[i]))
						diff = math.Max(diff, math.Abs(got[i]-want[i]))
					}
					if scale > 0 {
						worstVar = math.Max(worstVar, diff/scale)
					}
					if scale > 0 && !(diff/scale <= 1e-8) {
						t.Errorf("%s/%s: relative difference %.3g after %d steps", v.Scope, v.Name, diff/scale, steps)
					}
				case "int64":
					if g, w := tensors.ToScalar[int64](mine), tensors.ToScalar[int64](val); g != w {
						t.Errorf("%s/%s = %d, GoMLX %d", v.Scope, v.Name, g, w)
					}
				}
			}
			t.Logf("largest relative differences: loss %.3g, variables %.3g", worstLoss, worstVar)
			want := 1
			for _, p := range tr.Model().Params() {
				want++
				if p.Trainable {
					want += 2
				}
			}
			if checked != want {
				t.Errorf("compared %d float variables, want %d (learning rate, weights, two moments for each trainable one)", checked, want)
			}
		})
	}
}

// TestCheckpointsShareEngines trains a float32 model 3 steps with package
// train (GoMLX), loads its checkpoint into the engine and compares the
// logits (to 1e-4 of their scale: both engines compute in float32, with
// roundings of order 1e-7 relative amplified by a few layers), trains 2
// more steps natively, writes a checkpoint and resumes it with package
// train, whose predictions must match the engine's again.
func TestCheckpointsShareEngines(t *testing.T) {
	c := tasks.DefaultListOps()
	c.MinLength, c.MaxLength = 2, 16
	s, err := tasks.GenerateListOps(c, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	data, err := train.FromSamples(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ck.json")
	cfg := train.Config{
		Model: arch.ModelConfig{Kind: arch.KindFDTNN, Vocab: tasks.VocabSize, Classes: tasks.Classes, Length: 16, Width: 8, Depth: 1,
			Hidden: 8, RPEHidden: 4},
		Steps: 3, Batch: 8, LR: 3e-3, WeightDecay: 0.01, Warmup: 1, Seed: 2, Checkpoint: path,
		Device: nn.DefaultBackend, // GoMLX's pure-Go backend, not this engine
	}
	gt, err := train.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gt.Fit(context.Background(), data, nil); err != nil {
		t.Fatal(err)
	}
	ck, err := train.ReadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	opt := native.Options{LR: cfg.LR, WeightDecay: cfg.WeightDecay, Warmup: cfg.Warmup, Steps: 5}
	tr, err := native.New[float32](ck.Model, opt, cfg.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.ImportVariables(toVariables(ck.Variables)); err != nil {
		t.Fatal(err)
	}
	if tr.StepCount() != 3 {
		t.Fatalf("imported step count %d, want 3", tr.StepCount())
	}
	L := ck.Model.Length
	tokens := make([]int32, len(data)*L)
	labels := make([]int32, len(data))
	for i, e := range data {
		copy(tokens[i*L:(i+1)*L], e.Tokens)
		labels[i] = int32(e.Label)
	}
	compare := func(what string, gt *train.Trainer) {
		t.Helper()
		want, err := gt.Predict(data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tr.Logits(tokens)
		if err != nil {
			t.Fatal(err)
		}
		var scale, diff float64
		for i, row := range want {
			for j, w := range row {
				scale = math.Max(scale, math.Abs(w))
				diff = math.Max(diff, math.Abs(float64(got[i*len(row)+j])-w))
			}
		}
		t.Logf("%s: logits differ by %.3g (scale %.3g)", what, diff, scale)
		if !(diff <= 1e-4*scale) {
			t.Errorf("%s: logits differ by %.3g (scale %.3g)", what, diff, scale)
		}
	}
	compare("GoMLX checkpoint", gt)
	for s := 0; s < 2; s++ {
		lo := (s * 8) % len(data)
		if _, err := tr.Step(tokens[lo*L:(lo+8)*L], labels[lo:lo+8]); err != nil {
			t.Fatal(err)
		}
	}
	vars, err := tr.ExportVariables()
	if err != nil {
		t.Fatal(err)
	}
	ck2 := &train.Checkpoint{Format: train.CheckpointFormat, Model: ck.Model, Seed: cfg.Seed, Step: int64(tr.StepCount()),
		Variables: fromVariables(vars)}
	if err := train.WriteCheckpoint(path, ck2); err != nil {
		t.Fatal(err)
	}
	cfg.Steps = 5
	gt2, err := train.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if gt2.Step() != 5 {
		t.Fatalf("train resumed at step %d, want 5", gt2.Step())
	}
	compare("native checkpoint", gt2)

	gtTrain, gtModel := gt2.Params()
	nTrain, nModel := tr.Model().ParamCounts()
	if gtTrain != nTrain || gtModel != nModel {
		t.Errorf("parameter counts: engine %d trainable of %d, train %d of %d", nTrain, nModel, gtTrain, gtModel)
	}
	// Weights loaded into a fresh trainer give the same logits.
	other, err := native.New[float32](ck.Model, opt, 99)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.LoadWeights(toVariables(ck2.Variables), nil); err != nil {
		t.Fatal(err)
	}
	a, err := other.Logits(tokens)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.Logits(tokens)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("logit %d after LoadWeights: %v, want %v", i, a[i], b[i])
		}
	}

	// A checkpoint of a run that never saw GoMLX (no generator state).
	fresh, err := native.New[float32](ck.Model, opt, cfg.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Step(tokens[:8*L], labels[:8]); err != nil {
		t.Fatal(err)
	}
	tr = fresh
	vars, err = fresh.ExportVariables()
	if err != nil {
		t.Fatal(err)
	}
	ck3 := &train.Checkpoint{Format: train.CheckpointFormat, Model: ck.Model, Seed: cfg.Seed, Step: int64(fresh.StepCount()),
		Variables: fromVariables(vars)}
	if err := train.WriteCheckpoint(path, ck3); err != nil {
		t.Fatal(err)
	}
	gt3, err := train.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	compare("fresh native checkpoint", gt3)
	// GoMLX resumes training from it.
	cfg.Steps = 2
	gt3, err = train.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gt3.Fit(context.Background(), data, nil); err != nil {
		t.Fatal(err)
	}
}
