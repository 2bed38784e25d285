package attention

import (
	"math"
	"sort"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
)

// rowConditions returns, for each causal row t, the condition number of
// its denominator as computed from the features Φ₁(q'_t) and Φ₂(k'_s),
// κ_t = Σ_{s≤t} Σ_j |Φ₁(q'_t)_j|·|Φ₂(k'_s)_j| / |Σ_{s≤t} Φ₁(q'_t)ᵀΦ₂(k'_s)|:
// the factor by which rounding errors of the products can grow in the
// ratio of row t. It is 1 for maps with non-negative features and can be
// large for maps whose features change sign (trig, TensorSketch, the
// hybrid estimators).
func rowConditions(t *testing.T, p features.Pair, q, k *mat.Dense) []float64 {
	t.Helper()
	qf, err := features.Queries(p, q)
	if err != nil {
		t.Fatal(err)
	}
	kf, err := features.Keys(p, k)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := q.Dims()
	out := make([]float64, l)
	for i := 0; i < l; i++ {
		var abs, sum float64
		for s := 0; s <= i; s++ {
			for j, x := range qf.RawRowView(i) {
				y := kf.At(s, j)
				abs += math.Abs(x * y)
				sum += x * y
			}
		}
		out[i] = math.Max(1, abs/math.Abs(sum))
	}
	return out
}

