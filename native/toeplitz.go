package native

import (
	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/kernelkit/kernelkit/internal/parallel"
)

// toeplitzFFT applies one Toeplitz matrix per channel, y_i = Σ_j t_{i−j}
// x_j (the nn.ToeplitzDense convention: coefficients (2n−1)×e, row k+n−1
// holding t_k), to every sequence of x (B×n×e), by circulant embedding
// and real FFTs of size N, the power of two ≥ 2n (any N ≥ 2n − 1 embeds
// the matrix; powers of two keep gonum's FFT on its fast radices),
// batched over channels. Its backward pass gives
// ∂x (a Toeplitz product with the transposed matrix: the conjugate
// spectrum) and ∂t (the cross-correlation of ∂y and x, summed over the
// batch in the frequency domain: one inverse FFT per channel). The spectra
// of the inputs are kept from the forward pass.
type toeplitzFFT[T Float] struct {
	n, e, batch int
	size        int          // FFT size N: the power of two ≥ 2n
	spec        []complex128 // e×(N/2+1): spectra of the circulant columns
	xs          []complex128 // (B·e)×(N/2+1): spectra of the padded inputs
	y, dx       []T
	dcoef       []T // (2n−1)×e
	work        []fftWork
	// The dense-DFT form (n ≤ dftMaxLength): its matrices, the
	// coefficient spectrum, the input spectra (B×2(n+1)×e), the gradient
	// spectra, a work buffer and the batch sum S.
	plan                *dftPlan[T]
	kd, xd, dyd, wd, sd []T
	us, vs, pqs         []T // per-sequence scratch of the transforms
}

// fftWork is one worker's transform and scratch space.
type fftWork struct {
	f    *fourier.FFT
	re   []float64
	spec []complex128
	acc  []complex128
}

// newToeplitzFFT returns the product for sequences of length n and e
// channels, in the dense-DFT form up to dftMaxLength and by FFT beyond.
func newToeplitzFFT[T Float](n, e int) *toeplitzFFT[T] {
	t := &toeplitzFFT[T]{n: n, e: e, dcoef: make([]T, (2*n-1)*e)}
	if n <= dftMaxLength {
		t.plan = sharedDFTPlan[T](n)
	} else {
		t.size = 2
		for t.size < 2*n {
			t.size *= 2
		}
		t.spec = make([]complex128, e*(t.size/2+1))
	}
	return t
}

// workers returns per-worker scratch space for up to w workers.
func (t *toeplitzFFT[T]) workers(w int) []fftWork {
	for len(t.work) < w {
		m := t.size
		t.work = append(t.work, fftWork{f: fourier.NewFFT(m), re: make([]float64, m),
			spec: make([]complex128, m/2+1), acc: make([]complex128, m/2+1)})
	}
	return t.work
}

// channelChunk is the number of channels a worker takes at a time.
const channelChunk = 8

// forward returns the products for x (B×n×e) with coefficients coef
// ((2n−1)×e).
func (t *toeplitzFFT[T]) forward(x []T, batch int, coef []T) []T {
	n, e := t.n, t.e
	t.batch = batch
	if t.plan != nil {
		return t.dftForward(x, batch, coef)
	}
	N, nb := t.size, t.size/2+1
	t.xs = grow(t.xs, batch*e*nb)
	t.y = grow(t.y, batch*n*e)
	ws := t.workers(parallel.Workers((e + channelChunk - 1) / channelChunk))
	inv := 1 / float64(N)
	chunks(e, channelChunk, func(w, lo, hi int) {
		wk := &ws[w]
		for c := lo; c < hi; c++ {
			// First column of the circulant: t_0 … t_{n−1}, 0, t_{−(n−1)} … t_{−1}.
			for k := 0; k < n; k++ {
				wk.re[k] = float64(coef[(k+n-1)*e+c])
			}
			clear(wk.re[n:])
			for k := 1; k < n; k++ {
				wk.re[N-k] = float64(coef[(n-1-k)*e+c])
			}
			ks := t.spec[c*nb : (c+1)*nb]
			wk.f.Coefficients(ks, wk.re)
			for b := 0; b < batch; b++ {
				for i := 0; i < n; i++ {
					wk.re[i] = float64(x[(b*n+i)*e+c])
				}
				clear(wk.re[n:])
				xs := t.xs[(b*e+c)*nb : (b*e+c+1)*nb]
				wk.f.Coefficients(xs, wk.re)
				for m, v := range xs {
					wk.spec[m] = v * ks[m]
				}
				wk.f.Sequence(wk.re, wk.spec)
				for i := 0; i < n; i++ {
					t.y[(b*n+i)*e+c] = T(wk.re[i] * inv)
				}
			}
		}
	})
	return t.y
}

// backward returns ∂x for the output gradient dy and sets t.dcoef to ∂t
// ((2n−1)×e, overwritten).
func (t *toeplitzFFT[T]) backward(dy []T) []T {
	n, e, batch := t.n, t.e, t.batch
	if t.plan != nil {
		return t.dftBackward(dy)
	}
	t.dx = grow(t.dx, batch*n*e)
	ws := t.workers(parallel.Workers((e + channelChunk - 1) / channelChunk))
	N, nb := t.size, t.size/2+1
	inv := 1 / float64(N)
	chunks(e, channelChunk, func(w, lo, hi int) {
		wk := &ws[w]
		for c := lo; c < hi; c++ {
			ks := t.spec[c*nb : (c+1)*nb]
			clear(wk.acc)
			for b := 0; b < batch; b++ {
				for i := 0; i < n; i++ {
					wk.re[i] = float64(dy[(b*n+i)*e+c])
				}
				clear(wk.re[n:])
				wk.f.Coefficients(wk.spec, wk.re)
				xs := t.xs[(b*e+c)*nb : (b*e+c+1)*nb]
				for m, v := range wk.spec {
					wk.acc[m] += v * conj(xs[m])
					wk.spec[m] = v * conj(ks[m])
				}
				wk.f.Sequence(wk.re, wk.spec)
				for i := 0; i < n; i++ {
					t.dx[(b*n+i)*e+c] = T(wk.re[i] * inv)
				}
			}
			wk.f.Sequence(wk.re, wk.acc)
			for k := 0; k < n; k++ {
				t.dcoef[(k+n-1)*e+c] = T(wk.re[k] * inv)
			}
			for k := 1; k < n; k++ {
				t.dcoef[(n-1-k)*e+c] = T(wk.re[N-k] * inv)
			}
		}
	})
	return t.dx
}

// conj is the complex conjugate.
func conj(z complex128) complex128 { return complex(real(z), -imag(z)) }
