package device

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/prf"
)

// prfArgScale returns max_ij Σ_l |W_jl x_il| + |off_j| + ½Σ_l |x_il (Gx_i)_l|
// (G = I when gram is nil): the largest magnitude of the terms of an
// exponent of a prf map, which bounds its rounding error (see
// TestMapScaled: in float32 the exponent is off by at most (d+3)·2⁻²⁴
// times this, and the features relative to a row's largest by the same).
func prfArgScale(w *mat.Dense, off []float64, gram, x *mat.Dense) float64 {
	n, d := x.Dims()
	m, _ := w.Dims()
	var a float64
	for i := range n {
		xi := x.RawRowView(i)
		var q float64
		for l := range d {
			gx := xi[l]
			if gram != nil {
				gx = 0
				for k := range d {
					gx += math.Abs(gram.At(l, k) * xi[k])
				}
			}
			q += math.Abs(xi[l] * gx)
		}
		for j := range m {
			s := math.Abs(off[j]) + 0.5*q
			for l := range d {
				s += math.Abs(w.At(j, l) * xi[l])
			}
			a = math.Max(a, s)
		}
	}
	return a
}

// prfTolerance is the tolerance of a prf form on dev for inputs of
// argument scale a (prfArgScale): tolerance() in float64, at least the
// rounding bound of the exponent in float32.
func prfTolerance(dev *Device, d int, a float64) float64 {
	tol := tolerance(dev, 1e-12)
	if dev.Float32() {
		tol = math.Max(tol, float64(d+3)*0x1p-24*a)
	}
	return tol
}

// compareScaled checks that Transform and TransformScaled of got (a
// device map) equal those of want (the CPU side) on x within tol.
func compareScaled(t *testing.T, what string, got, want features.ScaledTransformer, x *mat.Dense, tol float64) {
	t.Helper()
	n, _ := x.Dims()
	D := want.Dim()
	wz, gz := mat.NewDense(n, D, nil), mat.NewDense(n, D, nil)
	if err := want.Transform(wz, x); err != nil {
		t.Fatalf("%s: CPU Transform: %v", what, err)
	}
	if err := got.Transform(gz, x); err != nil {
		t.Fatalf("%s: Transform: %v", what, err)
	}
	if e := relDiff(gz, wz, nil); !(e <= tol) {
		t.Errorf("%s: features differ from the CPU map by %.3g of their scale, tolerance %.1g", what, e, tol)
	}
	wantS, err := want.TransformScaled(wz, x)
	if err != nil {
		t.Fatal(err)
	}
	gotS, err := got.TransformScaled(gz, x)
	if err != nil {
		t.Fatalf("%s: TransformScaled: %v", what, err)
	}
	if e := relDiff(gz, wz, nil); !(e <= tol) {
		t.Errorf("%s: scaled features differ by %.3g, tolerance %.1g", what, e, tol)
	}
	for i := range gotS {
		if e := math.Abs(gotS[i]-wantS[i]) / math.Max(1, math.Abs(wantS[i])); !(e <= tol) {
			t.Errorf("%s: log-scale of row %d is %v, want %v", what, i, gotS[i], wantS[i])
			break
		}
	}
}

// TestMapPRF compares the device forms of the fitted OPRF (FAVOR++) and
// SDERF (FAVOR#) maps with their CPU Transform and TransformScaled, on
// inputs of the scale of the rows they were fitted to (0.6) and on
// inputs five times larger, whose features span hundreds of orders of
// magnitude: float64 graphs to 1e-12 (the same formulas in the same
// order), float32 graphs within the rounding bound of the exponents.
// 37 rows in batches of 16 exercise a padded tail.
func TestMapPRF(t *testing.T) {
	const n, d, D = 37, 5, 24
	for _, name := range []string{prf.OPRF, prf.SDERF} {
		src := catalogMap(t, name, d, D).(*prf.Map)
		w, off := src.Projection()
		for _, scale := range []float64{0.5, 3} {
			x := randRows(3, n, d, scale, false)
			for _, dev := range testDevices(t) {
				m, err := dev.Map(src)
				if err != nil {
					t.Fatalf("%s on %v: %v", name, dev, err)
				}
				if m, err = m.WithBatchRows(16); err != nil {
					t.Fatal(err)
				}
				tol := prfTolerance(dev, d, prfArgScale(w, off, nil, x))
				compareScaled(t, name+" on "+dev.String(), m, src, x, tol)
			}
		}
	}
}

