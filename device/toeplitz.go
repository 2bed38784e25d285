package device

import (
	"context"
	"errors"
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/nn"
	"github.com/kernelkit/kernelkit/toeplitz"
)

// Seq is a batch of sequences [Batch, Len, Dim] in row-major order:
// element (b, t, c) is Data[(b·Len + t)·Dim + c], so sequence b is one
// contiguous Len×Dim matrix, the n×d input of the toeplitz operators'
// Apply.
type Seq struct {
	Batch, Len, Dim int
	Data            []float64
}

// NewSeq returns a zero batch of the given shape, or an error if a
// dimension is below 1 or it would exceed limits.MaxElements values.
func NewSeq(batch, length, dim int) (Seq, error) {
	n, err := seqSize(batch, length, dim)
	if err != nil {
		return Seq{}, err
	}
	return Seq{Batch: batch, Len: length, Dim: dim, Data: make([]float64, n)}, nil
}

func seqSize(b, n, d int) (int, error) {
	if b <= 0 || n <= 0 || d <= 0 {
		return 0, fmt.Errorf("device: sequence batch shape [%d, %d, %d] has a dimension below 1", b, n, d)
	}
	s, err := limits.Mul(b, n)
	if err == nil {
		s, err = limits.Mul(s, d)
	}
	if err == nil && s > limits.MaxElements {
		err = fmt.Errorf("%d values exceed the limit of %d", s, limits.MaxElements)
	}
	if err != nil {
		return 0, fmt.Errorf("device: sequence batch shape [%d, %d, %d]: %w", b, n, d, err)
	}
	return s, nil
}

// Sequence returns sequence b as a Len×Dim matrix: a view of Data, not a
// copy. It panics if b is out of range.
func (s Seq) Sequence(b int) *mat.Dense {
	if b < 0 || b >= s.Batch {
		panic(fmt.Sprintf("device: sequence %d of a batch of %d", b, s.Batch))
	}
	n := s.Len * s.Dim
	return mat.NewDense(s.Len, s.Dim, s.Data[b*n:(b+1)*n:(b+1)*n])
}

// Mixer is a Toeplitz token mixer of package toeplitz run on a device:
// TNO (one Toeplitz matrix per channel), SKI (sparse convolution plus
// low-rank SKI term) or FD-TNO (causal or bidirectional frequency-domain
// operator). The constructors take the same data as the CPU constructors
// (toeplitz.NewOperator, NewSKI, NewCausalFD, NewBidirectionalFD), so that
// Apply equals the CPU operator's Apply on every sequence, to rounding.
// On a device with the FFT op (XLA) the products run as FFTs of the
// circulant embedding (nn.ToeplitzFFT, nn.FDCausalFFT,
// nn.FDBidirectionalFFT); on the others as dense products
// (nn.ToeplitzDense, with FD kernels from nn.FDCausalCoefficients and
// nn.FDBidirectionalCoefficients), which hold d·n² values: a dense form
// beyond limits.MaxElements is an error. A Mixer keeps its parameters on
// the device after the first call and is safe for concurrent use.
type Mixer struct {
	dev    *Device
	kind   string // "tno", "ski", "fd-causal", "fd-bidirectional"
	n, d   int
	fft    bool
	filter bool // SKI: the last parameter is the sparse filter
	params []*tensors.Tensor
}

// Len returns the sequence length n the mixer applies to.
func (m *Mixer) Len() int { return m.n }

// Channels returns the number d of channels.
func (m *Mixer) Channels() int { return m.d }

// Form returns "fft" if the mixer's products run by FFT, "dense" if as
// dense Toeplitz products.
func (m *Mixer) Form() string {
	if m.fft {
		return "fft"
	}
	return "dense"
}

// String describes the mixer, e.g. "tno n=512 d=64 (fft)".
func (m *Mixer) String() string {
	return fmt.Sprintf("%s n=%d d=%d (%s)", m.kind, m.n, m.d, m.Form())
}

