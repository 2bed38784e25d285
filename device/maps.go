package device

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// DefaultBatchRows is the number of rows one graph execution of a Map, of
// the ridge statistics or of a Predictor processes unless set otherwise:
// device memory is bounded by a batch's inputs and features (and, for the
// statistics, D² per fold), whatever the number of rows.
const DefaultBatchRows = 4096

// maxGraphs bounds the graphs an Exec compiles: one per power of two up
// to the batch rows (see padRows), with room to spare.
const maxGraphs = 64

// Map is a feature map compiled for a device: the projection and the
// element-wise pass of each batch of rows run as one graph (fused by XLA
// on a GPU), in the device's float type. It implements
// features.Transformer and features.ScaledTransformer, so it can stand
// wherever a map is taken (model.Options.Map, say), and features.Encoder
// by its source map's spec, so a model fitted with it saves as with the
// source. A Map is safe for concurrent use.
type Map struct {
	dev    *Device
	src    features.Transformer
	form   *mapForm
	batch  int
	params []*tensors.Tensor // the form's parameters in the device's dtype
	plain  *graph.Exec       // x, params → z
	scaled *graph.Exec       // x, params → z, s
}

// A Map stands where the contract's maps do.
var (
	_ features.ScaledTransformer = (*Map)(nil)
	_ features.Encoder           = (*Map)(nil)
)

// Map compiles the feature map t for d. Maps with a device form: every
// form of a *features.Map (rbf cos and sincos, positive and hyperbolic
// with their log-domain stabilisation, softmax trig, the arc-cosine
// Heaviside, ReLU and squared-ReLU maps), the ReLU-SNNK towers
// (*snnk.ReLU), the skewed χ² map (*features.SkewedChi2) and the Nyström
// maps of the RBF, softmax and polynomial kernels (*nystrom.Map), and the
// fitted OPRF (FAVOR++) and SDERF (FAVOR#) maps of package prf (*prf.Map,
// evaluated with the parameters prf fitted on the CPU), and any of these
// tempered (features.Temper: the form on the rows times 1/√τ); a *Map is
// recompiled for d. Any other map is an error naming it ("device: map …
// has no device form"): there is no silent fallback to the CPU. The ADERF
// pair of package prf compiles with Pair, a map for each side. The
// asymmetric hybrid estimators have no fused form; their projections run
// on the device through the projector seam (Projectors). A map whose
// projection was replaced by a projector (features.WithProjectors) runs
// with the exact projection on the device.
func (d *Device) Map(t features.Transformer) (*Map, error) {
	if m, ok := t.(*Map); ok {
		return d.newMap(m.src, m.form)
	}
	f, err := formOf(t)
	if err != nil {
		return nil, err
	}
	return d.newMap(t, f)
}

// Transform returns the features of the rows of x under t, computed on d
// (Map(t), then Apply).
func (d *Device) Transform(ctx context.Context, t features.Transformer, x *mat.Dense) (*mat.Dense, error) {
	m, err := d.Map(t)
	if err != nil {
		return nil, err
	}
	return m.Apply(ctx, x)
}

// newMap uploads the form's parameters and prepares its graphs.
func (d *Device) newMap(src features.Transformer, f *mapForm) (*Map, error) {
	m := &Map{dev: d, src: src, form: f, batch: DefaultBatchRows, params: make([]*tensors.Tensor, len(f.params))}
	for i, p := range f.params {
		var err error
		if m.params[i], err = uploadTensor(d, p.data, p.dims...); err != nil {
			return nil, errors.Join(err, releaseAll(m.params...))
		}
	}
	var err error
	m.plain, err = graph.NewExec(d.backend, func(in []*graph.Node) *graph.Node {
		z, _ := f.build(in[0], in[1:], false)
		return z
	})
	if err == nil {
		m.scaled, err = graph.NewExec(d.backend, func(in []*graph.Node) []*graph.Node {
			z, s := f.build(in[0], in[1:], true)
			return []*graph.Node{z, s}
		})
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("device: %s: %w", f.name, err), releaseAll(m.params...))
	}
	m.plain.SetMaxCache(maxGraphs)
	m.scaled.SetMaxCache(maxGraphs)
	return m, nil
}

// WithBatchRows returns a copy of m that runs rows rows per graph
// execution (sharing m's compiled graphs and parameters). It is an error
// if rows is not positive or a batch of features is beyond the limits of
// package internal/limits.
func (m *Map) WithBatchRows(rows int) (*Map, error) {
	if rows <= 0 {
		return nil, fmt.Errorf("device: batch rows must be positive, got %d", rows)
	}
	if _, err := limits.Matrix("device: feature batch", rows, max(m.form.dim, m.form.in)); err != nil {
		return nil, err
	}
	c := *m
	c.batch = rows
	return &c, nil
}

// BatchRows returns the rows of one graph execution.
func (m *Map) BatchRows() int { return m.batch }

// Device returns the device m runs on.
func (m *Map) Device() *Device { return m.dev }

// Source returns the map m was compiled from.
func (m *Map) Source() features.Transformer { return m.src }

// Dim returns the output dimension D.
func (m *Map) Dim() int { return m.form.dim }

// InputDim returns the input dimension d.
func (m *Map) InputDim() int { return m.form.in }

// String describes the map and its device, e.g. "rbf/cos D=512 (iid) on
// go (go:ops_sequential, float64)".
func (m *Map) String() string { return m.form.name + " on " + m.dev.String() }

// EncodeSpec returns the source map's kind and spec (features.Encoder),
// or an error if the source map cannot be stored.
func (m *Map) EncodeSpec() (string, json.RawMessage, error) {
	return features.Encode(m.src)
}

