package native

import (
	"fmt"
	"math"
	"sync"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/fft"
)

// mlp is the RPE multilayer perceptron of tnn and fd-tnn (nn.MLP): layers
// of linear maps with the activation between them, not after the last.
type mlp[T Float] struct {
	layers []*linear[T]
	act    activation[T]
	acts   [][]T // activations after each hidden layer
	g      []T
	rows   int
}

// newRPE builds the MLP 1 → RPEHidden (× RPELayers) → out of nn's
// builder.rpe under scope, weights "w<l>" and biases "b<l>".
func newRPE[T Float](cfg *arch.ModelConfig, scope string, out int, trainable bool) (*mlp[T], error) {
	act, ok := activationByName[T](cfg.RPEAct)
	if !ok {
		return nil, fmt.Errorf("native: unknown RPE activation %q", cfg.RPEAct)
	}
	m := &mlp[T]{act: act}
	in := 1
	for l := 0; l <= cfg.RPELayers; l++ {
		o := out
		if l < cfg.RPELayers {
			o = cfg.RPEHidden
		}
		m.layers = append(m.layers, newLinear[T](scope, fmt.Sprintf("w%d", l), fmt.Sprintf("b%d", l), in, o, trainable))
		in = o
	}
	m.acts = make([][]T, len(m.layers)-1)
	return m, nil
}

// params lists the layers' weights and biases in order.
func (m *mlp[T]) params() []*Param[T] {
	var ps []*Param[T]
	for _, l := range m.layers {
		ps = append(ps, l.params()...)
	}
	return ps
}

// forward returns the MLP outputs for the rows of x (rows×1), keeping
// the activations for backward.
func (m *mlp[T]) forward(x []T, rows int) []T {
	m.rows = rows
	h := x
	for l, lin := range m.layers {
		z := lin.forward(h, rows)
		if l+1 == len(m.layers) {
			return z
		}
		m.acts[l] = grow(m.acts[l], len(z))
		for i, v := range z {
			m.acts[l][i] = m.act.f(v)
		}
		h = m.acts[l]
	}
	return h
}

// backward accumulates the parameter gradients for the output gradient dy.
func (m *mlp[T]) backward(dy []T) {
	g := dy
	for l := len(m.layers) - 1; l >= 0; l-- {
		g = m.layers[l].backward(g)
		if l > 0 {
			z := m.layers[l-1].y
			m.g = grow(m.g, len(g))
			for i, v := range g {
				m.g[i] = v * m.act.df(z[i])
			}
			g = m.g
		}
	}
}

// tnnTNO is the token mixer of tnn: coefficients t_k = λ^|k|·RPE(k/n)
// (nn.TNNCoefficients; zero at negative lags when causal) applied by FFT.
type tnnTNO[T Float] struct {
	n, e  int
	rpe   *mlp[T]
	pos   []T // k/n, k = −(n−1)…n−1
	decay []T // λ^|k| (times the causal mask)
	coef  []T
	toep  *toeplitzFFT[T]
}

// newTNNTNO returns the tnn mixer of cfg on e channels under scope.
func newTNNTNO[T Float](cfg *arch.ModelConfig, scope string, e int, trainable bool) (*tnnTNO[T], error) {
	n := cfg.Length
	rpe, err := newRPE[T](cfg, scope+"/rpe", e, trainable)
	if err != nil {
		return nil, err
	}
	t := &tnnTNO[T]{n: n, e: e, rpe: rpe, pos: make([]T, 2*n-1), decay: make([]T, 2*n-1),
		coef: make([]T, (2*n-1)*e), toep: newToeplitzFFT[T](n, e)}
	for k := -(n - 1); k < n; k++ {
		t.pos[k+n-1] = T(float64(k) / float64(n))
		if !cfg.Causal || k >= 0 {
			t.decay[k+n-1] = T(math.Pow(cfg.Lambda, math.Abs(float64(k))))
		}
	}
	return t, nil
}