// newMixer sets the form and checks the dense form's memory.
func (d *Device) newMixer(kind string, n, ch int) (*Mixer, error) {
	m := &Mixer{dev: d, kind: kind, n: n, d: ch, fft: d.HasFFT()}
	if !m.fft && kind != "ski" {
		if _, err := limits.Matrix(fmt.Sprintf("device %s: dense Toeplitz matrices (no FFT op)", d.name), ch*n, n); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// NewTNO returns the Toeplitz neural operator with one matrix per channel,
// TNO(X) = (T¹x¹ … T^d x^d) (toeplitz.NewOperator). The matrices must all
// be n×n.
func (d *Device) NewTNO(ts []*toeplitz.Toeplitz) (*Mixer, error) {
	if len(ts) == 0 {
		return nil, errors.New("device: no channels")
	}
	n := ts[0].Size()
	for _, t := range ts {
		if t.Size() != n {
			return nil, errors.New("device: channels of different sizes")
		}
	}
	m, err := d.newMixer("tno", n, len(ts))
	if err != nil {
		return nil, err
	}
	if _, err := limits.Matrix("device: Toeplitz coefficients", 2*n-1, len(ts)); err != nil {
		return nil, err
	}
	c := make([]float64, (2*n-1)*len(ts))
	for l, t := range ts {
		for k := -(n - 1); k < n; k++ {
			c[(k+n-1)*len(ts)+l] = t.Coef(k)
		}
	}
	m.params = []*tensors.Tensor{seqTensor(d.dtype, c, 2*n-1, len(ts))}
	return m, nil
}

// NewSKI returns the SKI-TNO of Algorithm 1 for sequences of length n
// with r inducing points, interpolation kind, one kernel per channel
// (evaluated at real offsets) and optional sparse filters (nil, or one per
// channel of any width m ≤ 2n−1, tap j at offset j − ⌊(m−1)/2⌋), exactly
// as toeplitz.NewSKI: per channel T_sparse x + W A Wᵀ x, with W the n×r
// interpolation matrix applied as a dense product, A_ij = k(h·(i − j)),
// h = (n−1)/(r−1), and the sparse term as a sum of shifted copies of x
// (memory O(B·n·d), where nn.SparseConv gathers m copies for its
// gradient).
func (d *Device) NewSKI(n, r int, kind toeplitz.Interp, kernels []func(t float64) float64, filters [][]float64) (*Mixer, error) {
	if n <= 0 {
		return nil, fmt.Errorf("device: sequence length must be positive, got %d", n)
	}
	ch := len(kernels)
	if ch == 0 {
		return nil, errors.New("device: no channels")
	}
	if filters != nil && len(filters) != ch {
		return nil, fmt.Errorf("device: %d filters for %d channels", len(filters), ch)
	}
	width := 0
	for _, f := range filters {
		if len(f) > 2*n-1 {
			return nil, fmt.Errorf("device: sparse filter of width %d exceeds 2n−1 = %d", len(f), 2*n-1)
		}
		width = max(width, len(f))
	}
	// The size check comes first: InterpWeights allocates its n rows of
	// weights without checking n.
	if _, err := limits.Matrix("device: SKI interpolation matrix", n, r); err != nil {
		return nil, err
	}
	w, err := toeplitz.InterpWeights(n, r, kind)
	if err != nil {
		return nil, err
	}
	m, err := d.newMixer("ski", n, ch)
	if err != nil {
		return nil, err
	}
	if !m.fft {
		if _, err := limits.Matrix("device: SKI inducing-point matrices (no FFT op)", ch*r, r); err != nil {
			return nil, err
		}
	}
	h := float64(n-1) / float64(r-1)
	a := make([]float64, (2*r-1)*ch)
	for l, k := range kernels {
		t, err := toeplitz.FromKernel(r, func(t int) float64 { return k(float64(t) * h) })
		if err != nil {
			return nil, fmt.Errorf("device: SKI kernel %d: %w", l, err)
		}
		for i := -(r - 1); i < r; i++ {
			a[(i+r-1)*ch+l] = t.Coef(i)
		}
	}
	m.params = []*tensors.Tensor{
		seqTensor(d.dtype, w.Dense().RawMatrix().Data, n, r),
		seqTensor(d.dtype, a, 2*r-1, ch),
	}
	if width > 0 {
		// One filter of the common width M, centre C = ⌊(M−1)/2⌋: tap j of
		// a channel's filter of width m (offset j − ⌊(m−1)/2⌋) is tap
		// j − ⌊(m−1)/2⌋ + C of it.
		c := (width - 1) / 2
		f := make([]float64, width*ch)
		for l, fl := range filters {
			cl := (len(fl) - 1) / 2
			for j, v := range fl {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("device: sparse filter %d is not finite", l)
				}
				f[(j-cl+c)*ch+l] = v
			}
		}
		m.params = append(m.params, seqTensor(d.dtype, f, width, ch))
		m.filter = true
	}
	return m, nil
}

// NewCausalFD returns the causal FD-TNO (Algorithm 2) whose real, even
// response resp is sampled at ω_m = mπ/n, m = 0…n, and made causal by the
// discrete Hilbert transform, as toeplitz.NewCausalFD.
func (d *Device) NewCausalFD(n int, resp toeplitz.Response) (*Mixer, error) {
	k, ch, err := seqSampleResponse(n, resp, 1)
	if err != nil {
		return nil, err
	}
	m, err := d.newMixer("fd-causal", n, ch)
	if err != nil {
		return nil, err
	}
	m.params = []*tensors.Tensor{seqTensor(d.dtype, k, n+1, ch)}
	return m, nil
}

// NewBidirectionalFD returns the bidirectional FD-TNO (Sec. 3.3.2) whose
// response resp gives 2d values per frequency, the real parts of d
// channels then their imaginary parts, forced real at ω = 0 and π, as
// toeplitz.NewBidirectionalFD.
func (d *Device) NewBidirectionalFD(n int, resp toeplitz.Response) (*Mixer, error) {
	k, ch2, err := seqSampleResponse(n, resp, 2)
	if err != nil {
		return nil, err
	}
	ch := ch2 / 2
	m, err := d.newMixer("fd-bidirectional", n, ch)
	if err != nil {
		return nil, err
	}
	re := make([]float64, (n+1)*ch)
	im := make([]float64, (n+1)*ch)
	for i := 0; i <= n; i++ {
		copy(re[i*ch:(i+1)*ch], k[i*ch2:i*ch2+ch])
		copy(im[i*ch:(i+1)*ch], k[i*ch2+ch:(i+1)*ch2])
	}
	m.params = []*tensors.Tensor{seqTensor(d.dtype, re, n+1, ch), seqTensor(d.dtype, im, n+1, ch)}
	return m, nil
}

// seqSampleResponse samples resp at ω_m = mπ/n, m = 0…n, and returns the
// values ((n+1)×c, row-major) and c, a positive multiple of mult.
func seqSampleResponse(n int, resp toeplitz.Response, mult int) ([]float64, int, error) {
	if n < 1 {
		return nil, 0, fmt.Errorf("device: sequence length must be positive, got %d", n)
	}
	if n > limits.MaxDim {
		return nil, 0, fmt.Errorf("device: sequence length %d exceeds %d", n, limits.MaxDim)
	}
	om := toeplitz.Frequencies(n)
	var out []float64
	c := 0
	for i, w := range om {
		v := resp(w)
		if i == 0 {
			c = len(v)
			if c == 0 || c%mult != 0 {
				return nil, 0, fmt.Errorf("device: frequency response of %d values (want a positive multiple of %d)", c, mult)
			}
			if _, err := limits.Matrix("device: frequency response", n+1, c); err != nil {
				return nil, 0, err
			}
			out = make([]float64, 0, (n+1)*c)
		}
		if len(v) != c {
			return nil, 0, fmt.Errorf("device: frequency response of %d values at ω = %g, %d at ω = 0", len(v), w, c)
		}
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, 0, errors.New("device: non-finite frequency response")
			}
		}
		out = append(out, v...)
	}
	return out, c, nil
}

