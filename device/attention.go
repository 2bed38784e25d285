package device

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/attention"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/nn"
)

// Attention is an attention a device runs on batched multi-head tensors:
// Exact or Linear.
type Attention interface {
	// seqAttention returns the graph's settings (the interface is closed
	// to other types).
	seqAttention() seqAttnSpec
}

// Exact is softmax attention softmax(QKᵀ/√d)V on a device, the reference
// (attention.Exact): the graph of nn.SoftmaxAttention. Its scores take
// B·H·Lq·Lk values of device memory.
type Exact struct {
	// Causal masks the keys after each query, aligned bottom-right as in
	// attention.Exact: query i of Lq attends keys s ≤ i + (Lk − Lq).
	Causal bool
}

// Linear is FAVOR+ linear attention D̃⁻¹(Q'(K'ᵀV)) on a device with the
// positive random features φ(x) = exp(ωᵢᵀx − ‖x‖²/2)/√m of queries and
// keys scaled by d^(−1/4): the graph of nn.LinearAttention, the same
// estimate as attention.Linear with the "positive" (FAVOR+) map of the
// projection Omega, so that device and CPU outputs agree to rounding.
// The key features are stabilised by one factor per sequence and head
// (nn.FavorFeatures), also when causal, where the CPU keeps a running
// reference per row: the factors cancel, so the estimate is the same, but
// a causal row whose keys are all far smaller in scale than a later key
// can underflow on the device where it does not on the CPU.
type Linear struct {
	// Omega is the m×d projection ω: the W of the CPU map (see
	// FavorProjection). It is read at each call.
	Omega *mat.Dense
	// Causal selects unidirectional attention, aligned bottom-right as in
	// attention.Linear. It runs nn.LinearAttention's chunked form: a
	// masked C×C product inside each chunk and the prefix sums of the
	// chunk states across chunks, all on the device.
	Causal bool
	// Chunk is the chunk size C of the causal form; 0 chooses the power of
	// two nearest (2·L·m·dv/(m+dv))^(1/3), between 32 and 512, which
	// balances the C×C blocks against the prefix sums over L/C chunks
	// (a whole sequence of up to 64 rows is one block). The sequence is
	// padded at its end to a multiple of C.
	Chunk int
}

// seqAttnSpec is what a graph needs to know of an Attention.
type seqAttnSpec struct {
	linear, causal bool
	chunk          int
	omega          *mat.Dense
}

func (e Exact) seqAttention() seqAttnSpec { return seqAttnSpec{causal: e.Causal} }

func (l Linear) seqAttention() seqAttnSpec {
	return seqAttnSpec{linear: true, causal: l.Causal, chunk: l.Chunk, omega: l.Omega}
}

// FavorProjection returns a copy of the projection ω (m×d) of a FAVOR+
// map — a features.Map of the softmax kernel in the positive form, such as
// catalog.Default().Pair("positive", …) makes — for Linear.Omega. Other
// maps are an error: the device graph computes the positive features only.
func FavorProjection(p features.Pair) (*mat.Dense, error) {
	t, ok := features.AsTransformer(p)
	if !ok {
		return nil, fmt.Errorf("device: %v is an asymmetric feature pair; the device runs FAVOR+ (positive softmax) features only", p)
	}
	mp, ok := t.(*features.Map)
	if !ok {
		return nil, fmt.Errorf("device: %v is not a random feature map of package features; the device runs FAVOR+ (positive softmax) features only", t)
	}
	if s := mp.Spec(); s.Kernel != "softmax" || s.Form != "positive" {
		return nil, fmt.Errorf("device: %v is not a FAVOR+ map (want the softmax kernel's positive features)", mp)
	}
	return mat.DenseCopyOf(mp.W()), nil
}

