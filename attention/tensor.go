package attention

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
)

// Tensor is a dense row-major array of shape [Batch, Heads, Len, Dim], the
// layout of PyTorch's scaled_dot_product_attention inputs: element
// (b, h, t, j) is Data[((b·Heads + h)·Len + t)·Dim + j], so each
// (sequence, head) pair is one contiguous Len×Dim matrix.
type Tensor struct {
	Batch, Heads, Len, Dim int
	Data                   []float64
}

// Tensor32 is Tensor in single precision.
type Tensor32 struct {
	Batch, Heads, Len, Dim int
	Data                   []float32
}

// tensorSize returns the number of elements of a shape, or an error if a
// dimension is not positive or the size exceeds limits.MaxElements.
func tensorSize(b, h, l, d int) (int, error) {
	if b <= 0 || h <= 0 || l <= 0 || d <= 0 {
		return 0, fmt.Errorf("attention: tensor shape [%d, %d, %d, %d] has a dimension below 1", b, h, l, d)
	}
	n, err := limits.Mul(b, h)
	if err == nil {
		n, err = limits.Mul(n, l)
	}
	if err == nil {
		n, err = limits.Mul(n, d)
	}
	if err == nil && n > limits.MaxElements {
		err = fmt.Errorf("%d elements exceed the limit of %d", n, limits.MaxElements)
	}
	if err != nil {
		return 0, fmt.Errorf("attention: tensor shape [%d, %d, %d, %d]: %w", b, h, l, d, err)
	}
	return n, nil
}

// NewTensor returns a zero tensor of the given shape, or an error if a
// dimension is below 1 or the tensor exceeds limits.MaxElements.
func NewTensor(batch, heads, length, dim int) (Tensor, error) {
	n, err := tensorSize(batch, heads, length, dim)
	if err != nil {
		return Tensor{}, err
	}
	return Tensor{Batch: batch, Heads: heads, Len: length, Dim: dim, Data: make([]float64, n)}, nil
}

// NewTensor32 returns a zero single-precision tensor of the given shape
// (errors as NewTensor).
func NewTensor32(batch, heads, length, dim int) (Tensor32, error) {
	n, err := tensorSize(batch, heads, length, dim)
	if err != nil {
		return Tensor32{}, err
	}
	return Tensor32{Batch: batch, Heads: heads, Len: length, Dim: dim, Data: make([]float32, n)}, nil
}

func (t Tensor) check(name string) error   { return checkTensor(name, shape(t), len(t.Data)) }
func (t Tensor32) check(name string) error { return checkTensor(name, shape32(t), len(t.Data)) }

// checkTensor checks a tensor's shape and that it has have values.
func checkTensor(name string, s [4]int, have int) error {
	n, err := tensorSize(s[0], s[1], s[2], s[3])
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if have != n {
		return fmt.Errorf("attention: %s has shape %v but %d values", name, s, have)
	}
	return nil
}

// Head returns the Len×Dim matrix of sequence b, head h: a view of Data,
// not a copy. It panics if b or h is out of range.
func (t Tensor) Head(b, h int) *mat.Dense {
	if b < 0 || b >= t.Batch || h < 0 || h >= t.Heads {
		panic(fmt.Sprintf("attention: head (%d, %d) of a [%d, %d, …] tensor", b, h, t.Batch, t.Heads))
	}
	n := t.Len * t.Dim
	o := (b*t.Heads + h) * n
	return mat.NewDense(t.Len, t.Dim, t.Data[o:o+n:o+n])
}

// Head returns the Len×Dim matrix of sequence b, head h: a view of Data,
// not a copy. It panics if b or h is out of range.
func (t Tensor32) Head(b, h int) blas32.General {
	if b < 0 || b >= t.Batch || h < 0 || h >= t.Heads {
		panic(fmt.Sprintf("attention: head (%d, %d) of a [%d, %d, …] tensor", b, h, t.Batch, t.Heads))
	}
	n := t.Len * t.Dim
	o := (b*t.Heads + h) * n
	return blas32.General{Rows: t.Len, Cols: t.Dim, Stride: t.Dim, Data: t.Data[o : o+n : o+n]}
}