// Params lists the RPE MLP's parameters.
func (t *tnnTNO[T]) Params() []*Param[T] { return t.rpe.params() }

// Forward computes the coefficients and applies them to x (B×n×e).
func (t *tnnTNO[T]) Forward(x []T, B, _ int) []T {
	raw := t.rpe.forward(t.pos, 2*t.n-1)
	for k := 0; k < 2*t.n-1; k++ {
		for c := 0; c < t.e; c++ {
			t.coef[k*t.e+c] = raw[k*t.e+c] * t.decay[k]
		}
	}
	return t.toep.forward(x, B, t.coef)
}

// Backward returns ∂x and accumulates the RPE MLP's gradients.
func (t *tnnTNO[T]) Backward(dy []T) []T {
	dx := t.toep.backward(dy)
	dc := t.toep.dcoef
	for k := 0; k < 2*t.n-1; k++ {
		for c := 0; c < t.e; c++ {
			dc[k*t.e+c] *= t.decay[k]
		}
	}
	t.rpe.backward(dc)
	return dx
}

// fdCache holds fdMatrices converted to T by length, form and element
// type, shared (read-only) by every FD-TNN layer.
var fdCache sync.Map // fdKey → [2][]T

// fdKey identifies cached FD matrices.
type fdKey struct {
	n      int
	causal bool
	elem   string
}

// sharedFDMatrices returns fdMatrices(n, causal) in T (im nil when
// causal: the causal form has no imaginary input).
func sharedFDMatrices[T Float](n int, causal bool) (re, im []T) {
	key := fdKey{n, causal, dtypeName[T]()}
	v, ok := fdCache.Load(key)
	if !ok {
		r, i := arch.FDMatrices(n, causal)
		m := [2][]T{toT[T](r), nil}
		if !causal {
			m[1] = toT[T](i)
		}
		v, _ = fdCache.LoadOrStore(key, m)
	}
	m := v.([2][]T)
	return m[0], m[1]
}

// toT converts float64 values to T.
func toT[T Float](v []float64) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}

// fdTNO is the token mixer of fd-tnn: an RPE of cos ω_m (nn.FDInput) gives
// the frequency response, turned into Toeplitz coefficients by nn's
// inverse-DFT matrices (causal: the Hilbert form of
// nn.FDCausalCoefficients; bidirectional: real and imaginary parts, as
// nn.FDBidirectionalCoefficients), applied by FFT.
type fdTNO[T Float] struct {
	n, e   int
	causal bool
	rpe    *mlp[T]
	in     []T // cos(mπ/n), m = 0…n
	mr, mi []T // the inverse-DFT matrices (nil in the FFT form)
	coef   []T
	dk     []T
	toep   *toeplitzFFT[T]
	// The FFT form's transform of the response to the coefficients (size
	// 2n over the e channels) and its buffers.
	fp        fft.Plan[T]
	sig, spec []T
}

// newFDTNO returns the fd-tnn mixer of cfg on e channels under scope.
func newFDTNO[T Float](cfg *arch.ModelConfig, scope string, e int, trainable bool) (*fdTNO[T], error) {
	n := cfg.Length
	out := 2 * e
	if cfg.Causal {
		out = e
	}
	rpe, err := newRPE[T](cfg, scope+"/rpe", out, trainable)
	if err != nil {
		return nil, err
	}
	t := &fdTNO[T]{n: n, e: e, causal: cfg.Causal, rpe: rpe, in: make([]T, n+1),
		coef: make([]T, (2*n-1)*e), dk: make([]T, (n+1)*out), toep: newToeplitzFFT[T](n, e)}
	if t.toep.plan != nil {
		// Dense products for the lengths whose Toeplitz products are
		// dense; an inverse real FFT per channel beyond (O(n log n)
		// instead of O(n²) per channel).
		t.mr, t.mi = sharedFDMatrices[T](n, cfg.Causal)
	}
	for m := range t.in {
		t.in[m] = T(math.Cos(float64(m) * math.Pi / float64(n)))
	}
	return t, nil
}

