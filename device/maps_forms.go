package device

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/nystrom"
	"github.com/kernelkit/kernelkit/prf"
	"github.com/kernelkit/kernelkit/snnk"
)

// This file holds the graph forms of the feature maps: each is the map's
// projection and element-wise pass written once as a GoMLX graph, with
// the same formulas (and, in float64, the same order of operations) as
// the map's CPU code, so that the pure-Go backend reproduces it to
// rounding and a GPU runs the same graph in float32.

// mapForm is the device form of a feature map.
type mapForm struct {
	name    string // the map, as its String method describes it
	in, dim int
	params  []hostParam // uploaded once, passed after the rows
	// hasLower marks maps whose inputs must exceed lower (the log(x + c)
	// of the skewed χ² map).
	hasLower bool
	lower    float64
	// build returns the features z (n×dim) of the rows x (n×in), and with
	// scaled the log-scales s (n) of TransformScaled (z then scaled).
	build func(x *graph.Node, p []*graph.Node, scaled bool) (z, s *graph.Node)
}

// hostParam is a parameter of a form: row-major values and dimensions.
type hostParam struct {
	data []float64
	dims []int
}

// check returns an error if row i of the inputs has a non-finite value or
// one outside the map's domain (after the scaler sc, if not nil).
func (f *mapForm) check(i int, row []float64, sc *data.Scaler) error {
	for j, v := range row {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("device: input row %d has a non-finite value", i)
		}
		if f.hasLower {
			u := v
			if sc != nil {
				u = (v - sc.Mean[j]) / sc.Scale[j]
			}
			if !(u > f.lower) {
				return fmt.Errorf("device: %s: input row %d has the value %v, not above %v", f.name, i, u, f.lower)
			}
		}
	}
	return nil
}

// formOf returns the device form of t, or an error naming a map that has
// none.
func formOf(t features.Transformer) (*mapForm, error) {
	if inner, tau := features.Untemper(t); tau != 1 {
		return temperedForm(inner, tau, fmt.Sprint(t))
	}
	switch m := t.(type) {
	case *features.Map:
		return featureForm(m.Spec(), 1, m.String())
	case *snnk.ReLU:
		// The towers are the arccos1 map scaled by 1/√2 (snnk.ReLU).
		_, raw, err := m.EncodeSpec()
		if err != nil {
			return nil, err
		}
		var s features.Spec
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("device: snnk/relu spec: %w", err)
		}
		return featureForm(s, 1/math.Sqrt2, fmt.Sprintf("snnk/relu D=%d", s.Features))
	case *features.SkewedChi2:
		return skewedForm(m), nil
	case *nystrom.Map:
		return nystromForm(m)
	case *prf.Map:
		return prfMapForm(m), nil
	}
	return nil, noForm(t)
}

// noForm is the error for a map without a device form.
func noForm(t any) error {
	if s, ok := t.(fmt.Stringer); ok {
		return fmt.Errorf("device: map %s (%T) has no device form", s, t)
	}
	return fmt.Errorf("device: map %T has no device form", t)
}