// checkTensorShapes checks queries [B, H, Lq, d], keys [B, H, Lk, d],
// values [B, H, Lk, dv] and a key padding mask of B·Lk entries (or nil).
func checkTensorShapes(q, k, v [4]int, pad []bool) error {
	if q[0] != k[0] || k[0] != v[0] || q[1] != k[1] || k[1] != v[1] {
		return fmt.Errorf("attention: batch and heads of queries %v, keys %v and values %v differ", q[:2], k[:2], v[:2])
	}
	if q[3] != k[3] {
		return fmt.Errorf("attention: queries have dimension %d, keys %d", q[3], k[3])
	}
	if k[2] != v[2] {
		return fmt.Errorf("attention: %d keys but %d values", k[2], v[2])
	}
	if pad != nil && len(pad) != k[0]*k[2] {
		return fmt.Errorf("attention: key padding mask of length %d for %d sequences of %d keys", len(pad), k[0], k[2])
	}
	return nil
}

func shape(t Tensor) [4]int     { return [4]int{t.Batch, t.Heads, t.Len, t.Dim} }
func shape32(t Tensor32) [4]int { return [4]int{t.Batch, t.Heads, t.Len, t.Dim} }

// padRow returns the mask of sequence b (nil for no mask).
func padRow(pad []bool, b, lk int) []bool {
	if pad == nil {
		return nil
	}
	return pad[b*lk : (b+1)*lk]
}

// ApplyTensor applies att to every (sequence, head) pair of queries
// [B, H, Lq, d], keys [B, H, Lk, d] and values [B, H, Lk, dv] in one call
// and returns the outputs [B, H, Lq, dv]. keyPadding is nil or holds
// B·Lk entries, row b (keyPadding[b·Lk:(b+1)·Lk]) the key padding mask of
// sequence b for every head (see Masked). The B·H pairs run in parallel,
// each computed by one call of att.ApplyMasked on its own Len×Dim views,
// so there is no reduction across pairs and the output is bit for bit the
// loop over pairs, on any number of cores. It stops early with ctx's error.
func ApplyTensor(ctx context.Context, att Masked, q, k, v Tensor, keyPadding []bool) (Tensor, error) {
	for _, c := range []struct {
		t    Tensor
		name string
	}{{q, "queries"}, {k, "keys"}, {v, "values"}} {
		if err := c.t.check(c.name); err != nil {
			return Tensor{}, err
		}
	}
	if err := checkTensorShapes(shape(q), shape(k), shape(v), keyPadding); err != nil {
		return Tensor{}, err
	}
	out, err := NewTensor(q.Batch, q.Heads, q.Len, v.Dim)
	if err != nil {
		return Tensor{}, err
	}
	errs := make([]error, q.Batch*q.Heads)
	parallel.Tasks(len(errs), func(_, i int) {
		if errs[i] = ctx.Err(); errs[i] != nil {
			return
		}
		b, h := i/q.Heads, i%q.Heads
		o, err := att.ApplyMasked(q.Head(b, h), k.Head(b, h), v.Head(b, h), padRow(keyPadding, b, k.Len))
		if err != nil {
			errs[i] = fmt.Errorf("sequence %d, head %d: %w", b, h, err)
			return
		}
		out.Head(b, h).Copy(o)
	})
	if err := errors.Join(errs...); err != nil {
		return Tensor{}, err
	}
	return out, nil
}

// ApplyTensor32 is ApplyTensor for linear attention in single precision
// (Apply32 per pair): float32 tensors in and out, B·H pairs in parallel,
// bit for bit the loop of Apply32 over pairs.
func (a *Linear) ApplyTensor32(ctx context.Context, q, k, v Tensor32, keyPadding []bool) (Tensor32, error) {
	for _, c := range []struct {
		t    Tensor32
		name string
	}{{q, "queries"}, {k, "keys"}, {v, "values"}} {
		if err := c.t.check(c.name); err != nil {
			return Tensor32{}, err
		}
	}
	if err := checkTensorShapes(shape32(q), shape32(k), shape32(v), keyPadding); err != nil {
		return Tensor32{}, err
	}
	out, err := NewTensor32(q.Batch, q.Heads, q.Len, v.Dim)
	if err != nil {
		return Tensor32{}, err
	}
	errs := make([]error, q.Batch*q.Heads)
	parallel.Tasks(len(errs), func(_, i int) {
		if errs[i] = ctx.Err(); errs[i] != nil {
			return
		}
		b, h := i/q.Heads, i%q.Heads
		o, err := a.Apply32(q.Head(b, h), k.Head(b, h), v.Head(b, h), padRow(keyPadding, b, k.Len))
		if err != nil {
			errs[i] = fmt.Errorf("sequence %d, head %d: %w", b, h, err)
			return
		}
		copy(out.Head(b, h).Data, o.Data)
	})
	if err := errors.Join(errs...); err != nil {
		return Tensor32{}, err
	}
	return out, nil
}