// Transform writes the features of the rows of x into dst (n×Dim()),
// batch by batch on the device. Shape mismatches, non-finite inputs,
// inputs outside the map's domain and features beyond the device's float
// range (features.ErrOverflow; float32 overflows at about 3.4·10³⁸) are
// errors.
func (m *Map) Transform(dst, x *mat.Dense) error {
	return m.run(context.Background(), dst, x, nil)
}

// TransformScaled writes the row-scaled features ẑ(x_i) = exp(−s_i)·z(x_i)
// and returns the s_i (features.ScaledTransformer): for the positive and
// hyperbolic forms and the prf maps (OPRF, SDERF, the sides of ADERF) the
// largest exponent of each row is subtracted before
// the exponential (log-domain stabilisation, so no feature exceeds 1),
// the trigonometric forms return their exponential prefactor as s_i, and
// the bounded forms s_i = 0.
func (m *Map) TransformScaled(dst, x *mat.Dense) ([]float64, error) {
	n, _ := x.Dims()
	s := make([]float64, n)
	if err := m.run(context.Background(), dst, x, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Apply returns the n×D features of the rows of x, stopping between
// batches with ctx's error.
func (m *Map) Apply(ctx context.Context, x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	if n == 0 {
		return nil, errors.New("device: no rows to transform")
	}
	if d != m.form.in {
		return nil, fmt.Errorf("device: input has %d columns, map %s expects %d", d, m.form.name, m.form.in)
	}
	if _, err := limits.Matrix("device: features", n, m.form.dim); err != nil {
		return nil, err
	}
	z := mat.NewDense(n, m.form.dim, nil)
	if err := m.run(ctx, z, x, nil); err != nil {
		return nil, err
	}
	return z, nil
}

// run transforms x into dst batch by batch; with logScale it runs the
// scaled graph and writes the log-scales.
func (m *Map) run(ctx context.Context, dst, x *mat.Dense, logScale []float64) error {
	n, d := x.Dims()
	f := m.form
	if d != f.in {
		return fmt.Errorf("device: input has %d columns, map %s expects %d", d, f.name, f.in)
	}
	if dn, dd := dst.Dims(); dn != n || dd != f.dim {
		return fmt.Errorf("device: destination is %d×%d, want %d×%d", dn, dd, n, f.dim)
	}
	if n == 0 {
		return nil
	}
	buf := make([]float64, min(n, m.batch)*d)
	dr := dst.RawMatrix()
	for lo := 0; lo < n; lo += m.batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+m.batch, n)
		rows := hi - lo
		for i := lo; i < hi; i++ {
			row := x.RawRowView(i)
			if err := f.check(i, row, nil); err != nil {
				return err
			}
			copy(buf[(i-lo)*d:(i-lo+1)*d], row)
		}
		outs, err := m.exec(logScale != nil, buf[:rows*d], padRows(rows, m.batch))
		if err != nil {
			return err
		}
		err = unstageRows(outs[0], rows, f.dim, dr.Data[lo*dr.Stride:], dr.Stride)
		if logScale != nil {
			err = errors.Join(err, unstageInto(outs[1], logScale[lo:hi]))
		}
		if err != nil {
			return err
		}
		if err := m.finite(dst, lo, hi); err != nil {
			return err
		}
	}
	return nil
}

// exec runs the plain or scaled graph on the rows in buf (row-major,
// InputDim columns), padded with zero rows to rows rows.
func (m *Map) exec(scaled bool, buf []float64, rows int) ([]*tensors.Tensor, error) {
	xt, err := stageTensor(m.dev.dtype, buf, rows, m.form.in)
	if err != nil {
		return nil, err
	}
	args := make([]any, 0, 1+len(m.params))
	args = append(args, xt)
	for _, p := range m.params {
		args = append(args, p)
	}
	e := m.plain
	if scaled {
		e = m.scaled
	}
	outs, err := e.Exec(args...)
	if rerr := xt.FinalizeAll(); err == nil {
		err = rerr
	}
	if err != nil {
		return nil, fmt.Errorf("device: %s on %s: %w", m.form.name, m.dev.Name(), err)
	}
	return outs, nil
}

// finite returns features.ErrOverflow if a feature of rows [lo, hi) of z
// is not finite.
func (m *Map) finite(z *mat.Dense, lo, hi int) error {
	for i := lo; i < hi; i++ {
		for _, v := range z.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return m.overflow(i)
			}
		}
	}
	return nil
}

// overflow is the error of a non-finite feature of row i.
func (m *Map) overflow(i int) error {
	if m.dev.Float32() {
		return fmt.Errorf("device: %w (row %d, float32 range; use TransformScaled or a float64 device)", features.ErrOverflow, i)
	}
	return fmt.Errorf("device: %w (row %d)", features.ErrOverflow, i)
}

// Projectors returns the projector seam's constructor for d
// (features.NewProjector): each projector computes XWᵀ of its W on the
// device, batch by batch, and features.WithProjectors or
// features.PairWithProjectors run a map's projections on it while its
// element-wise pass stays on the host. This is the device route of the
// maps without a fused form (the asymmetric hybrid estimators of package
// hybrid, say); it is explicit, never a fallback of Map.
func (d *Device) Projectors() features.NewProjector {
	return func(w *mat.Dense) (features.Projector, error) {
		m, err := d.newMap(nil, projectionForm(w))
		if err != nil {
			return nil, err
		}
		return projector{m}, nil
	}
}

// projector is a device Projector.
type projector struct{ m *Map }

// ProjectFrom writes XWᵀ into dst; the device projection does not depend
// on the row offset.
func (p projector) ProjectFrom(dst, x *mat.Dense, _ int) error { return p.m.Transform(dst, x) }
