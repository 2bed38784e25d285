package nn

import (
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"

	"github.com/kernelkit/kernelkit/arch"
)

// Activation is an element-wise non-linearity on graph nodes.
type Activation func(*Node) *Node

// ActivationByName returns relu, gelu (exact, by erf) or silu (x·σ(x)), the
// activations of package toeplitz's MLPs.
func ActivationByName(name string) (Activation, error) {
	switch strings.ToLower(name) {
	case "relu":
		return activations.Relu, nil
	case "gelu":
		return activations.Gelu, nil
	case "silu", "swish":
		return silu, nil
	}
	return nil, fmt.Errorf("nn: unknown activation %q (want relu, gelu or silu)", name)
}

func silu(x *Node) *Node { return Mul(x, Logistic(x)) }

// MLP is a multilayer perceptron on rows: W[l] is in×out, B[l] has out
// entries; Act acts between layers, not after the last. It is the graph
// form of toeplitz.MLP (whose weights are out×in).
type MLP struct {
	W, B []*Node
	Act  Activation
}

// Apply returns the MLP outputs for the rows of x (P×in).
func (m MLP) Apply(x *Node) *Node {
	h := x
	for l := range m.W {
		h = Add(matMul(h, m.W[l]), InsertAxes(m.B[l], 0))
		if l+1 < len(m.W) {
			h = m.Act(h)
		}
	}
	return h
}

// ToeplitzMatrices returns the dense per-channel Toeplitz matrices T[l, i,
// j] = t^l_{i−j} (d×n×n) of coefficients coef ((2n−1)×d, coef[k+n−1] =
// t_k), gathered from the coefficients in one op.
func ToeplitzMatrices(coef *Node) *Node {
	m, d := coef.Shape().Dim(0), coef.Shape().Dim(1)
	if m%2 == 0 || coef.Rank() != 2 {
		panic(fmt.Sprintf("nn: Toeplitz coefficients must be (2n−1)×d, got %s", coef.Shape()))
	}
	n := (m + 1) / 2
	idx := make([]int32, d*n*n)
	for l := 0; l < d; l++ {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				idx[(l*n+i)*n+j] = int32(l*m + i - j + n - 1)
			}
		}
	}
	flat := Reshape(Transpose(coef, 0, 1), d*m, 1) // channel-major
	return Reshape(Gather(flat, constInt(coef.Graph(), idx, d*n*n, 1)), d, n, n)
}

// ToeplitzDense applies one Toeplitz matrix per channel, TNO(X) = (T¹x¹ …
// T^d x^d), to every sequence of x (B×n×d), with the coefficients coef
// ((2n−1)×d, coef[k+n−1] = t_k) expanded into dense n×n matrices: O(n²d)
// per sequence, the form for backends without an FFT op. The product runs
// as d matrix products T^l·[x^l of every sequence], laid out (channel,
// row, column) so that the backend needs no copies to normalise them. It
// panics on mismatched shapes.
func ToeplitzDense(x, coef *Node) *Node {
	n := x.Shape().Dim(1)
	if coef.Shape().Dim(0) != 2*n-1 || coef.Shape().Dim(1) != x.Shape().Dim(2) {
		panic(fmt.Sprintf("nn: Toeplitz coefficients %s for inputs %s", coef.Shape(), x.Shape()))
	}
	xt := TransposeAllAxes(x, 2, 0, 1)                                                  // d×B×n
	y := dotGeneral(ToeplitzMatrices(coef), []int{2}, []int{0}, xt, []int{2}, []int{0}) // d×n×B
	return TransposeAllAxes(y, 2, 1, 0)
}

// ToeplitzFFT is ToeplitzDense by FFT (Sec. 3.1): T is embedded in a
// circulant matrix of size 2n whose action is a pointwise product of real
// FFTs, O(n log n) per channel. It uses the backend's FFT op where it has
// one (HasFFT, e.g. XLA); elsewhere the same algorithm runs with an exact
// DFT-matrix product in place of the FFT, O(n²) per channel and limited to
// n ≤ 1024 (longer sequences panic): the form that lets the pure-Go
// backend test the algorithm. It panics on mismatched shapes.
func ToeplitzFFT(x, coef *Node) *Node {
	return toeplitzCirculant(realDFTFor(x.Graph().Backend()), x, coef)
}