// TestPairPRF compares the device ADERF pair (a form for each side) with
// the CPU pair: query and key features, plain and scaled, and the kernel
// estimates Query(x)ᵀKey(y), within the tolerances of TestMapPRF; a
// symmetric pair compiles its one map; the hybrid pairs are refused, and
// a side of the ADERF pair cannot be stored.
func TestPairPRF(t *testing.T) {
	const n, d, D = 21, 4, 32
	p, err := catalog.Default().Pair(prf.ADERF, features.Options{InputDim: d, Features: D, Seed: 7,
		Data: randRows(5, 200, d, 0.6, false)})
	if err != nil {
		t.Fatal(err)
	}
	src := p.(*prf.Pair)
	x := randRows(6, n, d, 0.5, false)
	y := randRows(8, n, d, 0.5, false)
	want, err := features.Matrix(src, x, y)
	if err != nil {
		t.Fatal(err)
	}
	qw, qoff, qg := src.QueryProjection()
	kw, koff, kg := src.KeyProjection()
	for _, dev := range testDevices(t) {
		dp, err := dev.Pair(src)
		if err != nil {
			t.Fatalf("%v: %v", dev, err)
		}
		if dp.Dim() != D || dp.InputDim() != d {
			t.Fatalf("%v: pair of %d features of %d inputs, want %d of %d", dev, dp.Dim(), dp.InputDim(), D, d)
		}
		qtol := prfTolerance(dev, d, prfArgScale(qw, qoff, qg, x))
		ktol := prfTolerance(dev, d, prfArgScale(kw, koff, kg, y))
		compareScaled(t, "aderf query on "+dev.String(), dp.QueryMap(), pairSide{src, false}, x, qtol)
		compareScaled(t, "aderf key on "+dev.String(), dp.KeyMap(), pairSide{src, true}, y, ktol)
		// Each estimate is a sum of D products of features with relative
		// errors within qtol and ktol, all positive: within qtol + ktol.
		got, err := features.Matrix(dp, x, y)
		if err != nil {
			t.Fatal(err)
		}
		if e, tol := relDiff(got, want, nil), qtol+ktol; !(e <= tol) {
			t.Errorf("%v: ADERF estimates differ by %.3g of their scale, tolerance %.1g", dev, e, tol)
		}
	}
	dev, err := Open(Go)
	if err != nil {
		t.Fatal(err)
	}
	dp, err := dev.Pair(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dp.QueryMap().EncodeSpec(); err == nil {
		t.Error("a side of the ADERF pair encodes for a model file")
	}
	if again, err := dev.WithFloat32().Pair(dp); err != nil || again.QueryMap().Dim() != D {
		t.Errorf("recompiling a device pair: %v", err)
	}
	sym, err := catalog.Default().Pair(prf.OPRF, features.Options{InputDim: d, Features: D, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if sp, err := dev.Pair(sym); err != nil || sp.QueryMap() != sp.KeyMap() {
		t.Errorf("symmetric pair: %v, want one map for both sides", err)
	}
	hyb, err := catalog.Default().Pair("gaussian", features.Options{InputDim: d, Features: D, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dev.Pair(hyb); err == nil || !strings.Contains(err.Error(), "has no device form") {
		t.Errorf("hybrid pair: %v, want an error naming the pair with no device form", err)
	}
}

// TestPredictPRF fits classifiers with the OPRF and SDERF maps (fitted to
// the standardised training rows), stores and reloads them (model.Save,
// model.LoadWith with the catalog's decoders) and compares the device
// predictions of the loaded model with its CPU predictions. A score sums
// D features times weights plus an intercept: with features of relative
// error ε
// (prfTolerance of the standardised rows) it is off by at most ε·κ of the
// scores' scale, κ = max_ik (Σ_j |z_ij W_jk| + |b_k|) / max_ik |score_ik|, the
// tolerance (ε = 10⁻¹² in float64). Float64 graphs give the same classes;
// float32 ones change at most 1% of them (rows whose two best scores are
// that close).
func TestPredictPRF(t *testing.T) {
	train, test := letterSets(t)
	sc, err := data.FitScaler(train.X)
	if err != nil {
		t.Fatal(err)
	}
	xs, err := sc.Transform(train.X)
	if err != nil {
		t.Fatal(err)
	}
	_, d := xs.Dims()
	n, _ := test.X.Dims()
	for _, name := range []string{prf.OPRF, prf.SDERF} {
		mp, err := catalog.Default().Map(name, features.Options{InputDim: d, Features: 128, Seed: 5, Data: xs})
		if err != nil {
			t.Fatal(err)
		}
		fitted, err := model.Fit(context.Background(), model.Options{Task: model.Classification, Lambda: 0.1, Standardize: true, Map: mp}, train)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := fitted.Save(&buf); err != nil {
			t.Fatal(err)
		}
		m, err := model.LoadWith(&buf, catalog.Default())
		if err != nil {
			t.Fatalf("%s: loading the stored model: %v", name, err)
		}
		if _, ok := m.Map.(*prf.Map); !ok {
			t.Fatalf("%s: the stored model's map is a %T", name, m.Map)
		}
		want, err := m.Predict(test.X)
		if err != nil {
			t.Fatal(err)
		}
		wantC := linear.Argmax(want)
		z, err := m.Features(test.X)
		if err != nil {
			t.Fatal(err)
		}
		var terms, scale float64
		_, k := want.Dims()
		for i := range n {
			for c := range k {
				s := math.Abs(m.Linear.B[c])
				for j, v := range z.RawRowView(i) {
					s += math.Abs(v * m.Linear.W.At(j, c))
				}
				terms = math.Max(terms, s)
				scale = math.Max(scale, math.Abs(want.At(i, c)))
			}
		}
		kappa := terms / scale
		xt, err := m.Scaler.Transform(test.X)
		if err != nil {
			t.Fatal(err)
		}
		w, off := m.Map.(*prf.Map).Projection()
		argScale := prfArgScale(w, off, nil, xt)
		for _, dev := range testDevices(t) {
			p, err := dev.Predictor(m)
			if err != nil {
				t.Fatalf("%s on %v: %v", name, dev, err)
			}
			got, err := p.Predict(context.Background(), test.X)
			if err != nil {
				t.Fatalf("%s on %v: %v", name, dev, err)
			}
			tol := prfTolerance(dev, d, argScale) * kappa
			if e := relDiff(got, want, nil); !(e <= tol) {
				t.Errorf("%s on %v: scores differ from the CPU's by %.3g of their scale, tolerance %.2g (κ %.3g)", name, dev, e, tol, kappa)
			}
			gotC := linear.Argmax(got)
			changed := 0
			for i := range gotC {
				if gotC[i] != wantC[i] {
					changed++
				}
			}
			if limit := 0.01 * float64(n); (!dev.Float32() && changed > 0) || float64(changed) > limit {
				t.Errorf("%s on %v: %d of %d classes differ from the CPU's", name, dev, changed, n)
			}
		}
	}
}
