package attention

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
)

// maskedReference returns out_t = Σ_s g_ts v_s / Σ_s g_ts over the keys s
// that query t sees — not padded, and under the causal mask s ≤ t + (Lk −
// Lq) — by direct summation, and a zero row where t sees no key. g is the
// Lq×Lk matrix of kernel values.
func maskedReference(g, v *mat.Dense, pad []bool, causal bool) *mat.Dense {
	lq, lk := g.Dims()
	_, dv := v.Dims()
	out := mat.NewDense(lq, dv, nil)
	for t := 0; t < lq; t++ {
		o := out.RawRowView(t)
		var den float64
		seen := false
		for s := 0; s < lk; s++ {
			if (pad != nil && pad[s]) || (causal && s > t+lk-lq) {
				continue
			}
			seen = true
			w := g.At(t, s)
			den += w
			floats.AddScaled(o, w, v.RawRowView(s))
		}
		if seen {
			floats.Scale(1/den, o)
		}
	}
	return out
}

// softmaxGram returns exp(q_tᵀk_s/√d) for every pair, computed directly.
func softmaxGram(q, k *mat.Dense) *mat.Dense {
	lq, d := q.Dims()
	lk, _ := k.Dims()
	g := mat.NewDense(lq, lk, nil)
	for t := 0; t < lq; t++ {
		for s := 0; s < lk; s++ {
			g.Set(t, s, math.Exp(floats.Dot(q.RawRowView(t), k.RawRowView(s))/math.Sqrt(float64(d))))
		}
	}
	return g
}

// maskCase is a shape and a key padding mask (nil: none).
type maskCase struct {
	lq, lk int
	pad    []bool
}

func (c maskCase) String() string {
	n := 0
	for _, p := range c.pad {
		if p {
			n++
		}
	}
	return fmt.Sprintf("Lq=%d Lk=%d padded=%d", c.lq, c.lk, n)
}

// padEvery pads the keys s with s%k == r, and the last key if last.
func padEvery(lk, k, r int, last bool) []bool {
	p := make([]bool, lk)
	for s := range p {
		p[s] = s%k == r
	}
	p[lk-1] = p[lk-1] || last
	return p
}

func allPadded(lk int) []bool {
	p := make([]bool, lk)
	for s := range p {
		p[s] = true
	}
	return p
}

var maskCases = []maskCase{
	{9, 9, nil},
	{9, 9, padEvery(9, 3, 0, true)}, // first key padded: the first causal row sees nothing
	{5, 17, nil},                    // cross-attention / decoding after a prefix of 12 keys
	{5, 17, padEvery(17, 4, 1, false)},
	{17, 5, nil}, // more queries than keys: the first 12 causal rows see nothing
	{17, 5, padEvery(5, 2, 1, true)},
	{1, 40, padEvery(40, 5, 2, false)},
	{70, 70, padEvery(70, 7, 3, false)}, // more than one block and chunk
	{6, 8, allPadded(8)},
}

// TestMaskedExact: exact softmax attention with key padding and causal
// masks (Lq = Lk and Lq ≠ Lk, bottom-right alignment) equals the direct
// masked softmax to 1e-12, and so does Kernelized with κ = exp(qᵀk/√d);
// rows that see no key are zero.
func TestMaskedExact(t *testing.T) {
	const d, dv = 8, 3
	for i, c := range maskCases {
		q, k, v := gauss(c.lq, d, 60+uint64(i), 0.7), gauss(c.lk, d, 70+uint64(i), 0.7), gauss(c.lk, dv, 80+uint64(i), 1)
		g := softmaxGram(q, k)
		kern := func(a, b []float64) float64 { return math.Exp(floats.Dot(a, b) / math.Sqrt(d)) }
		for _, causal := range []bool{false, true} {
			want := maskedReference(g, v, c.pad, causal)
			for _, att := range []Masked{Exact{Causal: causal}, Kernelized{Kernel: kern, Causal: causal}} {
				got, err := att.ApplyMasked(q, k, v, c.pad)
				if err != nil {
					t.Fatalf("%v: %v", c, err)
				}
				if e := maxAbsDiff(got, want); !(e <= 1e-12) {
					t.Errorf("%T, %v, causal=%v: differs from the direct masked softmax by %.3g", att, c, causal, e)
				}
			}
		}
	}
}

