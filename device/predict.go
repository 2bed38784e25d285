package device

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

// Predictor is a fitted model compiled for a device: for each batch of
// rows one graph applies the model's scaler, its feature map and the
// product with the weights (plus the intercept), so that only the rows
// and the n×K outputs cross between host and device. A Predictor is safe
// for concurrent use.
type Predictor struct {
	m      *model.Model
	mp     *Map
	k      int
	params []*tensors.Tensor // W (D×K), intercept (K), then the scaler's mean and scale (d each)
	exec   *graph.Exec
}

// Predictor compiles model m for d. It is an error if m's map has no
// device form.
func (d *Device) Predictor(m *model.Model) (*Predictor, error) {
	if m == nil || m.Map == nil || m.Linear == nil {
		return nil, errors.New("device: Predictor needs a fitted model")
	}
	mp, err := d.Map(m.Map)
	if err != nil {
		return nil, err
	}
	dim, k := m.Linear.W.Dims()
	if dim != mp.Dim() || len(m.Linear.B) != k {
		return nil, fmt.Errorf("device: model has %d×%d weights and %d intercepts for a map of %d features", dim, k, len(m.Linear.B), mp.Dim())
	}
	in := mp.InputDim()
	p := &Predictor{m: m, mp: mp, k: k}
	host := [][]float64{mat.DenseCopyOf(m.Linear.W).RawMatrix().Data, m.Linear.B}
	dims := [][]int{{dim, k}, {k}}
	if m.Scaler != nil {
		if len(m.Scaler.Mean) != in || len(m.Scaler.Scale) != in {
			return nil, fmt.Errorf("device: model scaler has %d means and %d scales for %d inputs", len(m.Scaler.Mean), len(m.Scaler.Scale), in)
		}
		host = append(host, m.Scaler.Mean, m.Scaler.Scale)
		dims = append(dims, []int{1, in}, []int{1, in})
	}
	for i := range host {
		t, err := uploadTensor(d, host[i], dims[i]...)
		if err != nil {
			return nil, errors.Join(err, releaseAll(p.params...))
		}
		p.params = append(p.params, t)
	}
	f, np, scaled := mp.form, len(mp.params), m.Scaler != nil
	p.exec, err = graph.NewExec(d.backend, func(in []*graph.Node) *graph.Node {
		x, mps, rest := in[0], in[1:1+np], in[1+np:]
		if scaled {
			x = graph.Div(graph.Sub(x, rest[2]), rest[3])
		}
		z, _ := f.build(x, mps, false)
		out := graph.DotGeneral(z, []int{1}, nil, rest[0], []int{0}, nil)
		return graph.Add(out, graph.Reshape(rest[1], 1, k))
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("device: predictor of %s: %w", f.name, err), releaseAll(p.params...))
	}
	p.exec.SetMaxCache(maxGraphs)
	return p, nil
}

// Predict returns the n×K raw outputs of model m for the rows x, computed
// on d: a Predictor compiled for this one call (keep a Predictor for
// repeated calls: each compiles its graphs once).
func (d *Device) Predict(ctx context.Context, m *model.Model, x *mat.Dense) (*mat.Dense, error) {
	p, err := d.Predictor(m)
	if err != nil {
		return nil, err
	}
	return p.Predict(ctx, x)
}

// Predict returns the n×K raw model outputs (K class scores, or the K
// predictions of a regression model of K outputs, one column each) for
// raw rows x, as model.Predict does, batch by batch on the device; it
// stops between batches with ctx's error. Non-finite inputs, inputs
// outside the map's domain and non-finite outputs (features.ErrOverflow)
// are errors.
func (p *Predictor) Predict(ctx context.Context, x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	f := p.mp.form
	if d != f.in {
		return nil, fmt.Errorf("device: data has %d feature columns, model expects %d", d, f.in)
	}
	if n == 0 {
		return &mat.Dense{}, nil
	}
	if _, err := limits.Matrix("device: predictions", n, p.k); err != nil {
		return nil, err
	}
	out := mat.NewDense(n, p.k, nil)
	batch := p.mp.batch
	buf := make([]float64, min(n, batch)*d)
	or := out.RawMatrix()
	for lo := 0; lo < n; lo += batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+batch, n)
		rows := hi - lo
		for i := lo; i < hi; i++ {
			row := x.RawRowView(i)
			if err := f.check(i, row, p.m.Scaler); err != nil {
				return nil, err
			}
			copy(buf[(i-lo)*d:(i-lo+1)*d], row)
		}
		xt, err := stageTensor(p.mp.dev.dtype, buf[:rows*d], padRows(rows, batch), d)
		if err != nil {
			return nil, err
		}
		args := []any{xt}
		for _, t := range p.mp.params {
			args = append(args, t)
		}
		for _, t := range p.params {
			args = append(args, t)
		}
		res, err := p.exec.Exec(args...)
		err = errors.Join(err, xt.FinalizeAll())
		if err != nil {
			return nil, fmt.Errorf("device: predictor of %s on %s: %w", f.name, p.mp.dev.Name(), err)
		}
		if err := unstageRows(res[0], rows, p.k, or.Data[lo*or.Stride:], or.Stride); err != nil {
			return nil, err
		}
		for i := lo; i < hi; i++ {
			for _, v := range out.RawRowView(i) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, p.mp.overflow(i)
				}
			}
		}
	}
	return out, nil
}

// Classify returns the predicted class indices (classification models
// only).
func (p *Predictor) Classify(ctx context.Context, x *mat.Dense) ([]int, error) {
	if p.m.Task != model.Classification {
		return nil, errors.New("device: Classify on a regression model")
	}
	s, err := p.Predict(ctx, x)
	if err != nil {
		return nil, err
	}
	return linear.Argmax(s), nil
}
