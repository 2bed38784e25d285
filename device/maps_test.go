package device

import (
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/nystrom"
)

// randRows returns an n×d matrix of N(0, scale²) entries (abs: |N|).
func randRows(seed uint64, n, d int, scale float64, abs bool) *mat.Dense {
	r := rng.New(seed)
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			v := scale * r.NormFloat64()
			if abs {
				v = math.Abs(v)
			}
			x.Set(i, j, v)
		}
	}
	return x
}

// relDiff returns max|got − want| / max|want| (the largest difference
// relative to the scale of want), skipping the entries where skip says so.
func relDiff(got, want *mat.Dense, skip func(i, j int) bool) float64 {
	n, d := want.Dims()
	var scale, diff float64
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if skip != nil && skip(i, j) {
				continue
			}
			scale = math.Max(scale, math.Abs(want.At(i, j)))
			diff = math.Max(diff, math.Abs(got.At(i, j)-want.At(i, j)))
		}
	}
	if scale == 0 {
		return diff
	}
	return diff / scale
}

// projectionScale returns max_ij Σ_l |W_jl x_il| + |b_j|, the largest
// magnitude of the terms of an argument w_j·x_i + b_j of map mp, which
// bounds the rounding error of the argument.
func projectionScale(mp *features.Map, x *mat.Dense) float64 {
	w, b := mp.W(), mp.Spec().B
	n, d := x.Dims()
	m, _ := w.Dims()
	var a float64
	for i := range n {
		for j := range m {
			var s float64
			for l := range d {
				s += math.Abs(w.At(j, l) * x.At(i, l))
			}
			if b != nil {
				s += math.Abs(b[j])
			}
			a = math.Max(a, s)
		}
	}
	return a
}

// mapCase is a map of the catalog to compare on the devices.
type mapCase struct {
	name string
	abs  bool // inputs must be non-negative (skewed χ²)
}

var mapCases = []mapCase{
	{name: "rbf"}, {name: "rbf/sincos"}, {name: "rbf/positive"}, {name: "rbf/hyperbolic"},
	{name: "positive"}, {name: "trig"}, {name: "hyperbolic"},
	{name: "arccos0"}, {name: "arccos1"}, {name: "arccos2"},
	{name: "snnk/relu"}, {name: "skewed-chi2", abs: true},
	{name: "nystrom"}, {name: "nystrom/softmax"},
}