// Attention runs att on queries [B, H, Lq, d], keys [B, H, Lk, d] and
// values [B, H, Lk, dv] and returns the outputs [B, H, Lq, dv], computed
// on the device in its float type: the device counterpart of
// attention.ApplyTensor, with the same shapes, key padding mask (nil, or
// B·Lk entries, true marking padding; padded rows are not used and may
// hold anything) and conventions (a query that sees no key gets a row of
// zeros). The inputs are converted to the device's type, copied to the
// device, and the outputs copied back; one graph is compiled per device,
// attention settings and shapes and reused by later calls of the same
// shapes. Shapes that disagree, non-finite inputs in rows that are not
// padded, and graphs whose largest intermediate (Exact: B·H·Lq·Lk scores;
// Linear: B·H·L·m features and, causal, B·H·L·C chunk blocks) would
// exceed limits.MaxElements values are errors. ctx is checked before the
// device runs; a running graph is not interrupted.
func (d *Device) Attention(ctx context.Context, att Attention, q, k, v attention.Tensor, keyPadding []bool) (attention.Tensor, error) {
	s := [3]attention.Tensor{q, k, v}
	var shp [3][4]int
	for i, t := range s {
		shp[i] = [4]int{t.Batch, t.Heads, t.Len, t.Dim}
		if err := seqCheckTensor(seqTensorNames[i], shp[i], len(t.Data)); err != nil {
			return attention.Tensor{}, err
		}
	}
	in, err := d.seqAttnInputs(att, shp, keyPadding, func(i int, pad []bool) error {
		return seqCheckFinite(seqTensorNames[i], s[i].Data, shp[i], pad)
	}, func(i int) *tensors.Tensor { return seqTensor(d.dtype, s[i].Data, shp[i][:]...) })
	if err != nil {
		return attention.Tensor{}, err
	}
	out, err := d.seqAttnRun(ctx, att, in)
	if err != nil {
		return attention.Tensor{}, err
	}
	res, err := attention.NewTensor(q.Batch, q.Heads, q.Len, v.Dim)
	if err != nil {
		return attention.Tensor{}, err
	}
	return res, seqCopyOut(res.Data, out)
}

// Attention32 is Attention on float32 tensors (attention.Tensor32): the
// device computes in its own float type (see Device.WithFloat32), and the
// outputs are returned in float32.
func (d *Device) Attention32(ctx context.Context, att Attention, q, k, v attention.Tensor32, keyPadding []bool) (attention.Tensor32, error) {
	s := [3]attention.Tensor32{q, k, v}
	var shp [3][4]int
	for i, t := range s {
		shp[i] = [4]int{t.Batch, t.Heads, t.Len, t.Dim}
		if err := seqCheckTensor(seqTensorNames[i], shp[i], len(t.Data)); err != nil {
			return attention.Tensor32{}, err
		}
	}
	in, err := d.seqAttnInputs(att, shp, keyPadding, func(i int, pad []bool) error {
		return seqCheckFinite(seqTensorNames[i], s[i].Data, shp[i], pad)
	}, func(i int) *tensors.Tensor { return seqTensor(d.dtype, s[i].Data, shp[i][:]...) })
	if err != nil {
		return attention.Tensor32{}, err
	}
	out, err := d.seqAttnRun(ctx, att, in)
	if err != nil {
		return attention.Tensor32{}, err
	}
	res, err := attention.NewTensor32(q.Batch, q.Heads, q.Len, v.Dim)
	if err != nil {
		return attention.Tensor32{}, err
	}
	return res, seqCopyOut(res.Data, out)
}

var seqTensorNames = [3]string{"queries", "keys", "values"}

