package features

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/sampler"
)

// exactProjector computes XWᵀ by a plain matrix product: a projector that
// must leave every map's features unchanged.
type exactProjector struct{ w *mat.Dense }

func (p exactProjector) ProjectFrom(dst, x *mat.Dense, _ int) error {
	dst.Mul(x, p.w.T())
	return nil
}

func exactProjectors(w *mat.Dense) (Projector, error) { return exactProjector{mat.DenseCopyOf(w)}, nil }

func testRows(n, d int, seed uint64) *mat.Dense {
	x, err := sampler.Gaussian{}.Sample(n, d, seed)
	if err != nil {
		panic(err)
	}
	x.Scale(0.5, x)
	return x
}

func TestSymmetricPair(t *testing.T) {
	mp, err := New(Config{Kernel: "rbf", Gamma: 0.5, Features: 64, Seed: 3}, 5)
	if err != nil {
		t.Fatal(err)
	}
	p := Symmetric(mp)
	if got, ok := AsTransformer(p); !ok || got != Transformer(mp) {
		t.Fatal("AsTransformer does not return the map")
	}
	x := testRows(7, 5, 1)
	y := testRows(9, 5, 2)
	q, err := Queries(p, x)
	if err != nil {
		t.Fatal(err)
	}
	z, err := Apply(mp, x)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(q, z) {
		t.Error("symmetric query side differs from the map")
	}
	m, err := Matrix(p, x, y)
	if err != nil {
		t.Fatal(err)
	}
	est, err := EstimatePair(p, x.RawRowView(2), y.RawRowView(4))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(est-m.At(2, 4)) > 1e-14 {
		t.Errorf("EstimatePair %v, Matrix %v", est, m.At(2, 4))
	}
	pe, err := PairEstimates(p, x, testRows(7, 5, 2))
	if err != nil || len(pe) != 7 {
		t.Fatalf("PairEstimates: %v", err)
	}
	if _, err := PairEstimates(p, x, y); err == nil {
		t.Error("PairEstimates accepted 7 and 9 rows")
	}
	if _, err := Queries(p, testRows(3, 4, 1)); err == nil {
		t.Error("wrong input width accepted")
	}
}

// FromProjection on the drawn projection must rebuild the map New drew,
// feature for feature.
func TestFromProjectionMatchesNew(t *testing.T) {
	for _, cfg := range []Config{
		{Kernel: "rbf", Gamma: 0.3, Features: 32, Seed: 4},
		{Kernel: "rbf", Form: "sincos", Gamma: 0.3, Features: 32, Seed: 4},
		{Kernel: "softmax", Features: 32, Seed: 4},
		{Kernel: "softmax", Form: "hyperbolic", Features: 32, Seed: 4},
		{Kernel: "arccos1", Features: 32, Seed: 4},
	} {
		mp, err := New(cfg, 6)
		if err != nil {
			t.Fatal(err)
		}
		w := mat.DenseCopyOf(mp.W())
		if cfg.Kernel == "rbf" {
			w.Scale(1/math.Sqrt(2*cfg.Gamma), w)
		}
		given, err := FromProjection(cfg, w)
		if err != nil {
			t.Fatal(err)
		}
		x := testRows(5, 6, 9)
		a, _ := Apply(mp, x)
		b, err := Apply(given, x)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.EqualApprox(a, b, 1e-13) {
			t.Errorf("%s/%s: FromProjection features differ from New's", cfg.Kernel, cfg.Form)
		}
	}
	w := testRows(8, 3, 1)
	if _, err := FromProjection(Config{Kernel: "softmax", Form: "trig", Features: 8}, w); err == nil {
		t.Error("trig with 8 projections accepted 8 features (needs 16)")
	}
}

func TestProjectorSeam(t *testing.T) {
	mp, err := New(Config{Kernel: "softmax", Features: 48, Seed: 2}, 4)
	if err != nil {
		t.Fatal(err)
	}
	hw, err := WithProjectors(mp, exactProjectors)
	if err != nil {
		t.Fatal(err)
	}
	x := testRows(10, 4, 3)
	a, _ := Apply(mp, x)
	b, err := Apply(hw, x)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(a, b, 1e-12) {
		t.Error("an exact projector changed the features")
	}
	sp, err := PairWithProjectors(Symmetric(mp), exactProjectors)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := AsTransformer(sp); !ok {
		t.Error("projected symmetric pair is no longer symmetric")
	}
	broken := errors.New("no device")
	if _, err := WithProjectors(mp, func(*mat.Dense) (Projector, error) { return nil, broken }); !errors.Is(err, broken) {
		t.Errorf("projector factory error lost: %v", err)
	}
	if _, err := WithProjectors(plainMap{}, exactProjectors); !errors.Is(err, ErrNoProjector) {
		t.Errorf("map without a seam: %v", err)
	}
}

type plainMap struct{}

func (plainMap) Transform(dst, x *mat.Dense) error { return nil }
func (plainMap) Dim() int                          { return 1 }
func (plainMap) InputDim() int                     { return 1 }

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	newRBF := func(o Options) (Pair, error) {
		mp, err := New(Config{Kernel: "rbf", Gamma: o.Gamma, Features: o.Features, Sampler: o.Sampler, Seed: o.Seed}, o.InputDim)
		if err != nil {
			return nil, err
		}
		return Symmetric(mp), nil
	}
	if err := r.Register(Entry{Name: "rbf", Aliases: []string{"RFF"}, New: newRBF}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(Entry{Name: "rff", New: newRBF}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate alias accepted: %v", err)
	}
	if err := r.Register(Entry{Name: "asym", Asymmetric: true, New: newRBF}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(Entry{Name: "nil"}); err == nil {
		t.Error("entry without constructor accepted")
	}
	if got := r.Names(); len(got) != 2 || got[0] != "rbf" || got[1] != "asym" {
		t.Errorf("names %v", got)
	}
	m, err := r.Map(" Rff ", Options{InputDim: 3, Features: 16, Gamma: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != 16 || m.InputDim() != 3 {
		t.Errorf("map %d→%d", m.InputDim(), m.Dim())
	}
	if _, err := r.Map("asym", Options{InputDim: 3, Features: 16, Gamma: 1}); err == nil {
		t.Error("asymmetric entry built as a single map")
	}
	if _, err := r.Pair("nope", Options{InputDim: 3, Features: 16}); err == nil || !strings.Contains(err.Error(), "rbf, asym") {
		t.Errorf("unknown name: %v", err)
	}
	for _, o := range []Options{{InputDim: 0, Features: 4}, {InputDim: 2, Features: 0}} {
		if _, err := r.Pair("rbf", o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if err := r.RegisterDecoder(SpecKind, DecodeSpec); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterDecoder(SpecKind, DecodeSpec); err == nil {
		t.Error("decoder registered twice")
	}
	kind, spec, err := Encode(m)
	if err != nil || kind != SpecKind {
		t.Fatalf("Encode: %q %v", kind, err)
	}
	back, err := r.Decode(kind, spec)
	if err != nil {
		t.Fatal(err)
	}
	x := testRows(4, 3, 5)
	a, _ := Apply(m, x)
	b, _ := Apply(back, x)
	if !mat.Equal(a, b) {
		t.Error("decoded map differs")
	}
	if _, err := r.Decode("martian", json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "features") {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := r.Decode(SpecKind, json.RawMessage(`{"kernel":"rbf"`)); err == nil {
		t.Error("truncated spec decoded")
	}
	if _, _, err := Encode(plainMap{}); err == nil {
		t.Error("map without an encoder encoded")
	}
}
