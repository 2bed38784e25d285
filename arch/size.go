package arch

import (
	"fmt"
	"math"
)

// VariableSpec is one variable of a model (as nn.Logits creates it): its
// scope (under the root scope, e.g. "/block_0/gtu"), name and dimensions,
// and whether it holds random features (FixedVariables: "omega", "omega_trig", "tau",
// "tower") rather than a parameter.
type VariableSpec struct {
	Scope, Name string
	Dims        []int
	Fixed       bool
}

// Size returns the number of values of the variable.
func (v VariableSpec) Size() int {
	n := 1
	for _, d := range v.Dims {
		n *= d
	}
	return n
}

// Variables returns every variable of the model (those nn.Logits
// creates) for the configuration (after Defaults and Validate), in a
// fixed order: the embeddings, each
// block's variables, the classifier. It lists Depth blocks, so check the
// size first (ParamCount); it panics on an unknown kind.
func (c *ModelConfig) Variables() []VariableSpec {
	out := c.embedVariables()
	for i := 0; i < c.Depth; i++ {
		out = append(out, c.blockVariables(i)...)
	}
	return append(out, VariableSpec{"/head", "w", []int{c.Width, c.Classes}, false}, VariableSpec{"/head", "b", []int{c.Classes}, false})
}

func (c *ModelConfig) embedVariables() []VariableSpec {
	out := []VariableSpec{{"/embed", "tokens", []int{c.Vocab, c.Width}, false}}
	if c.IsAttention() {
		out = append(out, VariableSpec{"/embed", "positions", []int{c.Length, c.Width}, false})
	}
	return out
}

// blockVariables lists the variables of block i.
func (c *ModelConfig) blockVariables(i int) []VariableSpec {
	blk := fmt.Sprintf("/block_%d", i)
	var out []VariableSpec
	add := func(scope, name string, fixed bool, dims ...int) {
		out = append(out, VariableSpec{blk + scope, name, dims, fixed})
	}
	affine := func(scope, w, b string, in, o int) {
		add(scope, w, false, in, o)
		add(scope, b, false, o)
	}
	d, h := c.Width, c.Hidden
	adapter := func(scope string) {
		switch c.Adapter {
		case AdapterBottleneck:
			affine(scope, "w_down", "b_down", d, c.AdapterSize)
			affine(scope, "w_up", "b_up", c.AdapterSize, d)
		case AdapterSNNK:
			add(scope, "tower", true, c.AdapterSize, d)
			add(scope, "a", false, c.AdapterSize, d)
			add(scope, "v", false, d)
		}
	}
	if c.IsAttention() {
		for _, p := range []string{"q", "k", "v"} {
			affine("/mix", "w"+p, "b"+p, d, d)
		}
		dh := d / c.Heads
		switch c.Kind {
		case KindPerformer:
			add("/mix", "omega", true, c.Features, dh)
		case KindHRF:
			add("/mix", "omega", true, c.HRFM, dh)
			add("/mix", "omega_trig", true, c.HRFM, dh)
			add("/mix", "tau", true, c.HRFN, dh)
		}
		affine("/mix", "wo", "bo", d, d)
		adapter("/adapter_mix")
		affine("/ffn", "w1", "b1", d, h)
		affine("/ffn", "w2", "b2", h, d)
		adapter("/adapter_ffn")
		return out
	}
	e := c.Expand * d
	affine("/gtu", "wu", "bu", d, e)
	affine("/gtu", "wv", "bv", d, e)
	rpe := func(o int) {
		in := 1
		for l := 0; l <= c.RPELayers; l++ {
			w := o
			if l < c.RPELayers {
				w = c.RPEHidden
			}
			affine("/gtu/tno/rpe", fmt.Sprintf("w%d", l), fmt.Sprintf("b%d", l), in, w)
			in = w
		}
	}
	switch c.Kind {
	case KindTNN:
		rpe(e)
	case KindFDTNN:
		if c.Causal {
			rpe(e)
		} else {
			rpe(2 * e)
		}
	case KindSKITNN:
		add("/gtu/tno", "rpe", false, c.SKIGrid, e)
		add("/gtu/tno", "filter", false, c.SKIFilter, e)
	default:
		panic(fmt.Sprintf("nn: %q has no token mixer", c.Kind))
	}
	affine("/gtu", "wo", "bo", e, d)
	adapter("/adapter_mix")
	affine("/glu", "w1", "b1", d, h)
	affine("/glu", "w2", "b2", d, h)
	affine("/glu", "w3", "b3", h, d)
	adapter("/adapter_ffn")
	return out
}

