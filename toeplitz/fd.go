package toeplitz

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mat"
)

// FD is a frequency-domain Toeplitz operator (FD-TNO, Sec. 3.3): per
// channel, a spectrum of length n+1 on ω = mπ/n (the rFFT of a length-2n
// kernel), applied as y = irFFT(k̂ ⊙ rFFT([x, 0])) restricted to n entries.
type FD struct {
	n     int
	specs [][]complex128
}

// Response returns the d channel values of a frequency response at ω.
type Response func(omega float64) []float64

// Frequencies returns ω_m = mπ/n, m = 0…n.
func Frequencies(n int) []float64 {
	w := make([]float64, n+1)
	for m := range w {
		w[m] = float64(m) * math.Pi / float64(n)
	}
	return w
}

// HilbertCausal returns k̂ − i·H{k̂} for a real even response sampled at
// ω = mπ/n, m = 0…n, computed with the rFFT and irFFT: the length-2n
// kernel h = irFFT(k̂) is multiplied by the causal window (1, 2, …, 2, 1,
// 0, …, 0) and transformed back. Its inverse transform is zero at negative
// lags.
func HilbertCausal(re []float64) ([]complex128, error) {
	if len(re) < 2 {
		return nil, fmt.Errorf("toeplitz: need at least 2 frequency samples, got %d", len(re))
	}
	n := len(re) - 1
	fft := fourier.NewFFT(2 * n)
	c := make([]complex128, n+1)
	for m, v := range re {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("toeplitz: non-finite frequency response")
		}
		c[m] = complex(v, 0)
	}
	h := fft.Sequence(nil, c)
	inv := 1 / float64(2*n)
	for t := range h {
		switch {
		case t == 0 || t == n:
			h[t] *= inv
		case t < n:
			h[t] *= 2 * inv
		default:
			h[t] = 0
		}
	}
	return fft.Coefficients(nil, h), nil
}

// NewCausalFD samples the real, even response at ω = mπ/n and makes each
// channel causal with the discrete Hilbert transform (Algorithm 2).
func NewCausalFD(n int, resp Response) (*FD, error) {
	if n < 1 {
		return nil, fmt.Errorf("toeplitz: sequence length must be positive, got %d", n)
	}
	om := Frequencies(n)
	vals := make([][]float64, len(om))
	for m, w := range om {
		vals[m] = resp(w)
	}
	d := len(vals[0])
	if d == 0 {
		return nil, errors.New("toeplitz: response has no channels")
	}
	fd := &FD{n: n}
	re := make([]float64, n+1)
	for l := 0; l < d; l++ {
		for m := range re {
			re[m] = vals[m][l]
		}
		s, err := HilbertCausal(re)
		if err != nil {
			return nil, err
		}
		fd.specs = append(fd.specs, s)
	}
	return fd, nil
}

// NewBidirectionalFD samples a response with 2d values per ω — real parts
// of d channels, then imaginary parts — and forces the response real at
// ω = 0 and ω = π (Sec. 3.3.2).
func NewBidirectionalFD(n int, resp Response) (*FD, error) {
	if n < 1 {
		return nil, fmt.Errorf("toeplitz: sequence length must be positive, got %d", n)
	}
	om := Frequencies(n)
	fd := &FD{n: n}
	var d int
	for m, w := range om {
		v := resp(w)
		if m == 0 {
			if len(v) == 0 || len(v)%2 != 0 {
				return nil, fmt.Errorf("toeplitz: bidirectional response needs 2d values, got %d", len(v))
			}
			d = len(v) / 2
			fd.specs = make([][]complex128, d)
			for l := range fd.specs {
				fd.specs[l] = make([]complex128, n+1)
			}
		}
		for l := 0; l < d; l++ {
			im := v[d+l]
			if m == 0 || m == n {
				im = 0
			}
			if math.IsNaN(v[l]) || math.IsNaN(im) || math.IsInf(v[l], 0) || math.IsInf(im, 0) {
				return nil, errors.New("toeplitz: non-finite frequency response")
			}
			fd.specs[l][m] = complex(v[l], im)
		}
	}
	return fd, nil
}

// Apply returns the operator's action on every column of X (n×d).
func (fd *FD) Apply(x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	if n != fd.n || d != len(fd.specs) {
		return nil, fmt.Errorf("toeplitz: input is %d×%d, operator is %d×%d", n, d, fd.n, len(fd.specs))
	}
	return applyColumns(x, func(ws *workspace, l int, col, out []float64) {
		ws.mul(out, col, fd.specs[l], n)
	}, 2*n), nil
}

// Kernel returns channel l's time-domain kernel as a Toeplitz matrix:
// t_k = h[k mod 2n] with h = irFFT(k̂)/(2n).
func (fd *FD) Kernel(l int) *Toeplitz {
	h := fourier.NewFFT(2*fd.n).Sequence(nil, fd.specs[l])
	coef := make([]float64, 2*fd.n-1)
	for k := -(fd.n - 1); k < fd.n; k++ {
		coef[k+fd.n-1] = h[(k+2*fd.n)%(2*fd.n)] / float64(2*fd.n)
	}
	// 2n−1 coefficients of a finite spectrum (checked when fd was built):
	// the invariants New checks hold, so the matrix is built directly.
	return &Toeplitz{n: fd.n, t: coef}
}

// MLPResponse returns a frequency response from an MLP of cos ω: a smooth,
// even, 2π-periodic parametrisation, so the smoothness of the activation
// carries over to the DTFT on the whole circle (Theorems 2-4).
func MLPResponse(m *MLP) Response {
	return func(w float64) []float64 { return m.Eval(math.Cos(w)) }
}
