package native

import (
	"math"
	"sync"
)

// dftMaxLength is the longest sequence whose Toeplitz products run as
// dense real-DFT products through the BLAS instead of FFTs: the transform
// of a batch of B sequences of e channels is then two ((n+1)×(n/2+1))·
// ((n/2+1)×e) products per sequence, O(n²e) operations against
// O(n log n·e) for the FFT, but at BLAS speed. Measured (float32, B = 16,
// e = 128, forward and backward, OpenBLAS on 2 cores, load average 2-4):
// 34 against 203 ms at n = 256, 119 against 452 ms at n = 512, 427
// against 844 ms at n = 1024, 1377 against 1155 ms at n = 2048. A
// variable so that the tests can run both forms.
var dftMaxLength = 1024

// dftPlan holds the real-DFT matrices of the circulant embedding of size
// 2n, split by the symmetry of the sequence positions j ↔ n − j (one
// radix-2 step: cos(πm(n−j)/n) = (−1)^m cos(πmj/n), sin(πm(n−j)/n) =
// −(−1)^m sin(πmj/n)), which halves the products. A spectrum (bins m =
// 0…n) is stored as 2(n+1) rows of e channels in two blocks: block 1
// holds the real parts of the even bins then the imaginary parts of the
// odd bins, which depend on the sums U = (x₀, x_j + x_{n−j}, x_{n/2}) only;
// block 2 holds the real parts of the odd bins and the imaginary parts of
// the even bins, which depend on the differences V = (x₀, x_j − x_{n−j}),
// j = 1…h, h = ⌊(n−1)/2⌋. reRow and imRow give each bin's rows.
type dftPlan[T Float] struct {
	n, h       int
	nu, nv, np int   // rows of U (⌊n/2⌋+1), of V (h+1), of the half outputs (⌊n/2⌋+1)
	a1, a2     []T   // (n+1)×nu, (n+1)×nv: the two blocks of the spectrum from U and V
	g1, g2     []T   // np×(n+1): the two halves of the inverse, P = g1·block 1, Q = g2·block 2
	fc         []T   // 2(n+1)×(2n−1): spectrum of the circulant column of coefficients
	hc         []T   // (2n−1)×2(n+1): the inverse at every lag, read as coefficients
	reRow      []int // row of bin m's real part
	imRow      []int // row of bin m's imaginary part
}

// dftPlans caches the plans by length and element type: they are
// read-only once built, so every layer of every model shares them.
var dftPlans sync.Map // dftKey → *dftPlan[T]

// dftKey identifies a cached plan.
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

