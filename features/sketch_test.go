package features

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/kernelkit/kernelkit/kernel"
)

// meanSE returns the mean of v and its standard error.
func meanSE(v []float64) (mean, se float64) {
	m, sd := stat.MeanStdDev(v, nil)
	return m, sd / math.Sqrt(float64(len(v)))
}

// TensorSketch is an unbiased estimator of (γxᵀy + c)^p: over 2000
// independent hash draws the mean estimate is within 5 standard errors of
// the exact kernel, for homogeneous and inhomogeneous kernels of degrees
// 1 to 4.
func TestTensorSketchUnbiased(t *testing.T) {
	x := []float64{0.5, -0.3, 0.8, 0.1, -0.6}
	y := []float64{0.4, 0.2, 0.7, -0.5, -0.1}
	const draws = 2000
	for _, tc := range []struct {
		degree       int
		gamma, coef0 float64
		features     int
	}{
		{1, 1, 0, 8},
		{2, 1, 0, 16},
		{2, 0.5, 1, 16},
		{3, 1, 1, 32},
		{4, 2, 0.5, 20}, // D not a power of two
	} {
		t.Run(fmt.Sprintf("p%d_g%g_c%g", tc.degree, tc.gamma, tc.coef0), func(t *testing.T) {
			k := kernel.Polynomial{Gamma: tc.gamma, Coef0: tc.coef0, Degree: tc.degree}
			for _, pair := range [][2][]float64{{x, y}, {x, x}} {
				est := make([]float64, draws)
				for s := range est {
					ts, err := NewTensorSketch(TensorSketchConfig{Degree: tc.degree, Gamma: tc.gamma, Coef0: tc.coef0,
						Features: tc.features, Seed: uint64(s)}, len(x))
					if err != nil {
						t.Fatal(err)
					}
					if est[s], err = EstimatePair(Symmetric(ts), pair[0], pair[1]); err != nil {
						t.Fatal(err)
					}
				}
				mean, se := meanSE(est)
				want := k.Eval(pair[0], pair[1])
				if math.Abs(mean-want) > 5*se+1e-12 {
					t.Errorf("mean %.6f ± %.2g, exact %.6f", mean, se, want)
				}
			}
		})
	}
}

// The FFT product is the count sketch of the tensor square: for p = 2,
// z_k = Σ_{a,b: h₁(a)+h₂(b) ≡ k mod D} s₁(a)s₂(b)u_a u_b with
// u = [√γx, √c], computed here by the double sum, to 1e-13.
func TestTensorSketchIsCountSketchOfTensor(t *testing.T) {
	const d, D = 4, 7
	ts, err := NewTensorSketch(TensorSketchConfig{Degree: 2, Gamma: 0.7, Coef0: 2, Features: D, Seed: 3}, d)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.3, -1.2, 0.8, 2}
	s := ts.Spec()
	w := d + 1
	u := make([]float64, w)
	for j, v := range x {
		u[j] = math.Sqrt(s.Gamma) * v
	}
	u[d] = math.Sqrt(s.Coef0)
	want := make([]float64, D)
	for a := 0; a < w; a++ {
		for b := 0; b < w; b++ {
			want[(s.Index[a]+s.Index[w+b])%D] += s.Sign[a] * s.Sign[w+b] * u[a] * u[b]
		}
	}
	z, err := Apply(ts, mat.NewDense(1, d, x))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range z.RawRowView(0) {
		if math.Abs(v-want[k]) > 1e-13 {
			t.Errorf("z[%d] = %.15g, want %.15g", k, v, want[k])
		}
	}
}

// A TensorSketch round-trips through its spec and its decoder to identical
// features; the projector seam with an exact projector gives the same
// features to rounding; bad specs and inputs are errors.
func TestTensorSketchSpecAndSeam(t *testing.T) {
	x := testRows(9, 6, 4)
	ts, err := NewTensorSketch(TensorSketchConfig{Degree: 3, Gamma: 0.5, Coef0: 1, Features: 32, Seed: 8}, 6)
	if err != nil {
		t.Fatal(err)
	}
	kind, raw, err := Encode(ts)
	if err != nil || kind != TensorSketchSpecKind {
		t.Fatalf("kind %q, %v", kind, err)
	}
	back, err := DecodeTensorSketch(raw)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := Apply(ts, x)
	b, err := Apply(back, x)
	if err != nil || !mat.Equal(a, b) {
		t.Errorf("decoded sketch differs (%v)", err)
	}
	hw, err := WithProjectors(ts, exactProjectors)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Apply(hw, x)
	if err != nil || !mat.EqualApprox(a, c, 1e-12) {
		t.Errorf("projector seam differs (%v)", err)
	}
	var s TensorSketchSpec
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	bad := s
	bad.Index = append([]int(nil), s.Index...)
	bad.Index[0] = 32
	badSign := s
	badSign.Sign = append([]float64(nil), s.Sign...)
	badSign.Sign[1] = 0.5
	short := s
	short.Sign = s.Sign[1:]
	for name, sp := range map[string]TensorSketchSpec{"index": bad, "sign": badSign, "short": short,
		"degree": {Degree: 0, Gamma: 1, Features: 4, InputDim: 1}} {
		if _, err := TensorSketchFromSpec(sp); err == nil {
			t.Errorf("%s: bad spec accepted", name)
		}
	}
	nan := mat.NewDense(1, 6, []float64{0, 0, math.NaN(), 0, 0, 0})
	if err := ts.Transform(mat.NewDense(1, 32, nil), nan); err == nil {
		t.Error("NaN input accepted")
	}
	if err := ts.Transform(mat.NewDense(2, 32, nil), nan); err == nil {
		t.Error("wrong destination shape accepted")
	}
}

// A TensorSketch of the kernel (xᵀy/2 + 1)³ with 4096 features: its
// estimate is unbiased over the hash draws, with a standard deviation
// of order ‖u‖³‖v‖³/√D for u = [√γx, 1] (a few hundredths here).
func ExampleNewTensorSketch() {
	x := []float64{0.5, -0.3, 0.8, 0.1}
	y := []float64{0.4, 0.2, 0.7, -0.5}
	ts, err := NewTensorSketch(TensorSketchConfig{Degree: 3, Gamma: 0.5, Coef0: 1, Features: 4096, Seed: 1}, 4)
	if err != nil {
		panic(err)
	}
	est, err := EstimatePair(Symmetric(ts), x, y)
	if err != nil {
		panic(err)
	}
	fmt.Printf("exact %.3f, sketch %.3f\n", ts.Kernel().Eval(x, y), est)
	// Output:
	// exact 2.326, sketch 2.326
}