// Params lists the RPE MLP's parameters.
func (t *fdTNO[T]) Params() []*Param[T] { return t.rpe.params() }

// Forward computes the coefficients from the response and applies them
// to x (B×n×e).
func (t *fdTNO[T]) Forward(x []T, B, _ int) []T {
	n, e := t.n, t.e
	k := t.rpe.forward(t.in, n+1)
	switch {
	case t.mr == nil:
		t.coefByFFT(k)
	case t.causal:
		gemmCols(false, false, 2*n-1, e, n+1, 1, t.mr, n+1, k, e, 0, t.coef, e)
	default:
		gemmCols(false, false, 2*n-1, e, n+1, 1, t.mr, n+1, k, 2*e, 0, t.coef, e)
		gemmCols(false, false, 2*n-1, e, n+1, 1, t.mi, n+1, k[e:], 2*e, 1, t.coef, e)
	}
	return t.toep.forward(x, B, t.coef)
}

// Backward returns ∂x and accumulates the RPE MLP's gradients.
func (t *fdTNO[T]) Backward(dy []T) []T {
	n, e := t.n, t.e
	dx := t.toep.backward(dy)
	dc := t.toep.dcoef
	switch {
	case t.mr == nil:
		t.coefGradByFFT(dc)
	case t.causal:
		gemmCols(true, false, n+1, e, 2*n-1, 1, t.mr, n+1, dc, e, 0, t.dk, e)
	default:
		gemmCols(true, false, n+1, e, 2*n-1, 1, t.mr, n+1, dc, e, 0, t.dk, 2*e)
		gemmCols(true, false, n+1, e, 2*n-1, 1, t.mi, n+1, dc, e, 0, t.dk[e:], 2*e)
	}
	t.rpe.backward(t.dk)
	return dx
}

// lagWeight is the weight of lag k in the coefficients: the causal form's
// Hilbert window (0 for k < 0, 1 at 0, 2 for k > 0), 1 otherwise.
func (t *fdTNO[T]) lagWeight(k int) float64 {
	switch {
	case !t.causal || k == 0:
		return 1
	case k < 0:
		return 0
	}
	return 2
}

// fdPlan returns the batched real FFT of size 2n over the e channels
// and its signal (e×2n) and spectrum (e×(n+1) complex) buffers.
func (t *fdTNO[T]) fdPlan() (fft.Plan[T], []T, []T) {
	if t.fp == nil {
		t.fp = fft.New[T](2*t.n, t.e)
		t.sig = fft.Make[T](2 * t.n * t.e)
		t.spec = fft.Make[T](2 * (t.n + 1) * t.e)
	}
	return t.fp, t.sig, t.spec
}

// coefByFFT sets t.coef to the coefficients of the response k ((n+1)×e
// causal, (n+1)×2e real then imaginary parts): per channel the inverse
// real DFT of size 2n (fdMatrices' h_t = (1/2n)[a₀ + (−1)^t a_n +
// 2Σ(a_m cos πmt/n − b_m sin πmt/n)], the imaginary parts of bins 0 and n
// ignored), read at the lags and windowed.
func (t *fdTNO[T]) coefByFFT(k []T) {
	n, e := t.n, t.e
	out := e
	if !t.causal {
		out = 2 * e
	}
	fp, sig, spec := t.fdPlan()
	nb := n + 1
	for c := 0; c < e; c++ {
		sp := spec[2*c*nb : 2*(c+1)*nb]
		for m := 0; m <= n; m++ {
			var b T
			if !t.causal && m > 0 && m < n {
				b = k[m*out+e+c]
			}
			sp[2*m], sp[2*m+1] = k[m*out+c], b
		}
	}
	fp.Inverse(sig, spec)
	inv := 1 / float64(2*n)
	for c := 0; c < e; c++ {
		re := sig[2*n*c : 2*n*(c+1)]
		for l := -(n - 1); l < n; l++ {
			t.coef[(l+n-1)*e+c] = T(t.lagWeight(l) * float64(re[(l+2*n)%(2*n)]) * inv)
		}
	}
}

