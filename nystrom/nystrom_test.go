package nystrom

import (
	"errors"
	"fmt"
	"io"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/sampler"
)

// gauss returns n×d standard normal rows times scale.
func gauss(n, d int, seed uint64, scale float64) *mat.Dense {
	x, err := sampler.Gaussian{}.Sample(n, d, seed)
	if err != nil {
		panic(err)
	}
	x.Scale(scale, x)
	return x
}

// gramError returns ‖K − ZZᵀ‖_F/‖K‖_F of t on x.
func gramError(t *testing.T, mp features.Transformer, x *mat.Dense) float64 {
	t.Helper()
	z, err := features.Apply(mp, x)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernel.GramOf(mp.(features.KernelEstimator).Kernel(), x, x)
	if err != nil {
		t.Fatal(err)
	}
	var kh mat.Dense
	kh.Mul(z, z.T())
	e, err := kernel.RelativeError(k, &kh)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// kernels are the kernels the tests run on, with inputs in their domain.
var kernels = []struct {
	name string
	k    kernel.Kernel
	pos  bool // inputs must be non-negative
}{
	{"rbf", kernel.RBF{Gamma: 0.3}, false},
	{"softmax", kernel.Softmax{}, false},
	{"arccos0", kernel.ArcCos{Order: 0}, false},
	{"arccos1", kernel.ArcCos{Order: 1}, false},
	{"arccos2", kernel.ArcCos{Order: 2}, false},
	{"poly3", kernel.Polynomial{Gamma: 0.5, Coef0: 1, Degree: 3}, false},
	{"chi2", kernel.Chi2{}, true},
	{"skewed-chi2", kernel.SkewedChi2{C: 1}, true},
}

// exactTol is the Gram error bound of TestExactWithAllLandmarks: 10·√ε.
const exactTol = 10 * 0x1p-26

func inputs(n, d int, seed uint64, pos bool) *mat.Dense {
	x := gauss(n, d, seed, 0.5)
	if pos {
		for i := 0; i < n; i++ {
			for j, v := range x.RawRowView(i) {
				x.Set(i, j, math.Abs(v))
			}
		}
	}
	return x
}

// With every row a landmark the Nyström approximation is exact: the Gram
// error is at rounding level for every kernel, and the features of the
// landmarks reproduce K_mm. "Rounding level" here is O(√ε), not O(ε): the
// map forms K_mm^(−1/2) explicitly, and rounding errors of size ε·λ_max in
// it, in the directions of eigenvalues floored at f = m·ε·λ_max (the
// kernels of low rank, poly3 and chi2 here, have many), are amplified by
// 1/√f, which gives relative Gram errors of order ε/√(m·ε) ≤ √ε. The bound
// is 10·√ε = 1.5e-7 (measured: 1e-12 to 1e-10 on pure Go and OpenBLAS,
// 9e-9 with blas.Perturbed), far below the errors of m < n landmarks.
func TestExactWithAllLandmarks(t *testing.T) {
	for _, kc := range kernels {
		t.Run(kc.name, func(t *testing.T) {
			x := inputs(120, 5, 1, kc.pos)
			mp, err := New(kc.k, x, Options{})
			if err != nil {
				t.Fatal(err)
			}
			e := gramError(t, mp, x)
			t.Logf("%s: Gram error %.2g, rank %d of %d", kc.name, e, mp.Rank(), mp.Dim())
			if e > exactTol {
				t.Errorf("Gram error %.3g with every row a landmark, want ≤ %.2g", e, exactTol)
			}
		})
	}
}

// The error falls as landmarks are added: uniform landmarks of one seed
// are nested (the first m of one permutation), so the projection onto
// their span can only improve; the error at m = 256 is below a tenth of
// that at m = 8.
func TestErrorFallsWithLandmarks(t *testing.T) {
	x := gauss(600, 6, 2, 0.6)
	prev := math.Inf(1)
	var first float64
	for _, m := range []int{8, 16, 32, 64, 128, 256} {
		mp, err := Fit(x, Config{Kernel: kernel.RBF{Gamma: 0.5}, Components: m, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		e := gramError(t, mp, x)
		t.Logf("m=%d: Gram error %.4g", m, e)
		if e > prev*(1+1e-9) {
			t.Errorf("m=%d: error %.4g above %.4g at fewer landmarks", m, e, prev)
		}
		if m == 8 {
			first = e
		}
		prev = e
	}
	if prev > first/10 {
		t.Errorf("error %.3g at m = 256 not below a tenth of %.3g at m = 8", prev, first)
	}
}

// clustered returns a data set with one big cluster and a few small, far
// ones (the case where uniform landmarks miss whole clusters).
func clustered(seed uint64) *mat.Dense {
	const d = 4
	sizes := []int{900, 20, 20, 20, 20, 20}
	n := 0
	for _, s := range sizes {
		n += s
	}
	x := mat.NewDense(n, d, nil)
	noise := gauss(n, d, seed, 0.35)
	centres := gauss(len(sizes), d, seed+100, 3)
	r := 0
	for c, s := range sizes {
		for i := 0; i < s; i++ {
			for j := 0; j < d; j++ {
				x.Set(r, j, centres.At(c, j)+noise.At(r, j))
			}
			r++
		}
	}
	return x
}

// On a clustered data set (one cluster of 900 rows, five of 20, where
// uniform landmarks miss whole small clusters) k-means and leverage-score
// landmarks beat uniform ones: over 6 seeds their mean Gram error at
// m = 64 is below half of uniform's, on two such data sets (measured: about
// 0.033 uniform, 0.009 leverage, 0.0055 k-means).
func TestKMeansAndLeverageBeatUniform(t *testing.T) {
	const m, seeds = 64, 6
	k := kernel.RBF{Gamma: 0.5}
	for _, ds := range []uint64{1, 2} {
		x := clustered(ds)
		exact, err := kernel.Gram(k, x, x)
		if err != nil {
			t.Fatal(err)
		}
		means := map[Method]float64{}
		for _, method := range []Method{Uniform, KMeans, Leverage} {
			errs := make([]float64, seeds)
			for s := range errs {
				mp, err := Fit(x, Config{Kernel: k, Components: m, Method: method, Seed: uint64(s)})
				if err != nil {
					t.Fatal(err)
				}
				z, err := features.Apply(mp, x)
				if err != nil {
					t.Fatal(err)
				}
				var kh mat.Dense
				kh.Mul(z, z.T())
				if errs[s], err = kernel.RelativeError(exact, &kh); err != nil {
					t.Fatal(err)
				}
			}
			means[method] = stat.Mean(errs, nil)
		}
		t.Logf("data set %d: Gram error uniform %.4f, kmeans %.4f, leverage %.4f", ds, means[Uniform], means[KMeans], means[Leverage])
		for _, method := range []Method{KMeans, Leverage} {
			if !(means[method] < means[Uniform]/2) {
				t.Errorf("data set %d: %s error %.4f not below half of uniform's %.4f", ds, method, means[method], means[Uniform])
			}
		}
	}
}

// Leverage scores of a point far from a big cluster are higher than those
// of the cluster's points, and the scores sum to about the effective
// dimension (positive, at most n).
func TestLeverageScores(t *testing.T) {
	x := clustered(3)
	n, _ := x.Dims()
	l, err := LeverageScores(x, kernel.RBF{Gamma: 0.5}, 24, 48, 1)
	if err != nil {
		t.Fatal(err)
	}
	big := stat.Mean(l[:900], nil)
	small := stat.Mean(l[900:], nil)
	var sum float64
	for _, v := range l {
		sum += v
	}
	t.Logf("mean score big cluster %.4f, small clusters %.4f, sum %.1f", big, small, sum)
	if !(small > 5*big) {
		t.Errorf("small clusters' mean leverage %.4f not above 5× the big cluster's %.4f", small, big)
	}
	if !(sum > 0 && sum < float64(n)) {
		t.Errorf("scores sum to %.3g", sum)
	}
}

// A map round-trips through its spec and Decode to identical features;
// corrupt specs are errors.
func TestSpecRoundTrip(t *testing.T) {
	x := gauss(50, 3, 5, 1)
	mp, err := Fit(x, Config{Kernel: kernel.ArcCos{Order: 1}, Components: 10, Method: KMeans, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	kind, raw, err := features.Encode(mp)
	if err != nil || kind != SpecKind {
		t.Fatal(kind, err)
	}
	back, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := features.Apply(mp, x)
	b, err := features.Apply(back, x)
	if err != nil || !mat.Equal(a, b) {
		t.Errorf("decoded map differs (%v)", err)
	}
	s := mp.Spec()
	for name, mod := range map[string]func(*Spec){
		"kernel":     func(s *Spec) { s.Kernel.Name = "nope" },
		"landmarks":  func(s *Spec) { s.Landmarks = s.Landmarks[1:] },
		"norm":       func(s *Spec) { s.Normalization = append([]float64{math.NaN()}, s.Normalization[1:]...) },
		"dim":        func(s *Spec) { s.InputDim = 0 },
		"rank":       func(s *Spec) { s.Rank = 11 },
		"rbf gamma":  func(s *Spec) { s.Kernel = kernel.Spec{Name: "rbf", Gamma: -1} },
		"components": func(s *Spec) { s.Components = 1 << 30 },
	} {
		c := s
		mod(&c)
		if _, err := FromSpec(c); err == nil {
			t.Errorf("%s: corrupt spec accepted", name)
		}
	}
}

// exactProjector computes XWᵀ by a matrix product.
type exactProjector struct{ w *mat.Dense }

func (p exactProjector) ProjectFrom(dst, x *mat.Dense, _ int) error {
	dst.Mul(x, p.w.T())
	return nil
}

// On an exact projector the kernels that are functions of xᵀl give the
// same features to 1e-9 (the arc-cosine kernels from the projected cosine
// rather than the vectors); the χ² kernels have no projector seam.
func TestProjectorSeam(t *testing.T) {
	np := func(w *mat.Dense) (features.Projector, error) { return exactProjector{mat.DenseCopyOf(w)}, nil }
	for _, kc := range kernels {
		x := inputs(40, 4, 7, kc.pos)
		mp, err := Fit(x, Config{Kernel: kc.k, Components: 12, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		hw, err := features.WithProjectors(mp, np)
		if kc.pos {
			if !errors.Is(err, features.ErrNoProjector) {
				t.Errorf("%s: WithProjectors error %v, want ErrNoProjector", kc.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		// Fresh rows: a row equal to a landmark has cos θ = 1 to rounding,
		// where the arc-cosine kernels from a rounded cosine lose half the
		// digits (see kernel.Gram).
		y := inputs(30, 4, 8, kc.pos)
		a, _ := features.Apply(mp, y)
		b, err := features.Apply(hw, y)
		if err != nil || !mat.EqualApprox(a, b, 1e-9) {
			t.Errorf("%s: projector features differ (%v)", kc.name, err)
		}
	}
}

// Bad sizes, inputs and kernels are errors, not panics.
func TestErrors(t *testing.T) {
	x := gauss(10, 2, 1, 1)
	for name, f := range map[string]func() error{
		"too many landmarks": func() error { _, err := Fit(x, Config{Kernel: kernel.RBF{Gamma: 1}, Components: 11}); return err },
		"zero landmarks":     func() error { _, err := Fit(x, Config{Kernel: kernel.RBF{Gamma: 1}, Components: 0}); return err },
		"bad method": func() error {
			_, err := Fit(x, Config{Kernel: kernel.RBF{Gamma: 1}, Components: 2, Method: "x"})
			return err
		},
		"bad gamma":     func() error { _, err := Fit(x, Config{Kernel: kernel.RBF{Gamma: 0}, Components: 2}); return err },
		"negative chi2": func() error { _, err := Fit(x, Config{Kernel: kernel.Chi2{}, Components: 2}); return err },
		"zero kernel": func() error {
			_, err := New(kernel.ArcCos{Order: 1}, mat.NewDense(2, 2, nil), Options{})
			return err
		},
		"bad floor": func() error { _, err := New(kernel.RBF{Gamma: 1}, x, Options{Floor: 1}); return err },
		"NaN input": func() error {
			mp, err := New(kernel.RBF{Gamma: 1}, x, Options{})
			if err != nil {
				return nil
			}
			return mp.Transform(mat.NewDense(1, 10, nil), mat.NewDense(1, 2, []float64{math.NaN(), 0}))
		},
		"softmax overflow": func() error {
			mp, err := New(kernel.Softmax{}, x, Options{})
			if err != nil {
				return nil
			}
			return mp.Transform(mat.NewDense(1, 10, nil), mat.NewDense(1, 2, []float64{1e3, 1e3}))
		},
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A reservoir sample is uniform: over 4000 seeds each of 20 rows is kept
// in a sample of 5 with frequency 1/4 within 5 standard errors; the sample
// does not depend on how the rows are batched.
func TestReservoir(t *testing.T) {
	const n, size, seeds = 20, 5, 4000
	x := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, float64(i))
	}
	counts := make([]float64, n)
	for s := 0; s < seeds; s++ {
		a, _ := NewReservoir(size, uint64(s))
		b, _ := NewReservoir(size, uint64(s))
		if err := a.Add(x); err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < n; lo += 3 {
			if err := b.Add(x.Slice(lo, min(n, lo+3), 0, 1).(*mat.Dense)); err != nil {
				t.Fatal(err)
			}
		}
		sa, sb := a.Sample(), b.Sample()
		if !mat.Equal(sa, sb) {
			t.Fatalf("seed %d: batching changed the sample", s)
		}
		for i := 0; i < size; i++ {
			counts[int(sa.At(i, 0))]++
		}
	}
	p := float64(size) / n
	se := math.Sqrt(p * (1 - p) / seeds)
	for i, c := range counts {
		if f := c / seeds; math.Abs(f-p) > 5*se {
			t.Errorf("row %d kept with frequency %.4f, want %.4f ± %.4f", i, f, p, se)
		}
	}
}

// SampleBatches reads a stream of batches into a reservoir.
func TestSampleBatches(t *testing.T) {
	x := gauss(100, 3, 1, 1)
	s, err := SampleBatches(&batches{x: x}, 10, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	rv, _ := NewReservoir(10, 1)
	if err := rv.Add(x); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(s, rv.Sample()) {
		t.Error("SampleBatches differs from one reservoir pass")
	}
	if _, err := SampleBatches(&batches{x: x, fail: true}, 10, 7, 1); err == nil {
		t.Error("read error not returned")
	}
}

type batches struct {
	x    *mat.Dense
	at   int
	fail bool
}

func (b *batches) Read(max int) (*mat.Dense, []float64, error) {
	n, d := b.x.Dims()
	if b.fail && b.at > 0 {
		return nil, nil, fmt.Errorf("disk on fire")
	}
	if b.at >= n {
		return nil, nil, io.EOF
	}
	hi := min(n, b.at+max)
	out := mat.DenseCopyOf(b.x.Slice(b.at, hi, 0, d))
	b.at = hi
	return out, nil, nil
}
