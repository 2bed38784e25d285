package toeplitz

import (
	"fmt"
	"math"
	"strings"

	"github.com/kernelkit/kernelkit/internal/rng"
)

// Activation is an element-wise non-linearity of an MLP.
type Activation func(float64) float64

// ReLU is max(x, 0).
func ReLU(x float64) float64 { return math.Max(x, 0) }

// GeLU is x·Φ(x), Φ the standard normal CDF.
func GeLU(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }

// SiLU is x·σ(x).
func SiLU(x float64) float64 { return x / (1 + math.Exp(-x)) }

// ActivationByName returns relu, gelu or silu.
func ActivationByName(name string) (Activation, error) {
	switch strings.ToLower(name) {
	case "relu":
		return ReLU, nil
	case "gelu":
		return GeLU, nil
	case "silu", "swish":
		return SiLU, nil
	}
	return nil, fmt.Errorf("toeplitz: unknown activation %q (want relu, gelu or silu)", name)
}

// MLP is a small multilayer perceptron R → R^d with random (seeded)
// weights: the TNN baseline's relative positional encoder, and the
// frequency-response model of FD-TNO.
type MLP struct {
	ws  [][]float64 // layer weights, row-major out×in
	bs  [][]float64
	dim []int
	act Activation
}

// NewMLP draws an MLP with the given hidden widths and output dimension d;
// weights are N(0, 1/fan_in), biases N(0, 0.1²).
func NewMLP(hidden []int, d int, act Activation, seed uint64) (*MLP, error) {
	if d <= 0 {
		return nil, fmt.Errorf("toeplitz: MLP output dimension must be positive, got %d", d)
	}
	dims := append(append([]int{1}, hidden...), d)
	rng := rng.New(seed)
	m := &MLP{dim: dims, act: act}
	for l := 0; l+1 < len(dims); l++ {
		if dims[l+1] <= 0 {
			return nil, fmt.Errorf("toeplitz: MLP widths must be positive, got %v", hidden)
		}
		w := make([]float64, dims[l+1]*dims[l])
		s := 1 / math.Sqrt(float64(dims[l]))
		for i := range w {
			w[i] = s * rng.NormFloat64()
		}
		b := make([]float64, dims[l+1])
		for i := range b {
			b[i] = 0.1 * rng.NormFloat64()
		}
		m.ws = append(m.ws, w)
		m.bs = append(m.bs, b)
	}
	return m, nil
}

// Eval returns the d outputs at input t.
func (m *MLP) Eval(t float64) []float64 {
	h := []float64{t}
	for l := range m.ws {
		out := make([]float64, m.dim[l+1])
		for i := range out {
			s := m.bs[l][i]
			for j, v := range h {
				s += m.ws[l][i*m.dim[l]+j] * v
			}
			if l+1 < len(m.ws) {
				s = m.act(s)
			}
			out[i] = s
		}
		h = out
	}
	return h
}

// Dim returns the output dimension.
func (m *MLP) Dim() int { return m.dim[len(m.dim)-1] }

// TNNKernels returns the TNN baseline's per-channel Toeplitz matrices
// T^l_ij = λ^|i−j|·RPE_l((i−j)/n) for an MLP RPE.
func TNNKernels(rpe *MLP, n int, lambda float64) ([]*Toeplitz, error) {
	if err := checkLambda(lambda); err != nil {
		return nil, err
	}
	d := rpe.Dim()
	coef := make([][]float64, d)
	for l := range coef {
		coef[l] = make([]float64, 2*n-1)
	}
	for k := -(n - 1); k < n; k++ {
		v := rpe.Eval(float64(k) / float64(n))
		decay := math.Pow(lambda, math.Abs(float64(k)))
		for l := range coef {
			coef[l][k+n-1] = decay * v[l]
		}
	}
	out := make([]*Toeplitz, d)
	for l := range out {
		var err error
		if out[l], err = New(coef[l]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func checkLambda(lambda float64) error {
	if !(lambda > 0 && lambda < 1) {
		return fmt.Errorf("toeplitz: decay λ must lie in (0, 1), got %v", lambda)
	}
	return nil
}

// Warp is the inverse time warp x(t) = sign(t)·λ^|t| of Sec. 3.2.2; it maps
// every offset t into [−1, 1], with x(0) = 0.
func Warp(t, lambda float64) float64 {
	if t == 0 {
		return 0
	}
	return math.Copysign(math.Pow(lambda, math.Abs(t)), t)
}

// PiecewiseLinear is an RPE on [−1, 1]: per channel, values at r evenly
// spaced grid points (r odd, so 0 is a grid point) with RPE(0) = 0, and
// linear interpolation in between (Sec. 3.2.2).
type PiecewiseLinear struct {
	r, d int
	v    []float64 // r×d; row (r−1)/2 is zero
}

// NewPiecewiseLinear returns the RPE with the given grid values (r×d,
// row-major); the middle row is forced to zero.
func NewPiecewiseLinear(r, d int, values []float64) (*PiecewiseLinear, error) {
	if r < 3 || r%2 == 0 {
		return nil, fmt.Errorf("toeplitz: piecewise linear RPE needs an odd number ≥ 3 of grid points, got %d", r)
	}
	if d <= 0 || len(values) != r*d {
		return nil, fmt.Errorf("toeplitz: RPE values: got %d, want %d×%d", len(values), r, d)
	}
	v := append([]float64(nil), values...)
	for l := 0; l < d; l++ {
		v[(r-1)/2*d+l] = 0
	}
	return &PiecewiseLinear{r: r, d: d, v: v}, nil
}

// RandomPiecewiseLinear draws grid values N(0, 1) with RPE(0) = 0.
func RandomPiecewiseLinear(r, d int, seed uint64) (*PiecewiseLinear, error) {
	rng := rng.New(seed)
	v := make([]float64, r*d)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return NewPiecewiseLinear(r, d, v)
}

// Eval returns channel l's value at x ∈ [−1, 1] (clamped).
func (p *PiecewiseLinear) Eval(x float64, l int) float64 {
	x = math.Max(-1, math.Min(1, x))
	u := (x + 1) / 2 * float64(p.r-1)
	i := int(math.Floor(u))
	if i >= p.r-1 {
		i = p.r - 2
	}
	f := u - float64(i)
	return (1-f)*p.v[i*p.d+l] + f*p.v[(i+1)*p.d+l]
}

// Dim returns the number of channels.
func (p *PiecewiseLinear) Dim() int { return p.d }

// Kernel returns channel l's warped kernel k(t) = RPE_l(x(t)).
func (p *PiecewiseLinear) Kernel(l int, lambda float64) func(t float64) float64 {
	return func(t float64) float64 { return p.Eval(Warp(t, lambda), l) }
}