// TestDecodeEqualsFull: for every map that causal attention supports (every
// catalog map but the χ² ones), decoding with a State — token by token
// (Step and Step32), a prompt by Extend then tokens by Step, blocks of 7 by
// Extend, and a cached prefix by Append followed by the rest as one block
// (and as a causal call with Lq < Lk, bottom-right aligned) — gives the
// rows of the full causal call to 1e-12·κ_t relative to max|v| (κ_t of
// rowConditions; 1 for non-negative features), and in float32 to
// tol32·κ_t of the full call on the same inputs rounded to float32. The
// float32 bound: the outputs are ratios of sums of F·(t+1) ≤ F·l products
// (F features), which float32 arithmetic in another order changes by about
// √(F·l)·u·κ_t (u = 2⁻²⁴; the statistical bound, Higham §3.5); tol32 is 8
// times that (the features' own rounding and both sums of the ratio).
// The rounding of the inputs themselves is amplified by the maps'
// exponentials, up to 1.6e-4·κ_t for the hybrid estimators with keys of
// norm 30, and is not what this measures. Key norms 1, 30 and 5 make the reference rise and fall.
func TestDecodeEqualsFull(t *testing.T) {
	const l, d, dv, prompt = 40, 16, 3, 13
	q := gauss(l, d, 131, 1/math.Sqrt(d))
	k := keysWithNorms(l, d, 132, func(s int) float64 { return []float64{1, 30, 1, 5}[(s*7/3)%4] })
	v := gauss(l, dv, 133, 1)
	vmax := maxAbs(v)
	scaled := mat.NewDense(l, d, nil)
	pairs := causalPairs(t, d)
	names := make([]string, 0, len(pairs))
	for name := range pairs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := pairs[name]
		att := &Linear{Pair: p, Causal: true}
		full, err := att.Apply(q, k, v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		scaled.Scale(math.Pow(d, -0.25), q)
		qs := mat.DenseCopyOf(scaled)
		scaled.Scale(math.Pow(d, -0.25), k)
		kappa := rowConditions(t, p, qs, scaled)
		worst64, worst32 := 0.0, 0.0
		tol32 := 8 * math.Sqrt(float64(p.Dim()*l)) * 0x1p-24
		// The reference of the float32 paths is the full call on the inputs
		// rounded to float32: their difference is the float32 arithmetic.
		full32, err := att.Apply(round32(q), round32(k), round32(v))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		check := func(way string, row int, got []float64, tol float64) {
			t.Helper()
			ref := full
			if tol > 1e-12 {
				ref = full32
			}
			var e float64
			for j, x := range got {
				e = math.Max(e, math.Abs(x-ref.At(row, j)))
			}
			e /= vmax * kappa[row]
			if tol > 1e-12 {
				worst32 = math.Max(worst32, e)
			} else {
				worst64 = math.Max(worst64, e)
			}
			if !(e <= tol) {
				t.Errorf("%s, %s: row %d differs from the full causal call by %.3g·κ (κ = %.3g)", name, way, row, e, kappa[row])
			}
		}
		newState := func() *State {
			st, err := att.NewState()
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		// Token by token, float64 and float32.
		st, st32 := newState(), newState()
		out := make([]float64, dv)
		out32 := make([]float32, dv)
		for i := 0; i < l; i++ {
			if err := st.Step(out, q.RawRowView(i), k.RawRowView(i), v.RawRowView(i)); err != nil {
				t.Fatal(err)
			}
			check("Step", i, out, 1e-12)
			if err := st32.Step32(out32, f32(q.RawRowView(i)), f32(k.RawRowView(i)), f32(v.RawRowView(i))); err != nil {
				t.Fatal(err)
			}
			check("Step32", i, f64(out32), tol32)
		}
		if st.Len() != l {
			t.Errorf("%s: Len %d after %d steps", name, st.Len(), l)
		}
		// A prompt by Extend, then Step.
		st = newState()
		o, err := st.Extend(rows(q, 0, prompt), rows(k, 0, prompt), rows(v, 0, prompt), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < prompt; i++ {
			check("prompt", i, o.RawRowView(i), 1e-12)
		}
		for i := prompt; i < l; i++ {
			if err := st.Step(out, q.RawRowView(i), k.RawRowView(i), v.RawRowView(i)); err != nil {
				t.Fatal(err)
			}
			check("Step after prompt", i, out, 1e-12)
		}
		// Blocks of 7 by Extend, float32 blocks by Extend32.
		st, st32 = newState(), newState()
		for lo := 0; lo < l; lo += 7 {
			hi := min(lo+7, l)
			o, err := st.Extend(rows(q, lo, hi), rows(k, lo, hi), rows(v, lo, hi), nil)
			if err != nil {
				t.Fatal(err)
			}
			o32, err := st32.Extend32(to32(rows(q, lo, hi)), to32(rows(k, lo, hi)), to32(rows(v, lo, hi)), nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := lo; i < hi; i++ {
				check("blocks of 7", i, o.RawRowView(i-lo), 1e-12)
				check("float32 blocks of 7", i, from32(o32).RawRowView(i-lo), tol32)
			}
		}
		// A cached prefix by Append, the rest as one block; and the same as
		// one causal call with Lq = l − prompt queries and Lk = l keys.
		st = newState()
		if err := st.Append(rows(k, 0, prompt), rows(v, 0, prompt), nil); err != nil {
			t.Fatal(err)
		}
		o, err = st.Extend(rows(q, prompt, l), rows(k, prompt, l), rows(v, prompt, l), nil)
		if err != nil {
			t.Fatal(err)
		}
		cross, err := att.Apply(rows(q, prompt, l), k, v)
		if err != nil {
			t.Fatal(err)
		}
		for i := prompt; i < l; i++ {
			check("Append then Extend", i, o.RawRowView(i-prompt), 1e-12)
			check("causal Lq < Lk", i, cross.RawRowView(i-prompt), 1e-12)
		}
		t.Logf("%-22s largest difference from the full call %.2g·κ (float64), %.2g·κ (float32), largest κ %.3g",
			name, worst64, worst32, floats.Max(kappa))
	}
}

// round32 returns m rounded to float32 (as float64).
func round32(m *mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(m)
	r, _ := out.Dims()
	for i := 0; i < r; i++ {
		row := out.RawRowView(i)
		for j, x := range row {
			row[j] = float64(float32(x))
		}
	}
	return out
}

func rows(m *mat.Dense, lo, hi int) *mat.Dense {
	_, c := m.Dims()
	return mat.DenseCopyOf(m.Slice(lo, hi, 0, c))
}

func f32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func f64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// TestStateClone: a clone continues independently, and Reset empties a
// state, which then decodes like a new one.
func TestStateClone(t *testing.T) {
	const l, d, dv = 12, 4, 2
	q, k, v := gauss(l, d, 141, 0.5), gauss(l, d, 142, 0.5), gauss(l, dv, 143, 1)
	st, err := (&Linear{Map: polyMap{d}, NoInputScale: true}).NewState()
	if err != nil {
		t.Fatal(err)
	}
	a, b := make([]float64, dv), make([]float64, dv)
	for i := 0; i < 6; i++ {
		if err := st.Step(a, q.RawRowView(i), k.RawRowView(i), v.RawRowView(i)); err != nil {
			t.Fatal(err)
		}
	}
	c := st.Clone()
	for i := 6; i < l; i++ {
		if err := st.Step(a, q.RawRowView(i), k.RawRowView(i), v.RawRowView(i)); err != nil {
			t.Fatal(err)
		}
		if err := c.Step(b, q.RawRowView(i), k.RawRowView(i), v.RawRowView(i)); err != nil {
			t.Fatal(err)
		}
		if a[0] != b[0] || a[1] != b[1] {
			t.Fatalf("step %d: clone gives %v, original %v", i, b, a)
		}
	}
	st.Reset()
	fresh, err := (&Linear{Map: polyMap{d}, NoInputScale: true}).NewState()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < l; i++ {
		if err := st.Step(a, q.RawRowView(i), k.RawRowView(i), v.RawRowView(i)); err != nil {
			t.Fatal(err)
		}
		if err := fresh.Step(b, q.RawRowView(i), k.RawRowView(i), v.RawRowView(i)); err != nil {
			t.Fatal(err)
		}
		if a[0] != b[0] || a[1] != b[1] {
			t.Fatalf("step %d after Reset: %v, new state %v", i, a, b)
		}
	}
	// Misuse: wrong lengths and a changed value dimension are errors and
	// leave the state as it was.
	n := st.Len()
	if err := st.Step(a, q.RawRowView(0)[:3], k.RawRowView(0), v.RawRowView(0)); err == nil {
		t.Error("short query accepted")
	}
	if err := st.Step(make([]float64, 3), q.RawRowView(0), k.RawRowView(0), []float64{1, 2, 3}); err == nil {
		t.Error("values of another dimension accepted")
	}
	if err := st.Step(a, q.RawRowView(0), k.RawRowView(0), []float64{math.NaN(), 1}); err == nil {
		t.Error("NaN value accepted")
	}
	if _, err := st.Extend(q, rows(k, 0, 5), rows(v, 0, 5), nil); err == nil {
		t.Error("Extend with fewer keys than queries accepted")
	}
	if st.Len() != n {
		t.Errorf("failed calls changed Len from %d to %d", n, st.Len())
	}
}
