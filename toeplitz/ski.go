package toeplitz

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/parallel"
)

// Interp selects the SKI interpolation.
type Interp int

// Interpolation kinds.
const (
	Linear Interp = iota // two non-negative weights summing to 1
	Cubic                // Keys' cubic convolution (a = −1/2), four weights summing to 1
)

// Weights holds a sparse n×r interpolation matrix W: row i has entries
// W[i][Idx[i][k]] = W[i][k].
type Weights struct {
	Idx [][]int
	W   [][]float64
	R   int
}

// InducingPoints returns r evenly spaced points on [0, n−1].
func InducingPoints(n, r int) []float64 {
	p := make([]float64, r)
	h := float64(n-1) / float64(r-1)
	for i := range p {
		p[i] = float64(i) * h
	}
	return p
}

// InterpWeights returns the interpolation weights of the observations
// 0…n−1 on r evenly spaced inducing points.
func InterpWeights(n, r int, kind Interp) (*Weights, error) {
	if r < 2 {
		return nil, fmt.Errorf("toeplitz: need at least 2 inducing points, got %d", r)
	}
	if r > n {
		return nil, fmt.Errorf("toeplitz: %d inducing points for a sequence of length %d (need r ≤ n)", r, n)
	}
	h := float64(n-1) / float64(r-1)
	w := &Weights{Idx: make([][]int, n), W: make([][]float64, n), R: r}
	for i := 0; i < n; i++ {
		u := float64(i) / h
		a := int(math.Floor(u))
		if a > r-2 {
			a = r - 2
		}
		f := u - float64(a)
		if f < 1e-12 { // on an inducing point
			f = 0
		}
		switch kind {
		case Linear:
			w.Idx[i] = []int{a, a + 1}
			w.W[i] = []float64{1 - f, f}
		case Cubic:
			idx := []int{a - 1, a, a + 1, a + 2}
			ws := []float64{keys(1 + f), keys(f), keys(1 - f), keys(2 - f)}
			// Clamp indices at the ends, merging weights (the sum stays 1).
			merged := map[int]float64{}
			var order []int
			for k, j := range idx {
				j = max(0, min(r-1, j))
				if _, ok := merged[j]; !ok {
					order = append(order, j)
				}
				merged[j] += ws[k]
			}
			for _, j := range order {
				w.Idx[i] = append(w.Idx[i], j)
				w.W[i] = append(w.W[i], merged[j])
			}
		default:
			return nil, fmt.Errorf("toeplitz: unknown interpolation %d", kind)
		}
	}
	return w, nil
}

// keys is the cubic convolution kernel with a = −1/2.
func keys(s float64) float64 {
	s = math.Abs(s)
	const a = -0.5
	switch {
	case s <= 1:
		return (a+2)*s*s*s - (a+3)*s*s + 1
	case s < 2:
		return a*s*s*s - 5*a*s*s + 8*a*s - 4*a
	}
	return 0
}

// Dense returns W as an n×r matrix.
func (w *Weights) Dense() *mat.Dense {
	d := mat.NewDense(len(w.Idx), w.R, nil)
	for i := range w.Idx {
		for k, j := range w.Idx[i] {
			d.Set(i, j, d.At(i, j)+w.W[i][k])
		}
	}
	return d
}

// SKI is the sparse plus low-rank Toeplitz operator of Algorithm 1: per
// channel, T_sparse x + W A Wᵀ x.
type SKI struct {
	n, r int
	w    *Weights
	// For linear interpolation: left inducing index and right weight of
	// each observation (flat, for the O(n) passes).
	left    []int32
	right   []float64
	aSpecs  []*Spectrum
	filters [][]float64
}

// NewSKI builds the operator for sequences of length n with r inducing
// points, interpolation kind, one smooth kernel per channel (evaluated at
// real offsets) and optional sparse filters (one per channel, any width m
// ≤ 2n−1; nil for none). A filter of width m acts on offsets −c…m−1−c with
// c = ⌊(m−1)/2⌋: centred for odd m, one more lag than lead for even m.
func NewSKI(n, r int, kind Interp, kernels []func(t float64) float64, filters [][]float64) (*SKI, error) {
	if n <= 0 {
		return nil, fmt.Errorf("toeplitz: sequence length must be positive, got %d", n)
	}
	if len(kernels) == 0 {
		return nil, errors.New("toeplitz: no channels")
	}
	if filters != nil && len(filters) != len(kernels) {
		return nil, fmt.Errorf("toeplitz: %d filters for %d channels", len(filters), len(kernels))
	}
	for _, f := range filters {
		if len(f) > 2*n-1 {
			return nil, fmt.Errorf("toeplitz: sparse filter of width %d exceeds 2n−1 = %d", len(f), 2*n-1)
		}
	}
	w, err := InterpWeights(n, r, kind)
	if err != nil {
		return nil, err
	}
	h := float64(n-1) / float64(r-1)
	s := &SKI{n: n, r: r, w: w, filters: filters}
	if kind == Linear {
		s.left = make([]int32, n)
		s.right = make([]float64, n)
		for i := range s.left {
			s.left[i] = int32(w.Idx[i][0])
			s.right[i] = w.W[i][1]
		}
	}
	for _, k := range kernels {
		a, err := FromKernel(r, func(t int) float64 { return k(float64(t) * h) })
		if err != nil {
			return nil, err
		}
		s.aSpecs = append(s.aSpecs, a.Spectrum())
	}
	return s, nil
}