// featureForm returns the form of a features.Map of spec s (features.Map
// z(x) = h(x)/√m·f(Wx + b), see package features), its features
// multiplied by post (1 for none).
func featureForm(s features.Spec, post float64, name string) (*mapForm, error) {
	m, in := s.M, s.InputDim
	lm := 0.5 * math.Log(float64(m))
	var logPre float64 // log of the constant prefactor, 1/√m included
	switch s.Form {
	case "cos", "heaviside", "relu", "relu2":
		logPre = 0.5*math.Ln2 - lm
	case "sincos", "trig", "positive":
		logPre = -lm
	case "hyperbolic":
		logPre = -0.5*math.Ln2 - lm
	default:
		return nil, fmt.Errorf("device: map %s has no device form (form %q)", name, s.Form)
	}
	var normCoef float64 // c of h(x) ∝ exp(c‖x‖²)
	switch {
	case s.Kernel == "softmax" && s.Form == "trig":
		normCoef = 0.5
	case s.Kernel == "softmax":
		normCoef = -0.5
	case s.Kernel == "rbf" && (s.Form == "positive" || s.Form == "hyperbolic"):
		normCoef = -2 * s.Gamma
	}
	c := math.Exp(logPre)
	f := &mapForm{name: name, in: in, dim: s.Features, params: []hostParam{{s.W, []int{m, in}}}}
	if s.Form == "cos" {
		f.params = append(f.params, hostParam{s.B, []int{m}})
	}
	form := s.Form
	f.build = func(x *graph.Node, p []*graph.Node, scaled bool) (z, ls *graph.Node) {
		g, dt := x.Graph(), x.DType()
		n := x.Shape().Dim(0)
		a := graph.DotGeneral(x, []int{1}, nil, p[0], []int{1}, nil) // n×m
		// off = log h(x) per row: logPre + c‖x‖² (n×1).
		var off *graph.Node
		if normCoef != 0 {
			off = graph.AddScalar(graph.MulScalar(graph.ReduceAndKeep(graph.Square(x), graph.ReduceSum, -1), normCoef), logPre)
		} else {
			off = graph.BroadcastToDims(graph.Scalar(g, dt, logPre), n, 1)
		}
		ls = graph.Zeros(g, shapes.Make(dt, n))
		switch form {
		case "cos":
			z = graph.MulScalar(graph.Cos(graph.Add(a, graph.Reshape(p[1], 1, m))), c)
		case "sincos", "trig":
			if scaled {
				z = graph.Concatenate([]*graph.Node{graph.Sin(a), graph.Cos(a)}, 1)
				ls = graph.Reshape(off, n)
			} else {
				h := graph.Exp(off)
				z = graph.Concatenate([]*graph.Node{graph.Mul(graph.Sin(a), h), graph.Mul(graph.Cos(a), h)}, 1)
			}
		case "positive":
			if scaled {
				mx := graph.ReduceAndKeep(a, graph.ReduceMax, -1)
				ls = graph.Reshape(graph.Add(off, mx), n)
				z = graph.Exp(graph.Sub(a, mx))
			} else {
				z = graph.Exp(graph.Add(a, off))
			}
		case "hyperbolic":
			if scaled {
				mx := graph.ReduceAndKeep(graph.Abs(a), graph.ReduceMax, -1)
				ls = graph.Reshape(graph.Add(off, mx), n)
				z = graph.Concatenate([]*graph.Node{graph.Exp(graph.Sub(a, mx)), graph.Exp(graph.Sub(graph.Neg(a), mx))}, 1)
			} else {
				z = graph.Concatenate([]*graph.Node{graph.Exp(graph.Add(a, off)), graph.Exp(graph.Add(graph.Neg(a), off))}, 1)
			}
		case "heaviside":
			z = graph.MulScalar(graph.ConvertDType(graph.GreaterThan(a, graph.ScalarZero(g, dt)), dt), c)
		case "relu":
			z = graph.MulScalar(graph.MaxScalar(a, 0.0), c)
		case "relu2":
			v := graph.MaxScalar(a, 0.0)
			z = graph.Mul(graph.MulScalar(v, c), v)
		}
		if post != 1 {
			z = graph.MulScalar(z, post)
		}
		return z, ls
	}
	return f, nil
}