// coefGradByFFT sets t.dk to the gradient of the response for the
// coefficient gradient dc: the adjoint of coefByFFT, a forward real FFT
// per channel (∂a_m = w_m·Re X_m/2n with w = 1 at bins 0 and n and 2
// between, ∂b_m = 2·Im X_m/2n inside).
func (t *fdTNO[T]) coefGradByFFT(dc []T) {
	n, e := t.n, t.e
	out := e
	if !t.causal {
		out = 2 * e
	}
	fp, sig, spec := t.fdPlan()
	for c := 0; c < e; c++ {
		re := sig[2*n*c : 2*n*(c+1)]
		re[n] = 0
		for l := -(n - 1); l < n; l++ {
			re[(l+2*n)%(2*n)] = T(t.lagWeight(l)) * dc[(l+n-1)*e+c]
		}
	}
	fp.Forward(spec, sig)
	inv := 1 / float64(2*n)
	nb := n + 1
	for c := 0; c < e; c++ {
		sp := spec[2*c*nb : 2*(c+1)*nb]
		for m := 0; m <= n; m++ {
			wm := 2.0
			if m == 0 || m == n {
				wm = 1
			}
			t.dk[m*out+c] = T(wm * float64(sp[2*m]) * inv)
			if !t.causal {
				var b float64
				if m > 0 && m < n {
					b = 2 * float64(sp[2*m+1]) * inv
				}
				t.dk[m*out+e+c] = T(b)
			}
		}
	}
}

// skiTNO is the token mixer of ski-tnn (nn.SKI): the sparse
// convolution with filter (m×e) plus W·A·Wᵀx, A the (R×R per channel)
// Toeplitz matrix of coefficients M·values (the middle grid value forced
// to zero), applied by FFT.
type skiTNO[T Float] struct {
	n, e, r, grid, m int
	vals, filt       *Param[T]
	w                []T // n×R
	mm               []T // (2R−1)×Grid
	mask             []T
	vm, a, dvm       []T
	x                []T
	batch            int
	z, y, dz, dx     []T
	dfPart           []T // B×m×e partial filter gradients
	toep             *toeplitzFFT[T]
}

// newSKITNO returns the ski-tnn mixer of cfg on e channels under scope.
func newSKITNO[T Float](cfg *arch.ModelConfig, scope string, e int, trainable bool) (*skiTNO[T], error) {
	p, err := arch.NewSKIPlan(cfg.Length, cfg.SKIRank, cfg.SKIGrid, cfg.Lambda)
	if err != nil {
		return nil, err
	}
	r, g := cfg.SKIRank, cfg.SKIGrid
	t := &skiTNO[T]{n: cfg.Length, e: e, r: r, grid: g, m: cfg.SKIFilter,
		vals: newParam[T](scope, "rpe", trainable, g, e), filt: newParam[T](scope, "filter", trainable, cfg.SKIFilter, e),
		w: toT[T](p.W), mm: toT[T](p.M), mask: make([]T, g),
		vm: make([]T, g*e), a: make([]T, (2*r-1)*e), dvm: make([]T, g*e), toep: newToeplitzFFT[T](r, e)}
	for i := range t.mask {
		t.mask[i] = 1
	}
	t.mask[(g-1)/2] = 0
	return t, nil
}

// Params lists the RPE grid values and the sparse filter.
func (t *skiTNO[T]) Params() []*Param[T] { return []*Param[T]{t.vals, t.filt} }

