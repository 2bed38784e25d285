package kernel

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The kernels of extra.go against scikit-learn 1.2.1 (values printed by
//
//	X=np.array([[0.3,0.0,2.5,1.0]]); Y=np.array([[1.7,0.2,0.05,1.0]])
//	polynomial_kernel(X,Y,degree=3,gamma=0.5,coef0=1.5)
//	0.5*((X+Y).sum()+additive_chi2_kernel(X,Y))   # Σ2xy/(x+y)
//
// to 1e-15) and the skewed χ² kernel against its product formula.
func TestExtraKernels(t *testing.T) {
	x := []float64{0.3, 0.0, 2.5, 1.0}
	y := []float64{1.7, 0.2, 0.05, 1.0}
	skew := 1.0
	for i := range x {
		skew *= 2 * math.Sqrt(x[i]+0.5) * math.Sqrt(y[i]+0.5) / (x[i] + y[i] + 1)
	}
	for _, tc := range []struct {
		name string
		k    Kernel
		want float64
	}{
		{"polynomial", Polynomial{Gamma: 0.5, Coef0: 1.5, Degree: 3}, 12.446843484374998},
		{"chi2", Chi2{}, 1.6080392156862744},
		{"skewed-chi2", SkewedChi2{C: 0.5}, skew},
	} {
		if got := tc.k.Eval(x, y); math.Abs(got-tc.want) > 1e-15*tc.want {
			t.Errorf("%s: %.17g, want %.17g", tc.name, got, tc.want)
		}
		s, err := Describe(tc.k)
		if err != nil || s.Name != tc.name {
			t.Fatalf("%s: spec %+v, %v", tc.name, s, err)
		}
		back, err := s.Kernel()
		if err != nil || back != tc.k {
			t.Errorf("%s: spec round trip gave %#v, %v", tc.name, back, err)
		}
	}
}

// GramOf equals pairwise Eval for every kernel (to 1e-14 relative; Gram's
// own precision for the kernels of kernel.go), and rejects inputs outside
// a kernel's domain and bad parameters.
func TestGramOf(t *testing.T) {
	x := mat.NewDense(4, 3, []float64{0.1, 0.5, 1.2, 0, 2, 0.3, 0.7, 0.7, 0.7, 1.5, 0.01, 0})
	y := mat.NewDense(2, 3, []float64{0.4, 0.1, 0.9, 0.2, 0.2, 3})
	for _, k := range []Kernel{RBF{Gamma: 0.3}, Softmax{}, ArcCos{Order: 1}, Polynomial{Gamma: 0.7, Coef0: 1, Degree: 4},
		Polynomial{Gamma: 1, Degree: 1}, Chi2{}, SkewedChi2{C: 2}} {
		g, err := GramOf(k, x, y)
		if err != nil {
			t.Fatalf("%s: %v", Name(k), err)
		}
		for i := 0; i < 4; i++ {
			for j := 0; j < 2; j++ {
				want := k.Eval(x.RawRowView(i), y.RawRowView(j))
				if math.Abs(g.At(i, j)-want) > 1e-14*math.Max(1, math.Abs(want)) {
					t.Errorf("%s [%d,%d]: %.17g, Eval %.17g", Name(k), i, j, g.At(i, j), want)
				}
			}
		}
	}
	neg := mat.NewDense(1, 3, []float64{0.1, -0.2, 0})
	if _, err := GramOf(Chi2{}, neg, y); err == nil {
		t.Error("negative histogram accepted by chi2")
	}
	if _, err := GramOf(SkewedChi2{C: 0.1}, neg, y); err == nil {
		t.Error("entry below −c accepted by skewed chi2")
	}
	for _, k := range []Kernel{Polynomial{Gamma: 0, Degree: 2}, Polynomial{Gamma: 1, Coef0: -1, Degree: 2},
		Polynomial{Gamma: 1, Degree: 0}, SkewedChi2{C: 0}, RBF{Gamma: -1}} {
		if _, err := GramOf(k, x, y); err == nil {
			t.Errorf("%#v accepted", k)
		}
	}
	if _, err := (Spec{Name: "laplacian"}).Kernel(); err == nil {
		t.Error("unknown kernel name accepted")
	}
	if _, err := Describe(nil); err == nil {
		t.Error("nil kernel described")
	}
}
