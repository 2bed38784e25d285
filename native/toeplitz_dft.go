package native

import (
	"math"
	"sync"

	"github.com/kernelkit/kernelkit/internal/parallel"
)

// dftMaxLength is the longest sequence whose Toeplitz products run as
// dense real-DFT products through the BLAS instead of FFTs: the transform
// of a batch of B sequences of e channels is then one (2(n+1)×n)·(n×e)
// product per sequence, O(n²e) operations against O(n log n·e) for the
// FFT, but at BLAS speed. Measured (float32, B = 16, e = 128, forward and
// backward, OpenBLAS on 2 cores, load average 7): 41 against 172 ms at
// n = 256, 172 against 349 ms at n = 512, 595 against 708 ms at n =
// 1024; beyond that the FFT's n log n wins. A variable so that the tests
// can run both forms.
var dftMaxLength = 1024

// dftPlan holds the real-DFT matrices of the circulant embedding of size
// 2n: spectra are stored as 2(n+1) rows (real parts of bins 0…n, then
// imaginary parts), one column per channel.
type dftPlan[T Float] struct {
	n  int
	f  []T // 2(n+1)×n: spectrum of a zero-padded sequence
	g  []T // n×2(n+1): first n samples of the inverse
	fc []T // 2(n+1)×(2n−1): spectrum of the circulant column of coefficients
	hc []T // (2n−1)×2(n+1): the inverse at every lag, read as coefficients
}

// dftPlans caches the plans by length and element type: they are
// read-only once built, so every layer of every model shares them.
var dftPlans sync.Map // dftKey → *dftPlan[T]

type dftKey struct {
	n    int
	elem string
}

// sharedDFTPlan returns the cached plan of length n, building it once.
func sharedDFTPlan[T Float](n int) *dftPlan[T] {
	key := dftKey{n, dtypeName[T]()}
	if p, ok := dftPlans.Load(key); ok {
		return p.(*dftPlan[T])
	}
	p, _ := dftPlans.LoadOrStore(key, newDFTPlan[T](n))
	return p.(*dftPlan[T])
}

func newDFTPlan[T Float](n int) *dftPlan[T] {
	w := 2 * (n + 1)
	p := &dftPlan[T]{n: n, f: make([]T, w*n), g: make([]T, n*w), fc: make([]T, w*(2*n-1)), hc: make([]T, (2*n-1)*w)}
	inv := 1 / float64(2*n)
	// cos and sin of πmt/n for the integer mt mod 2n (exact symmetries).
	cs := make([]float64, 2*n)
	sn := make([]float64, 2*n)
	for k := range cs {
		cs[k] = math.Cos(math.Pi * float64(k) / float64(n))
		sn[k] = math.Sin(math.Pi * float64(k) / float64(n))
	}
	weight := func(m int) float64 {
		if m == 0 || m == n {
			return inv
		}
		return 2 * inv
	}
	for m := 0; m <= n; m++ {
		for j := 0; j < n; j++ {
			a := (m * j) % (2 * n)
			p.f[m*n+j] = T(cs[a])
			p.f[(n+1+m)*n+j] = T(-sn[a])
			p.g[j*w+m] = T(weight(m) * cs[a])
			if m > 0 && m < n {
				p.g[j*w+n+1+m] = T(-2 * inv * sn[a])
			}
		}
		for k := -(n - 1); k < n; k++ {
			t := (k + 2*n) % (2 * n)
			a := (m * t) % (2 * n)
			r := k + n - 1
			p.fc[m*(2*n-1)+r] = T(cs[a])
			p.fc[(n+1+m)*(2*n-1)+r] = T(-sn[a])
			p.hc[r*w+m] = T(weight(m) * cs[a])
			if m > 0 && m < n {
				p.hc[r*w+n+1+m] = T(-2 * inv * sn[a])
			}
		}
	}
	return p
}

