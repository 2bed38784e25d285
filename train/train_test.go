package train

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/native"
	"github.com/kernelkit/kernelkit/tasks"
	"github.com/kernelkit/kernelkit/train/graphtrain"
)

// toyData returns short ListOps sequences (length ≤ 15) as examples.
func toyData(t testing.TB, n int, seed uint64) []Example {
	t.Helper()
	c := tasks.DefaultListOps()
	c.MinLength, c.MaxLength = 2, 16
	s, err := tasks.GenerateListOps(c, n, seed)
	if err != nil {
		t.Fatal(err)
	}
	exs, err := FromSamples(s)
	if err != nil {
		t.Fatal(err)
	}
	return exs
}

func toyConfig(kind string) Config {
	return Config{
		Model: arch.ModelConfig{Kind: kind, Vocab: tasks.VocabSize, Classes: tasks.Classes, Length: 16, Width: 16, Depth: 1,
			Heads: 2, Hidden: 16, RPEHidden: 8, SKIRank: 5, SKIFilter: 3, SKIGrid: 9, Features: 8, Chunk: 8},
		Steps: 24, Batch: 16, LR: 3e-3, WeightDecay: 0.01, Warmup: 2, Seed: 1,
	}
}

// TestShortRunLowersLoss trains every model kind for a few steps on both
// engines and checks that the mean loss of the last steps is below that
// of the first. At the start the logits are about N(0, 1) per class (a
// unit-RMS pooled vector times N(0, 1/width) classifier weights), so the
// expected loss is about ln 10 + ½ (E[logsumexp z] ≈ ln K + σ²/2); the
// first steps' mean must lie within [ln 10 − ½, ln 10 + 1]. Learning the
// class frequencies alone lowers it.
func TestShortRunLowersLoss(t *testing.T) {
	data := toyData(t, 64, 1)
	for _, engine := range []string{DeviceCPU, "go"} {
		start := time.Now()
		for _, kind := range arch.Kinds {
			cfg := toyConfig(kind)
			cfg.Device = engine
			shortRun(t, cfg, data)
		}
		t.Logf("%s, all kinds: %v", engine, time.Since(start))
	}
}

// shortRun trains cfg on data and checks the loss as TestShortRunLowersLoss
// describes.
func shortRun(t *testing.T, cfg Config, data []Example) {
	t.Helper()
	kind := cfg.Model.Kind
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.Fit(context.Background(), data, nil)
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	first := mean(res.Loss[:4])
	last := mean(res.Loss[len(res.Loss)-4:])
	if !(last < first-0.1) {
		t.Errorf("%s (%s): loss %.3f over the first 4 steps, %.3f over the last 4: no decrease", kind, cfg.Device, first, last)
	}
	if first < math.Log(10)-0.5 || first > math.Log(10)+1 {
		t.Errorf("%s (%s): initial loss %.3f outside [ln 10 − ½, ln 10 + 1]", kind, cfg.Device, first)
	}
	t.Logf("%s (%s): loss %.3f → %.3f, %.1f steps/s, %d parameters", kind, cfg.Device, first, last, res.StepsPerSecond, res.TrainableParams)
}

