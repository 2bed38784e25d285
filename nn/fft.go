package nn

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
)

// realDFT is the real discrete Fourier transform of the last axis of a
// node and its inverse, with the bins and normalisation of GoMLX's
// RealFFT and InverseRealFFT (numpy's rfft/irfft): for x of length n,
// Forward returns X_k = Σ_t x_t e^{−2πikt/n}, k = 0…⌊n/2⌋ (n/2+1 bins,
// unnormalised), as real and imaginary parts; Inverse returns the real
// x_t = (1/n) Σ_{k=0}^{n−1} X_k e^{2πikt/n} of the Hermitian extension of
// the bins, ignoring the imaginary parts of bin 0 and (n even) bin n/2.
// The spectrum is carried as two real nodes so that backends without
// complex types (the pure-Go one) can run the substitute.
type realDFT interface {
	Forward(x *Node) (re, im *Node)
	Inverse(re, im *Node, n int) *Node
}

// fftOp is realDFT by the backend's FFT op (XLA).
type fftOp struct{}

func (fftOp) Forward(x *Node) (re, im *Node) {
	c := RealFFT(x)
	return Real(c), Imag(c)
}

func (fftOp) Inverse(re, im *Node, n int) *Node {
	return InverseRealFFT(Complex(re, im), n)
}

// maxDFTMatrix is the longest transform the DFT-matrix substitute builds.
// Each Forward or Inverse call builds two constant matrices of n·(n/2+1)
// values, 2·(n/2+1)·n in all: 33.6 MB in float64 at n = 2048 (134 MB at
// n = 4096). The Toeplitz forms transform length 2n for sequences of
// length n and build several: ToeplitzFFT 3 transforms, FDCausalFFT 4,
// FDBidirectionalFFT 2, so that at this limit (sequences of up to 1024)
// one call holds at most 134 MB (128 MiB) of constants, where n = 4096
// took 403 MB and 537 MB. A product costs O(n²) per row.
const maxDFTMatrix = 2048

// dftMatrix is realDFT as products with constant cos/sin matrices
// (computed in float64 with the angles reduced exactly, then converted to
// the node's dtype): exact to rounding on any backend, O(n²) per
// transformed row, for small n (at most maxDFTMatrix; longer transforms
// panic). It substitutes for the FFT op on backends without it.
type dftMatrix struct{}

// dftCosSin returns cos and sin of 2πj/n, exact at multiples of a quarter
// turn (so that sin vanishes exactly at bins 0 and n/2).
func dftCosSin(j, n int) (c, s float64) {
	j %= n
	switch {
	case j == 0:
		return 1, 0
	case 4*j == n:
		return 0, 1
	case 2*j == n:
		return -1, 0
	case 4*j == 3*n:
		return 0, -1
	}
	s, c = math.Sincos(2 * math.Pi * float64(j) / float64(n))
	return c, s
}

func checkDFTLength(n int) {
	if n < 1 || n > maxDFTMatrix {
		panic(fmt.Sprintf("nn: DFT-matrix transform of length %d (want 1…%d; longer transforms need a backend with the FFT op)", n, maxDFTMatrix))
	}
}

// Forward returns x·C and x·S with C_tk = cos(2πkt/n), S_tk = −sin(2πkt/n)
// (n×(n/2+1)).
func (dftMatrix) Forward(x *Node) (re, im *Node) {
	n := x.Shape().Dim(-1)
	checkDFTLength(n)
	nb := n/2 + 1
	c := make([]float64, n*nb)
	s := make([]float64, n*nb)
	for t := 0; t < n; t++ {
		for k := 0; k < nb; k++ {
			co, si := dftCosSin(k*t, n)
			c[t*nb+k] = co
			s[t*nb+k] = -si
		}
	}
	g := x.Graph()
	last := []int{x.Rank() - 1}
	re = dotGeneral(x, last, nil, constant(g, x.DType(), c, n, nb), []int{0}, nil)
	im = dotGeneral(x, last, nil, constant(g, x.DType(), s, n, nb), []int{0}, nil)
	return re, im
}

// Inverse returns re·A + im·B with A_kt = w_k cos(2πkt/n)/n and B_kt =
// −w_k sin(2πkt/n)/n ((n/2+1)×n), w_k = 1 at bin 0 and (n even) bin n/2
// and 2 elsewhere: the Hermitian extension written out. sin vanishes at
// bins 0 and n/2, so their imaginary parts are ignored, as InverseRealFFT
// ignores them.
func (dftMatrix) Inverse(re, im *Node, n int) *Node {
	checkDFTLength(n)
	nb := n/2 + 1
	if re.Shape().Dim(-1) != nb || im.Shape().Dim(-1) != nb {
		panic(fmt.Sprintf("nn: inverse real DFT of length %d needs %d bins, got %s and %s", n, nb, re.Shape(), im.Shape()))
	}
	a := make([]float64, nb*n)
	b := make([]float64, nb*n)
	inv := 1 / float64(n)
	for k := 0; k < nb; k++ {
		w := 2 * inv
		if k == 0 || 2*k == n {
			w = inv
		}
		for t := 0; t < n; t++ {
			co, si := dftCosSin(k*t, n)
			a[k*n+t] = w * co
			b[k*n+t] = -w * si
		}
	}
	g := re.Graph()
	last := []int{re.Rank() - 1}
	return Add(dotGeneral(re, last, nil, constant(g, re.DType(), a, nb, n), []int{0}, nil),
		dotGeneral(im, last, nil, constant(g, im.DType(), b, nb, n), []int{0}, nil))
}

// realDFTFor returns the FFT op on backends that have it and the
// DFT-matrix substitute on the others.
func realDFTFor(b backends.Backend) realDFT {
	if HasFFT(b) {
		return fftOp{}
	}
	return dftMatrix{}
}
