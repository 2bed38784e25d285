package nn

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/snnk"
	"github.com/kernelkit/kernelkit/toeplitz"
)

func TestSNNKLayerMatchesSnnk(t *testing.T) {
	const n, d, m, l = 5, 4, 16, 3
	towers, err := snnk.NewReLU(d, m, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	mp, err := features.New(features.Config{Kernel: "arccos1", Features: m, Seed: 3}, d)
	if err != nil {
		t.Fatal(err)
	}
	g := arr{data: mat.DenseCopyOf(mp.W()).RawMatrix().Data, dims: []int{m, d}}
	x := randArr(1, 1, n, d)
	xm := mat.NewDense(n, d, append([]float64(nil), x.data...))
	t.Run("layer", func(t *testing.T) {
		a := randArr(2, 1, m, l)
		ly := &snnk.Layer{T: towers, A: mat.NewDense(m, l, append([]float64(nil), a.data...))}
		want, err := ly.Forward(xm)
		if err != nil {
			t.Fatal(err)
		}
		fn := func(in []*Node) *Node { return SNNKLayer(in[0], in[1], in[2]) }
		assertClose(t, "SNNK layer", eval1(t, fn, x, g, a), want.RawMatrix().Data, 1e-12)
		checkGradient(t, "SNNK layer", func(in []*Node) *Node { return SNNKLayer(in[0], Const(in[0].Graph(), g.tensor()), in[1]) }, x, a)
	})
	t.Run("adapter", func(t *testing.T) {
		a := randArr(4, 1, m, d)
		const v = 0.7
		ly := &snnk.Layer{T: towers, A: mat.NewDense(m, d, append([]float64(nil), a.data...)), Gated: true, V: v}
		want, err := ly.Forward(xm)
		if err != nil {
			t.Fatal(err)
		}
		vv := arr{data: []float64{v, v, v, v}, dims: []int{d}}
		fn := func(in []*Node) *Node { return SNNKAdapter(in[0], in[1], in[2], in[3]) }
		assertClose(t, "SNNK adapter", eval1(t, fn, x, g, a, vv), want.RawMatrix().Data, 1e-12)
		zero := arr{data: make([]float64, d), dims: []int{d}}
		assertClose(t, "SNNK adapter at v = 0 is the identity", eval1(t, fn, x, g, a, zero), x.data, 0)
		checkGradient(t, "SNNK adapter", func(in []*Node) *Node {
			return SNNKAdapter(in[0], Const(in[0].Graph(), g.tensor()), in[1], in[2])
		}, x, a, randArr(5, 1, d))
		if got, want := m*d+d, ly.Params()-1+d; got != want {
			t.Errorf("SNNK adapter parameters: (m+1)·d = %d, snnk.Layer counts %d (+d−1 for the gating vector)", got, want)
		}
	})
}

func TestBottleneckAdapter(t *testing.T) {
	const n, d, k = 5, 4, 2
	x := randArr(1, 1, n, d)
	wd, bd := randArr(2, 1, d, k), randArr(3, 1, k)
	wu, bu := arr{data: make([]float64, k*d), dims: []int{k, d}}, arr{data: make([]float64, d), dims: []int{d}}
	fn := func(in []*Node) *Node { return BottleneckAdapter(in[0], in[1], in[2], in[3], in[4]) }
	assertClose(t, "bottleneck adapter at W_up = 0 is the identity", eval1(t, fn, x, wd, bd, wu, bu), x.data, 0)
	// Reference: x + GELU(xW_d + b_d)W_u + b_u in float64 Go.
	wu, bu = randArr(4, 1, k, d), randArr(5, 1, d)
	want := make([]float64, n*d)
	for i := 0; i < n; i++ {
		h := make([]float64, k)
		for j := range h {
			s := bd.data[j]
			for c := 0; c < d; c++ {
				s += x.data[i*d+c] * wd.data[c*k+j]
			}
			h[j] = toeplitz.GeLU(s)
		}
		for c := 0; c < d; c++ {
			s := x.data[i*d+c] + bu.data[c]
			for j := range h {
				s += h[j] * wu.data[j*d+c]
			}
			want[i*d+c] = s
		}
	}
	assertClose(t, "bottleneck adapter", eval1(t, fn, x, wd, bd, wu, bu), want, 1e-12)
	checkGradient(t, "bottleneck adapter", fn, x, wd, bd, wu, bu)
}

func goAffine(x []float64, rows, in int, w, b []float64, out int, f func(float64) float64) []float64 {
	y := make([]float64, rows*out)
	for i := 0; i < rows; i++ {
		for o := 0; o < out; o++ {
			s := b[o]
			for c := 0; c < in; c++ {
				s += x[i*in+c] * w[c*out+o]
			}
			if f != nil {
				s = f(s)
			}
			y[i*out+o] = s
		}
	}
	return y
}

// TestGTUAndGLU checks the gated units against a float64 Go computation
// whose token mixer is toeplitz.Operator, and their gradients.
func TestGTUAndGLU(t *testing.T) {
	const b, n, d, e = 2, 6, 3, 4
	x := randArr(1, 1, b, n, d)
	p := []arr{randArr(2, 0.5, d, e), randArr(3, 0.5, e), randArr(4, 0.5, d, e), randArr(5, 0.5, e), randArr(6, 0.5, e, d), randArr(7, 0.5, d)}
	coef := randArr(8, 0.5, 2*n-1, e)
	gtu := func(in []*Node) *Node {
		return GTU(in[0], GTUParams{in[1], in[2], in[3], in[4], in[5], in[6]}, func(v *Node) *Node { return ToeplitzDense(v, in[7]) })
	}
	args := append(append([]arr{x}, p...), coef)
	op := toeplitzOp(t, coef)
	var want []float64
	for i := 0; i < b; i++ {
		xi := x.data[i*n*d : (i+1)*n*d]
		u := goAffine(xi, n, d, p[0].data, p[1].data, e, toeplitz.SiLU)
		v := goAffine(xi, n, d, p[2].data, p[3].data, e, toeplitz.SiLU)
		tv, err := op.Apply(mat.NewDense(n, e, v))
		if err != nil {
			t.Fatal(err)
		}
		for j, w := range tv.RawMatrix().Data {
			u[j] *= w
		}
		want = append(want, goAffine(u, n, e, p[4].data, p[5].data, d, nil)...)
	}
	assertClose(t, "GTU", eval1(t, gtu, args...), want, 1e-12)
	checkGradient(t, "GTU", gtu, args...)

	glu := func(in []*Node) *Node {
		return GLU(in[0], GLUParams{in[1], in[2], in[3], in[4], in[5], in[6]})
	}
	want = want[:0]
	for i := 0; i < b; i++ {
		xi := x.data[i*n*d : (i+1)*n*d]
		u := goAffine(xi, n, d, p[0].data, p[1].data, e, toeplitz.SiLU)
		v := goAffine(xi, n, d, p[2].data, p[3].data, e, nil)
		for j := range u {
			u[j] *= v[j]
		}
		want = append(want, goAffine(u, n, e, p[4].data, p[5].data, d, nil)...)
	}
	assertClose(t, "GLU", eval1(t, glu, args[:7]...), want, 1e-12)
	checkGradient(t, "GLU", glu, args[:7]...)
}

func TestRMSNormAndHeads(t *testing.T) {
	x := randArr(1, 2, 2, 3, 4)
	y := eval1(t, func(in []*Node) *Node { return RMSNorm(in[0]) }, x)
	for r := 0; r < 6; r++ {
		var ms float64
		for _, v := range x.data[r*4 : r*4+4] {
			ms += v * v / 4
		}
		for c := 0; c < 4; c++ {
			if want := x.data[r*4+c] / math.Sqrt(ms+1e-6); math.Abs(y[r*4+c]-want) > 1e-12 {
				t.Fatalf("RMSNorm[%d,%d] = %v, want %v", r, c, y[r*4+c], want)
			}
		}
	}
	checkGradient(t, "RMSNorm", func(in []*Node) *Node { return RMSNorm(in[0]) }, x)
	back := eval1(t, func(in []*Node) *Node { return MergeHeads(SplitHeads(in[0], 2)) }, x)
	assertClose(t, "MergeHeads∘SplitHeads", back, x.data, 0)
}
