package native

import (
	"math"
	"slices"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/nn"
)

// This file holds the GoMLX reference harness of the attention, FFN and
// adapter tests: a native layer in float64 against the nn graph function
// of the same layer on GoMLX's pure-Go backend, forward values and the
// gradients of a random weighting of the output (GoMLX's autodiff).

// mixLayer is the part of a native layer the harness drives.
type mixLayer interface {
	Forward(x []float64, B, L int) []float64
	Backward(dy []float64) []float64
	Params() []*Param[float64]
}

// mixRand returns n entries N(0, scale²) from seed.
func mixRand(seed uint64, scale float64, n int) []float64 {
	r := rng.New(seed)
	out := make([]float64, n)
	for i := range out {
		out[i] = scale * r.NormFloat64()
	}
	return out
}

// mixRelErr returns max|got − want| / max(max|want|, floor) (infinite on
// a length mismatch or a non-finite value).
func mixRelErr(got, want []float64, floor float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	scale, diff := floor, 0.0
	for i := range want {
		scale = math.Max(scale, math.Abs(want[i]))
		d := math.Abs(got[i] - want[i])
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		diff = math.Max(diff, d)
	}
	if scale == 0 {
		return diff
	}
	return diff / scale
}

// maxAbs returns the largest magnitude in v.
func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// mixRef is a GoMLX graph function of a layer: its output for x
// (B×L×d), the parameters by name and the key mask (B×L; nil for none).
type mixRef func(x *Node, p map[string]*Node, mask *Node) *Node

// mixCase is one comparison: a layer with its parameter values set, its
// input and key mask, and the GoMLX form.
type mixCase struct {
	layer mixLayer
	ref   mixRef
	B, L  int
	x     []float64
	mask  []float64 // nil: none
}

// Tolerances of the comparisons, relative to the largest reference
// magnitude. Both sides compute the same float64 expressions in different
// orders, so they differ by rounding: a few ulps times the number of
// accumulated terms (at most a few hundred here) and the conditioning of
// the attention normalisations, far below these bounds.
const (
	mixForwardTol = 1e-10
	mixGradTol    = 1e-9
)