// ParamCount returns the number of model parameters (every variable but
// the random features; what train's parameter count reports) and the
// number of random-feature values, counted from one block times Depth
// (no list of blocks is formed). It errors when a count exceeds 2⁵³ (not
// representable; far beyond any memory).
func (c *ModelConfig) ParamCount() (params, fixed int64, err error) {
	if err := c.checkListed(); err != nil { // the variables are listed layer by layer
		return 0, 0, err
	}
	var p, f float64
	count := func(vs []VariableSpec, times float64) {
		for _, v := range vs {
			n := times
			for _, d := range v.Dims {
				n *= float64(d)
			}
			if v.Fixed {
				f += n
			} else {
				p += n
			}
		}
	}
	count(c.embedVariables(), 1)
	count(c.blockVariables(0), float64(c.Depth))
	p += float64(c.Width)*float64(c.Classes) + float64(c.Classes)
	if p > 1<<53 || f > 1<<53 {
		return 0, 0, fmt.Errorf("nn: a model of width %d and depth %d has about %.3g parameters, too many to count", c.Width, c.Depth, p+f)
	}
	return int64(p), int64(f), nil
}

// SpectralMinLength is the sequence length from which the TNN kinds run
// their Toeplitz products by block DFT on GoMLX backends without an FFT op
// (nn.ToeplitzSpectral; below it densely): measured on the pure-Go backend
// (width 32, depth 2, batch 16), the dense product is faster at n = 64 and
// 128 (7.5 and 3.0 steps/s against 6.3 and 2.5) and the block DFT from n =
// 256 (1.7 against 1.1 steps/s; at n = 512, batch 8: 1.1 against 0.4).
// EstimateMemory counts the graph's tensors accordingly.
const SpectralMinLength = 256

// MemoryEstimate is the estimated memory of one training step or one
// forward pass of a model, in bytes (float64, so that no size overflows).
type MemoryEstimate struct {
	// Params is the number of model parameters, Fixed the number of
	// random-feature values (ParamCount).
	Params, Fixed int64
	// Activations is the memory of the intermediate tensors: for training
	// the forward values kept for the backward pass and their cotangents,
	// for a forward pass the forward values; constants built with the
	// graph (Toeplitz gather indices, DFT matrices) included.
	Activations float64
	// Largest is the largest single intermediate tensor (bytes) and
	// LargestWhat describes it, e.g. "attention scores 16×2×1024×1024".
	Largest     float64
	LargestWhat string
}

// Count of float32 values per position of the intermediate tensors of the
// forward pass: one unit per op output of that size, counted from the
// graph functions (Affine: product and bias; RMSNorm: square, quotient
// and the root; SiLU: logistic and product; and so on), rounded up.
const (
	normValues     = 3  // RMSNorm: x², the root, the quotient
	affineValues   = 2  // Affine: product and bias sum
	siluValues     = 2  // logistic and product
	denseTNOValues = 3  // transposes in and out, product (per channel)
	spectralValues = 12 // block DFT of x (re, im), 4 block products, their sums, inverse DFT
	fftValues      = 16 // zero-padded FFT of 2n (complex), product, inverse
)

