package device

import (
	"errors"
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/prf"
)

// This file holds the forms of the positive random features of package
// prf (OPRF/FAVOR++, SDERF/FAVOR# and the two sides of an ADERF pair) and
// the device Pair. Their parameters are fitted by package prf on the CPU;
// the device only evaluates the maps.

// prfForm returns the form of an evaluated prf map (prf package
// documentation)
//
//	z_j(x) = exp((W_eff x)_j + off_j − ½·q(x)),  q(x) = xᵀGx (‖x‖² if gram is nil),
//
// in the order of operations of the CPU code: the projection, plus the
// offsets, then minus ½q (or, scaled, minus the row's largest exponent,
// whose sum with −½q is the log-scale), then the exponential.
func prfForm(name string, w *mat.Dense, off []float64, gram *mat.Dense) *mapForm {
	m, in := w.Dims()
	f := &mapForm{name: name, in: in, dim: m,
		params: []hostParam{{mat.DenseCopyOf(w).RawMatrix().Data, []int{m, in}}, {append([]float64(nil), off...), []int{m}}}}
	if gram != nil {
		f.params = append(f.params, hostParam{mat.DenseCopyOf(gram).RawMatrix().Data, []int{in, in}})
	}
	f.build = func(x *graph.Node, p []*graph.Node, scaled bool) (z, ls *graph.Node) {
		n := x.Shape().Dim(0)
		a := graph.DotGeneral(x, []int{1}, nil, p[0], []int{1}, nil) // n×m
		a = graph.Add(a, graph.Reshape(p[1], 1, m))
		xg := x // q = Σ_l x_l·(Gx)_l
		if len(p) > 2 {
			xg = graph.DotGeneral(x, []int{1}, nil, p[2], []int{0}, nil)
		}
		shift := graph.MulScalar(graph.ReduceAndKeep(graph.Mul(x, xg), graph.ReduceSum, -1), -0.5) // n×1
		if !scaled {
			return graph.Exp(graph.Add(a, shift)), graph.Zeros(x.Graph(), shapes.Make(x.DType(), n))
		}
		mx := graph.ReduceAndKeep(a, graph.ReduceMax, -1)
		return graph.Exp(graph.Sub(a, mx)), graph.Reshape(graph.Add(mx, shift), n)
	}
	return f
}

// prfMapForm returns the form of an OPRF or SDERF map.
func prfMapForm(mp *prf.Map) *mapForm {
	w, off := mp.Projection()
	return prfForm(mp.String(), w, off, nil)
}

// Pair is a features.Pair compiled for a device: its query and key maps
// each run as a Map. Symmetric pairs (features.Symmetric of a map with a
// device form) compile their one map; the ADERF pair of package prf
// (*prf.Pair) compiles its query map, the GERF of Px, and its key map, the
// GERF of P⁻ᵀy, as two forms sharing the fitted parameters. A Pair is safe
// for concurrent use. It cannot be stored in a model file (nor can the
// asymmetric pairs on the CPU).
type Pair struct {
	src        features.Pair
	query, key *Map
}

var _ features.Pair = (*Pair)(nil)

// Pair compiles the pair p for d: a symmetric pair whose map has a device
// form (see Map), or a *prf.Pair (ADERF). Any other pair is an error
// naming it ("device: map … has no device form"); the asymmetric hybrid
// estimators run their projections on the device through Projectors
// instead.
func (d *Device) Pair(p features.Pair) (*Pair, error) {
	if dp, ok := p.(*Pair); ok {
		q, err := d.Map(dp.query)
		if err != nil {
			return nil, err
		}
		if dp.key == dp.query {
			return &Pair{src: dp.src, query: q, key: q}, nil
		}
		k, err := d.Map(dp.key)
		if err != nil {
			return nil, errors.Join(err, releaseAll(q.params...))
		}
		return &Pair{src: dp.src, query: q, key: k}, nil
	}
	if t, ok := features.AsTransformer(p); ok {
		m, err := d.Map(t)
		if err != nil {
			return nil, err
		}
		return &Pair{src: p, query: m, key: m}, nil
	}
	pr, ok := p.(*prf.Pair)
	if !ok {
		return nil, noForm(p)
	}
	qw, qoff, qg := pr.QueryProjection()
	kw, koff, kg := pr.KeyProjection()
	q, err := d.newMap(pairSide{pr, false}, prfForm(pr.String()+" query", qw, qoff, qg))
	if err != nil {
		return nil, err
	}
	k, err := d.newMap(pairSide{pr, true}, prfForm(pr.String()+" key", kw, koff, kg))
	if err != nil {
		return nil, errors.Join(err, releaseAll(q.params...))
	}
	return &Pair{src: p, query: q, key: k}, nil
}

// Dim returns the number of features.
func (p *Pair) Dim() int { return p.query.Dim() }

// InputDim returns the input dimension.
func (p *Pair) InputDim() int { return p.query.InputDim() }

// Query writes the query features of the rows of x into dst, on the
// device (Map.Transform).
func (p *Pair) Query(dst, x *mat.Dense) error { return p.query.Transform(dst, x) }

// Key writes the key features of the rows of y into dst, on the device.
func (p *Pair) Key(dst, y *mat.Dense) error { return p.key.Transform(dst, y) }

// QueryScaled writes the row-scaled query features and returns their
// log-scales (Map.TransformScaled): Query(x)ᵀKey(y) = exp(s_x +
// s_y)·Q̂(x)ᵀK̂(y).
func (p *Pair) QueryScaled(dst, x *mat.Dense) ([]float64, error) {
	return p.query.TransformScaled(dst, x)
}

// KeyScaled is the row-scaled Key (see QueryScaled).
func (p *Pair) KeyScaled(dst, y *mat.Dense) ([]float64, error) { return p.key.TransformScaled(dst, y) }

// QueryMap returns the device map of the queries.
func (p *Pair) QueryMap() *Map { return p.query }

// KeyMap returns the device map of the keys (the query map for a
// symmetric pair).
func (p *Pair) KeyMap() *Map { return p.key }

// Source returns the pair p was compiled from.
func (p *Pair) Source() features.Pair { return p.src }

// String describes the pair and its device.
func (p *Pair) String() string { return fmt.Sprintf("%v on %s", p.src, p.query.dev) }

// pairSide is one side of a *prf.Pair as a Transformer: the source of a
// side's device Map (it cannot be stored: it is no features.Encoder).
type pairSide struct {
	p   *prf.Pair
	key bool
}

func (s pairSide) Dim() int      { return s.p.Dim() }
func (s pairSide) InputDim() int { return s.p.InputDim() }

func (s pairSide) Transform(dst, x *mat.Dense) error {
	if s.key {
		return s.p.Key(dst, x)
	}
	return s.p.Query(dst, x)
}

func (s pairSide) TransformScaled(dst, x *mat.Dense) ([]float64, error) {
	if s.key {
		return s.p.KeyScaled(dst, x)
	}
	return s.p.QueryScaled(dst, x)
}

func (s pairSide) String() string {
	if s.key {
		return s.p.String() + " key"
	}
	return s.p.String() + " query"
}
