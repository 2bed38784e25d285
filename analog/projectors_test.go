package analog

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/snnk"
)

// relDiff returns ‖a−b‖_F/‖b‖_F.
func relDiff(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, 2) / mat.Norm(b, 2)
}

// The projector seam lets the emulator run maps other than features.Map:
// an HRF estimator (several projections: two base maps and the sgn λ map)
// and an SNNK layer's input tower. With INT8 inputs only (Ideal) the
// hardware estimates stay within quantisation error of the float ones;
// with PCM noise they move, but stay close; and the noise is the
// emulator's (different seeds give different results).
func TestProjectorsDriveHybridAndSNNK(t *testing.T) {
	const d = 16
	x, _ := sampler.Gaussian{}.Sample(300, d, 5)
	x.Scale(0.3, x)
	q := x.Slice(0, 40, 0, d).(*mat.Dense)
	k := x.Slice(40, 80, 0, d).(*mat.Dense)

	hrf, err := hybrid.Angular(d, hybrid.MatchFLOPs(d, 256))
	if err != nil {
		t.Fatal(err)
	}
	exact, err := features.Matrix(hrf, q, k)
	if err != nil {
		t.Fatal(err)
	}
	est := func(cfg Config) *mat.Dense {
		p, err := features.PairWithProjectors(hrf, Projectors(x, cfg))
		if err != nil {
			t.Fatal(err)
		}
		m, err := features.Matrix(p, q, k)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	ideal, pcm1, pcm2 := est(Ideal()), est(PCM(1)), est(PCM(2))
	t.Logf("HRF relative difference: INT8 %.3g, PCM %.3g", relDiff(ideal, exact), relDiff(pcm1, exact))
	if e := relDiff(ideal, exact); e > 0.02 || e == 0 {
		t.Errorf("HRF on INT8-only hardware: relative difference %.3g, want in (0, 0.02]", e)
	}
	if e := relDiff(pcm1, exact); e > 0.25 || e < relDiff(ideal, exact) {
		t.Errorf("HRF on PCM hardware: relative difference %.3g", e)
	}
	if mat.Equal(pcm1, pcm2) {
		t.Error("PCM noise does not depend on the seed")
	}

	urf, err := snnk.NewURF(snnk.Cos, d, 256, snnk.DefaultA(d), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := sampler.Gaussian{}.Sample(4, d, 9)
	w.Scale(0.3, w)
	layer, err := snnk.NewLayer(urf, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := layer.Forward(q)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg Config
		max float64
	}{{Ideal(), 0.02}, {PCM(1), 0.25}} {
		tw, err := features.WithProjectors(urf, Projectors(x, c.cfg))
		if err != nil {
			t.Fatal(err)
		}
		hw := &snnk.Layer{T: tw.(snnk.Towers), A: layer.A}
		got, err := hw.Forward(q)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("SNNK relative difference %.3g", relDiff(got, want))
		if e := relDiff(got, want); e > c.max || e == 0 || math.IsNaN(e) {
			t.Errorf("SNNK layer on hardware: relative difference %.3g, want in (0, %g]", e, c.max)
		}
	}
}
