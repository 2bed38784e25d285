package toeplitz

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/parallel"
)

// Toeplitz is an n×n Toeplitz matrix T_ij = t_{i−j}.
type Toeplitz struct {
	n int
	t []float64 // t[k+n−1] = t_k, k = −(n−1)…(n−1)
}

// New returns the Toeplitz matrix with coefficients coef[k+n−1] = t_k for
// k = −(n−1)…n−1 (len(coef) = 2n−1).
func New(coef []float64) (*Toeplitz, error) {
	if len(coef) == 0 || len(coef)%2 == 0 {
		return nil, fmt.Errorf("toeplitz: need 2n−1 coefficients, got %d", len(coef))
	}
	for _, v := range coef {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("toeplitz: non-finite coefficient")
		}
	}
	return &Toeplitz{n: (len(coef) + 1) / 2, t: append([]float64(nil), coef...)}, nil
}

// FromKernel returns the n×n Toeplitz matrix t_k = k(k).
func FromKernel(n int, k func(t int) float64) (*Toeplitz, error) {
	if n <= 0 {
		return nil, fmt.Errorf("toeplitz: size must be positive, got %d", n)
	}
	c := make([]float64, 2*n-1)
	for i := range c {
		c[i] = k(i - (n - 1))
	}
	return New(c)
}

// Size returns n.
func (t *Toeplitz) Size() int { return t.n }

// At returns T_ij.
func (t *Toeplitz) At(i, j int) float64 { return t.t[i-j+t.n-1] }

// Coef returns t_k.
func (t *Toeplitz) Coef(k int) float64 { return t.t[k+t.n-1] }

// Dense returns T as a dense matrix.
func (t *Toeplitz) Dense() *mat.Dense {
	d := mat.NewDense(t.n, t.n, nil)
	for i := 0; i < t.n; i++ {
		for j := 0; j < t.n; j++ {
			d.Set(i, j, t.At(i, j))
		}
	}
	return d
}

// MulVecDirect returns Tx by direct summation, O(n²).
func (t *Toeplitz) MulVecDirect(x []float64) []float64 {
	y := make([]float64, t.n)
	for i := range y {
		var s float64
		row := t.t[i : i+t.n] // t_{i−j} for j = n−1 … 0, reversed
		for j, xj := range x {
			s += row[t.n-1-j] * xj
		}
		y[i] = s
	}
	return y
}

// fftLen returns the power of two at least 2n−1 (the circulant size).
func fftLen(n int) int {
	l := 1
	for l < 2*n-1 {
		l <<= 1
	}
	return l
}

// Spectrum is a Toeplitz matrix prepared for fast products: the real FFT
// of its circulant embedding.
type Spectrum struct {
	n, l int
	c    []complex128
}

// Spectrum embeds T in a circulant matrix of size L = 2^⌈log₂(2n−1)⌉ and
// returns its spectrum.
func (t *Toeplitz) Spectrum() *Spectrum {
	l := fftLen(t.n)
	col := make([]float64, l)
	for k := 0; k < t.n; k++ {
		col[k] = t.Coef(k)
	}
	for k := 1; k < t.n; k++ {
		col[l-k] = t.Coef(-k)
	}
	return &Spectrum{n: t.n, l: l, c: fourier.NewFFT(l).Coefficients(nil, col)}
}

// workspace holds per-goroutine FFT state.
type workspace struct {
	fft *fourier.FFT
	buf []float64
	cf  []complex128
}

func newWorkspace(l int) *workspace {
	return &workspace{fft: fourier.NewFFT(l), buf: make([]float64, l), cf: make([]complex128, l/2+1)}
}

// mul computes y = first n entries of IFFT(spec ⊙ FFT([x, 0…])) / L.
func (w *workspace) mul(y, x []float64, spec []complex128, n int) {
	clear(w.buf)
	copy(w.buf, x)
	w.fft.Coefficients(w.cf, w.buf)
	for i := range w.cf {
		w.cf[i] *= spec[i]
	}
	w.fft.Sequence(w.buf, w.cf)
	inv := 1 / float64(len(w.buf))
	for i := 0; i < n; i++ {
		y[i] = w.buf[i] * inv
	}
}

// MulVec returns Tx in O(n log n).
func (s *Spectrum) MulVec(x []float64) ([]float64, error) {
	if len(x) != s.n {
		return nil, fmt.Errorf("toeplitz: vector of length %d for a %d×%d matrix", len(x), s.n, s.n)
	}
	y := make([]float64, s.n)
	newWorkspace(s.l).mul(y, x, s.c, s.n)
	return y, nil
}

// Operator applies one Toeplitz matrix per channel: TNO(X) = (T¹x¹ …
// T^d x^d).
type Operator struct {
	specs []*Spectrum
	n     int
}

// NewOperator prepares the per-channel matrices (all n×n).
func NewOperator(ts []*Toeplitz) (*Operator, error) {
	if len(ts) == 0 {
		return nil, errors.New("toeplitz: no channels")
	}
	op := &Operator{n: ts[0].n}
	for _, t := range ts {
		if t.n != op.n {
			return nil, errors.New("toeplitz: channels of different sizes")
		}
	}
	op.specs = make([]*Spectrum, len(ts))
	parallel.Chunks(len(ts), 1, func(_, lo, _ int) { op.specs[lo] = ts[lo].Spectrum() })
	return op, nil
}

// Apply returns TNO(X) for X of n×d, channels in parallel.
func (op *Operator) Apply(x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	if n != op.n || d != len(op.specs) {
		return nil, fmt.Errorf("toeplitz: input is %d×%d, operator is %d×%d", n, d, op.n, len(op.specs))
	}
	return applyColumns(x, func(ws *workspace, l int, col, out []float64) {
		ws.mul(out, col, op.specs[l].c, n)
	}, op.specs[0].l), nil
}

// applyColumns runs f on every column of x in parallel (one FFT workspace
// of length l per worker) and gathers the outputs. The input is transposed
// once in cache-sized blocks so that every channel is a contiguous slice;
// reading an n×d row-major matrix column by column would miss the cache
// on every element.
func applyColumns(x *mat.Dense, f func(ws *workspace, l int, col, out []float64), l int) *mat.Dense {
	n, d := x.Dims()
	xt := transpose(x.RawMatrix().Data, n, d, x.RawMatrix().Stride)
	yt := make([]float64, d*n)
	wss := make([]*workspace, parallel.Workers(d))
	parallel.Chunks(d, 1, func(w, c, _ int) {
		if wss[w] == nil {
			wss[w] = newWorkspace(l)
		}
		f(wss[w], c, xt[c*n:(c+1)*n], yt[c*n:(c+1)*n])
	})
	return mat.NewDense(n, d, transpose(yt, d, n, n))
}

// transpose returns the c×r transpose of the r×c row-major matrix a (row
// stride s), in 64×64 blocks.
func transpose(a []float64, r, c, s int) []float64 {
	out := make([]float64, r*c)
	const b = 64
	parallel.Chunks((r+b-1)/b, 1, func(_, bi, _ int) {
		i0 := bi * b
		for j0 := 0; j0 < c; j0 += b {
			for i := i0; i < min(i0+b, r); i++ {
				row := a[i*s:]
				for j := j0; j < min(j0+b, c); j++ {
					out[j*r+i] = row[j]
				}
			}
		}
	})
	return out
}
