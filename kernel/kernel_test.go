package kernel

import (
	"math"
	"math/big"
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

// bigPrec is the precision of the math/big reference computations.
const bigPrec = 256

func bigF(v float64) *big.Float { return new(big.Float).SetPrec(bigPrec).SetFloat64(v) }

// bigNorm returns ‖x‖ of a big vector.
func bigNorm(x []*big.Float) *big.Float {
	s := bigF(0)
	for _, v := range x {
		s.Add(s, new(big.Float).SetPrec(bigPrec).Mul(v, v))
	}
	return s.Sqrt(s)
}

// bigSinCos sums the Taylor series of sin and cos of d (|d| ≤ 4) at
// bigPrec bits.
func bigSinCos(d float64) (sin, cos *big.Float) {
	x := bigF(d)
	sin, cos = bigF(0), bigF(0)
	term := bigF(1) // x^n/n!
	for n := 0; n < 120; n++ {
		t := new(big.Float).SetPrec(bigPrec).Set(term)
		if (n/2)%2 == 1 {
			t.Neg(t)
		}
		if n%2 == 0 {
			cos.Add(cos, t)
		} else {
			sin.Add(sin, t)
		}
		term.Mul(term, x)
		term.Quo(term, bigF(float64(n+1)))
	}
	return sin, cos
}

// angleReference returns θ and δ = π − θ between float vectors x and y
// from the chords ‖x̂∓ŷ‖ computed in 256-bit arithmetic; the only float64
// roundings are those of the chords and of atan2 (a few ulps), and the
// norms ‖x‖, ‖y‖ as big numbers.
func angleReference(x, y []float64) (theta, delta float64, nx, ny *big.Float) {
	bx := make([]*big.Float, len(x))
	by := make([]*big.Float, len(y))
	for i := range x {
		bx[i], by[i] = bigF(x[i]), bigF(y[i])
	}
	nx, ny = bigNorm(bx), bigNorm(by)
	minus := make([]*big.Float, len(x))
	plus := make([]*big.Float, len(x))
	for i := range x {
		a := new(big.Float).SetPrec(bigPrec).Quo(bx[i], nx)
		b := new(big.Float).SetPrec(bigPrec).Quo(by[i], ny)
		minus[i] = new(big.Float).SetPrec(bigPrec).Sub(a, b)
		plus[i] = new(big.Float).SetPrec(bigPrec).Add(a, b)
	}
	m, _ := bigNorm(minus).Float64()
	p, _ := bigNorm(plus).Float64()
	return 2 * math.Atan2(m, p), 2 * math.Atan2(p, m), nx, ny
}

// arcCosReference computes the arc-cosine kernel of float vectors x and y
// from angleReference's δ with J_n in 256-bit arithmetic.
func arcCosReference(order int, x, y []float64) float64 {
	_, delta, nx, ny := angleReference(x, y)
	s, c := bigSinCos(delta)
	d := bigF(delta)
	j := new(big.Float).SetPrec(bigPrec)
	switch order {
	case 0:
		j.Set(d)
	case 1: // sin δ − δ cos δ
		j.Mul(d, c)
		j.Sub(s, j)
	case 2: // δ(1 + 2cos²δ) − 3 sin δ cos δ
		c2 := new(big.Float).SetPrec(bigPrec).Mul(c, c)
		c2.Mul(c2, bigF(2))
		c2.Add(c2, bigF(1))
		c2.Mul(c2, d)
		sc := new(big.Float).SetPrec(bigPrec).Mul(s, c)
		sc.Mul(sc, bigF(3))
		j.Sub(c2, sc)
	}
	scale := bigF(1)
	for i := 0; i < order; i++ {
		scale.Mul(scale, nx)
		scale.Mul(scale, ny)
	}
	j.Mul(j, scale)
	v, _ := j.Float64()
	return v / math.Pi
}

// TestArcCosNearlyParallel: for y = x rotated by 10⁻⁶ rad (and its
// antiparallel mirror) the arc-cosine kernels of order 0, 1 and 2, by Eval
// and by Gram, agree with a 256-bit reference to 1e-12 relative (acos of
// the rounded cosine gave errors of 1e-8 and, for orders 1 and 2 near
// antiparallel, lost every digit). Exactly parallel and antiparallel pairs
// are checked to 1e-15 of the scale ‖x‖ⁿ‖y‖ⁿ, as the exact value 0 has no
// relative precision.
func TestArcCosNearlyParallel(t *testing.T) {
	x := []float64{0.3, -1.2, 0.7, 2.0}
	// u: a unit vector orthogonal to x.
	v := []float64{1, 0.5, -0.25, 0.1}
	nx := math.Sqrt(dot(x, x))
	xh := make([]float64, len(x))
	for i := range x {
		xh[i] = x[i] / nx
	}
	u := make([]float64, len(v))
	pv := dot(v, xh)
	for i := range v {
		u[i] = v[i] - pv*xh[i]
	}
	nu := math.Sqrt(dot(u, u))
	for i := range u {
		u[i] /= nu
	}
	rotated := func(t, scale float64) []float64 {
		y := make([]float64, len(x))
		for i := range y {
			y[i] = scale * (math.Cos(t)*xh[i] + math.Sin(t)*u[i])
		}
		return y
	}
	twice := make([]float64, len(x))
	for i := range x {
		twice[i] = 2 * x[i]
	}
	var worst float64
	defer func() { t.Logf("largest relative error of Eval: %.2g", worst) }()
	for _, c := range []struct {
		name  string
		y     []float64
		exact bool
	}{
		{"rotated 1e-6", rotated(1e-6, 1.7), false},
		{"antiparallel, rotated 1e-6", rotated(1e-6, -1.7), false},
		{"rotated 1e-3", rotated(1e-3, 0.4), false},
		{"antiparallel, rotated 1e-3", rotated(1e-3, -0.4), false},
		{"rotated 0.5", rotated(0.5, 3), false},
		{"rotated 2", rotated(2, 3), false},
		{"parallel", twice, true},
		{"antiparallel", rotated(0, -1), true},
	} {
		if !c.exact {
			theta, _, _, _ := angleReference(x, c.y)
			if got := Angle(x, c.y); math.Abs(got-theta) > 1e-12*theta {
				t.Errorf("%s: Angle = %.17g, reference %.17g", c.name, got, theta)
			}
		}
		xs := mat.NewDense(1, len(x), x)
		ys := mat.NewDense(1, len(x), c.y)
		ny := math.Sqrt(dot(c.y, c.y))
		for order := 0; order <= 2; order++ {
			want := arcCosReference(order, x, c.y)
			tol := 1e-12 * math.Abs(want)
			if c.exact {
				tol += 1e-15 * math.Pow(nx*ny, float64(order))
			}
			got := ArcCos{Order: order}.Eval(x, c.y)
			if !c.exact {
				worst = math.Max(worst, math.Abs(got-want)/math.Abs(want))
			}
			if math.Abs(got-want) > tol {
				t.Errorf("%s, order %d: Eval = %.17g, reference %.17g (relative error %.2g)", c.name, order, got, want, math.Abs(got-want)/math.Abs(want))
			}
			g, err := Gram(ArcCos{Order: order}, xs, ys)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.At(0, 0); math.Abs(got-want) > tol {
				t.Errorf("%s, order %d: Gram = %.17g, reference %.17g (relative error %.2g)", c.name, order, got, want, math.Abs(got-want)/math.Abs(want))
			}
		}
	}
}

// TestArcCosSeriesMatchesDirect: at the switch point δ = 1 the Taylor
// series of J_1 and J_2 and the direct formulas agree to 1e-15 relative.
func TestArcCosSeriesMatchesDirect(t *testing.T) {
	for _, d := range []float64{math.Nextafter(seriesBelow, 0), 0.9, 0.5} {
		s, c := math.Sincos(d)
		if want := s - d*c; math.Abs(j1(d)-want) > 1e-14*want {
			t.Errorf("J1(%v): series %.17g, direct %.17g", d, j1(d), want)
		}
		if want := d*(1+2*c*c) - 3*s*c; math.Abs(j2(d)-want) > 1e-13*want {
			t.Errorf("J2(%v): series %.17g, direct %.17g", d, j2(d), want)
		}
	}
}