// seqAttnInputs checks the shapes, the mask and the memory of the graph,
// checks the inputs with finite and returns the graph's arguments: q, k,
// v (made by tensor), then ω for Linear, then the key mask (1 for a real
// key, 0 for padding) when keyPadding pads some key.
func (d *Device) seqAttnInputs(att Attention, s [3][4]int, keyPadding []bool,
	finite func(i int, pad []bool) error, tensor func(i int) *tensors.Tensor) ([]*tensors.Tensor, error) {
	if att == nil {
		return nil, errors.New("device: nil attention")
	}
	q, k, v := s[0], s[1], s[2]
	if q[0] != k[0] || k[0] != v[0] || q[1] != k[1] || k[1] != v[1] {
		return nil, fmt.Errorf("device: batch and heads of queries %v, keys %v and values %v differ", q[:2], k[:2], v[:2])
	}
	if q[3] != k[3] {
		return nil, fmt.Errorf("device: queries have dimension %d, keys %d", q[3], k[3])
	}
	if k[2] != v[2] {
		return nil, fmt.Errorf("device: %d keys but %d values", k[2], v[2])
	}
	b, h, lq, lk, dim, dv := q[0], q[1], q[2], k[2], q[3], v[3]
	if keyPadding != nil && len(keyPadding) != b*lk {
		return nil, fmt.Errorf("device: key padding mask of length %d for %d sequences of %d keys", len(keyPadding), b, lk)
	}
	spec := att.seqAttention()
	// The largest intermediates of the graph, in values.
	l := lq
	if spec.causal {
		l = max(lq, lk) // aligned bottom-right by padding the shorter side
	}
	bh := b * h // fits: the tensors were checked
	if !spec.linear {
		if _, err := limits.Matrix("device: softmax attention scores", bh*l, max(lk, l)); err != nil {
			return nil, err
		}
	} else {
		if spec.omega == nil {
			return nil, errors.New("device: Linear has no projection Omega")
		}
		m, od := spec.omega.Dims()
		if od != dim {
			return nil, fmt.Errorf("device: projection Omega is %d×%d for inputs of dimension %d", m, od, dim)
		}
		if spec.chunk < 0 {
			return nil, fmt.Errorf("device: negative causal chunk %d", spec.chunk)
		}
		rows := bh * (max(l, lk) + 512) // features of queries or keys, with chunk padding
		if _, err := limits.Matrix("device: linear attention features", rows, m); err != nil {
			return nil, err
		}
		if spec.causal {
			c := seqChunk(spec.chunk, l, m, dv)
			if _, err := limits.Matrix("device: causal chunk blocks", rows, c); err != nil {
				return nil, err
			}
		}
	}
	var pad []bool
	for _, p := range keyPadding {
		if p {
			pad = keyPadding
			break
		}
	}
	if err := finite(0, nil); err != nil {
		return nil, err
	}
	for i := 1; i < 3; i++ {
		if err := finite(i, pad); err != nil {
			return nil, err
		}
	}
	in := []*tensors.Tensor{tensor(0), tensor(1), tensor(2)}
	if spec.linear {
		m, _ := spec.omega.Dims()
		in = append(in, seqTensor(d.dtype, mat.DenseCopyOf(spec.omega).RawMatrix().Data, m, dim))
	}
	if pad != nil {
		mk := make([]float64, len(pad))
		for i, p := range pad {
			if !p {
				mk[i] = 1
			}
		}
		in = append(in, seqTensor(d.dtype, mk, b, lk))
	}
	return in, nil
}

// seqAttnRun runs the attention graph on the arguments and returns its
// output, then frees the arguments' device buffers.
func (d *Device) seqAttnRun(ctx context.Context, att Attention, in []*tensors.Tensor) (*tensors.Tensor, error) {
	spec := att.seqAttention()
	masked := len(in) > 3 && !spec.linear || len(in) > 4
	key := seqKey{op: "exact", causal: spec.causal, masked: masked, chunk: spec.chunk}
	if spec.linear {
		key.op = "linear"
	}
	return d.seqRun(ctx, key, func() any { return seqAttnGraph(spec.linear, spec.causal, masked, spec.chunk) }, in)
}

// seqChunk returns the chunk size of the causal form for length l (see
// Linear.Chunk).
func seqChunk(chunk, l, m, dv int) int {
	if chunk > 0 {
		return min(chunk, l)
	}
	if l <= 64 {
		return l
	}
	c := math.Cbrt(2 * float64(l) * float64(m) * float64(dv) / float64(m+dv))
	p := 1 << int(math.Round(math.Log2(c)))
	return min(max(p, 32), 512, l)
}