// toeplitzCirculant is ToeplitzFFT with the transform pair f.
func toeplitzCirculant(f realDFT, x, coef *Node) *Node {
	g := x.Graph()
	n, d := x.Shape().Dim(1), x.Shape().Dim(2)
	if coef.Shape().Dim(0) != 2*n-1 || coef.Shape().Dim(1) != d {
		panic(fmt.Sprintf("nn: Toeplitz coefficients %s for inputs %s", coef.Shape(), x.Shape()))
	}
	// First column of the circulant: t_0 … t_{n−1}, 0, t_{−(n−1)} … t_{−1}.
	parts := []*Node{Slice(coef, AxisRange(n-1, 2*n-1))}
	parts = append(parts, Zeros(g, shapes.Make(coef.DType(), 1, d)))
	if n > 1 {
		parts = append(parts, Slice(coef, AxisRange(0, n-1)))
	}
	col := Transpose(Concatenate(parts, 0), 0, 1) // d×2n
	re, im := f.Forward(col)
	return circularApply(f, x, re, im)
}

// circularApply returns the first n outputs of the circular convolution
// (length 2n) of every zero-padded channel of x (B×n×d) with the kernel of
// spectrum re + i·im (d×(n+1) each): irFFT(spec ⊙ rFFT([x, 0])), the
// complex product written out in real arithmetic.
func circularApply(f realDFT, x, re, im *Node) *Node {
	g := x.Graph()
	b, n, d := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	xt := Transpose(x, 1, 2) // B×d×n
	xp := Concatenate([]*Node{xt, Zeros(g, shapes.Make(x.DType(), b, d, n))}, 2)
	xr, xi := f.Forward(xp)
	sr, si := InsertAxes(re, 0), InsertAxes(im, 0)
	yr := Sub(Mul(xr, sr), Mul(xi, si))
	yi := Add(Mul(xr, si), Mul(xi, sr))
	y := Slice(f.Inverse(yr, yi, 2*n), AxisRange(), AxisRange(), AxisRange(0, n))
	return Transpose(y, 1, 2)
}

// TNNCoefficients returns the coefficients of the TNN baseline's Toeplitz
// matrices, t^l_k = λ^|k|·RPE_l(k/n) for k = −(n−1)…n−1 ((2n−1)×d), the
// graph form of toeplitz.TNNKernels.
func TNNCoefficients(g *Graph, rpe MLP, n int, lambda float64) *Node {
	dtype := rpe.W[0].DType()
	pos := make([]float64, 2*n-1)
	decay := make([]float64, 2*n-1)
	for k := -(n - 1); k < n; k++ {
		pos[k+n-1] = float64(k) / float64(n)
		decay[k+n-1] = math.Pow(lambda, math.Abs(float64(k)))
	}
	v := rpe.Apply(constant(g, dtype, pos, 2*n-1, 1))
	return Mul(v, constant(g, dtype, decay, 2*n-1, 1))
}

// SKI applies the SKI-TNO of Algorithm 1 to x (B×N×d): per channel
// T_sparse x + W A Wᵀ x, where A_ij = RPE(x(p_i − p_j)) is the R×R Toeplitz
// Gram matrix of the piecewise linear RPE with grid values values (Grid×d;
// the middle row, RPE(0), is forced to zero) and T_sparse the 1-D
// convolution with filter (m×d, tap j at offset j − ⌊(m−1)/2⌋; nil for
// none). W is applied as a dense N×R product (the paper's practical form,
// Sec. 3.2.1). It panics on mismatched shapes.
func SKI(p *SKIPlan, x, values, filter *Node) *Node {
	return ski(p, x, values, filter, SparseConv)
}

