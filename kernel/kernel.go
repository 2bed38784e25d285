package kernel

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/parallel"
)

// Kernel is a positive-definite kernel function on vectors of equal length.
type Kernel interface {
	// Eval returns k(x, y). x and y must have the same length.
	Eval(x, y []float64) float64
}

// RBF is the Gaussian (radial basis function) kernel exp(−Gamma‖x−y‖²).
type RBF struct {
	Gamma float64
}

// Eval returns exp(−γ‖x−y‖²).
func (k RBF) Eval(x, y []float64) float64 {
	var s float64
	for i, v := range x {
		d := v - y[i]
		s += d * d
	}
	return math.Exp(-k.Gamma * s)
}

// Softmax is the softmax kernel SM(x, y) = exp(xᵀy) of the HRF paper.
type Softmax struct{}

// Eval returns exp(xᵀy).
func (Softmax) Eval(x, y []float64) float64 {
	return math.Exp(dot(x, y))
}

// ArcCos is the arc-cosine kernel of Cho & Saul of order 0, 1 or 2.
type ArcCos struct {
	Order int
}

// Eval returns (1/π)‖x‖ⁿ‖y‖ⁿ J_n(θ). For order 0 the value at x = 0 or y = 0
// is taken as 1/2 (the limit of the Heaviside estimator with Θ(0) = 0 is not
// defined there); for orders 1 and 2 it is 0. The angle is computed as in
// Angle, from ‖x̂−ŷ‖ and ‖x̂+ŷ‖, and J_n from π − θ without cancellation, so
// nearly parallel and nearly antiparallel inputs keep full relative
// precision.
func (k ArcCos) Eval(x, y []float64) float64 {
	minus, plus, ok := chords(x, y)
	if !ok {
		if k.Order == 0 {
			return 0.5
		}
		return 0
	}
	return arcCos(k.Order, 2*math.Atan2(plus, minus), math.Sqrt(dot(x, x)), math.Sqrt(dot(y, y)))
}

// ArcCosFromCos returns the arc-cosine kernel of the given order from the
// cosine c of the angle between x and y and their norms. A rounded cosine
// near ±1 determines the angle only to about √ε; ArcCos.Eval, which works
// from the vectors, keeps full precision there.
func ArcCosFromCos(order int, c, nx, ny float64) float64 {
	c = math.Max(-1, math.Min(1, c))
	return arcCos(order, math.Acos(-c), nx, ny)
}

// arcCos returns (1/π)·nxⁿ·nyⁿ·J_n(θ) from δ = π − θ ∈ [0, π], the angle
// between x and −y. In terms of δ
//
//	J_0 = δ,  J_1 = sin δ − δ cos δ,  J_2 = δ(1 + 2cos²δ) − 3 sin δ cos δ,
//
// which for small δ (nearly antiparallel inputs, where J_1 ≈ δ³/3 and
// J_2 ≈ 4δ⁵/15) cancel catastrophically, so there the Taylor series are
// summed instead:
//
//	J_1 = Σ_{k≥1} (−1)^{k+1} 2k δ^{2k+1}/(2k+1)!
//	J_2 = Σ_{k≥2} (−1)^k (k−1) (2δ)^{2k+1}/(2k+1)!.
func arcCos(order int, delta, nx, ny float64) float64 {
	switch order {
	case 0:
		return delta / math.Pi
	case 1:
		return nx * ny * j1(delta) / math.Pi
	case 2:
		return nx * nx * ny * ny * j2(delta) / math.Pi
	}
	panic(fmt.Sprintf("kernel: arc-cosine order %d not in {0,1,2}", order))
}

// seriesBelow is the δ below which j1 and j2 sum their Taylor series: at
// δ = 1 the direct formulas lose at most 3 bits, and the series' terms
// fall by a factor of at least 10 each.
const seriesBelow = 1.0

// j1 returns sin δ − δ cos δ.
func j1(delta float64) float64 {
	if delta >= seriesBelow {
		s, c := math.Sincos(delta)
		return s - delta*c
	}
	d2 := delta * delta
	p := delta * d2 / 6 // δ^{2k+1}/(2k+1)! at k = 1
	var sum float64
	for k := 1; k <= 12; k++ {
		t := float64(2*k) * p
		if k%2 == 0 {
			t = -t
		}
		sum += t
		p *= d2 / float64((2*k+2)*(2*k+3))
	}
	return sum
}

