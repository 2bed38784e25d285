package hybrid

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/mat"
)

// ComplexExp is the complex exponential estimator of SM(x, y) (HRF Eq. 16):
// queries use Ψ_A, keys Ψ_{(Aᵀ)⁻¹}, both with the same real projections ω.
// Its features are real: [Re Ψ_A(x), Im Ψ_A(x)] and
// [Re Ψ_B(y), −Im Ψ_B(y)], whose dot product is Re(Ψ_A(x)ᵀΨ_B(y)).
type ComplexExp struct {
	d, m int
	a, b []complex128 // d×d row-major; b = (aᵀ)⁻¹
	diag bool         // a and b are diagonal (only the diagonals are used)
	w    *mat.Dense   // m×d
}

// NewComplexExp returns the estimator for an invertible complex d×d matrix
// A (row-major) and an m×d real projection W (rows N(0, I_d)).
func NewComplexExp(a []complex128, w *mat.Dense) (*ComplexExp, error) {
	m, d := w.Dims()
	if len(a) != d*d {
		return nil, fmt.Errorf("hybrid: A has %d entries, want %d×%d", len(a), d, d)
	}
	for _, v := range a {
		if cmplx.IsNaN(v) || cmplx.IsInf(v) {
			return nil, errors.New("hybrid: A has a non-finite entry")
		}
	}
	at := make([]complex128, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			at[i*d+j] = a[j*d+i]
		}
	}
	b, err := invert(at, d)
	if err != nil {
		return nil, err
	}
	return &ComplexExp{d: d, m: m, a: append([]complex128(nil), a...), b: b, w: w}, nil
}

// NewComplexExpDiag returns the estimator for A = diag(a).
func NewComplexExpDiag(a []complex128, w *mat.Dense) (*ComplexExp, error) {
	m, d := w.Dims()
	if len(a) != d {
		return nil, fmt.Errorf("hybrid: diagonal has %d entries, want %d", len(a), d)
	}
	b := make([]complex128, d)
	for i, v := range a {
		if v == 0 || cmplx.IsNaN(v) || cmplx.IsInf(v) {
			return nil, fmt.Errorf("hybrid: A is singular or not finite (diagonal entry %d is %v)", i, v)
		}
		b[i] = 1 / v
	}
	return &ComplexExp{d: d, m: m, a: append([]complex128(nil), a...), b: b, diag: true, w: w}, nil
}

// invert returns the inverse of the d×d complex matrix a (Gauss-Jordan with
// partial pivoting), or an error if it is singular.
func invert(a []complex128, d int) ([]complex128, error) {
	m := append([]complex128(nil), a...)
	inv := make([]complex128, d*d)
	for i := 0; i < d; i++ {
		inv[i*d+i] = 1
	}
	var scale float64
	for _, v := range a {
		scale = math.Max(scale, cmplx.Abs(v))
	}
	for c := 0; c < d; c++ {
		p := c
		for r := c + 1; r < d; r++ {
			if cmplx.Abs(m[r*d+c]) > cmplx.Abs(m[p*d+c]) {
				p = r
			}
		}
		if cmplx.Abs(m[p*d+c]) <= 1e-13*scale {
			return nil, errors.New("hybrid: A is singular")
		}
		if p != c {
			for j := 0; j < d; j++ {
				m[c*d+j], m[p*d+j] = m[p*d+j], m[c*d+j]
				inv[c*d+j], inv[p*d+j] = inv[p*d+j], inv[c*d+j]
			}
		}
		piv := 1 / m[c*d+c]
		for j := 0; j < d; j++ {
			m[c*d+j] *= piv
			inv[c*d+j] *= piv
		}
		for r := 0; r < d; r++ {
			if r == c || m[r*d+c] == 0 {
				continue
			}
			f := m[r*d+c]
			for j := 0; j < d; j++ {
				m[r*d+j] -= f * m[c*d+j]
				inv[r*d+j] -= f * inv[c*d+j]
			}
		}
	}
	return inv, nil
}

// Dim returns 2m.
func (c *ComplexExp) Dim() int { return 2 * c.m }

// InputDim returns d.
func (c *ComplexExp) InputDim() int { return c.d }

// Query writes [Re Ψ_A(x), Im Ψ_A(x)].
func (c *ComplexExp) Query(dst, x *mat.Dense) error { return c.side(dst, x, c.a, 1) }

// Key writes [Re Ψ_B(y), −Im Ψ_B(y)], B = (Aᵀ)⁻¹.
func (c *ComplexExp) Key(dst, y *mat.Dense) error { return c.side(dst, y, c.b, -1) }

func (c *ComplexExp) side(dst, x *mat.Dense, mtx []complex128, imSign float64) error {
	n, d := x.Dims()
	if d != c.d {
		return fmt.Errorf("hybrid: input has %d columns, estimator expects %d", d, c.d)
	}
	if r, cc := dst.Dims(); r != n || cc != 2*c.m {
		return fmt.Errorf("hybrid: destination is %d×%d, want %d×%d", r, cc, n, 2*c.m)
	}
	re := mat.NewDense(n, d, nil)
	im := mat.NewDense(n, d, nil)
	half := make([]complex128, n) // −(Mu)²/2
	v := make([]complex128, d)
	for i := 0; i < n; i++ {
		u := x.RawRowView(i)
		for _, e := range u {
			if math.IsNaN(e) || math.IsInf(e, 0) {
				return fmt.Errorf("hybrid: input row %d has a non-finite value", i)
			}
		}
		if c.diag {
			for k := range v {
				v[k] = mtx[k] * complex(u[k], 0)
			}
		} else {
			for k := 0; k < d; k++ {
				var s complex128
				for j := 0; j < d; j++ {
					s += mtx[k*d+j] * complex(u[j], 0)
				}
				v[k] = s
			}
		}
		var sq complex128
		rr, ii := re.RawRowView(i), im.RawRowView(i)
		for k, z := range v {
			sq += z * z
			rr[k], ii[k] = real(z), imag(z)
		}
		half[i] = -sq / 2
	}
	var pr, pi mat.Dense
	pr.Mul(re, c.w.T())
	pi.Mul(im, c.w.T())
	lm := -0.5 * math.Log(float64(c.m))
	for i := 0; i < n; i++ {
		out := dst.RawRowView(i)
		a, b := pr.RawRowView(i), pi.RawRowView(i)
		for j := 0; j < c.m; j++ {
			er := real(half[i]) + a[j] + lm
			ei := imag(half[i]) + b[j]
			mag := math.Exp(er)
			if math.IsInf(mag, 0) {
				return errors.New("hybrid: complex exponential feature overflows float64 (inputs too large)")
			}
			s, co := math.Sincos(ei)
			out[j] = mag * co
			out[c.m+j] = imSign * mag * s
		}
	}
	return nil
}