// catalogMap builds a map of the catalog for d inputs and D features.
func catalogMap(t *testing.T, name string, d, D int) features.Transformer {
	t.Helper()
	mp, err := catalog.Default().Map(name, features.Options{InputDim: d, Features: D, Gamma: 0.3, Seed: 11,
		Data: randRows(5, 4*D, d, 0.6, false)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return mp
}

// TestMapTransform compares the device features of every map with a
// device form with the map's CPU Transform: float64 graphs to 1e-12 of
// the features' scale (the same formulas in the same order; only the
// summation order of the projection and the elementary functions'
// last bits differ), float32 graphs within the float32 tolerance. 37 rows
// in batches of 16 exercise full batches and a padded tail.
func TestMapTransform(t *testing.T) {
	const n, d, D = 37, 5, 24
	cases := append([]mapCase(nil), mapCases...)
	for _, dev := range testDevices(t) {
		for _, c := range cases {
			src := catalogMap(t, c.name, d, D)
			x := randRows(3, n, d, 0.5, c.abs)
			want, err := features.Apply(src, x)
			if err != nil {
				t.Fatal(err)
			}
			m, err := dev.Map(src)
			if err != nil {
				t.Fatalf("%s on %v: %v", c.name, dev, err)
			}
			if m, err = m.WithBatchRows(16); err != nil {
				t.Fatal(err)
			}
			got := mat.NewDense(n, src.Dim(), nil)
			if err := m.Transform(got, x); err != nil {
				t.Fatalf("%s on %v: %v", c.name, dev, err)
			}
			var skip func(i, j int) bool
			if c.name == "arccos0" && dev.Float32() {
				skip = nearZeroProjection(src.(*features.Map), x)
			}
			tol := tolerance(dev, 1e-12)
			if e := relDiff(got, want, skip); !(e <= tol) {
				t.Errorf("%s on %v: features differ from the CPU map by %.3g of their scale, tolerance %.1g", c.name, dev, e, tol)
			}
		}
	}
}

// nearZeroProjection reports the entries whose projection wᵀx is within
// 10⁻³‖w‖‖x‖ of zero, where a float32 (or TF32) projection may take the
// other side of the Heaviside step.
func nearZeroProjection(mp *features.Map, x *mat.Dense) func(i, j int) bool {
	var a mat.Dense
	a.Mul(x, mp.W().T())
	return func(i, j int) bool {
		nw := mat.Norm(mp.W().RowView(j), 2)
		nx := mat.Norm(x.RowView(i), 2)
		return math.Abs(a.At(i, j)) <= 1e-3*nw*nx
	}
}

// TestMapPolynomialNystrom compares the Nyström map of the polynomial
// kernel (built directly: the catalog's polynomial maps are sketches).
func TestMapPolynomialNystrom(t *testing.T) {
	const n, d = 20, 4
	land := randRows(8, 12, d, 0.7, false)
	src, err := nystrom.New(kernel.Polynomial{Gamma: 0.5, Coef0: 1, Degree: 3}, land, nystrom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := randRows(9, n, d, 0.7, false)
	want, err := features.Apply(src, x)
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range testDevices(t) {
		got, err := dev.Transform(t.Context(), src, x)
		if err != nil {
			t.Fatalf("%v: %v", dev, err)
		}
		if e, tol := relDiff(got, want, nil), tolerance(dev, 1e-12); !(e <= tol) {
			t.Errorf("%v: polynomial Nyström features differ by %.3g, tolerance %.1g", dev, e, tol)
		}
	}
}

// TestMapScaled compares TransformScaled (features and log-scales) with
// the CPU map's for the exponential and trigonometric forms, on inputs
// large enough that plain features overflow: both the CPU and the device
// Transform report features.ErrOverflow and the scaled features agree.
//
// In float32 the error is set by the projections' arguments, not by the
// length of a sum: the argument w_j·x_i + b_j, computed from inputs, W
// and b rounded to float32 by d products and d sums, is off by at most
// (d+3)·2⁻²⁴·A, A = max_ij Σ_l |W_jl x_il| + |b_j| (Higham's γ_d bound plus
// one rounding of each factor and of the bias), and a cosine or an
// exponential relative to the row's largest feature passes that error on
// with a factor of at most one. At the inputs of scale 20, A ≈ 200 and
// the bound is 8·10⁻⁵ (measured: 1.6·10⁻⁵ for rbf, 1.1·10⁻⁵ for trig,
// at most 1.6·2⁻²⁴·A in every case); the float32 tolerance is the larger
// of tolerance() and this bound.
func TestMapScaled(t *testing.T) {
	const n, d, D = 9, 4, 16
	for _, name := range []string{"positive", "hyperbolic", "trig", "rbf/positive", "rbf"} {
		src := catalogMap(t, name, d, D).(*features.Map)
		for _, scale := range []float64{0.5, 20} {
			x := randRows(4, n, d, scale, false)
			argBound := (d + 3) * 0x1p-24 * projectionScale(src, x)
			want := mat.NewDense(n, D, nil)
			wantS, err := src.TransformScaled(want, x)
			if err != nil {
				t.Fatal(err)
			}
			cpuErr := src.Transform(mat.NewDense(n, D, nil), x)
			for _, dev := range testDevices(t) {
				m, err := dev.Map(src)
				if err != nil {
					t.Fatal(err)
				}
				got := mat.NewDense(n, D, nil)
				gotS, err := m.TransformScaled(got, x)
				if err != nil {
					t.Fatalf("%s ×%v on %v: %v", name, scale, dev, err)
				}
				tol := tolerance(dev, 1e-12)
				if dev.Float32() {
					tol = math.Max(tol, argBound)
				}
				if e := relDiff(got, want, nil); !(e <= tol) {
					t.Errorf("%s ×%v on %v: scaled features differ by %.3g, tolerance %.1g", name, scale, dev, e, tol)
				}
				for i := range gotS {
					if e := math.Abs(gotS[i]-wantS[i]) / math.Max(1, math.Abs(wantS[i])); !(e <= tol) {
						t.Errorf("%s ×%v on %v: log-scale of row %d is %v, want %v", name, scale, dev, i, gotS[i], wantS[i])
						break
					}
				}
				err = m.Transform(mat.NewDense(n, D, nil), x)
				if errors.Is(cpuErr, features.ErrOverflow) && !errors.Is(err, features.ErrOverflow) {
					t.Errorf("%s ×%v on %v: Transform = %v, the CPU map overflows", name, scale, dev, err)
				}
				if cpuErr == nil && !dev.Float32() && err != nil {
					t.Errorf("%s ×%v on %v: Transform: %v", name, scale, dev, err)
				}
			}
		}
	}
}

// TestMapErrors checks the errors of maps without a device form, of bad
// shapes, non-finite inputs and inputs outside a map's domain.
func TestMapErrors(t *testing.T) {
	dev, err := Open(Go)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"poly2", "chi2", "nystrom/arccos1"} {
		_, err := dev.Map(catalogMap(t, name, 3, 16))
		if err == nil || !strings.Contains(err.Error(), "has no device form") {
			t.Errorf("%s: Map = %v, want an error naming the map with no device form", name, err)
		}
	}
	m, err := dev.Map(catalogMap(t, "rbf", 3, 8))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Transform(mat.NewDense(2, 8, nil), mat.NewDense(2, 4, nil)); err == nil {
		t.Error("Transform of 4 columns into a 3-input map succeeded")
	}
	if err := m.Transform(mat.NewDense(3, 8, nil), mat.NewDense(2, 3, nil)); err == nil {
		t.Error("Transform into a destination of the wrong size succeeded")
	}
	x := mat.NewDense(2, 3, []float64{0, 1, 2, 3, math.NaN(), 5})
	if err := m.Transform(mat.NewDense(2, 8, nil), x); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("Transform of a NaN in row 1 = %v", err)
	}
	if _, err := m.WithBatchRows(0); err == nil {
		t.Error("WithBatchRows(0) succeeded")
	}
	sk, err := dev.Map(catalogMap(t, "skewed-chi2", 3, 8))
	if err != nil {
		t.Fatal(err)
	}
	if err := sk.Transform(mat.NewDense(1, 8, nil), mat.NewDense(1, 3, []float64{0, -2, 0})); err == nil {
		t.Error("skewed χ² of an input below −c succeeded")
	}
}

// TestProjectors runs the Gaussian hybrid estimator's projections on the
// device through the projector seam and compares its query and key
// features with the CPU estimator's.
func TestProjectors(t *testing.T) {
	const n, d, D = 11, 4, 64
	p, err := catalog.Default().Pair("gaussian", features.Options{InputDim: d, Features: D, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	x := randRows(6, n, d, 0.4, false)
	wantQ, err := features.Queries(p, x)
	if err != nil {
		t.Fatal(err)
	}
	wantK, err := features.Keys(p, x)
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range testDevices(t) {
		dp, err := features.PairWithProjectors(p, dev.Projectors())
		if err != nil {
			t.Fatal(err)
		}
		q, err := features.Queries(dp, x)
		if err != nil {
			t.Fatal(err)
		}
		k, err := features.Keys(dp, x)
		if err != nil {
			t.Fatal(err)
		}
		tol := tolerance(dev, 1e-12)
		if e := math.Max(relDiff(q, wantQ, nil), relDiff(k, wantK, nil)); !(e <= tol) {
			t.Errorf("%v: hybrid features with device projections differ by %.3g, tolerance %.1g", dev, e, tol)
		}
	}
}

// TestProjectionPrecision measures the error of a device projection XWᵀ
// with k = 256 terms against float64 on the host, relative to the
// largest product. Float64 graphs agree to 1e-13; float32 arithmetic
// gives about 2⁻²⁴·√k ≈ 10⁻⁶ (asserted below 10⁻⁵ on the pure-Go
// backend); TF32 products, XLA's default for float32 dots on a GPU, give
// about 2⁻¹¹ ≈ 5·10⁻⁴, within tolerance() but a hundred times more
// (scripts/gpu_run.sh turns TF32 off; the log says which held).
func TestProjectionPrecision(t *testing.T) {
	const n, m, k = 64, 128, 256
	x := randRows(41, n, k, 1, false)
	w := randRows(42, m, k, 1, false)
	var want mat.Dense
	want.Mul(x, w.T())
	for _, dev := range testDevices(t) {
		p, err := dev.Projectors()(w)
		if err != nil {
			t.Fatal(err)
		}
		got := mat.NewDense(n, m, nil)
		if err := p.ProjectFrom(got, x, 0); err != nil {
			t.Fatal(err)
		}
		e := relDiff(got, &want, nil)
		tol := tolerance(dev, 1e-13)
		t.Logf("%v: projection error %.3g of the largest product", dev, e)
		if !(e <= tol) {
			t.Errorf("%v: projection error %.3g, tolerance %.1g", dev, e, tol)
		}
	}
}
