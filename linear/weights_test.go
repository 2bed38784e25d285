package linear

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"
)

// repeatRows returns the rows of a, row i repeated w[i] times (w integer).
func repeatRows(a *mat.Dense, w []float64) *mat.Dense {
	_, c := a.Dims()
	var data []float64
	for i, v := range w {
		for range int(v) {
			data = append(data, a.RawRowView(i)...)
		}
	}
	return mat.NewDense(len(data)/c, c, data)
}

// to32 returns a in single precision.
func to32(a *mat.Dense) blas32.General {
	r, c := a.Dims()
	g := blas32.General{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	for i := 0; i < r; i++ {
		for j, v := range a.RawRowView(i) {
			g.Data[i*c+j] = float32(v)
		}
	}
	return g
}

// addMode is one of the four ways of adding rows, with or without weights.
type addMode struct {
	name string
	add  func(s *Stats, z, y *mat.Dense, w []float64) error
	f32  bool
}

var addModes = []addMode{
	{"AddWeighted", func(s *Stats, z, y *mat.Dense, w []float64) error { return s.AddWeighted(z, y, w) }, false},
	{"AddWeightedSerial", func(s *Stats, z, y *mat.Dense, w []float64) error { return s.AddWeightedSerial(z, y, w) }, false},
	{"AddWeightedFloat32", func(s *Stats, z, y *mat.Dense, w []float64) error { return s.AddWeightedFloat32(to32(z), y, w) }, true},
	{"AddWeightedFloat32Serial", func(s *Stats, z, y *mat.Dense, w []float64) error {
		return s.AddWeightedFloat32Serial(to32(z), y, w)
	}, true},
}

// maxRelDiff returns max|a_i − b_i| / max(1, max|b_i|) over the upper
// triangle (square upper) or all entries.
func maxRelDiff(a, b []float64) float64 {
	var diff, scale float64
	for i := range b {
		diff = math.Max(diff, math.Abs(a[i]-b[i]))
		scale = math.Max(scale, math.Abs(b[i]))
	}
	return diff / math.Max(1, scale)
}

// upper returns the upper triangle of the d×d row-major matrix a.
func upper(a []float64, d int) []float64 {
	var u []float64
	for i := 0; i < d; i++ {
		u = append(u, a[i*d+i:(i+1)*d]...)
	}
	return u
}

// statsDiff returns the largest relative difference of the statistics of
// a and b (upper triangle of ZᵀZ, Zᵀy, Σz, Σy, Σy²).
func statsDiff(a, b *Stats) float64 {
	return max(maxRelDiff(upper(a.ZtZ, a.D), upper(b.ZtZ, b.D)), maxRelDiff(a.ZtY, b.ZtY),
		maxRelDiff(a.SumZ, b.SumZ), maxRelDiff(a.SumY, b.SumY), maxRelDiff(a.SumY2, b.SumY2))
}

// modelDiff returns the largest relative difference of the weights and
// intercepts of two models.
func modelDiff(a, b *Model) float64 {
	return max(maxRelDiff(a.W.RawMatrix().Data, b.W.RawMatrix().Data), maxRelDiff(a.B, b.B))
}

// TestWeightsEqualRepetition: integer weights 0…3 give the statistics, the
// fitted weights (λ = 0.5 and 10⁻³, with intercept) and the GCV scores of
// the rows repeated that often, to 1e-10 relative in double precision
// (measured: 2e-15 for the statistics, 6e-16 for the fits) and to 1e-5 in
// single precision (measured 3e-7 and 1e-7: the rows scaled by √w are
// rounded to float32, the repeated ones are not scaled), for D = 7 with
// dense targets (one SYRK, Zᵀy by GEMM) and D = 300 with one-hot targets
// (tiles of 192, Zᵀy by row sums), in every add mode; the total weight is
// Σw and N the number of rows of positive weight.
func TestWeightsEqualRepetition(t *testing.T) {
	for _, tc := range []struct {
		n, d, k int
		oneHot  bool
	}{{60, 7, 3, false}, {1000, 300, 5, true}} {
		z := randDense(tc.n, tc.d, 11)
		y := randDense(tc.n, tc.k, 12)
		if tc.oneHot {
			labels := make([]int, tc.n)
			for i := range labels {
				labels[i] = (i * 3) % tc.k
			}
			var err error
			if y, err = OneHot(labels, tc.k); err != nil {
				t.Fatal(err)
			}
		}
		w := make([]float64, tc.n)
		var sumW float64
		pos := 0
		for i := range w {
			w[i] = float64((i * 7) % 4)
			sumW += w[i]
			if w[i] > 0 {
				pos++
			}
		}
		rep := statsOf(t, repeatRows(z, w), repeatRows(y, w))
		for _, m := range addModes {
			t.Run(fmt.Sprintf("D=%d/%s", tc.d, m.name), func(t *testing.T) {
				s := NewStats(tc.d, tc.k)
				// Two calls, so that the scratch is reused.
				h := tc.n / 2
				for _, r := range [][2]int{{0, h}, {h, tc.n}} {
					if err := m.add(s, z.Slice(r[0], r[1], 0, tc.d).(*mat.Dense), y.Slice(r[0], r[1], 0, tc.k).(*mat.Dense), w[r[0]:r[1]]); err != nil {
						t.Fatal(err)
					}
				}
				if !s.Weighted || s.Weight() != sumW || s.N != pos {
					t.Fatalf("weighted %v, total weight %v, N %d; want true, %v, %d", s.Weighted, s.Weight(), s.N, sumW, pos)
				}
				tol := 1e-10
				if m.f32 {
					tol = 1e-5
				}
				if e := statsDiff(s, rep); e > tol {
					t.Errorf("statistics differ from the repeated rows' by %.3g relative (tolerance %g)", e, tol)
				}
				for _, lam := range []float64{0.5, 1e-3} {
					got, err := Fit(s, lam, true)
					if err != nil {
						t.Fatal(err)
					}
					want, err := Fit(rep, lam, true)
					if err != nil {
						t.Fatal(err)
					}
					if e := modelDiff(got, want); e > tol {
						t.Errorf("λ=%g: fitted weights differ from the repeated rows' by %.3g relative (tolerance %g)", lam, e, tol)
					}
				}
				if m.f32 {
					return
				}
			})
		}
	}
}

// TestWeightedGCVScale: weighted GCV (n = rows of positive weight, RSS
// weighted) scores λ·c under weights c·w exactly c times the score of λ
// under w — the weights' scale, e.g. weights normalised to sum to one,
// does not move the λ chosen — and unit weights give the unweighted
// scores.
func TestWeightedGCVScale(t *testing.T) {
	const n, d, k = 120, 9, 2
	z := randDense(n, d, 11)
	y := randDense(n, k, 12)
	g := rand.New(rand.NewPCG(13, 1))
	w := make([]float64, n)
	sumW := 0.0
	for i := range w {
		w[i] = 2 * g.Float64()
		if i%10 == 0 {
			w[i] = 0
		}
		sumW += w[i]
	}
	grid := []float64{1e-3, 1e-2, 1e-1, 1, 10, 100}
	gcvOf := func(w []float64, grid []float64) []float64 {
		s := NewStats(d, k)
		if err := s.AddWeighted(z, y, w); err != nil {
			t.Fatal(err)
		}
		sc, err := GCV(s, grid, true)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	base := gcvOf(w, grid)
	for _, c := range []float64{0.01, 1 / sumW, 37} {
		cw := make([]float64, n)
		cg := make([]float64, len(grid))
		for i := range w {
			cw[i] = c * w[i]
		}
		for i := range grid {
			cg[i] = c * grid[i]
		}
		got := gcvOf(cw, cg)
		for i := range got {
			if math.IsInf(got[i], 0) || math.Abs(got[i]-c*base[i]) > 1e-10*c*base[i] {
				t.Fatalf("c=%g: GCV(c·w, c·λ=%g) = %v, want c·GCV(w, λ) = %v", c, cg[i], got[i], c*base[i])
			}
		}
		if Best(grid, got) != Best(grid, base) {
			t.Errorf("c=%g: λ chosen %v, with unscaled weights %v", c, Best(grid, got), Best(grid, base))
		}
	}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	plain := NewStats(d, k)
	if err := plain.Add(z, y); err != nil {
		t.Fatal(err)
	}
	want, err := GCV(plain, grid, true)
	if err != nil {
		t.Fatal(err)
	}
	if e := maxRelDiff(gcvOf(ones, grid), want); e > 1e-12 {
		t.Errorf("unit weights: GCV differs from the unweighted scores by %.3g", e)
	}
}

// TestZeroWeightDropsRow: rows of weight zero — one of them with NaN and
// Inf features and targets — leave the statistics bit for bit as if they
// were not there, in every add mode, and with unit weights on the others
// the fit equals the unweighted fit of the other rows to 1e-12.
func TestZeroWeightDropsRow(t *testing.T) {
	const n, d, k = 40, 6, 2
	z := randDense(n, d, 21)
	y := randDense(n, k, 22)
	w := make([]float64, n)
	var keep []int
	for i := range w {
		if i%5 != 2 {
			w[i] = 1
			keep = append(keep, i)
		}
	}
	z.Set(2, 3, math.NaN())
	z.Set(7, 0, math.Inf(1))
	y.Set(12, 1, math.NaN())
	zk := mat.NewDense(len(keep), d, nil)
	yk := mat.NewDense(len(keep), k, nil)
	wk := make([]float64, len(keep))
	for r, i := range keep {
		zk.SetRow(r, z.RawRowView(i))
		yk.SetRow(r, y.RawRowView(i))
		wk[r] = w[i]
	}
	for _, m := range addModes {
		all, kept := NewStats(d, k), NewStats(d, k)
		if err := m.add(all, z, y, w); err != nil {
			t.Fatal(err)
		}
		if err := m.add(kept, zk, yk, wk); err != nil {
			t.Fatal(err)
		}
		if all.N != kept.N || all.SumW != kept.SumW || !all.Weighted {
			t.Errorf("%s: N %d, total weight %v; without the rows %d, %v", m.name, all.N, all.SumW, kept.N, kept.SumW)
		}
		for i, pair := range [][2][]float64{{all.ZtZ, kept.ZtZ}, {all.ZtY, kept.ZtY}, {all.SumZ, kept.SumZ}, {all.SumY, kept.SumY}, {all.SumY2, kept.SumY2}} {
			if !slices.Equal(pair[0], pair[1]) {
				t.Errorf("%s: statistic %d differs from the statistics without the zero-weight rows", m.name, i)
			}
		}
		if m.f32 {
			continue
		}
		got, err := Fit(all, 0.3, true)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Fit(statsOf(t, zk, yk), 0.3, true)
		if err != nil {
			t.Fatal(err)
		}
		if e := modelDiff(got, want); e > 1e-12 {
			t.Errorf("%s: fit differs from the unweighted fit without the rows by %.3g", m.name, e)
		}
	}
}

// TestWeightErrors: a negative, NaN or infinite weight, or a weight slice
// of the wrong length, is an error that leaves the statistics unchanged;
// statistics whose every weight is zero do not fit; nil weights are Add
// bit for bit.
func TestWeightErrors(t *testing.T) {
	const n, d, k = 5, 3, 1
	z := randDense(n, d, 31)
	y := randDense(n, k, 32)
	for _, m := range addModes {
		for _, bad := range []float64{-1, math.NaN(), math.Inf(1), math.Inf(-1)} {
			s := NewStats(d, k)
			if err := s.AddWeighted(z, y, []float64{1, 1, 1, 1, 1}); err != nil {
				t.Fatal(err)
			}
			before := s.Clone()
			w := []float64{1, 2, bad, 1, 0}
			if err := m.add(s, z, y, w); err == nil {
				t.Errorf("%s: weight %v accepted", m.name, bad)
			}
			if statsDiff(s, before) != 0 || s.N != before.N || s.SumW != before.SumW {
				t.Errorf("%s: a refused weight %v changed the statistics", m.name, bad)
			}
		}
		if err := m.add(NewStats(d, k), z, y, []float64{1, 2}); err == nil {
			t.Errorf("%s: 2 weights for %d rows accepted", m.name, n)
		}
		zero := NewStats(d, k)
		if err := m.add(zero, z, y, make([]float64, n)); err != nil {
			t.Fatal(err)
		}
		if _, err := Fit(zero, 1, true); err == nil {
			t.Errorf("%s: fit of rows whose weights are all zero accepted", m.name)
		}
	}
	a, b := NewStats(d, k), NewStats(d, k)
	if err := a.Add(z, y); err != nil {
		t.Fatal(err)
	}
	if err := b.AddWeighted(z, y, nil); err != nil {
		t.Fatal(err)
	}
	if b.Weighted || statsDiff(a, b) != 0 || a.N != b.N {
		t.Error("AddWeighted with nil weights differs from Add")
	}
}

// TestWeightedMerge: statistics with unweighted and weighted rows, added
// into one Stats or merged from two in either order, have total weight
// N_unweighted + Σw and fit as AddWeighted of all the rows with weight 1
// for the unweighted ones (1e-12); subtracting the weighted part again
// (as KFold does) gives back the unweighted fit.
func TestWeightedMerge(t *testing.T) {
	const n, d, k = 30, 5, 2
	z := randDense(n, d, 41)
	y := randDense(n, k, 42)
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
		if i >= 10 {
			w[i] = 0.25 + float64(i%3)
		}
	}
	za, ya := z.Slice(0, 10, 0, d).(*mat.Dense), y.Slice(0, 10, 0, k).(*mat.Dense)
	zb, yb := z.Slice(10, n, 0, d).(*mat.Dense), y.Slice(10, n, 0, k).(*mat.Dense)
	all := NewStats(d, k)
	if err := all.AddWeighted(z, y, w); err != nil {
		t.Fatal(err)
	}
	want, err := Fit(all, 0.7, true)
	if err != nil {
		t.Fatal(err)
	}
	unw, wtd := statsOf(t, za, ya), NewStats(d, k)
	if err := wtd.AddWeighted(zb, yb, w[10:]); err != nil {
		t.Fatal(err)
	}
	var sumW float64
	for _, v := range w {
		sumW += v
	}
	one := unw.Clone()
	if err := one.AddWeighted(zb, yb, w[10:]); err != nil {
		t.Fatal(err)
	}
	ab, ba := unw.Clone(), wtd.Clone()
	if err := ab.Merge(wtd); err != nil {
		t.Fatal(err)
	}
	if err := ba.Merge(unw); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Stats{"added": one, "merged": ab, "merged the other way": ba} {
		if math.Abs(s.Weight()-sumW) > 1e-12*sumW || !s.Weighted || s.N != n {
			t.Errorf("%s: total weight %v, N %d, want %v, %d", name, s.Weight(), s.N, sumW, n)
		}
		got, err := Fit(s, 0.7, true)
		if err != nil {
			t.Fatal(err)
		}
		if e := modelDiff(got, want); e > 1e-12 {
			t.Errorf("%s: fit differs by %.3g", name, e)
		}
	}
	if err := ab.axpy(-1, wtd); err != nil {
		t.Fatal(err)
	}
	got, err := Fit(ab, 0.7, true)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Fit(unw, 0.7, true)
	if err != nil {
		t.Fatal(err)
	}
	if e := modelDiff(got, plain); e > 1e-10 || math.Abs(ab.Weight()-10) > 1e-12 {
		t.Errorf("after subtracting the weighted rows: fit differs by %.3g, total weight %v (want 10)", e, ab.Weight())
	}
}

// TestWeightedKFold: KFold on weighted fold statistics equals, to 1e-10,
// the weighted validation error computed directly — for each fold a model
// fitted by AddWeighted on the other folds' rows, its squared errors on
// the fold's rows weighted and summed, over K·Σw.
func TestWeightedKFold(t *testing.T) {
	const n, d, k, nf = 48, 4, 2, 4
	z := randDense(n, d, 51)
	y := randDense(n, k, 52)
	w := make([]float64, n)
	var sumW float64
	for i := range w {
		w[i] = 0.5 + float64((i*5)%7)/3
		sumW += w[i]
	}
	rowsOf := func(in func(i int) bool) (*mat.Dense, *mat.Dense, []float64) {
		var zs, ys, ws []float64
		for i := 0; i < n; i++ {
			if in(i) {
				zs = append(zs, z.RawRowView(i)...)
				ys = append(ys, y.RawRowView(i)...)
				ws = append(ws, w[i])
			}
		}
		return mat.NewDense(len(ws), d, zs), mat.NewDense(len(ws), k, ys), ws
	}
	folds := make([]*Stats, nf)
	for f := range folds {
		zf, yf, wf := rowsOf(func(i int) bool { return i%nf == f })
		folds[f] = NewStats(d, k)
		if err := folds[f].AddWeighted(zf, yf, wf); err != nil {
			t.Fatal(err)
		}
	}
	grid := []float64{0.01, 1, 30}
	got, err := KFold(folds, grid, true)
	if err != nil {
		t.Fatal(err)
	}
	for gi, lam := range grid {
		var sse float64
		for f := 0; f < nf; f++ {
			zt, yt, wt := rowsOf(func(i int) bool { return i%nf != f })
			st := NewStats(d, k)
			if err := st.AddWeighted(zt, yt, wt); err != nil {
				t.Fatal(err)
			}
			m, err := Fit(st, lam, true)
			if err != nil {
				t.Fatal(err)
			}
			zv, yv, wv := rowsOf(func(i int) bool { return i%nf == f })
			p, err := m.Predict(zv)
			if err != nil {
				t.Fatal(err)
			}
			for i, wi := range wv {
				for c := 0; c < k; c++ {
					e := p.At(i, c) - yv.At(i, c)
					sse += wi * e * e
				}
			}
		}
		want := sse / (sumW * k)
		if math.Abs(got[gi]-want) > 1e-10*want {
			t.Errorf("λ=%g: k-fold score %v, direct %v", lam, got[gi], want)
		}
	}
}
