package nn

import (
	"fmt"
	"math"
	"slices"
	"sync"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// The dense Toeplitz product (ToeplitzDense) gathers d matrices of n×n
// coefficients, multiplies each by the n×B matrix of its channel and, in
// the backward pass, scatters the n×n cotangents back onto the 2n−1
// coefficients. On the pure-Go backend at n = 512 the gather and the
// scatter (element by element) and the badly shaped products (n×n by n×8)
// take ~90 % of a TNN training step (profile of kernelkit train --model
// tnn --length 512). ToeplitzSpectral computes the same product with a DFT
// over blocks of the sequence and dense b×b products inside the
// frequencies: O(n^1.5) per channel instead of O(n²), no n×n matrix, and
// gathers (and scatters) of ~4n coefficients per channel instead of n².
// Its b×b Toeplitz blocks are expanded from their 2b−1 distinct
// entries without a gather by the skew trick (expandSkew), whose slices
// have no gradient on the pure-Go backend (GoMLX's Slice VJP uses the Pad
// op, which that backend lacks); slices built here (sliceAxes) carry a
// backward pass that pads by concatenating zeros.

type sliceBounds struct{ starts, limits []int }

var (
	padFreeSlices sync.Map // *Node → sliceBounds
	installSlice  sync.Once
)

func init() { installSlice.Do(wrapSliceVJP) }

func wrapSliceVJP() {
	orig := VJPRegistration[NodeTypeSlice]
	VJPRegistration[NodeTypeSlice] = func(node *Node, vjps []*Node, out shapes.Shape) []*Node {
		if sb, ok := padFreeSlices.Load(node); ok {
			return []*Node{padWithZeros(vjps[0], node.Inputs()[0].Shape(), sb.(sliceBounds))}
		}
		return orig(node, vjps, out)
	}
}

// sliceAxes returns x[starts[0]:limits[0], …] (unit strides, every axis
// given) with a backward pass that needs no Pad op.
func sliceAxes(x *Node, starts, limits []int) *Node {
	if len(starts) != x.Rank() || len(limits) != x.Rank() {
		panic(fmt.Sprintf("nn: slice bounds %v, %v for %s", starts, limits, x.Shape()))
	}
	spec := make([]SliceAxisSpec, x.Rank())
	for a := range spec {
		spec[a] = AxisRange(starts[a], limits[a])
	}
	y := Slice(x, spec...)
	if y != x {
		padFreeSlices.Store(y, sliceBounds{slices.Clone(starts), slices.Clone(limits)})
	}
	return y
}

// padWithZeros embeds the cotangent v of a slice into zeros of the
// operand's shape, axis by axis, by concatenation.
func padWithZeros(v *Node, in shapes.Shape, sb sliceBounds) *Node {
	g := v.Graph()
	for a := range sb.starts {
		before, after := sb.starts[a], in.Dimensions[a]-sb.limits[a]
		if before == 0 && after == 0 {
			continue
		}
		parts := make([]*Node, 0, 3)
		zeros := func(k int) *Node {
			dims := slices.Clone(v.Shape().Dimensions)
			dims[a] = k
			return Zeros(g, shapes.Make(v.DType(), dims...))
		}
		if before > 0 {
			parts = append(parts, zeros(before))
		}
		parts = append(parts, v)
		if after > 0 {
			parts = append(parts, zeros(after))
		}
		v = Concatenate(parts, a)
	}
	return v
}

// toeplitzBlocks returns, for coefficients coef ((2np−1)×d, np = nb·b),
// the vectors v[c, δ, j] = t^c_{(δ−nb+1)b + ((b−1−j) mod L) − (b−1)}, L =
// 2b−1, δ = 0…2nb−2 (d×(2nb−1)×L): the block of lag δ−nb+1, T[p, q] =
// t_{(δ−nb+1)b+p−q}, is v[c, δ, (q−p) mod L] at (p, q) (see expandSkew).
func toeplitzBlocks(coef *Node, nb, b int) *Node {
	g := coef.Graph()
	m, d := coef.Shape().Dim(0), coef.Shape().Dim(1)
	nd, l := 2*nb-1, 2*b-1
	idx := make([]int32, d*nd*l)
	for c := 0; c < d; c++ {
		for dl := 0; dl < nd; dl++ {
			for j := 0; j < l; j++ {
				idx[(c*nd+dl)*l+j] = int32(c*m + dl*b + (b-1-j+l)%l)
			}
		}
	}
	flat := Reshape(Transpose(coef, 0, 1), d*m, 1) // channel-major
	return Reshape(Gather(flat, constInt(g, idx, d*nd*l, 1)), d, nd, l)
}

// expandSkew returns the b×b matrices M[…, p, q] = v[…, (q−p) mod L] of
// vectors v (…×L, L = 2b−1) without a gather: b copies of v read as rows of
// length L−1 hold v[(j−p) mod L] at (p, j); their first b columns are M.
func expandSkew(v *Node, b int) *Node {
	dims := v.Shape().Dimensions
	l := dims[len(dims)-1]
	lead := slices.Clone(dims[:len(dims)-1])
	r := len(lead)
	t := BroadcastToDims(InsertAxes(v, r), append(slices.Clone(lead), b, l)...)
	t = Reshape(t, append(slices.Clone(lead), b*l)...)
	zeros := make([]int, r+1)
	t = sliceAxes(t, zeros, append(slices.Clone(lead), b*(l-1)))
	t = Reshape(t, append(slices.Clone(lead), b, l-1)...)
	return sliceAxes(t, make([]int, r+2), append(slices.Clone(lead), b, b))
}

// ToeplitzSpectral is ToeplitzDense by a DFT over blocks: the block
// Toeplitz matrix (nb×nb blocks of b×b, nb = ⌈n/b⌉) is embedded in a block
// circulant of P = 2nb blocks, which the DFT over the block index
// diagonalises: with ω = e^{−2πi/P},
//
//	X̂_k = Σ_J ω^{kJ} x_J,   Ĉ_k = Σ_δ ω^{kδ} T_δ,   Ŷ_k = Ĉ_k X̂_k,
//	y_I = (1/P) Σ_k ω^{−kI} Ŷ_k,   k = 0…nb (real inputs: Hermitian),
//
// the transforms as products with constant cos/sin matrices and Ĉ_k
// expanded from its 2b−1 distinct entries (Ĉ_k is Toeplitz). Per channel
// and sequence it costs ~4nb·n + 4n·b multiply-adds (about 8n^1.5 at b ≈
// √n) against n² for the dense product, with no n×n matrix, a gather of
// only (2n/b)(2b−1) coefficients per channel (whose gradient is the only
// scatter), and every op available on the pure-Go backend.
// block ≤ 0 picks b = ⌈√n⌉ rounded up to a power of two; lengths that are
// not a multiple of the block are padded with zeros. It panics on
// mismatched shapes.
func ToeplitzSpectral(x, coef *Node, block int) *Node {
	g := x.Graph()
	dt := x.DType()
	bs, n, d := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	if coef.Rank() != 2 || coef.Shape().Dim(0) != 2*n-1 || coef.Shape().Dim(1) != d {
		panic(fmt.Sprintf("nn: Toeplitz coefficients %s for inputs %s", coef.Shape(), x.Shape()))
	}
	b := block
	if b <= 0 {
		b = 2
		for b*b < n {
			b *= 2
		}
	}
	b = min(b, n)
	if b < 2 {
		return ToeplitzDense(x, coef)
	}
	nb := (n + b - 1) / b
	np := nb * b
	if pad := np - n; pad > 0 {
		x = Concatenate([]*Node{x, Zeros(g, shapes.Make(dt, bs, pad, d))}, 1)
		z := Zeros(g, shapes.Make(dt, pad, d))
		coef = Concatenate([]*Node{z, coef, z}, 0)
	}
	p := 2 * nb
	nk := nb + 1
	nd := 2*nb - 1
	// Spectrum of the blocks: Ĉ_k from v (lag δ−nb+1 at index δ).
	fre, fim := make([]float64, nk*nd), make([]float64, nk*nd)
	for k := 0; k < nk; k++ {
		for dl := 0; dl < nd; dl++ {
			c, s := cosSin(k*(dl-nb+1), p)
			fre[k*nd+dl], fim[k*nd+dl] = c, -s
		}
	}
	v := toeplitzBlocks(coef, nb, b) // d×nd×L
	cre := einsum("cel,ke->ckl", v, constant(g, dt, fre, nk, nd))
	cim := einsum("cel,ke->ckl", v, constant(g, dt, fim, nk, nd))
	y := blockSpectralApply(x, cre, cim, b)
	if np > n {
		y = sliceAxes(y, []int{0, 0, 0}, []int{bs, n, d})
	}
	return y
}

// cosSin returns cos and sin of 2πj/p, with j reduced modulo p first.
func cosSin(j, p int) (c, s float64) {
	s, c = math.Sincos(2 * math.Pi * float64((j%p+p)%p) / float64(p))
	return c, s
}

// blockSpectralApply returns y = T x for x (B×n×d, n = nb·b) and the
// block-circulant spectrum of T given as cre + i·cim (d×(nb+1)×(2b−1)):
// entry j of frequency k is ĉ_k at offset r = −j (j < b) or 2b−1−j (j ≥
// b), the order expandSkew reads, so that Ĉ_k[p, q] = ĉ_k[p−q].
func blockSpectralApply(x, cre, cim *Node, b int) *Node {
	g := x.Graph()
	dt := x.DType()
	bs, n, d := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	nb := n / b
	p := 2 * nb
	nk := nb + 1
	mre, mim := expandSkew(cre, b), expandSkew(cim, b) // d×nk×b×b
	// Spectrum of the inputs.
	gre, gim := make([]float64, nk*nb), make([]float64, nk*nb)
	for k := 0; k < nk; k++ {
		for j := 0; j < nb; j++ {
			c, s := cosSin(k*j, p)
			gre[k*nb+j], gim[k*nb+j] = c, -s
		}
	}
	xb := Reshape(x, bs, nb, b, d)
	xre := einsum("zjqc,kj->ckzq", xb, constant(g, dt, gre, nk, nb))
	xim := einsum("zjqc,kj->ckzq", xb, constant(g, dt, gim, nk, nb))
	yre := Sub(einsum("ckpq,ckzq->ckpz", mre, xre), einsum("ckpq,ckzq->ckpz", mim, xim))
	yim := Add(einsum("ckpq,ckzq->ckpz", mre, xim), einsum("ckpq,ckzq->ckpz", mim, xre))
	// Inverse: y_I = (1/P)[Ŷ_0 + (−1)^I Ŷ_nb + 2Σ_{0<k<nb}(Re Ŷ_k cos − Im Ŷ_k sin)(2πkI/P)].
	hre, him := make([]float64, nb*nk), make([]float64, nb*nk)
	for i := 0; i < nb; i++ {
		for k := 0; k < nk; k++ {
			c, s := cosSin(k*i, p)
			w := 2 / float64(p)
			if k == 0 || k == nb {
				w = 1 / float64(p)
			}
			hre[i*nk+k], him[i*nk+k] = w*c, -w*s
		}
	}
	y := Add(einsum("ckpz,ik->zipc", yre, constant(g, dt, hre, nb, nk)), einsum("ckpz,ik->zipc", yim, constant(g, dt, him, nb, nk)))
	return Reshape(y, bs, n, d)
}

// FDBidirectionalSpectral is the bidirectional FD-TNO (Sec. 3.3.2) with
// complex frequency response re + i·im ((n+1)×d each on ω_m = mπ/n; the
// imaginary part taken as zero at ω = 0 and π), equal to ToeplitzDense(x,
// FDBidirectionalCoefficients(re, im)), computed without the time-domain
// kernel. The 2n×2n circulant of the response is block circulant with 2nb
// blocks of b×b (b dividing n), and its block spectrum is a b-term alias
// sum of the response H (Hermitian-extended to 2n bins):
//
//	ĉ_k[r] = (1/b) Σ_{s<b} H[k + 2nb·s] e^{iπ(k+2nb·s)r/n},   r ∈ (−b, b),
//
// O(nb·b²) per channel instead of the O(n²) inverse DFT of
// FDBidirectionalCoefficients; the product then runs as in
// ToeplitzSpectral. block ≤ 0 picks the divisor b of n nearest √n; when
// the block is not a divisor of n or is below 2, the time-domain
// coefficients and ToeplitzSpectral are used. It panics on mismatched
// shapes.
func FDBidirectionalSpectral(x, re, im *Node, block int) *Node {
	g := x.Graph()
	dt := x.DType()
	n, d := x.Shape().Dim(1), x.Shape().Dim(2)
	if re.Rank() != 2 || re.Shape().Dim(0) != n+1 || re.Shape().Dim(1) != d || !im.Shape().Equal(re.Shape()) {
		panic(fmt.Sprintf("nn: FD response %s, %s for inputs %s", re.Shape(), im.Shape(), x.Shape()))
	}
	b := block
	if b <= 0 {
		b = 1
		for c := 1; c <= n; c++ {
			if n%c == 0 && math.Abs(math.Log(float64(c*c)/float64(n))) < math.Abs(math.Log(float64(b*b)/float64(n))) {
				b = c
			}
		}
	}
	if b < 2 || b > n || n%b != 0 {
		return ToeplitzSpectral(x, FDBidirectionalCoefficients(re, im), 0)
	}
	nb := n / b
	p := 2 * nb
	nk := nb + 1
	l := 2*b - 1
	// Gather H[k + p·s] for k ≤ nb, s < b from the n+1 stored bins:
	// H[2n−m] = conj(H[m]), imaginary parts zero at bins 0 and n.
	idx := make([]int32, nk*b)
	sign := make([]float64, nk*b)
	cm, sm := make([]float64, nk*l*b), make([]float64, nk*l*b)
	for k := 0; k < nk; k++ {
		for s := 0; s < b; s++ {
			m := k + p*s
			src, sg := m, 1.0
			if m > n {
				src, sg = 2*n-m, -1
			}
			if src == 0 || src == n {
				sg = 0
			}
			idx[k*b+s], sign[k*b+s] = int32(src), sg
			for j := 0; j < l; j++ {
				r := -j
				if j >= b {
					r = l - j
				}
				c, sn := cosSin(m*r, 2*n)
				cm[(k*l+j)*b+s], sm[(k*l+j)*b+s] = c/float64(b), sn/float64(b)
			}
		}
	}
	ix := constInt(g, idx, nk*b, 1)
	a := Reshape(Gather(re, ix), nk, b, d)
	bb := Mul(Reshape(Gather(im, ix), nk, b, d), constant(g, dt, sign, nk, b, 1))
	c := constant(g, dt, cm, nk, l, b)
	sn := constant(g, dt, sm, nk, l, b)
	// ĉ = (C + iS)(A + iB)/b per frequency: re = CA − SB, im = SA + CB.
	cre := Sub(einsum("kjs,ksc->ckj", c, a), einsum("kjs,ksc->ckj", sn, bb))
	cim := Add(einsum("kjs,ksc->ckj", sn, a), einsum("kjs,ksc->ckj", c, bb))
	return blockSpectralApply(x, cre, cim, b)
}