// j2 returns δ(1 + 2cos²δ) − 3 sin δ cos δ.
func j2(delta float64) float64 {
	if delta >= seriesBelow {
		s, c := math.Sincos(delta)
		return delta*(1+2*c*c) - 3*s*c
	}
	u := 2 * delta
	u2 := u * u
	p := u * u2 * u2 / 120 // u^{2k+1}/(2k+1)! at k = 2
	var sum float64
	for k := 2; k <= 16; k++ {
		t := float64(k-1) * p
		if k%2 == 1 {
			t = -t
		}
		sum += t
		p *= u2 / float64((2*k+2)*(2*k+3))
	}
	return sum
}

// Validate reports whether k has usable parameters.
func Validate(k Kernel) error {
	switch k := k.(type) {
	case RBF:
		if !(k.Gamma > 0) || math.IsInf(k.Gamma, 0) {
			return fmt.Errorf("kernel: RBF gamma must be positive and finite, got %v", k.Gamma)
		}
	case ArcCos:
		if k.Order < 0 || k.Order > 2 {
			return fmt.Errorf("kernel: arc-cosine order must be 0, 1 or 2, got %d", k.Order)
		}
	case Softmax:
	case nil:
		return errors.New("kernel: nil kernel")
	}
	return nil
}

func dot(x, y []float64) float64 {
	var s float64
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// Gram returns the n×p matrix G with G[i][j] = k(x_i, y_j) for the rows x_i
// of x and y_j of y. The inner products come from one matrix product
// (blas64.Gemm), so the cost is that of a GEMM plus n·p scalar kernel
// evaluations, spread over the cores. For the arc-cosine kernels, pairs
// with |cos θ| > 0.99 are evaluated from the vectors as in ArcCos.Eval
// (O(d) each), which keeps nearly parallel and antiparallel pairs exact to
// a few ulps.
func Gram(k Kernel, x, y *mat.Dense) (*mat.Dense, error) {
	switch k.(type) {
	case RBF, Softmax, ArcCos:
	default:
		return GramOf(k, x, y) // kernels beyond the GEMM-based three
	}
	if err := Validate(k); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	p, dy := y.Dims()
	if d != dy {
		return nil, fmt.Errorf("kernel: Gram: x has %d columns, y has %d", d, dy)
	}
	g := mat.NewDense(n, p, nil)
	nx := rowNorms2(x)
	ny := rowNorms2(y)
	raw := g.RawMatrix()
	xr := x.RawMatrix()
	ac, isArcCos := k.(ArcCos)
	parallel.Chunks(n, 64, func(_, lo, hi int) {
		xs := blas64.General{Rows: hi - lo, Cols: d, Stride: xr.Stride, Data: xr.Data[lo*xr.Stride:]}
		gs := blas64.General{Rows: hi - lo, Cols: p, Stride: raw.Stride, Data: raw.Data[lo*raw.Stride:]}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, xs, y.RawMatrix(), 0, gs)
		for i := lo; i < hi; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+p]
			if isArcCos {
				for j, ip := range row {
					row[j] = ac.fromInner(ip, nx[i], ny[j], x.RawRowView(i), y.RawRowView(j))
				}
				continue
			}
			for j, ip := range row {
				row[j] = fromInner(k, ip, nx[i], ny[j])
			}
		}
	})
	return g, nil
}

// nearParallel is the |cos θ| above which Gram recomputes the angle of a
// pair from the vectors: acos of the GEMM's cosine has an error of order
// d·ε/sin θ, and for |cos θ| ≤ 0.99 (sin θ ≥ 0.14) that is still close to
// full precision.
const nearParallel = 0.99

// fromInner evaluates the arc-cosine kernel from xᵀy and the squared norms,
// going back to the vectors x and y for nearly parallel or antiparallel
// pairs.
func (k ArcCos) fromInner(ip, nx2, ny2 float64, x, y []float64) float64 {
	nx, ny := math.Sqrt(nx2), math.Sqrt(ny2)
	if nx == 0 || ny == 0 {
		if k.Order == 0 {
			return 0.5
		}
		return 0
	}
	c := ip / (nx * ny)
	if math.Abs(c) > nearParallel {
		minus, plus, _ := chords(x, y)
		return arcCos(k.Order, 2*math.Atan2(plus, minus), nx, ny)
	}
	return arcCos(k.Order, math.Acos(-c), nx, ny)
}

// fromInner evaluates k from xᵀy and the squared norms.
func fromInner(k Kernel, ip, nx2, ny2 float64) float64 {
	switch k := k.(type) {
	case RBF:
		d2 := math.Max(0, nx2+ny2-2*ip)
		return math.Exp(-k.Gamma * d2)
	case Softmax:
		return math.Exp(ip)
	}
	panic("kernel: unknown kernel type")
}

func rowNorms2(x *mat.Dense) []float64 {
	n, _ := x.Dims()
	out := make([]float64, n)
	for i := range out {
		r := x.RawRowView(i)
		out[i] = dot(r, r)
	}
	return out
}