// seqAttnGraph returns the graph function of an attention: arguments q,
// k, v, then ω (linear), then the key mask (masked).
func seqAttnGraph(linear, causal, masked bool, chunk int) func([]*Node) *Node {
	return func(in []*Node) *Node {
		q, k, v := in[0], in[1], in[2]
		g := q.Graph()
		dt := q.DType()
		var omega, mask *Node
		if linear {
			omega = in[3]
		}
		if masked {
			mask = in[len(in)-1]
		}
		b, h, lq, dim := q.Shape().Dim(0), q.Shape().Dim(1), q.Shape().Dim(2), q.Shape().Dim(3)
		lk, dv := k.Shape().Dim(2), v.Shape().Dim(3)
		if mask != nil {
			// Padded rows may hold anything: zero them before use.
			keep := Reshape(GreaterThan(mask, ScalarZero(g, dt)), b, 1, lk, 1)
			k = Where(BroadcastToDims(keep, b, h, lk, dim), k, ZerosLike(k))
			v = Where(BroadcastToDims(keep, b, h, lk, dv), v, ZerosLike(v))
		}
		zeros := func(dims ...int) *Node { return Zeros(g, shapes.Make(dt, dims...)) }
		off := 0 // query rows added in front
		// Bottom-right causal alignment: pad the shorter side in front, so
		// that the usual lower-triangular mask on L = max(Lq, Lk) rows is
		// the aligned one. Extra keys in front are masked out.
		if causal && lk > lq {
			off = lk - lq
			q = Concatenate([]*Node{zeros(b, h, off, dim), q}, 2)
		}
		if causal && lq > lk {
			p := lq - lk
			k = Concatenate([]*Node{zeros(b, h, p, dim), k}, 2)
			v = Concatenate([]*Node{zeros(b, h, p, dv), v}, 2)
			if mask == nil {
				mask = Ones(g, shapes.Make(dt, b, lk))
			}
			mask = Concatenate([]*Node{zeros(b, p), mask}, 1)
		}
		seen := mask != nil // some query may see no key
		var out *Node
		if !linear {
			out = nn.SoftmaxAttention(q, k, v, causal, mask)
		} else {
			c := 0
			if causal {
				l := q.Shape().Dim(2)
				c = seqChunk(chunk, l, omega.Shape().Dim(0), dv)
				if e := (c - l%c) % c; e > 0 {
					// Rows added at the end: their keys come after every
					// real query, so no real query sees them.
					q = Concatenate([]*Node{q, zeros(b, h, e, dim)}, 2)
					k = Concatenate([]*Node{k, zeros(b, h, e, dim)}, 2)
					v = Concatenate([]*Node{v, zeros(b, h, e, dv)}, 2)
					if mask != nil {
						mask = Concatenate([]*Node{mask, zeros(b, e)}, 1)
					}
				}
			}
			out = nn.LinearAttention(q, k, v, omega, causal, c, mask)
		}
		if seen {
			out = seqZeroUnseen(out, mask, causal)
		}
		if out.Shape().Dim(2) != lq {
			out = Slice(out, AxisRange(), AxisRange(), AxisRange(off, off+lq))
		}
		return out
	}
}

// seqZeroUnseen zeroes the output rows of queries that see no key (mask:
// B×L, 1 for a real key): those after the first real key (causal, equal
// lengths) or, bidirectional, every row of a sequence with none. Their
// rows would otherwise be a uniform average (softmax) or 0/0 (linear).
func seqZeroUnseen(out, mask *Node, causal bool) *Node {
	g := out.Graph()
	b, h, lq, dv := out.Shape().Dim(0), out.Shape().Dim(1), out.Shape().Dim(2), out.Shape().Dim(3)
	lk := mask.Shape().Dim(1)
	pos := Iota(g, shapes.Make(dtypes.Int32, b, lk), 1)
	none := BroadcastToShape(Scalar(g, dtypes.Int32, lk), pos.Shape())
	first := ReduceMin(Where(GreaterThan(mask, ScalarZero(g, mask.DType())), pos, none), 1) // B
	var seen *Node
	if causal {
		qpos := Iota(g, shapes.Make(dtypes.Int32, b, lq), 1)
		seen = GreaterOrEqual(qpos, BroadcastToDims(Reshape(first, b, 1), b, lq))
	} else {
		seen = BroadcastToDims(Reshape(LessThan(first, Scalar(g, dtypes.Int32, lk)), b, 1), b, lq)
	}
	seen = BroadcastToDims(Reshape(seen, b, 1, lq, 1), b, h, lq, dv)
	return Where(seen, out, ZerosLike(out))
}

// seqKey identifies a cached executor: the backend and float type, the
// operation and the settings its graph function captures. Shapes are not
// part of it: each executor compiles one graph per input shapes.
type seqKey struct {
	backend        backends.Backend
	dtype          dtypes.DType
	op             string
	causal, masked bool // attention
	filter, fft    bool // Toeplitz mixers
	chunk          int
}

// seqExecs caches the executors of this file and toeplitz.go.
var seqExecs sync.Map // seqKey → *Exec

// seqMaxGraphs is the number of input shapes an executor keeps compiled.
const seqMaxGraphs = 64

