package attention

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// num is the element type of the linear-attention kernels: float64, or
// float32 for the single-precision path.
type num interface{ float32 | float64 }

// dense is a row-major matrix view of either precision.
type dense[T num] struct {
	rows, cols, stride int
	data               []T
}

func newDense[T num](r, c int) dense[T] {
	return dense[T]{rows: r, cols: c, stride: c, data: make([]T, r*c)}
}

func fromMat(m *mat.Dense) dense[float64] {
	r := m.RawMatrix()
	return dense[float64]{rows: r.Rows, cols: r.Cols, stride: r.Stride, data: r.Data}
}

func fromGeneral32(g blas32.General) dense[float32] {
	return dense[float32]{rows: g.Rows, cols: g.Cols, stride: g.Stride, data: g.Data}
}

func (d dense[T]) row(i int) []T { return d.data[i*d.stride : i*d.stride+d.cols] }

// sliceRows returns rows [lo, hi) as a view.
func (d dense[T]) sliceRows(lo, hi int) dense[T] {
	if lo == hi {
		return dense[T]{cols: d.cols, stride: d.stride}
	}
	return dense[T]{rows: hi - lo, cols: d.cols, stride: d.stride, data: d.data[lo*d.stride : (hi-1)*d.stride+d.cols]}
}

// block returns an r×c matrix (stride c) on the first r·c values of buf.
func block[T num](buf []T, r, c int) dense[T] {
	return dense[T]{rows: r, cols: c, stride: c, data: buf[:r*c]}
}

// convert returns a copy of x in precision T (a copy also when T is
// float64).
func convert[T num](x dense[float64]) dense[T] {
	out := newDense[T](x.rows, x.cols)
	for i := 0; i < x.rows; i++ {
		o := out.row(i)
		for j, v := range x.row(i) {
			o[j] = T(v)
		}
	}
	return out
}

// toMat returns a float64 copy of x as a *mat.Dense.
func toMat[T num](x dense[T]) *mat.Dense {
	out := mat.NewDense(x.rows, x.cols, nil)
	for i := 0; i < x.rows; i++ {
		o := out.RawRowView(i)
		for j, v := range x.row(i) {
			o[j] = float64(v)
		}
	}
	return out
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// gemm computes c = alpha·op(a)·op(b) + beta·c through blas64 or blas32 (so
// through OpenBLAS when package blas installed it). op(a) is m×k, op(b)
// k×n; a dimension of zero is a no-op.
func gemm[T num](tA, tB bool, alpha T, a, b dense[T], beta T, c dense[T]) {
	m, k := a.rows, a.cols
	if tA {
		m, k = k, m
	}
	n := b.cols
	if tB {
		n = b.rows
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			row := c.row(i)
			for j := range row {
				row[j] *= beta
			}
		}
		return
	}
	switch ad := any(a.data).(type) {
	case []float64:
		blas64.Implementation().Dgemm(trans(tA), trans(tB), m, n, k, float64(alpha), ad, a.stride,
			any(b.data).([]float64), b.stride, float64(beta), any(c.data).([]float64), c.stride)
	case []float32:
		blas32.Implementation().Sgemm(trans(tA), trans(tB), m, n, k, float32(alpha), ad, a.stride,
			any(b.data).([]float32), b.stride, float32(beta), any(c.data).([]float32), c.stride)
	}
}

// dot64 returns Σ x_j·y_j accumulated in float64.
func dot64[T num](x []T, y []float64) float64 {
	var s float64
	for j, v := range x {
		s += float64(v) * y[j]
	}
	return s
}

// scaleRow multiplies a row by f.
func scaleRow[T num](row []T, f float64) {
	ft := T(f)
	for j := range row {
		row[j] *= ft
	}
}

// rel returns exp(a − b) for references a ≤ b: the factor that brings sums
// kept relative to reference a to reference b. It is 1 when a = b, also
// when both are −∞ (no key yet: the sums are still zero).
func rel(a, b float64) float64 {
	if a == b {
		return 1
	}
	return math.Exp(a - b)
}

func guard(den, eps float64) float64 {
	if den >= 0 {
		return math.Max(den, eps)
	}
	return math.Min(den, -eps)
}