// RelativeError returns ‖K − K̂‖_F / ‖K‖_F, the Gram-matrix error measure of
// the analog paper (Results, Fig. 2b) and of scikit-learn comparisons.
func RelativeError(exact, approx *mat.Dense) (float64, error) {
	r, c := exact.Dims()
	ra, ca := approx.Dims()
	if r != ra || c != ca {
		return 0, fmt.Errorf("kernel: RelativeError: shapes %dx%d and %dx%d differ", r, c, ra, ca)
	}
	var num, den float64
	for i := 0; i < r; i++ {
		e := exact.RawRowView(i)
		a := approx.RawRowView(i)
		for j, v := range e {
			d := v - a[j]
			num += d * d
			den += v * v
		}
	}
	if den == 0 {
		return 0, errors.New("kernel: RelativeError: exact Gram matrix is zero")
	}
	if math.IsInf(den, 0) || math.IsNaN(den) || math.IsInf(num, 0) || math.IsNaN(num) {
		return 0, errors.New("kernel: RelativeError: Gram matrix entries overflow float64 (inputs too large for this kernel)")
	}
	return math.Sqrt(num / den), nil
}

// Angle returns the angle θ ∈ [0, π] between x and y, computed as
// 2·atan2(‖x̂−ŷ‖, ‖x̂+ŷ‖) with x̂, ŷ the unit vectors, which keeps full
// relative precision for nearly parallel and nearly antiparallel inputs
// (acos of a rounded cosine loses half the digits there). The chords are
// evaluated in double-double arithmetic (see chords), so θ is accurate to a
// few ulps even when it is much smaller than the rounding of x̂ and ŷ would
// allow. A zero vector gives θ = π/2 by convention. Lengths must match (it
// panics otherwise).
func Angle(x, y []float64) float64 {
	if len(x) != len(y) {
		panic("kernel: Angle of vectors of different lengths")
	}
	minus, plus, ok := chords(x, y)
	if !ok {
		return math.Pi / 2
	}
	return 2 * math.Atan2(minus, plus)
}

// chords returns numbers proportional to ‖x̂−ŷ‖ and ‖x̂+ŷ‖, namely
// ‖‖y‖x − ‖x‖y‖ and ‖‖y‖x + ‖x‖y‖, so that θ = 2·atan2(minus, plus) and
// π − θ = 2·atan2(plus, minus); ok is false if x or y is zero. The norms
// and the differences and sums are computed in double-double arithmetic
// (error-free products by math.FMA and error-free sums, Dekker 1971;
// Ogita, Rump & Oishi 2005), so each result has a relative error of a few
// ε even when it is tiny: rounding x̂ and ŷ to float64 first would limit
// the relative precision of a chord of size δ to about ε/δ.
func chords(x, y []float64) (minus, plus float64, ok bool) {
	nxh, nxl := ddNorm(x)
	nyh, nyl := ddNorm(y)
	if nxh == 0 || nyh == 0 {
		return 0, 0, false
	}
	var sm, sp float64
	for i, xi := range x {
		yi := y[i]
		// a = ‖y‖·x_i and b = ‖x‖·y_i as double-doubles.
		ah, ae := twoProd(nyh, xi)
		al := nyl*xi + ae
		bh, be := twoProd(nxh, yi)
		bl := nxl*yi + be
		dh, de := twoSum(ah, -bh)
		d := dh + (de + (al - bl))
		ph, pe := twoSum(ah, bh)
		p := ph + (pe + (al + bl))
		sm += d * d
		sp += p * p
	}
	return math.Sqrt(sm), math.Sqrt(sp), true
}

// ddNorm returns ‖x‖ as a double-double hi + lo.
func ddNorm(x []float64) (hi, lo float64) {
	var sh, sl float64
	for _, v := range x {
		p, e := twoProd(v, v)
		var t float64
		sh, t = twoSum(sh, p)
		sl += t + e
	}
	sh, sl = fastTwoSum(sh, sl)
	if sh == 0 {
		return 0, 0
	}
	r := math.Sqrt(sh)
	// One Newton step: r + (sh + sl − r²)/(2r).
	c := (math.FMA(-r, r, sh) + sl) / (2 * r)
	return fastTwoSum(r, c)
}

// twoProd returns p = fl(a·b) and the exact error a·b − p.
func twoProd(a, b float64) (p, e float64) {
	p = a * b
	return p, math.FMA(a, b, -p)
}

// twoSum returns s = fl(a+b) and the exact error a + b − s.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}

// fastTwoSum is twoSum for |a| ≥ |b|.
func fastTwoSum(a, b float64) (s, e float64) {
	s = a + b
	return s, b - (s - a)
}
