package krr

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/linear"
)

// MaxRows is the largest number of training rows Fit accepts: the n×n
// kernel matrix must fit limits.MaxElements (2³⁰ values, 8 GiB), so
// n ≤ 32768.
const MaxRows = 1 << 15

// Config configures Fit.
type Config struct {
	// Kernel is the exact kernel.
	Kernel kernel.Kernel
	// Lambda > 0 is the ridge parameter λ of (K + λI)α = y.
	Lambda float64
	// Intercept fits an unpenalised intercept, as linear.Fit and
	// model.Fit do on features (the limit the random-feature models
	// converge to); false solves (K + λI)α = y as scikit-learn's
	// KernelRidge does.
	Intercept bool
}

// Model is an exact kernel ridge model f(x) = Σ_i α_i k(x, x_i) + b.
type Model struct {
	Kernel kernel.Kernel
	// X holds the n×d training rows.
	X *mat.Dense
	// Alpha holds the n×K dual coefficients.
	Alpha *mat.Dense
	// B holds the K intercepts (zero without Config.Intercept).
	B      []float64
	Lambda float64
}

// Memory returns the bytes Fit needs for n training rows: the n×n kernel
// matrix, factorised in place.
func Memory(n int) float64 { return 8 * float64(n) * float64(n) }

// CheckRows returns an error if n training rows are more than Fit
// accepts; the error states the memory the kernel matrix would need.
func CheckRows(n int) error {
	if n < 1 {
		return errors.New("krr: no training rows")
	}
	if n > MaxRows {
		return fmt.Errorf("krr: exact kernel ridge on %d rows needs the %d×%d kernel matrix, %s (limit %d rows, %s); use random features or Nyström features instead",
			n, n, n, limits.Bytes(Memory(n)), MaxRows, limits.Bytes(Memory(MaxRows)))
	}
	return nil
}

// Fit solves the kernel ridge problem on the rows of x (n×d) and the
// targets y (n×K; one-hot rows for one-vs-rest classification): the dual
//
//	(K + λI)·α = y,
//
// or with Config.Intercept the centred problem (HKH + λI)·α = Hy with
// H = I − 11ᵀ/n and b = ȳ − rᵀα (r the row means of K), whose predictions
// k(x)ᵀα + b equal those of ridge regression with an unpenalised
// intercept in the kernel's feature space. K + λI is factorised by
// Cholesky in place (gonum's lapack64.Potrf): O(n³/3) time and n² numbers
// of memory (Memory). Sizes above MaxRows are errors that state the memory
// needed; a factorisation that fails (λ too small for the rounding of K)
// is an error.
func Fit(x, y *mat.Dense, cfg Config) (*Model, error) {
	if err := kernel.Check(cfg.Kernel); err != nil {
		return nil, fmt.Errorf("krr: %w", err)
	}
	if !(cfg.Lambda > 0) || math.IsInf(cfg.Lambda, 0) {
		return nil, fmt.Errorf("krr: lambda must be positive and finite, got %v", cfg.Lambda)
	}
	n, _ := x.Dims()
	if err := CheckRows(n); err != nil {
		return nil, err
	}
	ny, nk := y.Dims()
	if ny != n {
		return nil, fmt.Errorf("krr: %d target rows for %d training rows", ny, n)
	}
	for i := 0; i < n; i++ {
		for _, v := range y.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("krr: target row %d has a non-finite value", i)
			}
		}
	}
	xc := mat.DenseCopyOf(x)
	k, err := kernel.GramOf(cfg.Kernel, xc, xc)
	if err != nil {
		return nil, fmt.Errorf("krr: %w", err)
	}
	rhs := mat.DenseCopyOf(y)
	b := make([]float64, nk)
	var r []float64
	if cfg.Intercept {
		r = centre(k)
		for j := 0; j < nk; j++ {
			var s float64
			for i := 0; i < n; i++ {
				s += rhs.At(i, j)
			}
			b[j] = s / float64(n)
			for i := 0; i < n; i++ {
				rhs.Set(i, j, rhs.At(i, j)-b[j])
			}
		}
	}
	kr := k.RawMatrix()
	for i := 0; i < n; i++ {
		kr.Data[i*kr.Stride+i] += cfg.Lambda
	}
	t, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: kr.Stride, Data: kr.Data})
	if !ok {
		return nil, fmt.Errorf("krr: K + λI is not numerically positive definite at λ = %g; increase lambda", cfg.Lambda)
	}
	lapack64.Potrs(t, rhs.RawMatrix())
	if cfg.Intercept {
		for j := 0; j < nk; j++ {
			for i := 0; i < n; i++ {
				b[j] -= r[i] * rhs.At(i, j)
			}
		}
	}
	return &Model{Kernel: cfg.Kernel, X: xc, Alpha: rhs, B: b, Lambda: cfg.Lambda}, nil
}

