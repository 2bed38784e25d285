package hrf

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/sampler"
)

// fixedPair is a Pair with given query and key features, whatever the
// inputs: its estimates are qf·kfᵀ.
type fixedPair struct{ qf, kf *mat.Dense }

func (p fixedPair) Dim() int                      { _, c := p.qf.Dims(); return c }
func (p fixedPair) InputDim() int                 { return 2 }
func (p fixedPair) Query(dst, _ *mat.Dense) error { dst.Copy(p.qf); return nil }
func (p fixedPair) Key(dst, _ *mat.Dense) error   { dst.Copy(p.kf); return nil }

// TestSoftmaxQualityExact checks the metrics against a hand computation:
// one query with logits 0, 1, 2 over three classes, estimates 1, 1, −1.
func TestSoftmaxQualityExact(t *testing.T) {
	q := mat.NewDense(1, 2, []float64{1, 0})
	c := mat.NewDense(3, 2, []float64{0, 0, 1, 0, 2, 0})
	p := fixedPair{qf: mat.NewDense(1, 1, []float64{1}), kf: mat.NewDense(3, 1, []float64{1, 1, -1})}
	w1, ks, neg, err := SoftmaxQuality(p, q, c)
	if err != nil {
		t.Fatal(err)
	}
	z := 1 + math.E + math.E*math.E
	P := []float64{1 / z, (1 + math.E) / z, 1}
	Phat := []float64{1, 2, 1} // cumulative of (1, 1, −1)/1
	var wantW1, wantKS float64
	for j := range P {
		d := math.Abs(P[j] - Phat[j])
		wantW1 += d
		wantKS = math.Max(wantKS, d)
	}
	if math.Abs(w1-wantW1) > 1e-15 || math.Abs(ks-wantKS) > 1e-15 || neg != 1.0/3 {
		t.Errorf("got W1 %v KS %v negative %v, want %v %v %v", w1, ks, neg, wantW1, wantKS, 1.0/3)
	}

	// The exact softmax weights as estimates give zero distances.
	e := mat.NewDense(3, 1, []float64{1, math.E, math.E * math.E})
	w1, ks, neg, err = SoftmaxQuality(fixedPair{qf: mat.NewDense(1, 1, []float64{2}), kf: e}, q, c)
	if err != nil || w1 > 1e-15 || ks > 1e-15 || neg != 0 {
		t.Errorf("exact estimates: W1 %v KS %v negative %v, %v", w1, ks, neg, err)
	}

	// Errors: a zero normaliser and mismatched shapes.
	zero := fixedPair{qf: mat.NewDense(1, 1, []float64{1}), kf: mat.NewDense(3, 1, []float64{1, -2, 1})}
	if _, _, _, err := SoftmaxQuality(zero, q, c); err == nil || !strings.Contains(err.Error(), "normaliser") {
		t.Errorf("zero normaliser: %v", err)
	}
	if _, _, _, err := SoftmaxQuality(p, q, mat.NewDense(3, 3, nil)); err == nil {
		t.Error("mismatched columns accepted")
	}
}

// TestSoftmaxQualityConverges checks that the Wasserstein distance of
// trigonometric features falls with the number of features (as 1/√m:
// fourfold or more from m = 16 to 4096, 16 expected) and that positive
// features give no negative estimates.
func TestSoftmaxQualityConverges(t *testing.T) {
	q, err := sampler.Gaussian{}.Sample(20, 6, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sampler.Gaussian{}.Sample(50, 6, 2)
	if err != nil {
		t.Fatal(err)
	}
	q.Scale(0.3, q)
	c.Scale(0.3, c)
	quality := func(form string, m int) (w1, ks, neg float64) {
		mp, err := features.New(features.Config{Kernel: "softmax", Form: form, Features: m, Seed: 3}, 6)
		if err != nil {
			t.Fatal(err)
		}
		w1, ks, neg, err = SoftmaxQuality(features.Symmetric(mp), q, c)
		if err != nil || ks > w1+1e-12 || neg < 0 || neg > 1 {
			t.Fatalf("%s m=%d: metrics %v %v %v %v", form, m, w1, ks, neg, err)
		}
		return w1, ks, neg
	}
	a, _, _ := quality("trig", 16)
	b, _, _ := quality("trig", 4096)
	if !(b < a/4) {
		t.Errorf("W1 %v at m=16, %v at m=4096: want a fall of 4x or more", a, b)
	}
	if _, _, neg := quality("positive", 64); neg != 0 {
		t.Errorf("positive features gave %v negative estimates", neg)
	}
}