// linearMaskMaps are the maps of the masked linear-attention tests: the
// exact factorisation of (1 + qᵀk)², and catalog maps with non-negative
// features (whose denominators cannot cancel, so 1e-12 holds relative to
// the values) including ReLU without input scaling.
func linearMaskMaps(t *testing.T, d int) []struct {
	name    string
	p       features.Pair
	noScale bool
} {
	t.Helper()
	out := []struct {
		name    string
		p       features.Pair
		noScale bool
	}{{"poly2 exact", features.Symmetric(polyMap{d}), true}}
	for _, name := range []string{"positive", "hyperbolic", "rbf/positive", "relu"} {
		p, err := catalog.Default().Pair(name, features.Options{InputDim: d, Features: 32, Seed: 9, Gamma: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, struct {
			name    string
			p       features.Pair
			noScale bool
		}{name, p, name == "relu"})
	}
	return out
}

// TestMaskedLinear: linear attention with key padding and causal masks
// (Lq = Lk and Lq ≠ Lk), bidirectional and causal at chunk sizes 1, 4 and
// 64, equals kernelized attention with the same features — the masked
// direct sum of φ(q')ᵀφ(k') — to 1e-12 relative to max|v|. Keys have
// norms 1 and 30 in turn, so the causal running reference rises and falls
// back inside chunks and across the prefix. Where Lq ≤ Lk the causal case is
// also computed with a cache — the first Lk − Lq keys (and their padding)
// given to State.Append, the rest to State.Extend — to the same 1e-12. In
// float32 (Apply32) the same holds to 4·√(F·Lk)·u (u = 2⁻²⁴, F features):
// each output is a ratio of sums of F·Lk non-negative-weighted products,
// which float32 arithmetic in any order changes by about √(F·Lk)·u
// relative (the statistical bound, Higham §3.5), plus the rounding of the
// inputs to float32.
func TestMaskedLinear(t *testing.T) {
	const d, dv = 4, 3
	for _, mp := range linearMaskMaps(t, d) {
		worst, worst32 := 0.0, 0.0
		scaled := func(x *mat.Dense) *mat.Dense {
			y := mat.DenseCopyOf(x)
			if !mp.noScale {
				y.Scale(math.Pow(d, -0.25), y)
			}
			return y
		}
		for i, c := range maskCases {
			q := gauss(c.lq, d, 90+uint64(i), 0.5)
			k := keysWithNorms(c.lk, d, 100+uint64(i), func(s int) float64 { return []float64{1, 30, 1, 1, 30}[s%5] })
			if mp.name == "poly2 exact" {
				k.Scale(1.0/30, k) // (1 + qᵀk)² of keys of norm 30 swamps the rest
			}
			v := gauss(c.lk, dv, 110+uint64(i), 1)
			g, err := features.Matrix(mp.p, scaled(q), scaled(k))
			if err != nil {
				t.Fatal(err)
			}
			vmax := maxAbs(v)
			for _, causal := range []bool{false, true} {
				want := maskedReference(g, v, c.pad, causal)
				for _, chunk := range []int{1, 4, 64} {
					att := &Linear{Pair: mp.p, Causal: causal, Chunk: chunk, NoInputScale: mp.noScale}
					got, err := att.ApplyMasked(q, k, v, c.pad)
					if err != nil {
						t.Fatalf("%s, %v: %v", mp.name, c, err)
					}
					e := maxAbsDiff(got, want) / vmax
					worst = math.Max(worst, e)
					if !(e <= 1e-12) {
						t.Errorf("%s, %v, causal=%v, chunk %d: differs from masked kernelized attention by %.3g", mp.name, c, causal, chunk, e)
					}
					if off := c.lk - c.lq; causal && off >= 0 {
						// Cached: the first Lk − Lq keys appended to a State, then
						// the aligned block, padding included.
						st, err := att.NewState()
						if err != nil {
							t.Fatal(err)
						}
						var p0, p1 []bool
						if c.pad != nil {
							p0, p1 = c.pad[:off], c.pad[off:]
						}
						if off > 0 {
							if err := st.Append(rows(k, 0, off), rows(v, 0, off), p0); err != nil {
								t.Fatal(err)
							}
						}
						cached, err := st.Extend(q, rows(k, off, c.lk), rows(v, off, c.lk), p1)
						if err != nil {
							t.Fatal(err)
						}
						e := maxAbsDiff(cached, want) / vmax
						worst = math.Max(worst, e)
						if !(e <= 1e-12) {
							t.Errorf("%s, %v, chunk %d: cached (Append, Extend) differs from masked kernelized attention by %.3g", mp.name, c, chunk, e)
						}
					}
					got32, err := att.Apply32(to32(q), to32(k), to32(v), c.pad)
					if err != nil {
						t.Fatal(err)
					}
					e = maxAbsDiff(from32(got32), want) / vmax
					worst32 = math.Max(worst32, e)
					if tol32 := 4 * math.Sqrt(float64(mp.p.Dim()*c.lk)) * 0x1p-24; !(e <= tol32) {
						t.Errorf("%s, %v, causal=%v, chunk %d: float32 differs from masked kernelized attention by %.3g", mp.name, c, causal, chunk, e)
					}
				}
			}
		}
		t.Logf("%s: largest difference %.3g (float64), %.3g (float32), relative to max|v|", mp.name, worst, worst32)
	}
}

// maxAbs returns max |m_ij|.
func maxAbs(m *mat.Dense) float64 {
	r, _ := m.Dims()
	var mx float64
	for i := 0; i < r; i++ {
		for _, x := range m.RawRowView(i) {
			mx = math.Max(mx, math.Abs(x))
		}
	}
	return mx
}

func to32(m *mat.Dense) blas32.General {
	r, c := m.Dims()
	g := blas32.General{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	for i := 0; i < r; i++ {
		for j, x := range m.RawRowView(i) {
			g.Data[i*c+j] = float32(x)
		}
	}
	return g
}

func from32(g blas32.General) *mat.Dense {
	m := mat.NewDense(g.Rows, g.Cols, nil)
	for i := 0; i < g.Rows; i++ {
		for j := 0; j < g.Cols; j++ {
			m.Set(i, j, float64(g.Data[i*g.Stride+j]))
		}
	}
	return m
}

// TestPaddingIrrelevant: the padded keys and values take no part in the
// output: replacing them by other values, huge ones or NaN, leaves every
// output bit unchanged, for exact, kernelized and linear attention (a
// symmetric map, an asymmetric pair; bidirectional and causal; float64 and
// float32).
func TestPaddingIrrelevant(t *testing.T) {
	const lq, lk, d, dv = 11, 23, 8, 3
	q, k, v := gauss(lq, d, 120, 0.5), gauss(lk, d, 121, 0.5), gauss(lk, dv, 122, 1)
	pad := padEvery(lk, 3, 2, true)
	pad[0] = true
	k2, v2 := mat.DenseCopyOf(k), mat.DenseCopyOf(v)
	for s, p := range pad {
		if !p {
			continue
		}
		for j := 0; j < d; j++ {
			k2.Set(s, j, []float64{1e6, -3, math.NaN(), math.Inf(1)}[(s+j)%4])
		}
		for j := 0; j < dv; j++ {
			v2.Set(s, j, []float64{math.NaN(), 1e300, -7}[(s+j)%3])
		}
	}
	reg := catalog.Default()
	pos, err := reg.Pair("positive", features.Options{InputDim: d, Features: 32, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ang, err := reg.Pair("angular", features.Options{InputDim: d, Features: 32, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	kern := func(a, b []float64) float64 { return math.Exp(floats.Dot(a, b) / math.Sqrt(d)) }
	for _, causal := range []bool{false, true} {
		atts := []Masked{Exact{Causal: causal}, Kernelized{Kernel: kern, Causal: causal},
			&Linear{Pair: pos, Causal: causal, Chunk: 5}, &Linear{Pair: ang, Causal: causal, Chunk: 5}}
		for _, att := range atts {
			a, err := att.ApplyMasked(q, k, v, pad)
			if err != nil {
				t.Fatalf("%T: %v", att, err)
			}
			b, err := att.ApplyMasked(q, k2, v2, pad)
			if err != nil {
				t.Fatalf("%T with changed padding: %v", att, err)
			}
			if !mat.Equal(a, b) {
				t.Errorf("%T causal=%v: output changed with the padded keys", att, causal)
			}
			if lin, ok := att.(*Linear); ok {
				a32, err := lin.Apply32(to32(q), to32(k), to32(v), pad)
				if err != nil {
					t.Fatal(err)
				}
				b32, err := lin.Apply32(to32(q), to32(k2), to32(v2), pad)
				if err != nil {
					t.Fatal(err)
				}
				if !floatsEqual32(a32.Data, b32.Data) {
					t.Errorf("float32 causal=%v: output changed with the padded keys", causal)
				}
			}
		}
	}
	// Unpadded non-finite keys are still refused.
	if _, err := (Exact{}).ApplyMasked(q, k2, v, nil); err == nil {
		t.Error("NaN keys accepted without padding")
	}
}

func floatsEqual32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