// TestCausalKinds runs two steps of every causal model kind (ski-tnn has
// none) and checks the first loss is finite and within [ln 10 − 1,
// ln 10 + 1] (expected about ln 10 + ½ at initialisation; see
// TestShortRunLowersLoss).
func TestCausalKinds(t *testing.T) {
	data := toyData(t, 32, 4)
	for _, kind := range []string{arch.KindTNN, arch.KindFDTNN, arch.KindPerformer, arch.KindTransformer, arch.KindHRF} {
		cfg := toyConfig(kind)
		cfg.Model.Causal, cfg.Steps = true, 2
		tr, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, err := tr.Fit(context.Background(), data, nil)
		if err != nil {
			t.Fatalf("causal %s: %v", kind, err)
		}
		if l := res.Loss[0]; math.IsNaN(l) || math.Abs(l-math.Log(10)) > 1 {
			t.Errorf("causal %s: first loss %v", kind, l)
		}
	}
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// TestCheckpointResume checks that a run stopped at step 3 and resumed
// from its checkpoint gives the same losses and the same final variables,
// bit for bit, as a straight run of 6 steps (FAVOR+ redraw every 2 steps
// included), and that the same seed gives the same run.
func TestCheckpointResume(t *testing.T) {
	data := toyData(t, 40, 2)
	dir := t.TempDir()
	cfg := toyConfig(arch.KindPerformer)
	cfg.Steps, cfg.Redraw = 6, 2
	cfg.Checkpoint = filepath.Join(dir, "straight.ckpt")
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	straight, err := tr.Fit(context.Background(), data, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Checkpoint = filepath.Join(dir, "resumed.ckpt")
	cfg.Steps = 3
	tr, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	first, err := tr.Fit(context.Background(), data, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Steps = 6
	tr, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Step() != 3 {
		t.Fatalf("resumed at step %d, want 3", tr.Step())
	}
	second, err := tr.Fit(context.Background(), data, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := append(append([]float64(nil), first.Loss...), second.Loss...)
	for i := range straight.Loss {
		if got[i] != straight.Loss[i] {
			t.Fatalf("loss of step %d: straight %v, resumed %v", i+1, straight.Loss[i], got[i])
		}
	}
	a, err := ReadCheckpoint(filepath.Join(dir, "straight.ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadCheckpoint(filepath.Join(dir, "resumed.ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Step != 6 || b.Step != 6 || len(a.Variables) != len(b.Variables) || len(a.Variables) == 0 {
		t.Fatalf("checkpoints: steps %d, %d; %d and %d variables", a.Step, b.Step, len(a.Variables), len(b.Variables))
	}
	bv := map[string]SavedVariable{}
	for _, v := range b.Variables {
		bv[v.Scope+"/"+v.Name] = v
	}
	for _, v := range a.Variables {
		w, ok := bv[v.Scope+"/"+v.Name]
		if !ok || !bytes.Equal(v.Data, w.Data) {
			t.Errorf("variable %s/%s differs between the straight and the resumed run", v.Scope, v.Name)
		}
	}
	// The FAVOR+ projection was redrawn at steps 2 and 4: it holds draw 2.
	for k, wantEqual := range map[int]bool{0: false, 2: true} {
		fixed, err := cfg.Model.FixedVariables(cfg.Seed, k)
		if err != nil {
			t.Fatal(err)
		}
		wantData := make([]byte, 4*len(fixed[0].Value))
		for i, x := range fixed[0].Value {
			binary.LittleEndian.PutUint32(wantData[4*i:], math.Float32bits(x))
		}
		v := bv[fixed[0].Scope+"/"+fixed[0].Name]
		if bytes.Equal(v.Data, wantData) != wantEqual {
			t.Errorf("%s/%s after 6 steps with redraw every 2: equal to draw %d is %v, want %v", fixed[0].Scope, fixed[0].Name, k, !wantEqual, wantEqual)
		}
	}
	// A checkpoint of another model is refused.
	other := cfg
	other.Model.Width = 8
	if _, err := New(other); err == nil {
		t.Error("resumed from a checkpoint of a different model")
	}
}

// TestFineTuneFreezesBackbone pre-trains, then fine-tunes with adapters:
// only adapters and classifier are trainable, the backbone's weights do not
// change, and the SNNK adapter (gate at zero) leaves the pre-trained
// model's features unchanged at the start.
func TestFineTuneFreezesBackbone(t *testing.T) {
	data := toyData(t, 40, 3)
	dir := t.TempDir()
	pre := toyConfig(arch.KindTransformer)
	pre.Steps, pre.Checkpoint = 3, filepath.Join(dir, "pre.ckpt")
	tr, err := New(pre)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Fit(context.Background(), data, nil); err != nil {
		t.Fatal(err)
	}
	for _, ad := range []string{arch.AdapterSNNK, arch.AdapterBottleneck} {
		ft := toyConfig(arch.KindTransformer)
		ft.Steps, ft.InitFrom, ft.Seed = 3, pre.Checkpoint, 9
		ft.Model.Adapter, ft.Model.AdapterSize, ft.Model.FreezeBackbone = ad, 4, true
		ft.Checkpoint = filepath.Join(dir, ad+".ckpt")
		tr, err := New(ft)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Fit(context.Background(), data, nil); err != nil {
			t.Fatal(err)
		}
		trainable, total := tr.Params()
		w, d, c := ft.Model.Width, ft.Model.Depth, ft.Model.Classes
		want := w*c + c // classifier
		if ad == arch.AdapterSNNK {
			want += 2 * d * (4*w + w) // A (m×d) and v (d) per adapter, two per block
		} else {
			want += 2 * d * (2*4*w + 4 + w)
		}
		if trainable != want {
			t.Errorf("%s: %d trainable parameters, want %d (of %d)", ad, trainable, want, total)
		}
		a, err := ReadCheckpoint(pre.Checkpoint)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ReadCheckpoint(ft.Checkpoint)
		if err != nil {
			t.Fatal(err)
		}
		bv := map[string]SavedVariable{}
		for _, v := range b.Variables {
			bv[v.Scope+"/"+v.Name] = v
		}
		n := 0
		for _, v := range a.Variables {
			if !backbone(v.Scope, v.Name) {
				continue
			}
			n++
			if w, ok := bv[v.Scope+"/"+v.Name]; !ok || !bytes.Equal(v.Data, w.Data) {
				t.Errorf("%s: backbone variable %s/%s changed in fine-tuning", ad, v.Scope, v.Name)
			}
		}
		if n == 0 {
			t.Error("no backbone variables compared")
		}
	}
}

// TestSchedule checks the host schedule's shape (the graph engine's
// graph form is checked against it in package train/graphtrain).
func TestSchedule(t *testing.T) {
	const lr, warm, total = 1e-3, 4, 20
	if ScheduleAt(0, lr, warm, total) != lr/warm || ScheduleAt(3, lr, warm, total) != lr || ScheduleAt(4, lr, warm, total) != lr || ScheduleAt(20, lr, warm, total) != 0 {
		t.Error("schedule: linear warm-up, peak at the end of warm-up, zero at the end")
	}
}

func TestConfigErrors(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"kind":          func(c *Config) { c.Model.Kind = "rnn" },
		"batch":         func(c *Config) { c.Batch = 0 },
		"lr":            func(c *Config) { c.LR = math.NaN() },
		"ski causal":    func(c *Config) { c.Model.Kind, c.Model.Causal = arch.KindSKITNN, true },
		"heads":         func(c *Config) { c.Model.Kind, c.Model.Heads = arch.KindTransformer, 3 },
		"adapter":       func(c *Config) { c.Model.Adapter = "lora" },
		"missing init":  func(c *Config) { c.InitFrom = "/nonexistent/ckpt" },
		"huge length":   func(c *Config) { c.Model.Length = 1 << 20 },
		"grid even":     func(c *Config) { c.Model.Kind, c.Model.SKIGrid = arch.KindSKITNN, 8 },
		"negative step": func(c *Config) { c.Steps = -1 },
		"hrf m":         func(c *Config) { c.Model.Kind, c.Model.HRFM = arch.KindHRF, -1 },
		"hrf n":         func(c *Config) { c.Model.Kind, c.Model.HRFN = arch.KindHRF, -2 },
		"hrf chunk":     func(c *Config) { c.Model.Kind, c.Model.Causal, c.Model.Chunk = arch.KindHRF, true, 5 },
	} {
		cfg := toyConfig(arch.KindTNN)
		mod(&cfg)
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted a bad configuration", name)
		}
	}
	tr, err := New(toyConfig(arch.KindTNN))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Fit(context.Background(), []Example{{Tokens: []int32{1, 2}, Label: 10}}, nil); err == nil {
		t.Error("Fit accepted a label outside the classes")
	}
	if _, err := tr.Fit(context.Background(), []Example{{Tokens: []int32{1, 99}, Label: 1}}, nil); err == nil {
		t.Error("Fit accepted a token outside the vocabulary")
	}
}

// TestHRFRedraw trains the hrf model 3 steps with a redraw every 2 steps,
// on both engines: its three projections (positive and trigonometric
// bases, sgn features of λ), read back from the checkpoint, then hold draw
// 1, not draw 0, of FixedVariables; they are not counted as parameters, so
// the hrf model has exactly the Transformer's trainable parameters.
func TestHRFRedraw(t *testing.T) {
	for _, engine := range []string{DeviceCPU, "go"} {
		t.Run(engine, func(t *testing.T) { hrfRedraw(t, engine) })
	}
}

func hrfRedraw(t *testing.T, engine string) {
	data := toyData(t, 32, 5)
	cfg := toyConfig(arch.KindHRF)
	cfg.Device = engine
	cfg.Steps, cfg.Redraw = 3, 2
	cfg.Model.HRFM, cfg.Model.HRFN = 3, 2
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Fit(context.Background(), data, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hrf.ckpt")
	if err := tr.Save(path); err != nil {
		t.Fatal(err)
	}
	ck, err := ReadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	saved := func(scope, name string) []float32 {
		for _, v := range ck.Variables {
			if v.Scope == scope && v.Name == name {
				tv, err := graphtrain.Tensor(native.Variable(v))
				if err != nil {
					t.Fatal(err)
				}
				return tensors.MustCopyFlatData[float32](tv)
			}
		}
		t.Fatalf("no variable %s/%s in the checkpoint", scope, name)
		return nil
	}
	cfg.Model.Defaults()
	for k, wantEqual := range map[int]bool{0: false, 1: true} {
		fixed, err := cfg.Model.FixedVariables(cfg.Seed, k)
		if err != nil {
			t.Fatal(err)
		}
		if len(fixed) != 3*cfg.Model.Depth {
			t.Fatalf("%d fixed variables, want 3 per block", len(fixed))
		}
		for _, f := range fixed {
			got := saved(f.Scope, f.Name)
			want := f.Value
			equal := len(got) == len(want)
			for i := 0; equal && i < len(got); i++ {
				equal = got[i] == want[i]
			}
			if equal != wantEqual {
				t.Errorf("%s/%s after 3 steps with redraw every 2: equal to draw %d is %v, want %v", f.Scope, f.Name, k, equal, wantEqual)
			}
		}
	}
	rc := toyConfig(arch.KindTransformer)
	rc.Steps, rc.Device = 1, engine
	ref, err := New(rc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Fit(context.Background(), data[:16], nil); err != nil {
		t.Fatal(err)
	}
	a, _ := tr.Params()
	b, _ := ref.Params()
	if a != b || a == 0 {
		t.Errorf("hrf has %d trainable parameters, the Transformer %d: want equal", a, b)
	}
}