// centre replaces k by HKH in place and returns the row means r of k.
func centre(k *mat.Dense) []float64 {
	n, _ := k.Dims()
	r := make([]float64, n)
	var all float64
	for i := 0; i < n; i++ {
		var s float64
		for _, v := range k.RawRowView(i) {
			s += v
		}
		r[i] = s / float64(n)
		all += r[i]
	}
	all /= float64(n)
	for i := 0; i < n; i++ {
		row := k.RawRowView(i)
		for j := range row {
			row[j] += all - r[i] - r[j]
		}
	}
	return r
}

// predictRows is the number of rows whose kernel block k(X, X_train) is
// held at a time by Predict.
const predictRows = 512

// Predict returns the n×K predictions for the rows of x, computing the
// kernel against the training rows in blocks of 512 rows.
func (m *Model) Predict(x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	nt, dt := m.X.Dims()
	if d != dt {
		return nil, fmt.Errorf("krr: data has %d columns, the model %d", d, dt)
	}
	_, nk := m.Alpha.Dims()
	if _, err := limits.Matrix("krr: prediction kernel block", min(n, predictRows), nt); err != nil {
		return nil, err
	}
	out := mat.NewDense(n, nk, nil)
	for lo := 0; lo < n; lo += predictRows {
		hi := min(n, lo+predictRows)
		g, err := kernel.GramOf(m.Kernel, x.Slice(lo, hi, 0, d).(*mat.Dense), m.X)
		if err != nil {
			return nil, fmt.Errorf("krr: %w", err)
		}
		o := out.Slice(lo, hi, 0, nk).(*mat.Dense)
		o.Mul(g, m.Alpha)
		for i := 0; i < hi-lo; i++ {
			row := o.RawRowView(i)
			for j := range row {
				row[j] += m.B[j]
			}
		}
	}
	return out, nil
}

// Linear returns the model as a linear model on the kernel columns
// z(x) = k(x, X_train) (Columns): W = α, b = B. With Columns it is what a
// model file stores for an exact model.
func (m *Model) Linear() *linear.Model {
	return &linear.Model{W: m.Alpha, B: m.B, Lambda: m.Lambda}
}

// Columns returns the map z(x) = (k(x, x_1), …, k(x, x_n)) of the model's
// training rows.
func (m *Model) Columns() (*Columns, error) { return NewColumns(m.Kernel, m.X) }

// ColumnsSpecKind is the kind under which a Columns map is stored in model
// files.
const ColumnsSpecKind = "kernel-columns"

// ColumnsSpec is the serialisable description of a Columns map.
type ColumnsSpec struct {
	Kernel   kernel.Spec `json:"kernel"`
	Rows     int         `json:"rows"`
	InputDim int         `json:"input_dim"`
	X        []float64   `json:"x"` // Rows×InputDim, row-major
}