// ski is SKI with the sparse convolution computed by conv.
func ski(p *SKIPlan, x, values, filter *Node, conv func(x, filter *Node) *Node) *Node {
	g := x.Graph()
	dtype := x.DType()
	n, d := x.Shape().Dim(1), x.Shape().Dim(2)
	if n != p.N || values.Shape().Dim(0) != p.Grid || values.Shape().Dim(1) != d {
		panic(fmt.Sprintf("nn: SKI plan for n=%d, grid=%d; inputs %s, values %s", p.N, p.Grid, x.Shape(), values.Shape()))
	}
	mask := make([]float64, p.Grid)
	for i := range mask {
		mask[i] = 1
	}
	mask[(p.Grid-1)/2] = 0
	v := Mul(values, constant(g, dtype, mask, p.Grid, 1))
	a := matMul(constant(g, dtype, p.M, 2*p.R-1, p.Grid), v) // (2R−1)×d
	w := constant(g, dtype, p.W, p.N, p.R)
	z := einsum("bnd,nr->brd", x, w)  // Wᵀx: B×R×d
	az := ToeplitzDense(z, a)         // A(Wᵀx)
	y := einsum("brd,nr->bnd", az, w) // W(AWᵀx)
	if filter != nil {
		y = Add(y, conv(x, filter))
	}
	return y
}

// SparseConv returns the per-channel 1-D convolution y_i = Σ_j f_j
// x_{i−o_j}, o_j = j − ⌊(m−1)/2⌋, of x (B×n×d) with filter (m×d): the
// action of a Toeplitz matrix with m non-zero diagonals (the convention of
// toeplitz.SKI's sparse filters). It gathers the m shifted copies of x in
// one op (a zero row stands for the positions outside the sequence) and
// sums them weighted by the taps, O(m·n·d) per sequence; gathers rather
// than slices because the pure-Go backend cannot differentiate slices.
func SparseConv(x, filter *Node) *Node {
	g := x.Graph()
	b, n, d := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	m := filter.Shape().Dim(0)
	if filter.Shape().Dim(1) != d {
		panic(fmt.Sprintf("nn: filter %s for inputs %s", filter.Shape(), x.Shape()))
	}
	c := (m - 1) / 2
	idx := make([]int32, m*n)
	for j := 0; j < m; j++ {
		for i := 0; i < n; i++ {
			src := i - (j - c)
			if src < 0 || src >= n {
				src = n // the zero row
			}
			idx[j*n+i] = int32(src)
		}
	}
	xt := Transpose(x, 0, 1) // n×B×d
	xt = Concatenate([]*Node{xt, Zeros(g, shapes.Make(x.DType(), 1, b, d))}, 0)
	sh := Gather(xt, constInt(g, idx, m, n, 1)) // m×n×B×d
	return einsum("jnbd,jd->bnd", sh, filter)
}

// SelectColumns returns columns lo…hi−1 of a matrix (P×C) as a product
// with a constant 0/1 matrix, differentiable on every backend (the
// pure-Go backend cannot differentiate slices).
func SelectColumns(x *Node, lo, hi int) *Node {
	c := x.Shape().Dim(1)
	if lo < 0 || hi > c || lo >= hi {
		panic(fmt.Sprintf("nn: columns %d…%d of %s", lo, hi-1, x.Shape()))
	}
	e := make([]float64, c*(hi-lo))
	for j := lo; j < hi; j++ {
		e[j*(hi-lo)+j-lo] = 1
	}
	return matMul(x, constant(x.Graph(), x.DType(), e, c, hi-lo))
}

// FDInput returns the RPE input of FD-TNO, cos ω_m at ω_m = mπ/n, m =
// 0…n ((n+1)×1): a smooth, even, 2π-periodic parametrisation of the
// frequency (toeplitz.MLPResponse).
func FDInput(g *Graph, dtype dtypes.DType, n int) *Node {
	c := make([]float64, n+1)
	for m := range c {
		c[m] = math.Cos(float64(m) * math.Pi / float64(n))
	}
	return constant(g, dtype, c, n+1, 1)
}

