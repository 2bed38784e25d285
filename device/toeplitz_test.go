package device

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/toeplitz"
)

// randSeq returns a [b, n, d] batch of N(0, 1) values.
func randSeq(t testing.TB, seed uint64, b, n, d int) Seq {
	t.Helper()
	x, err := NewSeq(b, n, d)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(seed)
	for i := range x.Data {
		x.Data[i] = r.NormFloat64()
	}
	return x
}

// cpuApply applies a CPU operator to every sequence of x.
func cpuApply(t testing.TB, x Seq, apply func(*mat.Dense) (*mat.Dense, error)) []float64 {
	t.Helper()
	var out []float64
	for b := 0; b < x.Batch; b++ {
		y, err := apply(x.Sequence(b))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, y.RawMatrix().Data...)
	}
	return out
}

// mixerForms returns the mixer in the device's own form and, where that
// is the dense form, a copy in the FFT form: nn's FFT-form graphs, which
// run with the DFT-matrix substitute on a backend without the FFT op, so
// that the graph a GPU runs is exercised here too.
func mixerForms(m *Mixer) []*Mixer {
	if m.fft {
		return []*Mixer{m}
	}
	f := *m
	f.fft = true
	return []*Mixer{m, &f}
}

// checkMixer compares every form of the device mixer with the CPU
// operator on x.
func checkMixer(t *testing.T, dev *Device, name string, m *Mixer, x Seq, apply func(*mat.Dense) (*mat.Dense, error)) {
	t.Helper()
	want := cpuApply(t, x, apply)
	tol := tolerance(dev, 1e-10)
	for _, f := range mixerForms(m) {
		got, err := f.Apply(context.Background(), x)
		if err != nil {
			t.Fatalf("%v %s %v: %v", dev, name, f, err)
		}
		if got.Batch != x.Batch || got.Len != x.Len || got.Dim != x.Dim {
			t.Fatalf("%v %s %v: output shape [%d, %d, %d]", dev, name, f, got.Batch, got.Len, got.Dim)
		}
		if e := maxRelDiff(got.Data, want); !(e <= tol) {
			t.Errorf("%v %s %v: differs from the CPU operator by %.3g (tolerance %.1g)", dev, name, f, e, tol)
		}
	}
}

// TestTNOMatchesOperator checks the TNO against toeplitz.Operator at
// lengths 1, 7 and 16, in the dense and the FFT forms.
func TestTNOMatchesOperator(t *testing.T) {
	const b, d = 2, 3
	for _, dev := range testDevices(t) {
		for _, n := range []int{1, 7, 16} {
			r := rng.New(uint64(n))
			ts := make([]*toeplitz.Toeplitz, d)
			for l := range ts {
				c := make([]float64, 2*n-1)
				for i := range c {
					c[i] = r.NormFloat64()
				}
				var err error
				if ts[l], err = toeplitz.New(c); err != nil {
					t.Fatal(err)
				}
			}
			op, err := toeplitz.NewOperator(ts)
			if err != nil {
				t.Fatal(err)
			}
			m, err := dev.NewTNO(ts)
			if err != nil {
				t.Fatal(err)
			}
			if m.Len() != n || m.Channels() != d || m.Form() != map[bool]string{true: "fft", false: "dense"}[dev.HasFFT()] {
				t.Errorf("%v: mixer %v", dev, m)
			}
			checkMixer(t, dev, fmt.Sprintf("TNO n=%d", n), m, randSeq(t, uint64(n), b, n, d), op.Apply)
		}
	}
}

