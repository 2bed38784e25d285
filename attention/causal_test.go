package attention

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/rng"
)

// keysWithNorms returns rows of random direction whose norms are norm(s)
// for rows s = 0…l−1.
func keysWithNorms(l, d int, seed uint64, norm func(s int) float64) *mat.Dense {
	r := rng.New(seed)
	k := mat.NewDense(l, d, nil)
	for s := 0; s < l; s++ {
		row := k.RawRowView(s)
		for j := range row {
			row[j] = r.NormFloat64()
		}
		floats.Scale(norm(s)/floats.Norm(row, 2), row)
	}
	return k
}

// causalPairs returns every map of catalog.Default() as a Pair on inputs
// of dimension d (the clustered estimator with two query and two key
// centres).
func causalPairs(t *testing.T, d int) map[string]features.Pair {
	t.Helper()
	reg := catalog.Default()
	out := map[string]features.Pair{}
	for _, name := range reg.Names() {
		if strings.Contains(name, "chi2") {
			continue // χ² kernels are defined on non-negative inputs (histograms), not on attention keys
		}
		o := features.Options{InputDim: d, Features: 64, Seed: 3, Norm: 1, Gamma: 0.5,
			QueryCentres: keysWithNorms(2, d, 90, func(int) float64 { return 1 }),
			KeyCentres:   keysWithNorms(2, d, 91, func(int) float64 { return 1 }),
			Data:         keysWithNorms(128, d, 92, func(int) float64 { return 1 })}
		p, err := reg.Pair(name, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = p
	}
	return out
}

// TestCausalityAllMaps is the causality property of causal linear
// attention, for every feature map of the catalog (the plain maps through
// their log-domain TransformScaled, the hybrids as asymmetric pairs) and
// chunk sizes 1, 5 and 64: output rows 0…t are unchanged to the last bit
// when the queries, keys and values after t change. Keys have norms 1 and
// 30 (before the d^(−1/4) scaling): with the positive and hyperbolic maps a
// key of norm 1 has a log-scale about 70 above one of norm 30, with the
// trigonometric map about 110 below, so a numerical reference taken over
// keys later than a query shrinks that query's terms by e^−70 or more, past
// the denominator guard (the defect of issue 12: relative error 1.0).
func TestCausalityAllMaps(t *testing.T) {
	const l, d, dv = 100, 16, 3
	q := gauss(l, d, 31, 1/math.Sqrt(d)) // query norms about 1
	v := gauss(l, dv, 32, 1)
	mixed := func(s int) float64 { return []float64{1, 30}[(s*7/3)%2] }
	scenarios := []struct {
		name         string
		before, late func(s int) float64 // key norms up to t, and the new keys after t
	}{
		{"norm 30 then 1", func(int) float64 { return 30 }, func(int) float64 { return 1 }},
		{"norm 1 then 30", func(int) float64 { return 1 }, func(int) float64 { return 30 }},
		{"mixed", mixed, func(s int) float64 { return 31 - mixed(s) }},
	}
	for name, p := range causalPairs(t, d) {
		for _, sc := range scenarios {
			for _, t0 := range []int{0, 3, 37, 70} {
				k := keysWithNorms(l, d, 33, func(s int) float64 {
					if s <= t0 {
						return sc.before(s)
					}
					return mixed(s)
				})
				late := keysWithNorms(l, d, 34, sc.late)
				q2, k2, v2 := mat.DenseCopyOf(q), mat.DenseCopyOf(k), mat.DenseCopyOf(v)
				for s := t0 + 1; s < l; s++ {
					k2.SetRow(s, late.RawRowView(s))
					for j := 0; j < d; j++ {
						q2.Set(s, j, 3*q.At(s, j)+0.1)
					}
					for j := 0; j < dv; j++ {
						v2.Set(s, j, 100*v.At(s, j)+1)
					}
				}
				for _, chunk := range []int{0, 1, 5, 64} {
					att := &Linear{Pair: p, Causal: true, Chunk: chunk}
					a, err := att.Apply(q, k, v)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					b, err := att.Apply(q2, k2, v2)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					for i := 0; i <= t0; i++ {
						if !floats.Equal(a.RawRowView(i), b.RawRowView(i)) {
							t.Errorf("%s, chunk %d, %s, t=%d: row %d changed from %v to %v when inputs after t changed",
								name, chunk, sc.name, t0, i, a.RawRowView(i), b.RawRowView(i))
							break
						}
					}
				}
			}
		}
	}
}

// causalReference returns out_t = Σ_{s≤t} g_ts v_s / Σ_{s≤t} g_ts for the
// L×L matrix g of kernel values, by direct summation.
func causalReference(g, v *mat.Dense) *mat.Dense {
	l, dv := v.Dims()
	out := mat.NewDense(l, dv, nil)
	for t := 0; t < l; t++ {
		o := out.RawRowView(t)
		var den float64
		for s := 0; s <= t; s++ {
			w := g.At(t, s)
			den += w
			floats.AddScaled(o, w, v.RawRowView(s))
		}
		floats.Scale(1/den, o)
	}
	return out
}

// TestCausalExactMixedNorms: for maps with non-negative features, causal
// linear attention at every chunk size equals causal attention computed
// directly with the map's own kernel estimate φ(q')ᵀφ(k') (plain features,
// within float64 range here) to 1e-12 relative to the values, for keys of
// norms 1 and 30 in any order. Before the running per-row reference, the
// default chunk size returned rows of zeros where keys of norm 30 came
// before keys of norm 1 in a chunk (relative error 1.0 on those rows).
func TestCausalExactMixedNorms(t *testing.T) {
	const l, d, dv = 150, 16, 3
	reg := catalog.Default()
	norms := []struct {
		name string
		norm func(s int) float64
	}{
		{"norm 30 then 1", func(s int) float64 { return []float64{30, 1}[s/40%2] }},
		{"norm 1 then 30", func(s int) float64 { return []float64{1, 30}[s/40%2] }},
		{"mixed", func(s int) float64 { return []float64{1, 30}[(s*7/3)%2] }},
	}
	q := gauss(l, d, 41, 1/math.Sqrt(d))
	v := gauss(l, dv, 42, 1)
	vmax := mat.Norm(v, math.Inf(1))
	for _, name := range []string{"positive", "hyperbolic", "rbf/positive", "relu"} {
		p, err := reg.Pair(name, features.Options{InputDim: d, Features: 64, Seed: 5, Gamma: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		noScale := name == "relu"
		scaled := func(x *mat.Dense) *mat.Dense {
			y := mat.DenseCopyOf(x)
			if !noScale {
				y.Scale(math.Pow(d, -0.25), y)
			}
			return y
		}
		for _, nc := range norms {
			k := keysWithNorms(l, d, 43, nc.norm)
			g, err := features.Matrix(p, scaled(q), scaled(k))
			if err != nil {
				t.Fatal(err)
			}
			want := causalReference(g, v)
			for _, chunk := range []int{0, 1, 5, 64} {
				got, err := (&Linear{Pair: p, Causal: true, Chunk: chunk, NoInputScale: noScale}).Apply(q, k, v)
				if err != nil {
					t.Fatal(err)
				}
				worst := 0.0 // largest relative error of a row
				for i := 0; i < l; i++ {
					worst = math.Max(worst, floats.Distance(got.RawRowView(i), want.RawRowView(i), 2)/floats.Norm(want.RawRowView(i), 2))
				}
				t.Logf("%s, %s, chunk %d: relative error %.3g, worst row %.3g", name, nc.name, chunk, relErr(got, want), worst)
				if e := maxAbsDiff(got, want) / vmax; !(e <= 1e-12) {
					t.Errorf("%s, %s, chunk %d: differs from direct causal attention by %.3g (relative to max|v|)", name, nc.name, chunk, e)
				}
			}
		}
	}
}

// TestCausalChunkLimit: a chunk whose C×C block exceeds limits.MaxElements
// is an error, not an allocation; the chunk never exceeds the sequence.
func TestCausalChunkLimit(t *testing.T) {
	const l = 1<<15 + 1 // (2¹⁵+1)² > 2³⁰
	q, v := gauss(l, 1, 51, 1), gauss(l, 1, 52, 1)
	p, err := catalog.Default().Pair("relu", features.Options{InputDim: 1, Features: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Linear{Pair: p, Causal: true, Chunk: l}).Apply(q, q, v); err == nil {
		t.Error("chunk of 2¹⁵+1 rows accepted")
	}
	short := mat.DenseCopyOf(q.Slice(0, 10, 0, 1))
	if _, err := (&Linear{Pair: p, Causal: true, Chunk: 1 << 40}).Apply(short, short, mat.DenseCopyOf(v.Slice(0, 10, 0, 1))); err != nil {
		t.Errorf("huge chunk on 10 rows: %v", err)
	}
}
