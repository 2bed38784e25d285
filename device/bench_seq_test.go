package device

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/toeplitz"
)

// The sequence benchmarks time the device graphs on data already on the
// device (the inputs are copied once, before the timed loop; each
// iteration runs the graph, which on XLA waits for the device to finish,
// and frees its output), as the PyTorch references of
// scripts/gpu_torch_seq.py time CUDA kernels between synchronisations.
// Their names are BenchmarkSeq<Op>/<device>/<case>; the PyTorch script
// prints lines of the same form with device "torch", so that one table
// can be built from both. Small cases run on the pure-Go backend (float32)
// and on every other device; the large cases of the GPU goals run when
// KERNELKIT_BENCH_LARGE=1, on devices other than the pure-Go one.
//
// Rates are nominal: attention counts the FLOPs of the products (softmax
// 4·BH·Lq·Lk·D, causal or not; linear 4·BH·L·m·(D+Dv) for the features'
// projections, K'ᵀV, Q'(K'ᵀV) and the denominators, causal or not) and
// Toeplitz mixing the bytes it must move at least (the input read and the
// output written once, in the device's float type).

// seqBenchLarge reports whether the large cases run on d.
func seqBenchLarge(d *Device) bool {
	return os.Getenv("KERNELKIT_BENCH_LARGE") == "1" && d.Name() != Go
}

// seqDevName names a device in benchmark names, e.g. "cuda-f32".
func seqDevName(d *Device) string {
	if d.Float32() {
		return d.Name() + "-f32"
	}
	return d.Name() + "-f64"
}

// attnBenchCase is one attention shape.
type attnBenchCase struct{ b, h, l, d, m int }

func (c attnBenchCase) String() string {
	return fmt.Sprintf("B%dH%dL%dD%dm%d", c.b, c.h, c.l, c.d, c.m)
}

// seqAttnSmall and seqAttnLarge are the attention cases (D = Dv; m is
// used by linear attention only). The large ones are those of the GPU
// goals: L = 4096…65536 at B·H = 8 and 32, D = 64, m = 256, and B = 8,
// H = 8, L = 4096 (issue 18); scripts/gpu_torch_seq.py lists the same.
var (
	seqAttnSmall = []attnBenchCase{{1, 2, 256, 32, 64}}
	seqAttnLarge = []attnBenchCase{
		{8, 8, 4096, 64, 256},
		{1, 8, 4096, 64, 256}, {4, 8, 4096, 64, 256},
		{1, 8, 16384, 64, 256}, {4, 8, 16384, 64, 256},
		{1, 8, 65536, 64, 256}, {4, 8, 65536, 64, 256},
	}
)

// seqBenchTensor returns a host tensor of N(0, 1) values in d's type: a
// block of 2¹⁶ values drawn from the seed, repeated (the timings do not
// depend on the values, and drawing 10⁸ of them would take seconds).
func seqBenchTensor(d *Device, seed uint64, dims ...int) *tensors.Tensor {
	n := 1
	for _, x := range dims {
		n *= x
	}
	r := rng.New(seed)
	x := make([]float32, n)
	for i := range x[:min(n, 1<<16)] {
		x[i] = float32(r.NormFloat64())
	}
	for i := 1 << 16; i < n; i += 1 << 16 {
		copy(x[i:], x[:1<<16])
	}
	return seqTensor(d.dtype, x, dims...)
}