// TestSKIMatchesToeplitzSKI checks SKI against toeplitz.SKI: linear and
// cubic interpolation, piecewise-linear warped RPE kernels and a Matérn
// kernel, sparse filters of widths 1, 2, 4 and 2n−1 (a different width per
// channel, one channel without) and none at all.
func TestSKIMatchesToeplitzSKI(t *testing.T) {
	const b, n, d, r, lambda = 2, 9, 4, 4, 0.8
	rpe, err := toeplitz.RandomPiecewiseLinear(7, d, 3)
	if err != nil {
		t.Fatal(err)
	}
	kernels := make([]func(float64) float64, d)
	for l := 0; l < d-1; l++ {
		kernels[l] = rpe.Kernel(l, lambda)
	}
	kernels[d-1] = toeplitz.Matern52(3)
	fr := rng.New(5)
	filters := [][]float64{{0.5}, {1, -2}, nil, make([]float64, 2*n-1)}
	filters[3][0] = 9
	for _, f := range filters[:2] {
		for j := range f {
			f[j] += fr.NormFloat64()
		}
	}
	x := randSeq(t, 7, b, n, d)
	for _, dev := range testDevices(t) {
		for _, kind := range []toeplitz.Interp{toeplitz.Linear, toeplitz.Cubic} {
			for _, fs := range [][][]float64{filters, nil} {
				ski, err := toeplitz.NewSKI(n, r, kind, kernels, fs)
				if err != nil {
					t.Fatal(err)
				}
				m, err := dev.NewSKI(n, r, kind, kernels, fs)
				if err != nil {
					t.Fatal(err)
				}
				checkMixer(t, dev, fmt.Sprintf("SKI interp %d, filters %v", kind, fs != nil), m, x, ski.Apply)
			}
		}
	}
}

// TestFDMatchesToeplitzFD checks the causal and bidirectional FD-TNO
// against toeplitz.FD with MLP responses (GeLU and SiLU) at n = 1, 8, 13.
func TestFDMatchesToeplitzFD(t *testing.T) {
	const b, d = 2, 3
	for _, dev := range testDevices(t) {
		for _, n := range []int{1, 8, 13} {
			x := randSeq(t, uint64(n), b, n, d)
			mlp, err := toeplitz.NewMLP([]int{6}, d, toeplitz.GeLU, uint64(n))
			if err != nil {
				t.Fatal(err)
			}
			fd, err := toeplitz.NewCausalFD(n, toeplitz.MLPResponse(mlp))
			if err != nil {
				t.Fatal(err)
			}
			m, err := dev.NewCausalFD(n, toeplitz.MLPResponse(mlp))
			if err != nil {
				t.Fatal(err)
			}
			checkMixer(t, dev, fmt.Sprintf("causal FD n=%d", n), m, x, fd.Apply)
			mlp2, err := toeplitz.NewMLP([]int{5}, 2*d, toeplitz.SiLU, uint64(n)+100)
			if err != nil {
				t.Fatal(err)
			}
			fd2, err := toeplitz.NewBidirectionalFD(n, toeplitz.MLPResponse(mlp2))
			if err != nil {
				t.Fatal(err)
			}
			m2, err := dev.NewBidirectionalFD(n, toeplitz.MLPResponse(mlp2))
			if err != nil {
				t.Fatal(err)
			}
			checkMixer(t, dev, fmt.Sprintf("bidirectional FD n=%d", n), m2, x, fd2.Apply)
		}
	}
}

