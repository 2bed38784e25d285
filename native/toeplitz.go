package native

import (
	"os"

	"github.com/kernelkit/kernelkit/fft"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/internal/vmath"
)

// toeplitzFFT applies one Toeplitz matrix per channel, y_i = Σ_j t_{i−j}
// x_j (the nn.ToeplitzDense convention: coefficients (2n−1)×e, row k+n−1
// holding t_k), to every sequence of x (B×n×e), by circulant embedding
// and real FFTs of size N (the smallest even N ≥ 2n − 1 whose prime
// factors are 2, 3 and 5: any N ≥ 2n − 1 embeds the matrix), all e
// channels of a sequence in one batched transform (package fft: FFTW where
// it loads, gonum's FFT otherwise). Its backward pass gives ∂x (a
// Toeplitz product with the transposed matrix: the conjugate spectrum)
// and ∂t (the cross-correlation of ∂y and x, summed over the batch in the
// frequency domain in batch order, then one inverse transform). The
// spectra of the inputs are kept from the forward pass. Without FFTW,
// lengths up to dftMaxLength use dense real-DFT products through the BLAS
// instead (toeplitz_dft.go), which measured faster than gonum's FFT there.
type toeplitzFFT[T Float] struct {
	n, e, batch int
	size        int         // FFT size N (FFT form)
	fp          fft.Plan[T] // the e-channel plan (FFT form)
	stride      int         // values per spectrum of e channels, padded to 16
	ks          []T         // spectra of the circulant columns
	xs, dys     []T         // B spectra of the inputs and of the output gradients
	sum         []T         // Σ_b DY_b ⊙ conj(X_b)
	bufs        [][2][]T    // per worker: padded signals e×N, a spectrum
	y, dx       []T
	dcoef       []T // (2n−1)×e
	// The dense-DFT form: its matrices, the coefficient spectrum, the
	// input spectra (B×2(n+1)×e), the gradient spectra, a work buffer and
	// the batch sum S.
	plan                *dftPlan[T]
	kd, xd, dyd, wd, sd []T
	us, vs, pqs         []T // per-sequence scratch of the transforms
}

// toeplitzForce forces the form of new Toeplitz products for the tests:
// "dft" (dense products), "go" (gonum's FFT) or "" (FFTW where it loads,
// else dense up to dftMaxLength and gonum's FFT beyond).
var toeplitzForce = ""

// fftSize returns the smallest even N ≥ 2n − 1 whose prime factors are 2,
// 3 and 5.
func fftSize(n int) int {
	for N := max(2*n-1, 2); ; N++ {
		if N%2 != 0 {
			continue
		}
		m := N
		for _, p := range []int{2, 3, 5} {
			for m%p == 0 {
				m /= p
			}
		}
		if m == 1 {
			return N
		}
	}
}

// newToeplitzFFT returns the product for sequences of length n and e
// channels in the form toeplitzForce or the measurements pick.
func newToeplitzFFT[T Float](n, e int) *toeplitzFFT[T] {
	t := &toeplitzFFT[T]{n: n, e: e, dcoef: make([]T, (2*n-1)*e)}
	form := toeplitzForce
	if form == "" {
		switch {
		case fft.Load() == nil && os.Getenv("KERNELKIT_FFT") != "go":
			form = "fftw"
		case n <= dftMaxLength:
			form = "dft"
		default:
			form = "go"
		}
	}
	if form == "dft" {
		t.plan = sharedDFTPlan[T](n)
		return t
	}
	t.size = fftSize(n)
	if form == "go" {
		t.fp = fft.NewGo[T](t.size, e)
	} else {
		t.fp = fft.New[T](t.size, e)
	}
	t.stride = (2*(t.size/2+1)*e + 15) &^ 15
	return t
}

// growAligned is grow for the FFT buffers: a new slice is 64-byte aligned.
func growAligned[T Float](buf []T, n int) []T {
	if cap(buf) < n {
		return fft.Make[T](n)
	}
	return buf[:n]
}