// skewedForm returns the form of the skewed χ² map √(2/D)·cos(W·log(x +
// c) + b).
func skewedForm(m *features.SkewedChi2) *mapForm {
	s := m.Spec()
	D, in := s.Features, s.InputDim
	scale := math.Sqrt(2 / float64(D))
	f := &mapForm{name: m.String(), in: in, dim: D, hasLower: true, lower: -s.C,
		params: []hostParam{{s.W, []int{D, in}}, {s.B, []int{D}}}}
	f.build = func(x *graph.Node, p []*graph.Node, _ bool) (z, ls *graph.Node) {
		u := graph.Log(graph.AddScalar(x, s.C))
		a := graph.DotGeneral(u, []int{1}, nil, p[0], []int{1}, nil)
		z = graph.MulScalar(graph.Cos(graph.Add(a, graph.Reshape(p[1], 1, D))), scale)
		return z, graph.Zeros(x.Graph(), shapes.Make(x.DType(), x.Shape().Dim(0)))
	}
	return f
}

// nystromForm returns the form of a Nyström map K_mm^(−1/2)·k(x, L) for
// the kernels that are functions of xᵀl and the norms: RBF, softmax and
// polynomial (the arc-cosine kernels need an arc cosine, which GoMLX's
// pure-Go backend lacks; the χ² kernels are not such functions).
func nystromForm(mp *nystrom.Map) (*mapForm, error) {
	s := mp.Spec()
	m, in := s.Components, s.InputDim
	var kfn func(ip, x, l *graph.Node) *graph.Node
	switch k := mp.Kernel().(type) {
	case kernel.RBF:
		kfn = func(ip, x, l *graph.Node) *graph.Node {
			nx2 := graph.ReduceAndKeep(graph.Square(x), graph.ReduceSum, -1) // n×1
			nl2 := graph.Reshape(graph.ReduceSum(graph.Square(l), -1), 1, m) // 1×m
			d2 := graph.MaxScalar(graph.Sub(graph.Add(nx2, nl2), graph.MulScalar(ip, 2)), 0.0)
			return graph.Exp(graph.MulScalar(d2, -k.Gamma))
		}
	case kernel.Softmax:
		kfn = func(ip, _, _ *graph.Node) *graph.Node { return graph.Exp(ip) }
	case kernel.Polynomial:
		kfn = func(ip, _, _ *graph.Node) *graph.Node {
			b := graph.AddScalar(graph.MulScalar(ip, k.Gamma), k.Coef0)
			var r *graph.Node // b^p by squaring, as kernel.Polynomial
			for p := k.Degree; p > 0; p >>= 1 {
				if p&1 == 1 {
					if r == nil {
						r = b
					} else {
						r = graph.Mul(r, b)
					}
				}
				b = graph.Mul(b, b)
			}
			if r == nil {
				r = graph.OnesLike(ip)
			}
			return r
		}
	default:
		return nil, noForm(mp)
	}
	f := &mapForm{name: mp.String(), in: in, dim: m,
		params: []hostParam{{s.Landmarks, []int{m, in}}, {s.Normalization, []int{m, m}}}}
	f.build = func(x *graph.Node, p []*graph.Node, _ bool) (z, ls *graph.Node) {
		ip := graph.DotGeneral(x, []int{1}, nil, p[0], []int{1}, nil) // n×m
		k := kfn(ip, x, p[0])
		z = graph.DotGeneral(k, []int{1}, nil, p[1], []int{0}, nil)
		return z, graph.Zeros(x.Graph(), shapes.Make(x.DType(), x.Shape().Dim(0)))
	}
	return f, nil
}

// projectionForm is the form of the bare projection XWᵀ (Projectors).
func projectionForm(w *mat.Dense) *mapForm {
	m, in := w.Dims()
	wc := mat.DenseCopyOf(w).RawMatrix().Data
	f := &mapForm{name: fmt.Sprintf("projection %d×%d", m, in), in: in, dim: m, params: []hostParam{{wc, []int{m, in}}}}
	f.build = func(x *graph.Node, p []*graph.Node, _ bool) (z, ls *graph.Node) {
		z = graph.DotGeneral(x, []int{1}, nil, p[0], []int{1}, nil)
		return z, graph.Zeros(x.Graph(), shapes.Make(x.DType(), x.Shape().Dim(0)))
	}
	return f
}