// seqRun runs the executor of key (made from build's graph function on
// first use) on the arguments, frees the device buffers of args (which
// callers make for one call) and returns the first output.
func (d *Device) seqRun(ctx context.Context, key seqKey, build func() any, args []*tensors.Tensor) (out *tensors.Tensor, err error) {
	defer func() {
		if ferr := seqFree(args...); ferr != nil && err == nil {
			out, err = nil, errors.Join(ferr, seqFree(out))
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return d.seqExec(key, build, seqAny(args)...)
}

// seqExec runs the executor of key on args (tensors or values) and returns
// its one output, on the device.
func (d *Device) seqExec(key seqKey, build func() any, args ...any) (*tensors.Tensor, error) {
	key.backend, key.dtype = d.backend, d.dtype
	e, ok := seqExecs.Load(key)
	if !ok {
		ex, err := NewExecAny(d.backend, build())
		if err != nil {
			return nil, fmt.Errorf("device %s: %w", d.name, err)
		}
		ex.SetMaxCache(seqMaxGraphs)
		e, _ = seqExecs.LoadOrStore(key, ex)
	}
	outs, err := e.(*Exec).Exec(args...)
	if err != nil {
		return nil, fmt.Errorf("device %s: %s: %w", d.name, key.op, err)
	}
	if len(outs) != 1 {
		return nil, errors.Join(fmt.Errorf("device %s: %s: %d outputs", d.name, key.op, len(outs)), seqFree(outs...))
	}
	return outs[0], nil
}

func seqAny(ts []*tensors.Tensor) []any {
	a := make([]any, len(ts))
	for i, t := range ts {
		a[i] = t
	}
	return a
}

// seqFree releases tensors' host and device memory now rather than at
// garbage collection; they must not be used after. Nil tensors and
// tensors already freed are skipped.
func seqFree(ts ...*tensors.Tensor) error {
	var errs []error
	for _, t := range ts {
		if t != nil {
			if err := t.FinalizeAll(); err != nil {
				errs = append(errs, fmt.Errorf("device: freeing a tensor: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// seqTensor returns a host tensor of the given float type holding data
// (converted) with the given dimensions.
func seqTensor[T float32 | float64](dt dtypes.DType, data []T, dims ...int) *tensors.Tensor {
	switch dt {
	case dtypes.Float64:
		if s, ok := any(data).([]float64); ok {
			return tensors.FromFlatDataAndDimensions(s, dims...)
		}
		c := make([]float64, len(data))
		for i, x := range data {
			c[i] = float64(x)
		}
		return tensors.FromFlatDataAndDimensions(c, dims...)
	case dtypes.Float32:
		if s, ok := any(data).([]float32); ok {
			return tensors.FromFlatDataAndDimensions(s, dims...)
		}
		c := make([]float32, len(data))
		for i, x := range data {
			c[i] = float32(x)
		}
		return tensors.FromFlatDataAndDimensions(c, dims...)
	}
	panic(fmt.Sprintf("device: unsupported float type %s", dt))
}

// seqCopyOut copies a float output tensor into dst (converting) and frees
// it.
func seqCopyOut[T float32 | float64](dst []T, t *tensors.Tensor) (err error) {
	defer func() { err = errors.Join(err, seqFree(t)) }()
	if n := t.Shape().Size(); n != len(dst) {
		return fmt.Errorf("device: output of %d values for %d", n, len(dst))
	}
	switch t.DType() {
	case dtypes.Float64:
		src, err := tensors.CopyFlatData[float64](t)
		if err != nil {
			return err
		}
		for i, x := range src {
			dst[i] = T(x)
		}
	case dtypes.Float32:
		src, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return err
		}
		for i, x := range src {
			dst[i] = T(x)
		}
	default:
		return fmt.Errorf("device: output of type %s", t.DType())
	}
	return nil
}

// seqCheckTensor checks a [B, H, L, D] shape and its number of values.
func seqCheckTensor(name string, s [4]int, have int) error {
	if s[0] <= 0 || s[1] <= 0 || s[2] <= 0 || s[3] <= 0 {
		return fmt.Errorf("device: %s: tensor shape %v has a dimension below 1", name, s)
	}
	n, err := limits.Mul(s[0], s[1])
	if err == nil {
		n, err = limits.Mul(n, s[2])
	}
	if err == nil {
		n, err = limits.Mul(n, s[3])
	}
	if err == nil && n > limits.MaxElements {
		err = fmt.Errorf("%d values exceed the limit of %d", n, limits.MaxElements)
	}
	if err != nil {
		return fmt.Errorf("device: %s: tensor shape %v: %w", name, s, err)
	}
	if have != n {
		return fmt.Errorf("device: %s has shape %v but %d values", name, s, have)
	}
	return nil
}

// seqCheckFinite returns an error if a row of a [B, H, L, D] tensor that
// is not padded (pad: nil, or B·L entries) holds NaN or ±Inf.
func seqCheckFinite[T float32 | float64](name string, data []T, s [4]int, pad []bool) error {
	l, dim := s[2], s[3]
	for r := 0; r < len(data)/dim; r++ {
		if pad != nil {
			b, t := r/(s[1]*l), r%l
			if pad[b*l+t] {
				continue
			}
		}
		for _, x := range data[r*dim : (r+1)*dim] {
			if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("device: %s have NaN or Inf", name)
			}
		}
	}
	return nil
}