// workBufs returns per-worker padded-signal and spectrum buffers for w
// workers.
func (t *toeplitzFFT[T]) workBufs(w int) [][2][]T {
	for len(t.bufs) < w {
		t.bufs = append(t.bufs, [2][]T{fft.Make[T](t.size * t.e), fft.Make[T](t.stride)})
	}
	return t.bufs
}

// spectrum returns sequence b's spectrum in a batch of spectra.
func (t *toeplitzFFT[T]) spectrum(s []T, b int) []T {
	return s[b*t.stride : b*t.stride+2*(t.size/2+1)*t.e]
}

// pad sets sig (e×N) to the channels of x (n×e) followed by zeros.
func pad[T Float](sig, x []T, n, e, N int) {
	transposeRows(sig, N, x, e, n, e, 1)
	for c := 0; c < e; c++ {
		clear(sig[c*N+n : (c+1)*N])
	}
}

// unpad sets y (n×e) to s times the first n samples of each channel of
// sig (e×N).
func unpad[T Float](y, sig []T, n, e, N int, s T) {
	transposeRows(y, e, sig, N, e, n, s)
}

// transposeRows sets dst[j·ldd + i] = s·src[i·lds + j] for i < rows and
// j < cols: float32 by vmath.Transpose32 (8×8 blocks with AVX2), float64
// by a loop over 16×16 tiles (a tile's rows are one 128-byte span on both
// sides, which avoids the cache-set conflicts of walking a stride of a
// power-of-two number of bytes). One multiplication per element either
// way (s = 1 copies exactly).
func transposeRows[T Float](dst []T, ldd int, src []T, lds, rows, cols int, s T) {
	if d, ok := any(dst).([]float32); ok {
		vmath.Transpose32(d, ldd, any(src).([]float32), lds, rows, cols, float32(s))
		return
	}
	const tb = 16
	for i0 := 0; i0 < rows; i0 += tb {
		i1 := min(i0+tb, rows)
		for j0 := 0; j0 < cols; j0 += tb {
			for j := j0; j < min(j0+tb, cols); j++ {
				d := dst[j*ldd+i0 : j*ldd+i1]
				for k := range d {
					d[k] = s * src[(i0+k)*lds+j]
				}
			}
		}
	}
}

// mulSpec sets out = a ⊙ k, or a ⊙ conj(k), for spectra stored as (re, im)
// pairs, each product rounded before the sums (vmath.CMulTo32 for
// float32).
func mulSpec[T Float](out, a, k []T, conjugate bool) {
	if o, ok := any(out).([]float32); ok {
		vmath.CMulTo32(o[:len(a)], any(a).([]float32), any(k).([]float32), conjugate)
		return
	}
	k = k[:len(a)]
	out = out[:len(a)]
	if conjugate {
		for i := 0; i < len(a); i += 2 {
			ar, ai, kr, ki := a[i], a[i+1], k[i], k[i+1]
			out[i] = T(ar*kr) + T(ai*ki)
			out[i+1] = T(ai*kr) - T(ar*ki)
		}
		return
	}
	for i := 0; i < len(a); i += 2 {
		ar, ai, kr, ki := a[i], a[i+1], k[i], k[i+1]
		out[i] = T(ar*kr) - T(ai*ki)
		out[i+1] = T(ai*kr) + T(ar*ki)
	}
}

// mulSpecAdd adds a ⊙ conj(k) to out, for spectra stored as (re, im)
// pairs, each product rounded before the sums (vmath.CMulAdd32 for
// float32).
func mulSpecAdd[T Float](out, a, k []T) {
	if o, ok := any(out).([]float32); ok {
		vmath.CMulAdd32(o, any(a).([]float32), any(k).([]float32), true)
		return
	}
	a, k = a[:len(out)], k[:len(out)]
	for i := 0; i < len(out); i += 2 {
		ar, ai, kr, ki := a[i], a[i+1], k[i], k[i+1]
		out[i] += T(ar*kr) + T(ai*ki)
		out[i+1] += T(ai*kr) - T(ar*ki)
	}
}