// newDFTPlan builds the plan of length n.
func newDFTPlan[T Float](n int) *dftPlan[T] {
	w := 2 * (n + 1)
	h := (n - 1) / 2
	ne := n/2 + 1 // even bins in 0…n
	no := n + 1 - ne
	p := &dftPlan[T]{n: n, h: h, nu: n/2 + 1, nv: h + 1, np: n/2 + 1,
		fc: make([]T, w*(2*n-1)), hc: make([]T, (2*n-1)*w), reRow: make([]int, n+1), imRow: make([]int, n+1)}
	for m := 0; m <= n; m++ {
		if m%2 == 0 {
			p.reRow[m] = m / 2
			p.imRow[m] = n + 1 + no + m/2
		} else {
			p.reRow[m] = n + 1 + (m-1)/2
			p.imRow[m] = ne + (m-1)/2
		}
	}
	p.a1 = make([]T, (n+1)*p.nu)
	p.a2 = make([]T, (n+1)*p.nv)
	p.g1 = make([]T, p.np*(n+1))
	p.g2 = make([]T, p.np*(n+1))
	inv := 1 / float64(2*n)
	// cos and sin of πk/n for the integer k mod 2n (exact symmetries).
	cs := make([]float64, 2*n)
	sn := make([]float64, 2*n)
	for k := range cs {
		cs[k] = math.Cos(math.Pi * float64(k) / float64(n))
		sn[k] = math.Sin(math.Pi * float64(k) / float64(n))
	}
	// Weights of the inverse: real parts w_m, imaginary parts 2/(2n) for
	// 0 < m < n (the imaginary parts of bins 0 and n are ignored).
	wre := func(m int) float64 {
		if m == 0 || m == n {
			return inv
		}
		return 2 * inv
	}
	wim := func(m int) float64 {
		if m == 0 || m == n {
			return 0
		}
		return 2 * inv
	}
	for m := 0; m <= n; m++ {
		// Forward: block 1 rows from U, block 2 rows from V.
		re, im := p.reRow[m], p.imRow[m]
		var rowU, rowV []T
		if m%2 == 0 {
			rowU = p.a1[re*p.nu : (re+1)*p.nu]         // real part, even bin
			rowV = p.a2[(im-(n+1))*p.nv : (im-n)*p.nv] // imaginary part, even bin
			rowU[0] = 1                                // x₀
			for j := 1; j <= h; j++ {
				rowU[j] = T(cs[(m*j)%(2*n)])
				rowV[j] = T(-sn[(m*j)%(2*n)])
			}
			if n%2 == 0 {
				rowU[p.nu-1] = T(cs[(m*n/2)%(2*n)])
			}
		} else {
			rowV = p.a2[(re-(n+1))*p.nv : (re-n)*p.nv] // real part, odd bin
			rowU = p.a1[im*p.nu : (im+1)*p.nu]         // imaginary part, odd bin
			rowV[0] = 1
			for j := 1; j <= h; j++ {
				rowV[j] = T(cs[(m*j)%(2*n)])
				rowU[j] = T(-sn[(m*j)%(2*n)])
			}
			if n%2 == 0 {
				rowU[p.nu-1] = T(-sn[(m*n/2)%(2*n)])
			}
		}
		// Inverse halves: P_j gathers the terms that keep their sign under
		// j → n − j (block 1), Q_j those that change it (block 2).
		for j := 0; j < p.np; j++ {
			a := (m * j) % (2 * n)
			if m%2 == 0 {
				p.g1[j*(n+1)+re] = T(wre(m) * cs[a])
				p.g2[j*(n+1)+im-(n+1)] = T(-wim(m) * sn[a])
			} else {
				p.g2[j*(n+1)+re-(n+1)] = T(wre(m) * cs[a])
				p.g1[j*(n+1)+im] = T(-wim(m) * sn[a])
			}
		}
		// Coefficients (lags k = −(n−1)…n−1, lag t = k mod 2n) to spectrum
		// and back.
		for k := -(n - 1); k < n; k++ {
			a := (m * ((k + 2*n) % (2 * n))) % (2 * n)
			r := k + n - 1
			p.fc[re*(2*n-1)+r] = T(cs[a])
			p.fc[im*(2*n-1)+r] = T(-sn[a])
			p.hc[r*w+re] = T(wre(m) * cs[a])
			p.hc[r*w+im] = T(-wim(m) * sn[a])
		}
	}
	return p
}

// transform sets spec (2(n+1)×e) to the spectrum of the zero-padded
// sequence x (n×e), using u and v (nu×e, nv×e) as scratch.
func (p *dftPlan[T]) transform(spec, x, u, v []T, e int) {
	n, h := p.n, p.h
	copy(u[:e], x[:e])
	copy(v[:e], x[:e])
	for j := 1; j <= h; j++ {
		a, b := x[j*e:(j+1)*e], x[(n-j)*e:(n-j+1)*e]
		us, vs := u[j*e:(j+1)*e], v[j*e:(j+1)*e]
		for c := range a {
			us[c] = a[c] + b[c]
			vs[c] = a[c] - b[c]
		}
	}
	if n%2 == 0 && n > 0 {
		copy(u[(p.nu-1)*e:p.nu*e], x[(n/2)*e:(n/2+1)*e])
	}
	gemm(false, false, n+1, e, p.nu, 1, p.a1, p.nu, u, e, 0, spec, e)
	gemm(false, false, n+1, e, p.nv, 1, p.a2, p.nv, v, e, 0, spec[(n+1)*e:], e)
}

// inverse sets y (n×e) to the first n samples of the inverse transform of
// spec, using pq (2·np×e) as scratch.
func (p *dftPlan[T]) inverse(y, spec, pq []T, e int) {
	n, h, np := p.n, p.h, p.np
	pp, qq := pq[:np*e], pq[np*e:2*np*e]
	gemm(false, false, np, e, n+1, 1, p.g1, n+1, spec, e, 0, pp, e)
	gemm(false, false, np, e, n+1, 1, p.g2, n+1, spec[(n+1)*e:], e, 0, qq, e)
	for j := 0; j < np; j++ {
		a, b := pp[j*e:(j+1)*e], qq[j*e:(j+1)*e]
		out := y[j*e : (j+1)*e]
		for c := range a {
			out[c] = a[c] + b[c]
		}
		if j >= 1 && j <= h {
			out := y[(n-j)*e : (n-j+1)*e]
			for c := range a {
				out[c] = a[c] - b[c]
			}
		}
	}
}