// seqBenchRun times run (one graph execution returning its output) and
// reports rate·executions per second in the given unit.
func seqBenchRun(b *testing.B, run func() (*tensors.Tensor, error), perOp float64, unit string) {
	out, err := run() // compile, and copy the inputs to the device
	if err == nil {
		err = seqFree(out)
	}
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		out, err := run()
		if err == nil {
			err = seqFree(out)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(perOp*float64(b.N)/b.Elapsed().Seconds()/1e9, unit)
}

func BenchmarkSeqAttention(b *testing.B) {
	for _, dev := range benchDevices(b, false) {
		cases := seqAttnSmall
		if seqBenchLarge(dev) {
			cases = append(cases[:len(cases):len(cases)], seqAttnLarge...)
		}
		for _, c := range cases {
			// q, k, v: made by the first sub-benchmark that runs, shared.
			var in []*tensors.Tensor
			for _, op := range []string{"softmax", "softmax-causal", "linear", "linear-causal"} {
				b.Run(fmt.Sprintf("%s/%s/%v", seqDevName(dev), op, c), func(b *testing.B) {
					if in == nil {
						in = []*tensors.Tensor{seqBenchTensor(dev, 1, c.b, c.h, c.l, c.d),
							seqBenchTensor(dev, 2, c.b, c.h, c.l, c.d), seqBenchTensor(dev, 3, c.b, c.h, c.l, c.d)}
					}
					benchAttention(b, dev, op, c, in)
				})
			}
			if err := seqFree(in...); err != nil {
				b.Error(err)
			}
		}
	}
}

func benchAttention(b *testing.B, dev *Device, op string, c attnBenchCase, in []*tensors.Tensor) {
	bh := c.b * c.h
	linear := op == "linear" || op == "linear-causal"
	causal := op == "softmax-causal" || op == "linear-causal"
	var att Attention = Exact{Causal: causal}
	flops := 4 * float64(bh) * float64(c.l) * float64(c.l) * float64(c.d)
	if linear {
		r := rng.New(9)
		om := make([]float64, c.m*c.d)
		for i := range om {
			om[i] = r.NormFloat64()
		}
		att = Linear{Omega: mat.NewDense(c.m, c.d, om), Causal: causal}
		flops = 4 * float64(bh) * float64(c.l) * float64(c.m) * float64(2*c.d)
	} else if _, err := limits.Matrix("scores", bh*c.l, c.l); err != nil {
		b.Skipf("softmax attention at %v: %v", c, err)
	}
	args := []any{in[0], in[1], in[2]}
	spec := att.seqAttention()
	key := seqKey{op: "exact", causal: causal}
	if linear {
		key.op = "linear"
		om := seqTensor(dev.dtype, spec.omega.RawMatrix().Data, c.m, c.d)
		args = append(args, om)
		defer func() {
			if err := seqFree(om); err != nil {
				b.Error(err)
			}
		}()
	}
	build := func() any { return seqAttnGraph(linear, causal, false, 0) }
	seqBenchRun(b, func() (*tensors.Tensor, error) { return dev.seqExec(key, build, args...) }, flops, "GFLOP/s")
}

// toepBenchCase is one Toeplitz mixing shape: batch, length, channels.
type toepBenchCase struct{ b, n, d int }

func (c toepBenchCase) String() string { return fmt.Sprintf("B%dn%dd%d", c.b, c.n, c.d) }

// seqToepSmall and seqToepLarge are the Toeplitz cases; the large ones
// are the GPU goal of issue 18 (batch 8, n = 4096, 512 channels) and
// n = 8192. SKI uses r = 64 inducing points and a filter of width 32.
var (
	seqToepSmall = []toepBenchCase{{2, 256, 32}}
	seqToepLarge = []toepBenchCase{{8, 4096, 512}, {8, 8192, 512}}
)

func BenchmarkSeqToeplitz(b *testing.B) {
	for _, dev := range benchDevices(b, false) {
		cases := seqToepSmall
		if seqBenchLarge(dev) {
			cases = append(cases[:len(cases):len(cases)], seqToepLarge...)
		}
		for _, c := range cases {
			for _, op := range []string{"tno", "ski", "fd-causal", "fd-bidirectional"} {
				b.Run(fmt.Sprintf("%s/%s/%v", seqDevName(dev), op, c), func(b *testing.B) {
					benchToeplitz(b, dev, op, c)
				})
			}
		}
	}
}

func benchToeplitz(b *testing.B, dev *Device, op string, c toepBenchCase) {
	n, d := c.n, c.d
	r := rng.New(uint64(n))
	rpe, err := toeplitz.RandomPiecewiseLinear(33, d, 1)
	if err != nil {
		b.Fatal(err)
	}
	lambda := math.Pow(0.99, 512/float64(n))
	var m *Mixer
	switch op {
	case "tno":
		ts := make([]*toeplitz.Toeplitz, d)
		for l := range ts {
			k := rpe.Kernel(l, lambda)
			if ts[l], err = toeplitz.FromKernel(n, func(t int) float64 { return k(float64(t)) }); err != nil {
				b.Fatal(err)
			}
		}
		m, err = dev.NewTNO(ts)
	case "ski":
		kernels := make([]func(float64) float64, d)
		filters := make([][]float64, d)
		for l := range kernels {
			kernels[l] = rpe.Kernel(l, lambda)
			filters[l] = make([]float64, 32)
			for j := range filters[l] {
				filters[l][j] = r.NormFloat64() / 32
			}
		}
		m, err = dev.NewSKI(n, 64, toeplitz.Linear, kernels, filters)
	case "fd-causal", "fd-bidirectional":
		w := d
		if op == "fd-bidirectional" {
			w = 2 * d
		}
		mlp, merr := toeplitz.NewMLP([]int{32}, w, toeplitz.GeLU, 2)
		if merr != nil {
			b.Fatal(merr)
		}
		if op == "fd-causal" {
			m, err = dev.NewCausalFD(n, toeplitz.MLPResponse(mlp))
		} else {
			m, err = dev.NewBidirectionalFD(n, toeplitz.MLPResponse(mlp))
		}
	}
	if err != nil {
		b.Skipf("%s at %v on %v: %v", op, c, dev, err)
	}
	x := seqBenchTensor(dev, 4, c.b, n, d)
	defer func() {
		if err := seqFree(x); err != nil {
			b.Error(err)
		}
	}()
	bytes := 2 * float64(c.b*n*d) * float64(dev.dtype.Size())
	seqBenchRun(b, func() (*tensors.Tensor, error) { return m.run(x) }, bytes, "GB/s")
}
