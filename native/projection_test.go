package native

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kernelkit/kernelkit/arch"
)

// TestFeatureProjection checks the analog seam: a projection that
// computes the exact product gives the model's logits bit for bit and sees
// every FAVOR+ layer (queries and keys of every head), a perturbed one
// changes them, nil restores them, and a model without a fixed FAVOR+
// projection refuses the seam.
func TestFeatureProjection(t *testing.T) {
	for _, causal := range []bool{false, true} {
		cfg := arch.ModelConfig{Kind: arch.KindPerformer, Vocab: 7, Classes: 3, Length: 8, Width: 4, Depth: 2, Hidden: 6,
			Heads: 2, Features: 3, Chunk: 4, Causal: causal}
		cfg.Defaults()
		tr, err := New[float64](cfg, Options{LR: 1e-3}, 3)
		if err != nil {
			t.Fatal(err)
		}
		want, err := tr.Logits(tinyAttnTokens)
		if err != nil {
			t.Fatal(err)
		}
		want = append([]float64(nil), want...)
		var calls [2]atomic.Int64
		exact := func(layer int, omega, dst, x []float64, rows, d, m int) {
			calls[layer].Add(1)
			gemm(false, true, rows, m, d, 1, x, d, omega, d, 0, dst, m)
		}
		if err := tr.SetFeatureProjection(exact); err != nil {
			t.Fatal(err)
		}
		got, err := tr.Logits(tinyAttnTokens)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("causal=%v: logit %d is %v with the exact projection, %v without", causal, i, got[i], want[i])
			}
		}
		// Queries and keys of every head of the 3 sequences, per layer.
		for l := range calls {
			if n := calls[l].Load(); n != 2*3*int64(cfg.Heads) {
				t.Errorf("causal=%v: layer %d projected %d times, want %d", causal, l, n, 2*3*cfg.Heads)
			}
		}
		if err := tr.SetFeatureProjection(func(layer int, omega, dst, x []float64, rows, d, m int) {
			exact(layer, omega, dst, x, rows, d, m)
			for i := range dst[:rows*m] { // not a constant: attention's normalisation cancels a constant
				dst[i] += 0.1 * float64(i%3)
			}
		}); err != nil {
			t.Fatal(err)
		}
		if got, _ = tr.Logits(tinyAttnTokens); got[0] == want[0] {
			t.Errorf("causal=%v: a perturbed projection left the logits unchanged", causal)
		}
		if err := tr.SetFeatureProjection(nil); err != nil {
			t.Fatal(err)
		}
		got, _ = tr.Logits(tinyAttnTokens)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("causal=%v: logits not restored after SetFeatureProjection(nil)", causal)
			}
		}
	}
	for _, c := range []struct{ kind, fm string }{{arch.KindTNN, ""}, {arch.KindPerformer, arch.FeatureOPRF}, {arch.KindHRF, ""}} {
		cfg := arch.ModelConfig{Kind: c.kind, Vocab: 7, Classes: 3, Length: 8, Width: 4, Depth: 1, Hidden: 6, Heads: 2,
			Features: 3, RPEHidden: 5, FeatureMap: c.fm}
		cfg.Defaults()
		tr, err := New[float64](cfg, Options{LR: 1e-3}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.SetFeatureProjection(func(int, []float64, []float64, []float64, int, int, int) {}); err == nil ||
			!strings.Contains(err.Error(), "fixed feature projection") {
			t.Errorf("%s %s: error %v", c.kind, c.fm, err)
		}
	}
}