// Forward applies the sparse convolution and the SKI low-rank term to x
// (B×n×e).
func (t *skiTNO[T]) Forward(x []T, B, _ int) []T {
	n, e, r := t.n, t.e, t.r
	t.x, t.batch = x, B
	for i := 0; i < t.grid; i++ {
		for c := 0; c < e; c++ {
			t.vm[i*e+c] = t.vals.Value[i*e+c] * t.mask[i]
		}
	}
	gemm(false, false, 2*r-1, e, t.grid, 1, t.mm, t.grid, t.vm, e, 0, t.a, e)
	t.z = grow(t.z, B*r*e)
	chunks(B, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			gemm(true, false, r, e, n, 1, t.w, r, x[b*n*e:], e, 0, t.z[b*r*e:], e)
		}
	})
	az := t.toep.forward(t.z, B, t.a)
	t.y = grow(t.y, B*n*e)
	chunks(B, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			gemm(false, false, n, e, r, 1, t.w, r, az[b*r*e:], e, 0, t.y[b*n*e:], e)
			t.convForward(b)
		}
	})
	return t.y
}

// convForward adds the sparse convolution of sequence b to t.y:
// y_i += Σ_j f_j x_{i−o_j}, o_j = j − ⌊(m−1)/2⌋.
func (t *skiTNO[T]) convForward(b int) {
	n, e, m := t.n, t.e, t.m
	c0 := (m - 1) / 2
	x := t.x[b*n*e : (b+1)*n*e]
	y := t.y[b*n*e : (b+1)*n*e]
	for i := 0; i < n; i++ {
		yr := y[i*e : (i+1)*e]
		for j := 0; j < m; j++ {
			src := i - j + c0
			if src < 0 || src >= n {
				continue
			}
			mulAddTo(yr, t.filt.Value[j*e:(j+1)*e], x[src*e:(src+1)*e])
		}
	}
}

// Backward returns ∂x and accumulates the grid values' and the
// filter's gradients (the filter's summed over the sequences in order).
func (t *skiTNO[T]) Backward(dy []T) []T {
	n, e, r, m, B := t.n, t.e, t.r, t.m, t.batch
	c0 := (m - 1) / 2
	t.dz = grow(t.dz, B*r*e)
	chunks(B, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			gemm(true, false, r, e, n, 1, t.w, r, dy[b*n*e:], e, 0, t.dz[b*r*e:], e)
		}
	})
	dz := t.toep.backward(t.dz)
	t.dx = grow(t.dx, B*n*e)
	t.dfPart = grow(t.dfPart, B*m*e)
	chunks(B, 1, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			gemm(false, false, n, e, r, 1, t.w, r, dz[b*r*e:], e, 0, t.dx[b*n*e:], e)
			x := t.x[b*n*e : (b+1)*n*e]
			g := dy[b*n*e : (b+1)*n*e]
			dx := t.dx[b*n*e : (b+1)*n*e]
			df := t.dfPart[b*m*e : (b+1)*m*e]
			clear(df)
			for i := 0; i < n; i++ {
				gr := g[i*e : (i+1)*e]
				for j := 0; j < m; j++ {
					src := i - j + c0
					if src < 0 || src >= n {
						continue
					}
					mulAddTo(dx[src*e:(src+1)*e], t.filt.Value[j*e:(j+1)*e], gr)
					mulAddTo(df[j*e:(j+1)*e], gr, x[src*e:(src+1)*e])
				}
			}
		}
	})
	if t.filt.Trainable {
		for b := 0; b < B; b++ {
			for i, v := range t.dfPart[b*m*e : (b+1)*m*e] {
				t.filt.Grad[i] += v
			}
		}
	}
	if t.vals.Trainable {
		gemm(true, false, t.grid, e, 2*r-1, 1, t.mm, t.grid, t.toep.dcoef, e, 0, t.dvm, e)
		for i := 0; i < t.grid; i++ {
			for c := 0; c < e; c++ {
				t.vals.Grad[i*e+c] += t.dvm[i*e+c] * t.mask[i]
			}
		}
	}
	return t.dx
}