// Apply returns the mixer's output for every sequence of x ([B, n, d]),
// computed on the device in its float type: sequence b of the output is
// the CPU operator's Apply of sequence b of x. The input is converted to
// the device's type, copied to the device and the output copied back; one
// graph is compiled per device, kind and shapes and reused by later calls.
// A shape that does not match the mixer, or buffers beyond
// limits.MaxElements, is an error; ctx is checked before the device runs.
func (m *Mixer) Apply(ctx context.Context, x Seq) (Seq, error) {
	if _, err := seqSize(x.Batch, x.Len, x.Dim); err != nil {
		return Seq{}, err
	}
	if len(x.Data) != x.Batch*x.Len*x.Dim {
		return Seq{}, fmt.Errorf("device: sequence batch of shape [%d, %d, %d] has %d values", x.Batch, x.Len, x.Dim, len(x.Data))
	}
	if x.Len != m.n || x.Dim != m.d {
		return Seq{}, fmt.Errorf("device: input is [%d, %d, %d], %s needs [·, %d, %d]", x.Batch, x.Len, x.Dim, m, m.n, m.d)
	}
	// The FFT form holds a few copies of the zero-padded input and its
	// spectrum (2n real values or n+1 complex ones per channel).
	if _, err := limits.Matrix("device: Toeplitz buffers", 8*x.Batch*x.Len, x.Dim); err != nil {
		return Seq{}, err
	}
	if err := ctx.Err(); err != nil {
		return Seq{}, err
	}
	in := seqTensor(m.dev.dtype, x.Data, x.Batch, x.Len, x.Dim)
	out, err := m.run(in)
	if err = errors.Join(err, seqFree(in)); err != nil {
		return Seq{}, errors.Join(err, seqFree(out))
	}
	y, err := NewSeq(x.Batch, x.Len, x.Dim)
	if err != nil {
		return Seq{}, errors.Join(err, seqFree(out))
	}
	return y, seqCopyOut(y.Data, out)
}

