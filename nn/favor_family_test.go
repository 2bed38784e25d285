package nn

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/prf"
)

// familyRef returns the map of package prf that FamilyAttention's fit
// gives for one sequence and head: the statistics of the scaled queries
// and keys (prf.NewStats, computed as attention.Linear scales them), the
// OPRF of draw ω with prf.FitOPRF's parameter, or the SDERF with
// prf.FitSDERF's parameters and basis Qᵀ and the draw rotated to ωQ (see
// FitFeatureFamily).
func familyRef(t *testing.T, family string, omega []float64, m int, q, k *mat.Dense) *prf.Map {
	t.Helper()
	_, d := q.Dims()
	f := math.Pow(float64(d), -0.25)
	var qs, ks mat.Dense
	qs.Scale(f, q)
	ks.Scale(f, k)
	st, err := prf.NewStats(&qs, &ks)
	if err != nil {
		t.Fatal(err)
	}
	spec := prf.Spec{Family: family, InputDim: d, M: m, W: append([]float64(nil), omega...)}
	switch family {
	case FeatureOPRF:
		a := prf.FitOPRF(st)
		spec.A = make([]float64, d)
		for i := range spec.A {
			spec.A[i] = a
		}
	case FeatureSDERF:
		a, basis, err := prf.FitSDERF(st)
		if err != nil {
			t.Fatal(err)
		}
		var wq mat.Dense
		wq.Mul(mat.NewDense(m, d, omega), basis.T()) // ωQ, basis = Qᵀ
		spec.A, spec.Basis, spec.W = a, basis.RawMatrix().Data, wq.RawMatrix().Data
	}
	mp, err := prf.FromSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return mp
}

// TestFamilyAttentionMatchesAttentionLinear checks the oprf and sderf
// attention against attention.Linear with the prf map fitted to each
// sequence's and head's queries and keys (bidirectional: attention.Linear
// refits it to the call itself, which gives the same map; causal: it keeps
// the map given). Both sides evaluate the same float64 expressions, the
// eigendecomposition by Jacobi sweeps against LAPACK's (converged to
// 10⁻¹⁵ at d = 4, JacobiSweeps), so they agree to rounding: 10⁻¹⁰ of the
// output's scale leaves orders of magnitude.
func TestFamilyAttentionMatchesAttentionLinear(t *testing.T) {
	const b, h, l, d, dv, m = 2, 2, 8, 4, 3, 16
	om, err := arch.DrawFeatureProjection(FeatureOPRF, m, d, 4)
	if err != nil {
		t.Fatal(err)
	}
	omega := arr{data: om, dims: []int{m, d}}
	q, k, v := randArr(1, 1, b, h, l, d), randArr(2, 1.5, b, h, l, d), randArr(3, 1, b, h, l, dv)
	for _, fam := range []string{FeatureOPRF, FeatureSDERF} {
		for _, tc := range []struct {
			name   string
			causal bool
			chunk  int
		}{{"bidirectional", false, 0}, {"causal one block", true, 0}, {"causal chunks of 2", true, 2}, {"causal chunks of 4", true, 4}} {
			fn := func(in []*Node) *Node {
				return FamilyAttention(in[0], in[1], in[2], in[3], fam, tc.causal, tc.chunk, nil)
			}
			var want []float64
			for z := 0; z < b*h; z++ {
				qm := mat.NewDense(l, d, append([]float64(nil), q.data[z*l*d:(z+1)*l*d]...))
				km := mat.NewDense(l, d, append([]float64(nil), k.data[z*l*d:(z+1)*l*d]...))
				vm := mat.NewDense(l, dv, append([]float64(nil), v.data[z*l*dv:(z+1)*l*dv]...))
				lin := &attention.Linear{Map: familyRef(t, fam, om, m, qm, km), Causal: tc.causal, Chunk: 3}
				y, err := lin.Apply(qm, km, vm)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, y.RawMatrix().Data...)
			}
			assertClose(t, fam+" "+tc.name, eval1(t, fn, q, k, v, omega), want, 1e-10)
		}
	}
}