// check runs the native layer and the GoMLX graph and compares the
// output, the input gradient and every trainable parameter's gradient;
// non-trainable parameters must keep a zero gradient.
func (c mixCase) check(t *testing.T, name string) {
	t.Helper()
	params := c.layer.Params()
	for _, p := range params {
		p.ZeroGrad()
	}
	y := append([]float64(nil), c.layer.Forward(c.x, c.B, c.L)...)
	w := mixRand(99, 1, len(y))
	dx := append([]float64(nil), c.layer.Backward(w)...)
	d := len(c.x) / (c.B * c.L)

	backend, err := nn.Backend("")
	if err != nil {
		t.Fatal(err)
	}
	var trainable []int
	for i, p := range params {
		if p.Trainable {
			trainable = append(trainable, i)
		}
	}
	exec, err := NewExec(backend, func(in []*Node) []*Node {
		g := in[0].Graph()
		pm := map[string]*Node{}
		for i, p := range params {
			pm[p.Name] = in[1+i]
		}
		var mask *Node
		if c.mask != nil {
			mask = in[len(in)-1]
		}
		out := c.ref(in[0], pm, mask)
		loss := ReduceAllSum(Mul(Reshape(out, len(w)), Const(g, w)))
		wrt := []*Node{in[0]}
		for _, i := range trainable {
			wrt = append(wrt, in[1+i])
		}
		return append([]*Node{Reshape(out, len(w))}, Gradient(loss, wrt...)...)
	})
	if err != nil {
		t.Fatal(err)
	}
	args := []any{tensors.FromFlatDataAndDimensions(append([]float64(nil), c.x...), c.B, c.L, d)}
	for _, p := range params {
		args = append(args, tensors.FromFlatDataAndDimensions(append([]float64(nil), p.Value...), p.Dims...))
	}
	if c.mask != nil {
		args = append(args, tensors.FromFlatDataAndDimensions(append([]float64(nil), c.mask...), c.B, c.L))
	}
	outs, err := exec.Exec(args...)
	if err != nil {
		t.Fatal(err)
	}
	flat := func(i int) []float64 { return tensors.MustCopyFlatData[float64](outs[i]) }
	if e := mixRelErr(y, flat(0), 0); !(e <= mixForwardTol) {
		t.Errorf("%s: output differs from GoMLX by %.3g (relative), tolerance %.0e", name, e, mixForwardTol)
	}
	// Some gradients vanish by symmetry (the key bias of softmax attention
	// shifts every score of a row alike); they are sums of terms of the
	// size of the layer's other gradients that cancel, and are compared
	// relative to 10⁻³ of the largest gradient.
	var floor float64
	for i := 1; i < len(outs); i++ {
		floor = math.Max(floor, 1e-3*maxAbs(flat(i)))
	}
	if e := mixRelErr(dx, flat(1), floor); !(e <= mixGradTol) {
		t.Errorf("%s: input gradient differs from GoMLX autodiff by %.3g (relative), tolerance %.0e", name, e, mixGradTol)
	}
	worst := mixRelErr(dx, flat(1), floor)
	for k, i := range trainable {
		worst = math.Max(worst, mixRelErr(params[i].Grad, flat(2+k), floor))
	}
	t.Logf("%s: output error %.2g, worst gradient error %.2g (%d trainable parameters)", name, mixRelErr(y, flat(0), 0), worst, len(trainable))
	for k, i := range trainable {
		if e := mixRelErr(params[i].Grad, flat(2+k), floor); !(e <= mixGradTol) {
			t.Errorf("%s: gradient of %s differs from GoMLX autodiff by %.3g (relative), tolerance %.0e", name, params[i].Name, e, mixGradTol)
		}
	}
	for _, p := range params {
		if p.Trainable {
			continue
		}
		for _, v := range p.Grad {
			if v != 0 {
				t.Errorf("%s: fixed %s got a gradient", name, p.Name)
				break
			}
		}
	}
}

// mixFill sets every parameter of the layer to N(0, std²) entries with
// std = 1/√(first dimension) for matrices and 0.3 for vectors, from seed.
func mixFill(ps []*Param[float64], seed uint64) {
	for i, p := range ps {
		std := 0.3
		if len(p.Dims) == 2 {
			std = 1 / math.Sqrt(float64(p.Dims[0]))
		}
		copy(p.Value, mixRand(seed+uint64(i)*7919, std, len(p.Value)))
	}
}

// mixCheckNames compares a layer's parameters with the variables nn
// creates under its scope (arch.ModelConfig.Variables): names, shapes, and
// fixed variables non-trainable.
func mixCheckNames(t *testing.T, cfg *arch.ModelConfig, scope string, ps []*Param[float64]) {
	t.Helper()
	var want []arch.VariableSpec
	for _, v := range cfg.Variables() {
		if v.Scope == scope {
			want = append(want, v)
		}
	}
	if len(want) != len(ps) {
		t.Fatalf("%s: %d parameters, nn creates %d", scope, len(ps), len(want))
	}
	for i, v := range want {
		p := ps[i]
		if p.Scope != v.Scope || p.Name != v.Name || !slices.Equal(p.Dims, v.Dims) {
			t.Errorf("%s: parameter %d is %s/%s%v, nn creates %s/%s%v", scope, i, p.Scope, p.Name, p.Dims, v.Scope, v.Name, v.Dims)
		}
		// Backbone variables train unless the backbone is frozen; adapters
		// always train.
		wantTrain := !v.Fixed && (!cfg.FreezeBackbone || strings.Contains(scope, "adapter"))
		if p.Trainable != wantTrain {
			t.Errorf("%s: %s trainable %v, want %v (FreezeBackbone %v)", scope, v.Name, p.Trainable, wantTrain, cfg.FreezeBackbone)
		}
	}
}
