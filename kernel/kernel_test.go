package kernel

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestClosedForms(t *testing.T) {
	x := []float64{1, 2, -0.5}
	y := []float64{0.3, -1, 2}
	nx, ny := math.Sqrt(5.25), math.Sqrt(5.09)
	ip := 0.3 - 2 - 1
	theta := math.Acos(ip / (nx * ny))
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"rbf", RBF{Gamma: 0.2}.Eval(x, y), math.Exp(-0.2 * (0.49 + 9 + 6.25))},
		{"softmax", Softmax{}.Eval(x, y), math.Exp(ip)},
		{"arccos0", ArcCos{0}.Eval(x, y), 1 - theta/math.Pi},
		{"arccos1", ArcCos{1}.Eval(x, y), nx * ny * (math.Sin(theta) + (math.Pi-theta)*math.Cos(theta)) / math.Pi},
		{"arccos2", ArcCos{2}.Eval(x, y), nx * nx * ny * ny * (3*math.Sin(theta)*math.Cos(theta) + (math.Pi-theta)*(1+2*math.Cos(theta)*math.Cos(theta))) / math.Pi},
		// On the diagonal: k0 = 1, k1 = ‖x‖², k2 = 3‖x‖⁴.
		{"arccos0 diag", ArcCos{0}.Eval(x, x), 1},
		{"arccos1 diag", ArcCos{1}.Eval(x, x), 5.25},
		{"arccos2 diag", ArcCos{2}.Eval(x, x), 3 * 5.25 * 5.25},
		// Gaussian = exp(−‖x‖²/2)·SM(x, y)·exp(−‖y‖²/2).
		{"gaussian via softmax", RBF{Gamma: 0.5}.Eval(x, y), math.Exp(-5.25/2) * Softmax{}.Eval(x, y) * math.Exp(-5.09/2)},
	} {
		if math.Abs(c.got-c.want) > 1e-12*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s: got %.15g, want %.15g", c.name, c.got, c.want)
		}
	}
}

func TestGramMatchesEval(t *testing.T) {
	x := mat.NewDense(70, 4, nil)
	y := mat.NewDense(3, 4, nil)
	for i := 0; i < 70; i++ {
		for j := 0; j < 4; j++ {
			x.Set(i, j, math.Sin(float64(i*4+j)))
			if i < 3 {
				y.Set(i, j, math.Cos(float64(i*3+j)))
			}
		}
	}
	y.Set(2, 0, 0) // a row that is zero except for three entries
	for _, k := range []Kernel{RBF{Gamma: 0.3}, Softmax{}, ArcCos{0}, ArcCos{1}, ArcCos{2}} {
		g, err := Gram(k, x, y)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 70; i++ {
			for j := 0; j < 3; j++ {
				want := k.Eval(x.RawRowView(i), y.RawRowView(j))
				if math.Abs(g.At(i, j)-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Fatalf("%T: G[%d][%d] = %v, Eval %v", k, i, j, g.At(i, j), want)
				}
			}
		}
	}
}

func TestErrors(t *testing.T) {
	if _, err := Gram(RBF{Gamma: -1}, mat.NewDense(1, 2, nil), mat.NewDense(1, 2, nil)); err == nil {
		t.Error("negative gamma accepted")
	}
	if _, err := Gram(ArcCos{Order: 3}, mat.NewDense(1, 2, nil), mat.NewDense(1, 2, nil)); err == nil {
		t.Error("arc-cosine order 3 accepted")
	}
	if _, err := Gram(Softmax{}, mat.NewDense(1, 2, nil), mat.NewDense(1, 3, nil)); err == nil {
		t.Error("mismatched widths accepted")
	}
	if _, err := RelativeError(mat.NewDense(1, 1, nil), mat.NewDense(1, 1, nil)); err == nil {
		t.Error("zero Gram matrix accepted")
	}
	e, _ := RelativeError(mat.NewDense(1, 2, []float64{3, 4}), mat.NewDense(1, 2, []float64{3, 3}))
	if math.Abs(e-0.2) > 1e-15 {
		t.Errorf("relative error %v, want 0.2", e)
	}
}