// Apply returns the operator's action on every column of X (n×d).
func (s *SKI) Apply(x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	if n != s.n || d != len(s.aSpecs) {
		return nil, fmt.Errorf("toeplitz: input is %d×%d, operator is %d×%d", n, d, s.n, len(s.aSpecs))
	}
	if s.left != nil {
		return s.applyLinear(x), nil
	}
	l := s.aSpecs[0].l
	return applyColumns(x, func(ws *workspace, ch int, col, out []float64) {
		z := make([]float64, s.r)
		az := make([]float64, s.r)
		for i, v := range col { // Wᵀx
			for k, j := range s.w.Idx[i] {
				z[j] += s.w.W[i][k] * v
			}
		}
		ws.mul(az, z, s.aSpecs[ch].c, s.r) // A(Wᵀx)
		for i := range out {               // W(AWᵀx)
			var acc float64
			for k, j := range s.w.Idx[i] {
				acc += s.w.W[i][k] * az[j]
			}
			out[i] = acc
		}
		if s.filters != nil {
			addConv(out, col, s.filters[ch])
		}
	}, l), nil
}

// applyLinear is Apply for linear interpolation, working on rows of the
// row-major input so that every pass is contiguous across channels: Z =
// WᵀX (r×d, per-worker partial sums), AZ per channel by FFT, Y = W·AZ and
// the sparse filters, all in O(n·d·(4+m)) + O(d·r log r).
func (s *SKI) applyLinear(x *mat.Dense) *mat.Dense {
	n, d := x.Dims()
	xr := x.RawMatrix()
	const chunk = 4096
	parts := make([][]float64, parallel.Workers((n+chunk-1)/chunk))
	parallel.Chunks(n, chunk, func(w, lo, hi int) {
		if parts[w] == nil {
			parts[w] = make([]float64, s.r*d)
		}
		z := parts[w]
		for i := lo; i < hi; i++ {
			a, f := int(s.left[i]), s.right[i]
			row := xr.Data[i*xr.Stride : i*xr.Stride+d]
			za := z[a*d : (a+1)*d]
			zb := z[(a+1)*d : (a+2)*d]
			for c, v := range row {
				za[c] += (1 - f) * v
				zb[c] += f * v
			}
		}
	})
	z := make([]float64, s.r*d)
	for _, p := range parts {
		for i, v := range p {
			z[i] += v
		}
	}
	az := make([]float64, s.r*d)
	wss := make([]*workspace, parallel.Workers(d))
	parallel.Chunks(d, 1, func(w, c, _ int) {
		if wss[w] == nil {
			wss[w] = newWorkspace(s.aSpecs[0].l)
		}
		col := make([]float64, s.r)
		for j := range col {
			col[j] = z[j*d+c]
		}
		out := make([]float64, s.r)
		wss[w].mul(out, col, s.aSpecs[c].c, s.r)
		for j, v := range out {
			az[j*d+c] = v
		}
	})
	var ft []float64 // filters as m×d, row j = tap j of every channel
	m := 0
	if s.filters != nil {
		for _, f := range s.filters {
			m = max(m, len(f))
		}
		ft = make([]float64, m*d)
		for c, f := range s.filters {
			// Align filters of different widths on their centre offsets.
			off := (m-1)/2 - (len(f)-1)/2
			for j, v := range f {
				ft[(j+off)*d+c] = v
			}
		}
	}
	y := mat.NewDense(n, d, nil)
	yr := y.RawMatrix()
	cOff := (m - 1) / 2
	parallel.Chunks(n, chunk, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			a, f := int(s.left[i]), s.right[i]
			out := yr.Data[i*yr.Stride : i*yr.Stride+d]
			za := az[a*d : (a+1)*d]
			zb := az[(a+1)*d : (a+2)*d]
			for c := range out {
				out[c] = (1-f)*za[c] + f*zb[c]
			}
			for j := 0; j < m; j++ {
				src := i - (j - cOff)
				if src < 0 || src >= n {
					continue
				}
				tap := ft[j*d : (j+1)*d]
				row := xr.Data[src*xr.Stride : src*xr.Stride+d]
				for c := range out {
					out[c] += tap[c] * row[c]
				}
			}
		}
	})
	return y
}

// addConv adds the sparse Toeplitz product: y_i += Σ_j f[j]·x_{i−o_j} with
// offsets o_j = j − ⌊(m−1)/2⌋.
func addConv(y, x, f []float64) {
	c := (len(f) - 1) / 2
	n := len(x)
	for j, fj := range f {
		o := j - c
		lo := max(0, o)
		hi := min(n, n+o)
		for i := lo; i < hi; i++ {
			y[i] += fj * x[i-o]
		}
	}
}

// SparseToeplitz returns the Toeplitz matrix of a sparse filter (for
// reference and tests).
func SparseToeplitz(n int, f []float64) (*Toeplitz, error) {
	c := (len(f) - 1) / 2
	coef := make([]float64, 2*n-1)
	for j, fj := range f {
		o := j - c
		if o <= -n || o >= n {
			return nil, fmt.Errorf("toeplitz: filter offset %d outside ±(n−1)", o)
		}
		coef[o+n-1] = fj
	}
	return New(coef)
}
