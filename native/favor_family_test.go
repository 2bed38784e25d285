package native

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
)

// familyConfig returns a validated tiny performer configuration with the
// given feature family.
func familyConfig(t testing.TB, family string, causal bool, chunk int, qkNorm float64, frozen bool) *arch.ModelConfig {
	t.Helper()
	cfg := &arch.ModelConfig{Kind: arch.KindPerformer, Vocab: 10, Classes: 2, Length: 8, Width: 8, Depth: 1, Heads: 2,
		Features: 8, Chunk: chunk, Causal: causal, QKNorm: qkNorm, FreezeBackbone: frozen, FeatureMap: family}
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestFamilyAttentionMatchesGoMLX compares the performer's mixer with each
// feature family against nn.FamilyAttention's graph (GoMLX autodiff,
// float64): output, input gradient and every trainable parameter's
// gradient, bidirectional and causal, with and without padding and query/
// key normalisation. The oprf and sderf fits are constants to the
// gradient on both sides; the sderf eigendecomposition is LAPACK's here
// and Jacobi sweeps in the graph, converged to rounding at d_h = 4
// (nn.JacobiSweeps), so the tolerances are those of the other kinds
// (mixForwardTol, mixGradTol).
func TestFamilyAttentionMatchesGoMLX(t *testing.T) {
	for _, fam := range arch.FeatureMaps {
		for _, tc := range []struct {
			causal bool
			chunk  int
			qkNorm float64
			frozen bool
			mask   string
		}{
			{false, 0, 0, false, "none"},
			{false, 0, 0, false, "trailing"},
			{false, 0, 1, false, "holes"},
			{false, 0, 0, true, "leading"},
			{true, 8, 0, false, "none"},
			{true, 4, 0, false, "trailing"},
			{true, 2, 1, false, "holes"},
			{true, 4, 0, true, "trailing"}, // (causal with leading padding: queries that see no real key are 0/0 in both engines)
		} {
			name := fmt.Sprintf("%s causal=%v chunk=%d qknorm=%v frozen=%v mask=%s", fam, tc.causal, tc.chunk, tc.qkNorm, tc.frozen, tc.mask)
			t.Run(name, func(t *testing.T) {
				cfg := familyConfig(t, fam, tc.causal, tc.chunk, tc.qkNorm, tc.frozen)
				a := NewAttention[float64](cfg, "/block_0/mix")
				mixCheckNames(t, cfg, "/block_0/mix", a.Params())
				mixFill(a.Params(), 11)
				setFixed(t, cfg, a.Params())
				mask := mixMasks[tc.mask]
				a.SetMask(mask)
				const B = 2
				c := mixCase{layer: a, ref: refMixer(cfg), B: B, L: cfg.Length, x: mixRand(5, 1.5, B*cfg.Length*cfg.Width), mask: mask}
				c.check(t, name)
				c.check(t, name+" (again)")
			})
		}
	}
}

// TestFamilyAttentionLongRows runs the comparison with heads of width 16
// (the sderf fit's 16×16 eigendecomposition, 10 Jacobi sweeps in the
// graph), several causal chunks and padded sequences.
func TestFamilyAttentionLongRows(t *testing.T) {
	for _, fam := range []string{arch.FeatureOPRF, arch.FeatureSDERF} {
		for _, causal := range []bool{false, true} {
			name := fmt.Sprintf("%s causal=%v", fam, causal)
			t.Run(name, func(t *testing.T) {
				cfg := &arch.ModelConfig{Kind: arch.KindPerformer, Vocab: 10, Classes: 2, Length: 96, Width: 32, Depth: 1, Heads: 2,
					Features: 16, Chunk: 32, Causal: causal, FeatureMap: fam}
				cfg.Defaults()
				if err := cfg.Validate(); err != nil {
					t.Fatal(err)
				}
				a := NewAttention[float64](cfg, "/block_0/mix")
				mixFill(a.Params(), 13)
				setFixed(t, cfg, a.Params())
				const B = 3
				mask := make([]float64, B*cfg.Length)
				for i := range mask {
					if i%cfg.Length < cfg.Length-7*(i/cfg.Length) {
						mask[i] = 1
					}
				}
				a.SetMask(mask)
				c := mixCase{layer: a, ref: refMixer(cfg), B: B, L: cfg.Length, x: mixRand(8, 1, B*cfg.Length*cfg.Width), mask: mask}
				c.check(t, name)
			})
		}
	}
}

// TestFamilyFloat32 runs the fitted families in float32 (the training
// type; the fit itself is computed in float64 from the float32 rows)
// against float64, with the tolerance of TestFloat32MatchesFloat64 and
// its reasoning: sums of at most a few hundred positive-weighted float32
// terms, about 10⁻⁵ relative, and 2·10⁻⁴ as the bound.
func TestFamilyFloat32(t *testing.T) {
	const tol = 2e-4
	for _, fam := range []string{arch.FeatureOPRF, arch.FeatureSDERF} {
		for _, causal := range []bool{false, true} {
			cfg := familyConfig(t, fam, causal, 4, 0, false)
			a64, a32 := NewAttention[float64](cfg, "/block_0/mix"), NewAttention[float32](cfg, "/block_0/mix")
			mixFill(a64.Params(), 17)
			setFixed(t, cfg, a64.Params())
			for i, p := range a64.Params() {
				for j, v := range p.Value {
					a32.Params()[i].Value[j] = float32(v)
					p.Value[j] = float64(float32(v))
				}
			}
			mask := mixMasks["trailing"]
			a64.SetMask(mask)
			m32 := make([]float32, len(mask))
			for i, v := range mask {
				m32[i] = float32(v)
			}
			a32.SetMask(m32)
			const B = 2
			x64 := mixRand(29, 1, B*cfg.Length*cfg.Width)
			x32 := make([]float32, len(x64))
			for i, v := range x64 {
				x32[i] = float32(v)
				x64[i] = float64(x32[i])
			}
			y64, y32 := a64.Forward(x64, B, cfg.Length), a32.Forward(x32, B, cfg.Length)
			w := mixRand(31, 1, len(y64))
			w32 := make([]float32, len(w))
			for i, v := range w {
				w32[i] = float32(v)
				w[i] = float64(w32[i])
			}
			dx64, dx32 := a64.Backward(w), a32.Backward(w32)
			if e := mixRelErr(widen(y32), y64, 0); !(e <= tol) {
				t.Errorf("%s causal=%v: float32 output differs from float64 by %.3g", fam, causal, e)
			}
			floor := 1e-3 * maxAbs(dx64)
			worst := mixRelErr(widen(dx32), dx64, floor)
			for i, p := range a64.Params() {
				worst = math.Max(worst, mixRelErr(widen(a32.Params()[i].Grad), p.Grad, floor))
			}
			if !(worst <= tol) {
				t.Errorf("%s causal=%v: float32 gradients differ from float64 by %.3g", fam, causal, worst)
			}
		}
	}
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// TestFamilyModelMatchesGoMLX compares a whole two-block performer of
// each fitted family (logits, loss and every gradient, float64) with
// nn.LogitsDType's graph and GoMLX's autodiff, as
// TestModelMatchesGoMLX does for the other kinds.
func TestFamilyModelMatchesGoMLX(t *testing.T) {
	for _, fam := range []string{arch.FeatureSimRF, arch.FeatureOPRF, arch.FeatureSDERF} {
		for _, causal := range []bool{false, true} {
			cfg := tinyOtherModels()[1]
			cfg.FeatureMap, cfg.Causal = fam, causal
			t.Run(fmt.Sprintf("%s causal=%v", fam, causal), func(t *testing.T) {
				tr, err := New[float64](cfg, Options{LR: 1e-3}, 3)
				if err != nil {
					t.Fatal(err)
				}
				m := tr.Model()
				z, err := m.Forward(tinyAttnTokens)
				if err != nil {
					t.Fatal(err)
				}
				loss, err := m.Loss(tinyLabels)
				if err != nil {
					t.Fatal(err)
				}
				m.ZeroGrad()
				m.Backward()
				wz, wl, wg := gomlxLossAndGrads(t, m, tinyAttnTokens, tinyLabels)
				assertClose(t, "logits", z, wz, fwdTol)
				assertClose(t, "loss", []float64{loss}, []float64{wl}, fwdTol)
				var global float64
				for _, g := range wg {
					global = math.Max(global, maxAbs(g))
				}
				for i, p := range m.Params() {
					if !p.Trainable {
						continue
					}
					var diff float64
					for j, v := range wg[i] {
						diff = math.Max(diff, math.Abs(p.Grad[j]-v))
					}
					if d := diff / math.Max(maxAbs(wg[i]), 1e-3*global); !(d <= gradTol) {
						t.Errorf("∂%s/%s: relative difference %.3g exceeds %.1g", p.Scope, p.Name, d, gradTol)
					}
				}
			})
		}
	}
}

// TestFamilyRedrawsAreReproducible trains float32 performers of every
// family with redraws every 2 steps, twice (on all cores and on one):
// the same seed gives the same bytes, and the projections after the
// redraws are arch.ModelConfig.FixedVariables' draw for the redraw count.
func TestFamilyRedrawsAreReproducible(t *testing.T) {
	for _, fam := range arch.FeatureMaps {
		cfg := tinyOtherModels()[1]
		cfg.FeatureMap, cfg.Length, cfg.Width, cfg.Features = fam, 64, 8, 8
		cfg.Defaults()
		tokens := make([]int32, 12*cfg.Length)
		for i := range tokens {
			tokens[i] = int32(i*7%cfg.Vocab) * int32(min(1, i%cfg.Length/5))
		}
		labels := make([]int32, 12)
		for i := range labels {
			labels[i] = int32(i % cfg.Classes)
		}
		const steps = 5
		run := func(procs int) []Variable {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			tr, err := New[float32](cfg, Options{LR: 1e-2, WeightDecay: 0.01, Warmup: 1, Steps: steps, Redraw: 2}, 7)
			if err != nil {
				t.Fatal(err)
			}
			for s := 0; s < steps; s++ {
				loss, err := tr.Step(tokens, labels)
				if err != nil {
					t.Fatal(err)
				}
				if math.IsNaN(loss) || math.IsInf(loss, 0) {
					t.Fatalf("%s: step %d loss %v", fam, s+1, loss)
				}
			}
			vars, err := tr.ExportVariables()
			if err != nil {
				t.Fatal(err)
			}
			return vars
		}
		a, b := run(max(2, runtime.GOMAXPROCS(0))), run(1)
		if len(a) != len(b) {
			t.Fatalf("%s: %d and %d variables", fam, len(a), len(b))
		}
		for i := range a {
			if !bytes.Equal(a[i].Data, b[i].Data) {
				t.Errorf("%s: %s/%s differs between two runs of one seed", fam, a[i].Scope, a[i].Name)
			}
		}
		// Steps 3 and 5 start by redrawing (steps/2 = 2 redraws taken).
		fixed, err := cfg.FixedVariables(7, 2)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, f := range fixed {
			if f.Name != "omega" {
				continue
			}
			want := f.Value
			for _, v := range a {
				if v.Scope == f.Scope && v.Name == f.Name {
					found++
					got := make([]float32, len(v.Data)/4)
					for j := range got {
						got[j] = math.Float32frombits(uint32(v.Data[4*j]) | uint32(v.Data[4*j+1])<<8 | uint32(v.Data[4*j+2])<<16 | uint32(v.Data[4*j+3])<<24)
					}
					if !slices.Equal(got, want) {
						t.Errorf("%s: %s/omega is not the second redraw", fam, f.Scope)
					}
				}
			}
		}
		if found != cfg.Depth {
			t.Errorf("%s: found %d projections, want %d", fam, found, cfg.Depth)
		}
	}
}

// BenchmarkFamilyAttention times one forward and backward pass of the
// performer's mixer in float32 for each feature family at the shape of
// the training comparison in docs/estimators.md (batch 16, L = 128,
// width 32, 2 heads, 32 features, bidirectional), with a key mask padding
// a quarter of the sequences' ends.
func BenchmarkFamilyAttention(b *testing.B) {
	const B, L, d = 16, 128, 32
	for _, fam := range arch.FeatureMaps {
		b.Run(fam, func(b *testing.B) {
			cfg := &arch.ModelConfig{Kind: arch.KindPerformer, Vocab: 16, Classes: 10, Length: L, Width: d, Depth: 1, FeatureMap: fam}
			cfg.Defaults()
			if err := cfg.Validate(); err != nil {
				b.Fatal(err)
			}
			a := NewAttention[float32](cfg, "/block_0/mix")
			for i, p := range a.Params() {
				for j, v := range mixRand(uint64(i+1), 0.25, len(p.Value)) {
					p.Value[j] = float32(v)
				}
			}
			x, dy := make([]float32, B*L*d), make([]float32, B*L*d)
			for i, v := range mixRand(2, 1, len(x)) {
				x[i] = float32(v)
			}
			for i, v := range mixRand(3, 1, len(dy)) {
				dy[i] = float32(v)
			}
			mask := make([]float32, B*L)
			for i := range mask {
				if i%L < L-L/4 {
					mask[i] = 1
				}
			}
			a.SetMask(mask)
			a.Forward(x, B, L)
			a.Backward(dy)
			for b.Loop() {
				a.Forward(x, B, L)
				a.Backward(dy)
			}
		})
	}
}