// TestFittedAttentionGradient checks the gradient of the attention with
// the fitted parameters held (what FamilyAttention differentiates: the
// fit is a constant to the gradient) against central differences.
func TestFittedAttentionGradient(t *testing.T) {
	const b, h, l, d, dv, m = 1, 2, 6, 4, 2, 8
	om, err := arch.DrawFeatureProjection(FeatureSDERF, m, d, 2)
	if err != nil {
		t.Fatal(err)
	}
	omega := arr{data: om, dims: []int{m, d}}
	q, k, v := randArr(5, 0.7, b, h, l, d), randArr(6, 0.7, b, h, l, d), randArr(7, 1, b, h, l, dv)
	for _, fam := range []string{FeatureOPRF, FeatureSDERF} {
		// The fit of the unperturbed inputs, as constants.
		fit := eval(t, func(in []*Node) []*Node {
			w, o := FitFeatureFamily(in[0], in[1], in[2], fam, nil)
			return []*Node{w, o}
		}, q, k, omega)
		weff, off := arr{data: fit[0], dims: []int{b, h, m, d}}, arr{data: fit[1], dims: []int{b, h, m}}
		for _, causal := range []bool{false, true} {
			fn := func(in []*Node) *Node { return fittedAttention(in[0], in[1], in[2], in[3], in[4], causal, 2, nil) }
			checkGradient(t, fam, fn, q, k, v, weff, off)
		}
	}
}

// TestFamilyAttentionKeyMask: the fit and the sums use the real tokens
// only, so the outputs of the real queries do not move when the padded
// queries, keys and values change.
func TestFamilyAttentionKeyMask(t *testing.T) {
	const b, h, l, d, dv, m = 2, 1, 6, 4, 2, 8
	om, err := arch.DrawFeatureProjection(FeatureSDERF, m, d, 3)
	if err != nil {
		t.Fatal(err)
	}
	omega := arr{data: om, dims: []int{m, d}}
	mask := arr{data: []float64{1, 1, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0}, dims: []int{b, l}}
	q, k, v := randArr(1, 1, b, h, l, d), randArr(2, 1, b, h, l, d), randArr(3, 1, b, h, l, dv)
	q2, k2, v2 := q, k, v
	for _, a := range []*arr{&q2, &k2, &v2} {
		c := arr{data: append([]float64(nil), a.data...), dims: a.dims}
		w := c.dims[3]
		for i := range c.data {
			if pos := (i / w) % l; mask.data[(i/(w*h*l))*l+pos] == 0 {
				c.data[i] = 3 * math.Sin(float64(i))
			}
		}
		*a = c
	}
	for _, fam := range []string{FeatureOPRF, FeatureSDERF} {
		for _, causal := range []bool{false, true} {
			fn := func(in []*Node) *Node { return FamilyAttention(in[0], in[1], in[2], in[3], fam, causal, 0, in[4]) }
			y1, y2 := eval1(t, fn, q, k, v, omega, mask), eval1(t, fn, q2, k2, v2, omega, mask)
			for i := range y1 {
				pos, seq := (i/dv)%l, i/(dv*h*l)
				if mask.data[seq*l+pos] == 0 {
					continue
				}
				if math.Abs(y1[i]-y2[i]) > 1e-12*math.Max(1, math.Abs(y1[i])) {
					t.Errorf("%s causal=%v: real query output %d moved from %v to %v with the padding", fam, causal, i, y1[i], y2[i])
					break
				}
			}
		}
	}
}

// TestSymEigen checks the graph's Jacobi eigendecomposition: V·Λ·Vᵀ = A
// and VᵀV = I to 10⁻¹² of ‖A‖, on random symmetric matrices, rank-deficient
// moment matrices (repeated zero eigenvalues) and diagonal ones, for odd
// and even sizes.
func TestSymEigen(t *testing.T) {
	for _, d := range []int{1, 2, 3, 4, 5, 8, 16} {
		var data []float64
		r := randArr(uint64(d), 1, 3, d, d)
		for z := 0; z < 3; z++ {
			a := mat.NewDense(d, d, r.data[z*d*d:(z+1)*d*d])
			var s mat.Dense
			switch z {
			case 0: // symmetric, indefinite
				s.Add(a, a.T())
			case 1: // moment of 2 rows: rank ≤ 2
				s.Mul(a.Slice(0, d, 0, min(2, d)), a.Slice(0, d, 0, min(2, d)).T())
			default: // diagonal
				s.CloneFrom(mat.NewDense(d, d, nil))
				for i := 0; i < d; i++ {
					s.Set(i, i, a.At(i, i))
				}
			}
			data = append(data, s.RawMatrix().Data...)
		}
		out := eval(t, func(in []*Node) []*Node {
			vals, vecs := symEigen(in[0], JacobiSweeps(d))
			return []*Node{vals, vecs}
		}, arr{data: data, dims: []int{3, d, d}})
		for z := 0; z < 3; z++ {
			a := mat.NewDense(d, d, data[z*d*d:(z+1)*d*d])
			v := mat.NewDense(d, d, out[1][z*d*d:(z+1)*d*d])
			var rec, vtv mat.Dense
			lv := mat.NewDense(d, d, nil)
			lv.Apply(func(i, j int, x float64) float64 { return x * out[0][z*d+j] }, v)
			rec.Mul(lv, v.T())
			vtv.Mul(v.T(), v)
			scale := math.Max(mat.Norm(a, 2), 1e-300)
			var e1, e2 float64
			for i := 0; i < d; i++ {
				for j := 0; j < d; j++ {
					e1 = math.Max(e1, math.Abs(rec.At(i, j)-a.At(i, j))/scale)
					id := 0.0
					if i == j {
						id = 1
					}
					e2 = math.Max(e2, math.Abs(vtv.At(i, j)-id))
				}
			}
			if e1 > 1e-12 || e2 > 1e-12 {
				t.Errorf("d=%d matrix %d: ‖VΛVᵀ − A‖/‖A‖ = %.2g, ‖VᵀV − I‖ = %.2g", d, z, e1, e2)
			}
		}
	}
}