// run executes the mixer's graph on x (a tensor in the device's type) and
// returns the output on the device.
func (m *Mixer) run(x *tensors.Tensor) (*tensors.Tensor, error) {
	key := seqKey{op: m.kind, filter: m.filter, fft: m.fft}
	args := []any{x}
	for _, p := range m.params {
		args = append(args, p)
	}
	kind, fft := m.kind, m.fft
	return m.dev.seqExec(key, func() any { return seqMixerGraph(kind, fft) }, args...)
}

// seqMixerGraph returns the graph function of a mixer: arguments x, then
// the parameters of its kind.
func seqMixerGraph(kind string, fft bool) func([]*Node) *Node {
	toep := nn.ToeplitzDense
	if fft {
		toep = nn.ToeplitzFFT
	}
	return func(in []*Node) *Node {
		x := in[0]
		switch kind {
		case "tno":
			return toep(x, in[1])
		case "ski":
			w, a := in[1], in[2]
			z := Einsum("bnd,nr->brd", x, w) // Wᵀx
			y := Einsum("brd,nr->bnd", toep(z, a), w)
			if len(in) > 3 {
				y = Add(y, seqShiftConv(x, in[3]))
			}
			return y
		case "fd-causal":
			if fft {
				return nn.FDCausalFFT(x, in[1])
			}
			return nn.ToeplitzDense(x, nn.FDCausalCoefficients(in[1]))
		case "fd-bidirectional":
			if fft {
				return nn.FDBidirectionalFFT(x, in[1], in[2])
			}
			return nn.ToeplitzDense(x, nn.FDBidirectionalCoefficients(in[1], in[2]))
		}
		panic(fmt.Sprintf("device: unknown mixer %q", kind))
	}
}

// seqShiftConv returns the per-channel convolution y_i = Σ_j f_j
// x_{i−o_j}, o_j = j − ⌊(m−1)/2⌋, of x (B×n×d) with filter (m×d), the
// convention of nn.SparseConv and toeplitz.SKI's filters, as a sum of m
// shifted copies of x (taps whose offset is n or more in magnitude see no
// input and are left out).
func seqShiftConv(x, f *Node) *Node {
	g := x.Graph()
	b, n, d := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	m := f.Shape().Dim(0)
	c := (m - 1) / 2
	zeros := func(rows int) *Node { return Zeros(g, shapes.Make(x.DType(), b, rows, d)) }
	y := ZerosLike(x)
	for j := 0; j < m; j++ {
		o := j - c
		var sh *Node
		switch {
		case o <= -n || o >= n:
			continue
		case o == 0:
			sh = x
		case o > 0: // sh_i = x_{i−o}: o zero rows in front
			sh = Concatenate([]*Node{zeros(o), Slice(x, AxisRange(), AxisRange(0, n-o), AxisRange())}, 1)
		default: // −o zero rows at the end
			sh = Concatenate([]*Node{Slice(x, AxisRange(), AxisRange(-o, n), AxisRange()), zeros(-o)}, 1)
		}
		y = Add(y, Mul(sh, Reshape(Slice(f, AxisRange(j, j+1), AxisRange()), 1, 1, d)))
	}
	return y
}