// dftScratch returns per-sequence scratch of the transforms for batch
// sequences.
func (t *toeplitzFFT[T]) dftScratch(batch int) (u, v, pq []T) {
	p := t.plan
	e := t.e
	t.us = grow(t.us, batch*p.nu*e)
	t.vs = grow(t.vs, batch*p.nv*e)
	t.pqs = grow(t.pqs, batch*2*p.np*e)
	return t.us, t.vs, t.pqs
}

// dftForward is toeplitzFFT.forward by dense DFT products.
func (t *toeplitzFFT[T]) dftForward(x []T, batch int, coef []T) []T {
	n, e, p := t.n, t.e, t.plan
	w := 2 * (n + 1)
	t.kd = grow(t.kd, w*e)
	gemmCols(false, false, w, e, 2*n-1, 1, p.fc, 2*n-1, coef, e, 0, t.kd, e)
	t.xd = grow(t.xd, batch*w*e)
	t.wd = grow(t.wd, batch*w*e)
	t.y = grow(t.y, batch*n*e)
	u, v, pq := t.dftScratch(batch)
	chunks(batch, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			xs := t.xd[b*w*e : (b+1)*w*e]
			ys := t.wd[b*w*e : (b+1)*w*e]
			p.transform(xs, x[b*n*e:(b+1)*n*e], u[b*p.nu*e:], v[b*p.nv*e:], e)
			cmul(ys, xs, t.kd, p, e, false)
			p.inverse(t.y[b*n*e:(b+1)*n*e], ys, pq[b*2*p.np*e:], e)
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
	u, v, pq := t.dftScratch(batch)
	chunks(batch, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			ds := t.dyd[b*w*e : (b+1)*w*e]
			ps := t.wd[b*w*e : (b+1)*w*e]
			p.transform(ds, dy[b*n*e:(b+1)*n*e], u[b*p.nu*e:], v[b*p.nv*e:], e)
			cmul(ps, ds, t.kd, p, e, true)
			p.inverse(t.dx[b*n*e:(b+1)*n*e], ps, pq[b*2*p.np*e:], e)
		}
	})
	// S = Σ_b DY_b ⊙ conj(X_b), summed over b in order for every bin.
	t.sd = grow(t.sd, w*e)
	chunks(n+1, 16, func(_, lo, hi int) {
		for m := lo; m < hi; m++ {
			re, im := p.reRow[m], p.imRow[m]
			sr := t.sd[re*e : (re+1)*e]
			si := t.sd[im*e : (im+1)*e]
			clear(sr)
			clear(si)
			for b := 0; b < batch; b++ {
				base := b * w * e
				dr, di := t.dyd[base+re*e:base+(re+1)*e], t.dyd[base+im*e:base+(im+1)*e]
				xr, xi := t.xd[base+re*e:base+(re+1)*e], t.xd[base+im*e:base+(im+1)*e]
				for c := range sr {
					sr[c] += dr[c]*xr[c] + di[c]*xi[c]
					si[c] += di[c]*xr[c] - dr[c]*xi[c]
				}
			}
		}
	})
	gemmCols(false, false, 2*n-1, e, w, 1, p.hc, w, t.sd, e, 0, t.dcoef, e)
	return t.dx
}

// cmul sets out = a ⊙ k (or a ⊙ conj(k)) for spectra in the plan's row
// layout, e columns.
func cmul[T Float](out, a, k []T, p *dftPlan[T], e int, conjugate bool) {
	for m := 0; m <= p.n; m++ {
		re, im := p.reRow[m], p.imRow[m]
		ar, ai := a[re*e:(re+1)*e], a[im*e:(im+1)*e]
		kr, ki := k[re*e:(re+1)*e], k[im*e:(im+1)*e]
		or, oi := out[re*e:(re+1)*e], out[im*e:(im+1)*e]
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