// Columns is the feature map z(x) = (k(x, x_1), …, k(x, x_n)) of n stored
// rows: with the dual coefficients as weights (Model.Linear) a linear
// model on it is the exact kernel ridge model, so model files and every
// consumer of a features.Transformer hold exact models too. Its dimension
// is the number of training rows, so Transform on many rows at once needs
// rows×n memory; Model.Predict works in blocks. It estimates no kernel
// (z(x)ᵀz(y) is not k(x, y)) and has no projector seam.
type Columns struct {
	spec ColumnsSpec
	k    kernel.Kernel
	x    *mat.Dense
}

// NewColumns returns the kernel-columns map of k and the rows of x
// (copied).
func NewColumns(k kernel.Kernel, x *mat.Dense) (*Columns, error) {
	ks, err := kernel.Describe(k)
	if err != nil {
		return nil, fmt.Errorf("krr: %w", err)
	}
	n, d := x.Dims()
	return ColumnsFromSpec(ColumnsSpec{Kernel: ks, Rows: n, InputDim: d, X: mat.DenseCopyOf(x).RawMatrix().Data})
}

// ColumnsFromSpec rebuilds a Columns map from its spec, validating every
// field.
func ColumnsFromSpec(s ColumnsSpec) (*Columns, error) {
	k, err := s.Kernel.Kernel()
	if err != nil {
		return nil, fmt.Errorf("krr: spec: %w", err)
	}
	if err := limits.Dim("krr: spec input dimension", s.InputDim); err != nil {
		return nil, err
	}
	if err := limits.Dim("krr: spec rows", s.Rows); err != nil {
		return nil, err
	}
	nx, err := limits.Matrix("krr: spec rows", s.Rows, s.InputDim)
	if err != nil {
		return nil, err
	}
	if len(s.X) != nx {
		return nil, fmt.Errorf("krr: spec has %d row values, want %d×%d", len(s.X), s.Rows, s.InputDim)
	}
	for _, v := range s.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("krr: spec has a non-finite value")
		}
	}
	return &Columns{spec: s, k: k, x: mat.NewDense(s.Rows, s.InputDim, s.X)}, nil
}

// DecodeColumns is the features.Decoder of ColumnsSpecKind.
func DecodeColumns(raw json.RawMessage) (features.Transformer, error) {
	var s ColumnsSpec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("krr: bad kernel-columns spec: %w", err)
	}
	return ColumnsFromSpec(s)
}

// EncodeSpec returns the map's spec as JSON, under ColumnsSpecKind.
func (c *Columns) EncodeSpec() (string, json.RawMessage, error) {
	b, err := json.Marshal(c.spec)
	return ColumnsSpecKind, b, err
}

// Dim returns the number of stored rows.
func (c *Columns) Dim() int { return c.spec.Rows }

// InputDim returns d.
func (c *Columns) InputDim() int { return c.spec.InputDim }

// String describes the map.
func (c *Columns) String() string {
	return fmt.Sprintf("exact %s kernel columns of %d rows", c.spec.Kernel.Name, c.spec.Rows)
}

// Transform writes k(x_i, X) into row i of dst (n×rows).
func (c *Columns) Transform(dst, x *mat.Dense) error {
	n, d := x.Dims()
	if d != c.spec.InputDim {
		return fmt.Errorf("krr: input has %d columns, map expects %d", d, c.spec.InputDim)
	}
	if dn, dd := dst.Dims(); dn != n || dd != c.spec.Rows {
		return fmt.Errorf("krr: destination is %d×%d, want %d×%d", dn, dd, n, c.spec.Rows)
	}
	for i := 0; i < n; i++ {
		for _, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("krr: input row %d has a non-finite value", i)
			}
		}
	}
	for lo := 0; lo < n; lo += predictRows {
		hi := min(n, lo+predictRows)
		g, err := kernel.GramOf(c.k, x.Slice(lo, hi, 0, d).(*mat.Dense), c.x)
		if err != nil {
			return fmt.Errorf("krr: %w", err)
		}
		dst.Slice(lo, hi, 0, c.spec.Rows).(*mat.Dense).Copy(g)
	}
	return nil
}