// EstimateMemory estimates the memory of a step at the given batch size:
// training (forward values kept for the backward pass and the
// cotangents, counted as twice the forward values) when training is set,
// a forward pass otherwise. The count follows the graph of nn.Logits op
// by op (float32 values; the constants a graph builds on the host — gather
// indices, DFT and FD matrices — counted as float64 on the host plus
// float32 in the graph), per block times Depth; it is an estimate of the
// live tensors, not of the Go heap, which may hold up to twice as much
// before a collection. Parameters, gradients and optimiser moments are
// not included (see Params). The configuration must have been validated.
func (c *ModelConfig) EstimateMemory(batch int, training bool) (MemoryEstimate, error) {
	p, f, err := c.ParamCount()
	if err != nil {
		return MemoryEstimate{}, err
	}
	est := MemoryEstimate{Params: p, Fixed: f}
	bf, n := float64(batch), float64(c.Length)
	d, h, e := float64(c.Width), float64(c.Hidden), float64(c.Expand)*float64(c.Width)
	heads := float64(c.Heads)
	dh := d / heads
	bn := bf * n
	var perBlock, fixedBlock float64 // values per block: per position of a sequence, and once
	largest := func(v float64, what string) {
		if 4*v > est.Largest {
			est.Largest, est.LargestWhat = 4*v, what
		}
	}
	largest(bn*d, fmt.Sprintf("activations %d×%d×%d", batch, c.Length, c.Width))
	adapter := 0.0
	switch c.Adapter {
	case AdapterBottleneck:
		adapter = 2*affineValues*float64(c.AdapterSize) + 2*d
	case AdapterSNNK:
		adapter = 6*float64(c.AdapterSize) + 3*d
	}
	rpe := func(points, o float64) float64 { // RPE MLP on points inputs
		return points * (float64(c.RPELayers)*float64(c.RPEHidden)*(affineValues+2) + o*affineValues)
	}
	toeplitz := func(nn float64) { // the token mixer's Toeplitz product on nn positions
		switch {
		case c.FFT:
			perBlock += fftValues * e
		case nn < float64(SpectralMinLength):
			perBlock += denseTNOValues * e
			fixedBlock += 3*e*nn*nn + 2*nn*e // gathered matrices, their cotangent, int32 indices; coefficients
			largest(e*nn*nn, fmt.Sprintf("Toeplitz matrices %d×%d×%d", int(e), int(nn), int(nn)))
		default:
			b := 2.0
			for b*b < nn {
				b *= 2
			}
			nb := math.Ceil(nn / b)
			perBlock += spectralValues * e * nb * b / nn // padded to nb·b
			// Blocks (2nb−1)×(2b−1) and their spectra (nb+1)×(2b−1), the
			// expanded (nb+1)×b×(2b−1) blocks (broadcast, reshape, slice)
			// and the b×b matrices, real and imaginary parts.
			fixedBlock += e*(2*nb)*(2*b)*2 + 2*e*(nb+1)*(2*b) + 2*e*(nb+1)*b*(6*b+b)
			largest(e*(nb+1)*b*2*b, fmt.Sprintf("Toeplitz block spectra %d×%d×%d×%d", int(e), int(nb+1), int(b), int(2*b-1)))
		}
	}
	if c.IsAttention() {
		perBlock = 2*normValues*d + 3*affineValues*d + 3*d + 2*affineValues*d + 3*h + 2*d + 2*d + 2*adapter
		if c.QKNorm > 0 {
			perBlock += 8 * d
		}
		switch c.Kind {
		case KindTransformer:
			// Scores, scaled, mask (bytes, counted whole), masked,
			// shifted, exponentials, probabilities; output.
			perBlock += 7*heads*n + d
			largest(bf*heads*n*n, fmt.Sprintf("attention scores %d×%d×%d×%d", batch, c.Heads, c.Length, c.Length))
		case KindPerformer:
			m := float64(c.Features)
			perBlock += heads * (11*m + 4*dh)
			if c.Causal {
				ch := math.Min(float64(c.Chunk), n)
				perBlock += heads * (3*ch + 3*m*dh/ch)
				fixedBlock += (n / ch) * (n / ch) * 3
			}
		case KindHRF:
			m, np := float64(c.HRFM), float64(1+c.HRFN)
			perBlock += heads * (40*m + 8*np + 6*np*(dh+1))
			if c.Causal {
				ch := math.Min(float64(c.Chunk), n)
				perBlock += heads * (8*ch + 8*m*np*(dh+1)/ch)
				fixedBlock += (n / ch) * (n / ch) * 3
			}
		}
	} else {
		perBlock = 2*normValues*d + 2*(affineValues+siluValues)*e + e + affineValues*d + // GTU
			3*affineValues*h + siluValues*h + h + 2*d + 2*adapter // GLU, residuals
		switch c.Kind {
		case KindTNN:
			fixedBlock += rpe(2*n-1, e) + 3*(2*n-1)*e // RPE, decay, causal mask
			toeplitz(n)
		case KindFDTNN:
			o := 2 * e
			if c.Causal {
				o = e
			}
			fixedBlock += rpe(n+1, o) + 3*(n+1)
			switch {
			case c.FFT:
				perBlock += fftValues * e
			case c.Causal || n < float64(SpectralMinLength):
				// FD matrices (2n−1)×(n+1), real and imaginary, on the
				// host and in the graph, then the coefficients.
				fixedBlock += 2*3*(2*n-1)*(n+1) + 3*(2*n-1)*e
				largest(2*(2*n-1)*(n+1), fmt.Sprintf("FD matrices 2×%d×%d (float64)", 2*c.Length-1, c.Length+1))
				toeplitz(n)
			default:
				toeplitz(n)
			}
		case KindSKITNN:
			r, m := float64(c.SKIRank), float64(c.SKIFilter)
			// Wᵀx, A(Wᵀx), W(·); m shifted slices, products and sums.
			perBlock += r*e*(2+denseTNOValues)/n + 2*e + 3*m*e
			fixedBlock += 3*e*r*r + 3*n*r + 3*(2*r-1)*float64(c.SKIGrid)
		}
	}
	head := 4*d + float64(c.Classes)*2/n + 2 // embedding gather, positions, mask; pooling
	values := float64(c.Depth)*(bf*n*perBlock+fixedBlock) + bn*head
	if training {
		values *= 2
	}
	est.Activations = 4 * values
	return est, nil
}

// TrainingBytesPerParam is the memory of one parameter during training:
// the value, its gradient and AdamW's two moments, float32 each.
const TrainingBytesPerParam = 16