// FDCausalCoefficients returns the Toeplitz coefficients ((2n−1)×d) of the
// causal FD-TNO (Algorithm 2) whose real even frequency response is khat
// ((n+1)×d on ω_m = mπ/n): the kernel of k̂ − i·H{k̂}, zero at negative
// lags, computed as an inverse DFT matrix product.
func FDCausalCoefficients(khat *Node) *Node {
	n := khat.Shape().Dim(0) - 1
	re, _ := arch.FDMatrices(n, true)
	return matMul(constant(khat.Graph(), khat.DType(), re, 2*n-1, n+1), khat)
}

// FDBidirectionalCoefficients returns the Toeplitz coefficients ((2n−1)×d)
// of the bidirectional FD-TNO (Sec. 3.3.2) with complex response re + i·im
// ((n+1)×d each; the imaginary part is taken as zero at ω = 0 and π).
func FDBidirectionalCoefficients(re, im *Node) *Node {
	n := re.Shape().Dim(0) - 1
	mr, mi := arch.FDMatrices(n, false)
	g := re.Graph()
	return Add(matMul(constant(g, re.DType(), mr, 2*n-1, n+1), re), matMul(constant(g, im.DType(), mi, 2*n-1, n+1), im))
}

// FDCausalFFT is the causal FD-TNO by FFTs, as Algorithm 2: the Hilbert
// transform by irFFT → causal window → rFFT, then irFFT(k̂_causal ⊙
// rFFT([x, 0])). Like ToeplitzFFT it uses the backend's FFT op where it
// has one and an exact DFT-matrix product elsewhere (n ≤ 1024).
func FDCausalFFT(x, khat *Node) *Node {
	return fdCausalCirculant(realDFTFor(x.Graph().Backend()), x, khat)
}

// fdCausalCirculant is FDCausalFFT with the transform pair f.
func fdCausalCirculant(f realDFT, x, khat *Node) *Node {
	g := x.Graph()
	n := x.Shape().Dim(1)
	if khat.Shape().Dim(0) != n+1 || khat.Shape().Dim(1) != x.Shape().Dim(2) {
		panic(fmt.Sprintf("nn: FD response %s for inputs %s", khat.Shape(), x.Shape()))
	}
	kt := Transpose(khat, 0, 1)            // d×(n+1)
	h := f.Inverse(kt, ZerosLike(kt), 2*n) // d×2n
	win := make([]float64, 2*n)
	win[0], win[n] = 1, 1
	for t := 1; t < n; t++ {
		win[t] = 2
	}
	h = Mul(h, constant(g, h.DType(), win, 1, 2*n))
	re, im := f.Forward(h)
	return circularApply(f, x, re, im)
}

// FDBidirectionalFFT is the bidirectional FD-TNO by FFTs: irFFT((re +
// i·im) ⊙ rFFT([x, 0])), the imaginary part zeroed at ω = 0 and π. Like
// ToeplitzFFT it uses the backend's FFT op where it has one and an exact
// DFT-matrix product elsewhere (n ≤ 1024).
func FDBidirectionalFFT(x, re, im *Node) *Node {
	return fdBidirectionalCirculant(realDFTFor(x.Graph().Backend()), x, re, im)
}

// fdBidirectionalCirculant is FDBidirectionalFFT with the transform pair f.
func fdBidirectionalCirculant(f realDFT, x, re, im *Node) *Node {
	g := x.Graph()
	n := x.Shape().Dim(1)
	if re.Shape().Dim(0) != n+1 || im.Shape().Dim(0) != n+1 || re.Shape().Dim(1) != x.Shape().Dim(2) || im.Shape().Dim(1) != x.Shape().Dim(2) {
		panic(fmt.Sprintf("nn: FD response %s, %s for inputs %s", re.Shape(), im.Shape(), x.Shape()))
	}
	mask := make([]float64, n+1)
	for m := 1; m < n; m++ {
		mask[m] = 1
	}
	im = Mul(im, constant(g, im.DType(), mask, n+1, 1))
	return circularApply(f, x, Transpose(re, 0, 1), Transpose(im, 0, 1))
}