// forward returns the products for x (B×n×e) with coefficients coef
// ((2n−1)×e).
func (t *toeplitzFFT[T]) forward(x []T, batch int, coef []T) []T {
	n, e := t.n, t.e
	t.batch = batch
	if t.plan != nil {
		return t.dftForward(x, batch, coef)
	}
	N := t.size
	bufs := t.workBufs(parallel.Workers(batch))
	// First columns of the circulants: t_0 … t_{n−1}, 0 …, t_{−(n−1)} … t_{−1}.
	sig := bufs[0][0]
	clear(sig)
	for c := 0; c < e; c++ {
		col := sig[c*N : (c+1)*N]
		for k := 0; k < n; k++ {
			col[k] = coef[(k+n-1)*e+c]
		}
		for k := 1; k < n; k++ {
			col[N-k] = coef[(n-1-k)*e+c]
		}
	}
	t.ks = growAligned(t.ks, t.stride)
	t.fp.Forward(t.spectrum(t.ks, 0), sig)
	t.xs = growAligned(t.xs, batch*t.stride)
	t.y = grow(t.y, batch*n*e)
	inv := 1 / T(N)
	chunks(batch, 1, func(w, lo, hi int) {
		sig, spec := bufs[w][0], t.spectrum(bufs[w][1], 0)
		for b := lo; b < hi; b++ {
			pad(sig, x[b*n*e:(b+1)*n*e], n, e, N)
			xs := t.spectrum(t.xs, b)
			t.fp.Forward(xs, sig)
			mulSpec(spec, xs, t.ks, false)
			t.fp.Inverse(sig, spec)
			unpad(t.y[b*n*e:(b+1)*n*e], sig, n, e, N, inv)
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
	N, nb := t.size, t.size/2+1
	bufs := t.workBufs(parallel.Workers(batch))
	t.dx = grow(t.dx, batch*n*e)
	t.dys = growAligned(t.dys, batch*t.stride)
	inv := 1 / T(N)
	chunks(batch, 1, func(w, lo, hi int) {
		sig, spec := bufs[w][0], t.spectrum(bufs[w][1], 0)
		for b := lo; b < hi; b++ {
			pad(sig, dy[b*n*e:(b+1)*n*e], n, e, N)
			ds := t.spectrum(t.dys, b)
			t.fp.Forward(ds, sig)
			mulSpec(spec, ds, t.ks, true)
			t.fp.Inverse(sig, spec)
			unpad(t.dx[b*n*e:(b+1)*n*e], sig, n, e, N, inv)
		}
	})
	// S = Σ_b DY_b ⊙ conj(X_b), over b in order for every channel.
	t.sum = growAligned(t.sum, t.stride)
	s := t.spectrum(t.sum, 0)
	chunks(e, channelChunk, func(_, lo, hi int) {
		seg := s[2*lo*nb : 2*hi*nb]
		clear(seg)
		for b := 0; b < batch; b++ {
			d := t.spectrum(t.dys, b)[2*lo*nb : 2*hi*nb]
			x := t.spectrum(t.xs, b)[2*lo*nb : 2*hi*nb]
			mulSpecAdd(seg, d, x)
		}
	})
	sig := bufs[0][0]
	t.fp.Inverse(sig, s)
	for c := 0; c < e; c++ {
		col := sig[c*N : (c+1)*N]
		for k := 0; k < n; k++ {
			t.dcoef[(k+n-1)*e+c] = inv * col[k]
		}
		for k := 1; k < n; k++ {
			t.dcoef[(n-1-k)*e+c] = inv * col[N-k]
		}
	}
	return t.dx
}

// channelChunk is the number of channels a worker takes at a time.
const channelChunk = 8