// TestFeatureMapConfig: names are validated, favor+ normalises to the
// empty field (configurations and their JSON are those from before the
// field), other kinds refuse a family other than favor+, and the redraws
// are deterministic, simrf drawing prf.Simplex's directions.
func TestFeatureMapConfig(t *testing.T) {
	base := ModelConfig{Kind: KindPerformer, Vocab: 10, Classes: 2, Length: 8, Width: 8, Depth: 2, Heads: 2, Features: 8}
	for _, tc := range []struct {
		kind, fm, want, err string
	}{
		{KindPerformer, "", "", ""},
		{KindPerformer, "favor+", "", ""},
		{KindPerformer, "FAVOR+", "", ""},
		{KindPerformer, "oprf", "oprf", ""},
		{KindPerformer, " SDERF", "sderf", ""},
		{KindPerformer, "simrf", "simrf", ""},
		{KindPerformer, "aderf", "", "unknown feature map"},
		{KindPerformer, "favor++", "", "unknown feature map"},
		{KindTransformer, "favor+", "", ""},
		{KindHRF, "oprf", "", "performer only"},
		{KindTNN, "nonsense", "", "unknown feature map"},
	} {
		c := base
		c.Kind, c.FeatureMap = tc.kind, tc.fm
		c.Defaults()
		err := c.Validate()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s %q: %v", tc.kind, tc.fm, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s %q: error %v, want one line with %q", tc.kind, tc.fm, err, tc.err)
		case tc.err == "" && c.FeatureMap != tc.want:
			t.Errorf("%s %q: normalised to %q, want %q", tc.kind, tc.fm, c.FeatureMap, tc.want)
		}
	}
	c := base
	c.FeatureMap = "favor+"
	c.Defaults()
	js, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "feature_map") {
		t.Errorf("favor+ configuration writes the new field: %s", js)
	}
	draws := func(fm string, seed uint64, redraw int) [][]float32 {
		c := base
		c.FeatureMap = fm
		c.Defaults()
		fv, err := c.FixedVariables(seed, redraw)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for _, f := range fv {
			out = append(out, f.Value)
		}
		return out
	}
	same := func(a, b [][]float32) bool {
		return slices.EqualFunc(a, b, func(x, y []float32) bool { return slices.Equal(x, y) })
	}
	for _, fm := range arch.FeatureMaps {
		if !same(draws(fm, 3, 2), draws(fm, 3, 2)) {
			t.Errorf("%s: the same seed and redraw gave different draws", fm)
		}
		if same(draws(fm, 3, 2), draws(fm, 3, 3)) || same(draws(fm, 3, 2), draws(fm, 4, 2)) {
			t.Errorf("%s: another redraw or seed gave the same draws", fm)
		}
	}
	for _, fm := range []string{FeatureOPRF, FeatureSDERF} {
		if !same(draws(fm, 5, 1), draws(FeatureFavor, 5, 1)) {
			t.Errorf("%s: draws differ from favor+'s", fm)
		}
	}
	om, err := arch.DrawFeatureProjection(FeatureSimRF, 8, 4, 9)
	if err != nil {
		t.Fatal(err)
	}
	want, err := prf.Simplex{}.Sample(8, 4, 9)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(om, want.RawMatrix().Data) {
		t.Errorf("simrf draw is not prf.Simplex's")
	}
	// Simplex coupling: the directions of a block have pairwise cosines
	// −1/(d−1).
	for i := 0; i < 4; i++ {
		for j := i + 1; j < 4; j++ {
			ri, rj := om[i*4:(i+1)*4], om[j*4:(j+1)*4]
			var dot, ni, nj float64
			for l := range ri {
				dot, ni, nj = dot+ri[l]*rj[l], ni+ri[l]*ri[l], nj+rj[l]*rj[l]
			}
			if c := dot / math.Sqrt(ni*nj); math.Abs(c+1.0/3) > 1e-12 {
				t.Errorf("simrf rows %d, %d: cosine %v, want −1/3", i, j, c)
			}
		}
	}
}