// TestMixerErrors checks that bad operators, inputs and sizes are errors.
func TestMixerErrors(t *testing.T) {
	dev, err := Open(Go)
	if err != nil {
		t.Fatal(err)
	}
	t3, err := toeplitz.New(make([]float64, 5))
	if err != nil {
		t.Fatal(err)
	}
	t4, err := toeplitz.New(make([]float64, 7))
	if err != nil {
		t.Fatal(err)
	}
	m, err := dev.NewTNO([]*toeplitz.Toeplitz{t3, t3})
	if err != nil {
		t.Fatal(err)
	}
	one := func(float64) []float64 { return []float64{1} }
	ker := []func(float64) float64{toeplitz.Matern52(1)}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"no channels", second(dev.NewTNO(nil)), "no channels"},
		{"sizes", second(dev.NewTNO([]*toeplitz.Toeplitz{t3, t4})), "different sizes"},
		{"dense memory", second(dev.NewCausalFD(1<<16, one)), "no FFT op"},
		{"response", second(dev.NewCausalFD(4, func(w float64) []float64 { return []float64{math.NaN()} })), "non-finite"},
		{"response length", second(dev.NewCausalFD(4, func(w float64) []float64 { return make([]float64, 1+int(w)) })), "values at"},
		{"bidirectional odd", second(dev.NewBidirectionalFD(4, one)), "multiple of 2"},
		{"ski rank", second(dev.NewSKI(8, 9, toeplitz.Linear, ker, nil)), "inducing points"},
		// Checked before the interpolation weights of 2⁴⁰ rows are built.
		{"ski memory", second(dev.NewSKI(1<<40, 1<<20, toeplitz.Linear, ker, nil)), "SKI interpolation matrix"},
		{"ski filter", second(dev.NewSKI(4, 2, toeplitz.Linear, ker, [][]float64{make([]float64, 8)})), "exceeds"},
		{"ski filters", second(dev.NewSKI(4, 2, toeplitz.Linear, ker, [][]float64{{1}, {1}})), "filters for"},
		{"length", second(m.Apply(context.Background(), randSeq(t, 1, 1, 4, 2))), "needs"},
		{"channels", second(m.Apply(context.Background(), randSeq(t, 1, 1, 3, 1))), "needs"},
		{"values", second(m.Apply(context.Background(), Seq{Batch: 1, Len: 3, Dim: 2, Data: make([]float64, 5)})), "values"},
		{"shape", second(m.Apply(context.Background(), Seq{Batch: 0, Len: 3, Dim: 2})), "below 1"},
		{"cancelled", second(m.Apply(cancelled, randSeq(t, 1, 1, 3, 2))), "canceled"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, c.err, c.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestSeqConcurrent checks that one mixer and one attention run from
// several goroutines at once give the results of a lone call.
func TestSeqConcurrent(t *testing.T) {
	dev, err := Open(Go)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mlp, err := toeplitz.NewMLP([]int{4}, 3, toeplitz.GeLU, 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := dev.NewCausalFD(10, toeplitz.MLPResponse(mlp))
	if err != nil {
		t.Fatal(err)
	}
	x := randSeq(t, 1, 2, 10, 3)
	_, lin := favorMap(t, 4, 8, 1)
	lin.Causal = true
	q, k, v := randTensor(t, 1, 1, 2, 2, 7, 4), randTensor(t, 2, 1, 2, 2, 7, 4), randTensor(t, 3, 1, 2, 2, 7, 4)
	y0, err := m.Apply(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	a0, err := dev.Attention(ctx, lin, q, k, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	const workers = 4
	errs := make(chan error, 2*workers)
	for w := 0; w < workers; w++ {
		go func() {
			y, err := m.Apply(ctx, x)
			if err == nil && maxRelDiff(y.Data, y0.Data) != 0 {
				err = fmt.Errorf("concurrent mixer output differs by %g", maxRelDiff(y.Data, y0.Data))
			}
			errs <- err
		}()
		go func() {
			a, err := dev.Attention(ctx, lin, q, k, v, nil)
			if err == nil && maxRelDiff(a.Data, a0.Data) != 0 {
				err = fmt.Errorf("concurrent attention output differs by %g", maxRelDiff(a.Data, a0.Data))
			}
			errs <- err
		}()
	}
	for i := 0; i < 2*workers; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// ExampleDevice_NewCausalFD applies a causal frequency-domain Toeplitz
// operator to a batch of sequences on the pure-Go device (dense form; FFT
// on a GPU) and compares it with package toeplitz.
func ExampleDevice_NewCausalFD() {
	dev, err := Open(Go)
	if err != nil {
		fmt.Println(err)
		return
	}
	const n, d = 64, 4
	mlp, err := toeplitz.NewMLP([]int{16}, d, toeplitz.GeLU, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := dev.NewCausalFD(n, toeplitz.MLPResponse(mlp))
	if err != nil {
		fmt.Println(err)
		return
	}
	x, _ := NewSeq(3, n, d)
	r := rng.New(2)
	for i := range x.Data {
		x.Data[i] = r.NormFloat64()
	}
	y, err := m.Apply(context.Background(), x)
	if err != nil {
		fmt.Println(err)
		return
	}
	fd, err := toeplitz.NewCausalFD(n, toeplitz.MLPResponse(mlp))
	if err != nil {
		fmt.Println(err)
		return
	}
	want, err := fd.Apply(x.Sequence(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%v: sequence 1 equal to the CPU to 1e-12: %v\n", m, maxRelDiff(y.Sequence(1).RawMatrix().Data, want.RawMatrix().Data) < 1e-12)
	// Output:
	// fd-causal n=64 d=4 (dense): sequence 1 equal to the CPU to 1e-12: true
}