// dftForward is toeplitzFFT.forward by dense DFT products.
func (t *toeplitzFFT[T]) dftForward(x []T, batch int, coef []T) []T {
	n, e, p := t.n, t.e, t.plan
	w := 2 * (n + 1)
	t.kd = grow(t.kd, w*e)
	gemmRows(false, false, w, e, 2*n-1, 1, p.fc, 2*n-1, coef, e, 0, t.kd, e)
	t.xd = grow(t.xd, batch*w*e)
	t.wd = grow(t.wd, batch*w*e)
	t.y = grow(t.y, batch*n*e)
	parallel.Chunks(batch, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			xs := t.xd[b*w*e : (b+1)*w*e]
			ys := t.wd[b*w*e : (b+1)*w*e]
			gemm(false, false, w, e, n, 1, p.f, n, x[b*n*e:], e, 0, xs, e)
			cmul(ys, xs, t.kd, n, e, false)
			gemm(false, false, n, e, w, 1, p.g, w, ys, e, 0, t.y[b*n*e:], e)
		}
	})
	return t.y
}

// dftBackward is toeplitzFFT.backward by dense DFT products.
func (t *toeplitzFFT[T]) dftBackward(dy []T) []T {
	n, e, p, batch := t.n, t.e, t.plan, t.batch
	w := 2 * (n + 1)
	t.dx = grow(t.dx, batch*n*e)
	t.dyd = grow(t.dyd, batch*w*e)
	parallel.Chunks(batch, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			ds := t.dyd[b*w*e : (b+1)*w*e]
			ps := t.wd[b*w*e : (b+1)*w*e]
			gemm(false, false, w, e, n, 1, p.f, n, dy[b*n*e:], e, 0, ds, e)
			cmul(ps, ds, t.kd, n, e, true)
			gemm(false, false, n, e, w, 1, p.g, w, ps, e, 0, t.dx[b*n*e:], e)
		}
	})
	// S = Σ_b DY_b ⊙ conj(X_b), summed over b in order for every bin.
	t.sd = grow(t.sd, w*e)
	parallel.Chunks(n+1, 16, func(_, lo, hi int) {
		for m := lo; m < hi; m++ {
			sr := t.sd[m*e : (m+1)*e]
			si := t.sd[(n+1+m)*e : (n+2+m)*e]
			clear(sr)
			clear(si)
			for b := 0; b < batch; b++ {
				base := b * w * e
				dr, di := t.dyd[base+m*e:base+(m+1)*e], t.dyd[base+(n+1+m)*e:base+(n+2+m)*e]
				xr, xi := t.xd[base+m*e:base+(m+1)*e], t.xd[base+(n+1+m)*e:base+(n+2+m)*e]
				for c := range sr {
					sr[c] += dr[c]*xr[c] + di[c]*xi[c]
					si[c] += di[c]*xr[c] - dr[c]*xi[c]
				}
			}
		}
	})
	gemmRows(false, false, 2*n-1, e, w, 1, p.hc, w, t.sd, e, 0, t.dcoef, e)
	return t.dx
}

// cmul sets out = a ⊙ k (or a ⊙ conj(k)) for spectra stored as real rows
// 0…n then imaginary rows, e columns.
func cmul[T Float](out, a, k []T, n, e int, conjugate bool) {
	for m := 0; m <= n; m++ {
		ar, ai := a[m*e:(m+1)*e], a[(n+1+m)*e:(n+2+m)*e]
		kr, ki := k[m*e:(m+1)*e], k[(n+1+m)*e:(n+2+m)*e]
		or, oi := out[m*e:(m+1)*e], out[(n+1+m)*e:(n+2+m)*e]
		if conjugate {
			for c := range ar {
				or[c] = ar[c]*kr[c] + ai[c]*ki[c]
				oi[c] = ai[c]*kr[c] - ar[c]*ki[c]
			}
		} else {
			for c := range ar {
				or[c] = ar[c]*kr[c] - ai[c]*ki[c]
				oi[c] = ai[c]*kr[c] + ar[c]*ki[c]
			}
		}
	}
}
