package nystrom

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/kernel"
)

// SpecKind is the kind under which a Map's Spec is stored in model files.
const SpecKind = "nystrom"

// Spec is the serialisable description of a Map: the kernel, the
// landmarks and the normalisation K_mm^(−1/2) computed from them (stored,
// so that a loaded map does not depend on the eigensolver and BLAS of the
// version that reads it).
type Spec struct {
	Kernel kernel.Spec `json:"kernel"`
	// Method and Seed record how the landmarks were chosen (informational).
	Method string `json:"method,omitempty"`
	Seed   uint64 `json:"seed"`
	// InputDim is d and Components m.
	InputDim   int `json:"input_dim"`
	Components int `json:"components"`
	// Landmarks holds the m×d landmarks, row-major.
	Landmarks []float64 `json:"landmarks"`
	// Normalization holds the symmetric m×m matrix K_mm^(−1/2), row-major.
	Normalization []float64 `json:"normalization"`
	// Floor is the eigenvalue floor applied and Rank the number of
	// eigenvalues of K_mm above it.
	Floor float64 `json:"floor"`
	Rank  int     `json:"rank"`
}

// Options are the optional settings of New.
type Options struct {
	// Floor is the relative eigenvalue floor: eigenvalues of K_mm below
	// max(Floor, m·ε)·λ_max are raised to it before the inverse square
	// root (ε = 2⁻⁵²). 0 means m·ε.
	Floor float64
	// Method and Seed are recorded in the spec.
	Method Method
	Seed   uint64
}

// Map is the Nyström feature map z(x) = K_mm^(−1/2)·k(x, L) of m landmarks
// L = (l_1, …, l_m) (Williams & Seeger, NIPS 2000; scikit-learn's
// Nystroem): z(x)ᵀz(y) = k(x, L)ᵀK_mm⁻¹k(L, y), the kernel projected onto
// the span of the landmarks' feature vectors. A Map is safe for
// concurrent use.
type Map struct {
	spec Spec
	k    kernel.Kernel
	l    *mat.Dense // m×d landmarks
	norm *mat.Dense // m×m, symmetric
	// proj, if set, computes XLᵀ (see WithProjectors); ln2 holds ‖l_j‖².
	proj features.Projector
	ln2  []float64
}

// New returns the Nyström map of kernel k with the given landmarks (m×d,
// copied). K_mm = k(L, L) is decomposed as U·diag(s)·Uᵀ (gonum's
// mat.EigenSym), eigenvalues below the floor (see Options) are raised to
// it, and the map keeps the symmetric inverse square root
// U·diag(s^(−1/2))·Uᵀ, as scikit-learn does (it clips singular values at
// an absolute 1e-12). It is an error if K_mm is zero or not finite.
func New(k kernel.Kernel, landmarks *mat.Dense, opt Options) (*Map, error) {
	ks, err := kernel.Describe(k)
	if err != nil {
		return nil, fmt.Errorf("nystrom: %w", err)
	}
	if err := kernel.Check(k); err != nil {
		return nil, fmt.Errorf("nystrom: %w", err)
	}
	m, d := landmarks.Dims()
	if err := limits.Dim("nystrom: number of landmarks", m); err != nil {
		return nil, err
	}
	if _, err := limits.Matrix("nystrom: landmark kernel matrix", m, m); err != nil {
		return nil, err
	}
	if !(opt.Floor >= 0) || opt.Floor >= 1 {
		return nil, fmt.Errorf("nystrom: relative eigenvalue floor must be in [0, 1), got %v", opt.Floor)
	}
	l := mat.DenseCopyOf(landmarks)
	for i := 0; i < m; i++ {
		for _, v := range l.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("nystrom: landmark %d has a non-finite value", i)
			}
		}
	}
	kmm, err := kernel.GramOf(k, l, l)
	if err != nil {
		return nil, fmt.Errorf("nystrom: kernel of the landmarks: %w", err)
	}
	norm, floor, rank, err := invSqrt(kmm, opt.Floor)
	if err != nil {
		return nil, err
	}
	s := Spec{Kernel: ks, Method: string(opt.Method), Seed: opt.Seed, InputDim: d, Components: m,
		Landmarks: l.RawMatrix().Data, Normalization: norm.RawMatrix().Data, Floor: floor, Rank: rank}
	return FromSpec(s)
}

// invSqrt returns the symmetric U·diag(max(s, floor)^(−1/2))·Uᵀ of the
// symmetric matrix a, the absolute floor and the number of eigenvalues
// above it.
func invSqrt(a *mat.Dense, rel float64) (*mat.Dense, float64, int, error) {
	m, _ := a.Dims()
	sym := mat.NewSymDense(m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			sym.SetSym(i, j, 0.5*(a.At(i, j)+a.At(j, i)))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, 0, 0, errors.New("nystrom: eigendecomposition of the landmark kernel matrix failed")
	}
	vals := eig.Values(nil)
	var u mat.Dense
	eig.VectorsTo(&u)
	top := vals[len(vals)-1]
	if !(top > 0) || math.IsInf(top, 0) {
		return nil, 0, 0, fmt.Errorf("nystrom: the kernel matrix of the landmarks has largest eigenvalue %v; the landmarks span nothing", top)
	}
	floor := math.Max(rel, float64(m)*0x1p-52) * top
	rank := 0
	scaled := mat.NewDense(m, m, nil) // U·diag(s^(−1/2))
	for j, v := range vals {
		if v > floor {
			rank++
		}
		f := 1 / math.Sqrt(math.Max(v, floor))
		for i := 0; i < m; i++ {
			scaled.Set(i, j, u.At(i, j)*f)
		}
	}
	var n mat.Dense
	n.Mul(scaled, u.T())
	// Symmetrise the rounding, so that the map is exactly symmetric.
	out := mat.NewDense(m, m, nil)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			v := 0.5 * (n.At(i, j) + n.At(j, i))
			out.Set(i, j, v)
			out.Set(j, i, v)
		}
	}
	return out, floor, rank, nil
}

// FromSpec rebuilds a Map from its Spec, validating every field.
func FromSpec(s Spec) (*Map, error) {
	k, err := s.Kernel.Kernel()
	if err != nil {
		return nil, fmt.Errorf("nystrom: spec: %w", err)
	}
	if err := limits.Dim("nystrom: spec input dimension", s.InputDim); err != nil {
		return nil, err
	}
	if err := limits.Dim("nystrom: spec number of landmarks", s.Components); err != nil {
		return nil, err
	}
	nl, err := limits.Matrix("nystrom: spec landmarks", s.Components, s.InputDim)
	if err != nil {
		return nil, err
	}
	nn, err := limits.Matrix("nystrom: spec normalization", s.Components, s.Components)
	if err != nil {
		return nil, err
	}
	if len(s.Landmarks) != nl || len(s.Normalization) != nn {
		return nil, fmt.Errorf("nystrom: spec has %d landmark and %d normalization values, want %d×%d and %d×%d",
			len(s.Landmarks), len(s.Normalization), s.Components, s.InputDim, s.Components, s.Components)
	}
	for _, arr := range [][]float64{s.Landmarks, s.Normalization} {
		for _, v := range arr {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errors.New("nystrom: spec has a non-finite value")
			}
		}
	}
	if s.Rank < 0 || s.Rank > s.Components {
		return nil, fmt.Errorf("nystrom: spec rank %d not in [0, %d]", s.Rank, s.Components)
	}
	mp := &Map{spec: s, k: k, l: mat.NewDense(s.Components, s.InputDim, s.Landmarks),
		norm: mat.NewDense(s.Components, s.Components, s.Normalization)}
	mp.ln2 = make([]float64, s.Components)
	for j := range mp.ln2 {
		r := mp.l.RawRowView(j)
		mp.ln2[j] = mat.Dot(mat.NewVecDense(len(r), r), mat.NewVecDense(len(r), r))
	}
	return mp, nil
}

// Decode is the features.Decoder of SpecKind.
func Decode(raw json.RawMessage) (features.Transformer, error) {
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("nystrom: bad map spec: %w", err)
	}
	return FromSpec(s)
}

// EncodeSpec returns the map's Spec as JSON, under SpecKind.
func (mp *Map) EncodeSpec() (string, json.RawMessage, error) {
	b, err := json.Marshal(mp.spec)
	return SpecKind, b, err
}

// Spec returns the map's description. Its slices are shared with the map
// and must not be modified.
func (mp *Map) Spec() Spec { return mp.spec }

// Dim returns the number of landmarks m (the output dimension).
func (mp *Map) Dim() int { return mp.spec.Components }

// InputDim returns d.
func (mp *Map) InputDim() int { return mp.spec.InputDim }

// Rank returns the number of eigenvalues of K_mm above the floor: the
// dimension of the subspace the map resolves.
func (mp *Map) Rank() int { return mp.spec.Rank }

// Kernel returns the exact kernel the map approximates.
func (mp *Map) Kernel() kernel.Kernel { return mp.k }

// Landmarks returns the m×d landmarks. They are shared with the map and
// must not be modified.
func (mp *Map) Landmarks() *mat.Dense { return mp.l }

// String describes the map, e.g. "nystrom rbf m=512 (kmeans)".
func (mp *Map) String() string {
	s := fmt.Sprintf("nystrom %s m=%d", mp.spec.Kernel.Name, mp.spec.Components)
	if mp.spec.Method != "" {
		s += " (" + mp.spec.Method + ")"
	}
	return s
}

// WithProjectors returns a copy of the map whose products XLᵀ with the
// landmarks are computed by the projector np makes for W = L: the kernels
// that are functions of xᵀl and the norms (RBF, softmax, arc-cosine,
// polynomial) are then evaluated from the projection, the squared norms
// ‖x‖² (computed digitally, as the positive RBF features of package
// features do) and ‖l‖², and the product with K_mm^(−1/2) stays digital.
// The arc-cosine kernels are evaluated from the projected cosine (no
// recomputation of nearly parallel pairs, see kernel.Gram). The χ²
// kernels are not functions of a projection: for them WithProjectors
// returns features.ErrNoProjector.
func (mp *Map) WithProjectors(np features.NewProjector) (features.Transformer, error) {
	switch mp.k.(type) {
	case kernel.RBF, kernel.Softmax, kernel.ArcCos, kernel.Polynomial:
	default:
		return nil, fmt.Errorf("%w (nystrom %s: the kernel is not a function of xᵀl)", features.ErrNoProjector, mp.spec.Kernel.Name)
	}
	p, err := np(mp.l)
	if err != nil {
		return nil, err
	}
	c := *mp
	c.proj = p
	return &c, nil
}

// transformRows is the number of rows whose kernel block k(X, L) a
// worker of Transform holds at a time.
const transformRows = 256

// Transform writes z(x_i) = K_mm^(−1/2)·k(x_i, L) into row i of dst. It
// returns an error for mismatched shapes, non-finite inputs, inputs
// outside the kernel's domain and kernel values beyond float64
// (features.ErrOverflow).
func (mp *Map) Transform(dst, x *mat.Dense) error {
	n, d := x.Dims()
	m := mp.spec.Components
	if d != mp.spec.InputDim {
		return fmt.Errorf("nystrom: input has %d columns, map expects %d", d, mp.spec.InputDim)
	}
	if dn, dd := dst.Dims(); dn != n || dd != m {
		return fmt.Errorf("nystrom: destination is %d×%d, want %d×%d", dn, dd, n, m)
	}
	for i := 0; i < n; i++ {
		for _, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("nystrom: input row %d has a non-finite value", i)
			}
		}
	}
	// A projector computes XLᵀ for all rows in one call, as for the maps
	// of package features (projectors need not be safe for concurrent
	// use, and their noise may depend on the row index).
	var projected *mat.Dense
	if mp.proj != nil {
		projected = mat.NewDense(n, m, nil)
		if err := mp.proj.ProjectFrom(projected, x, 0); err != nil {
			return err
		}
	}
	errs := make([]error, parallel.Workers((n+transformRows-1)/transformRows))
	parallel.Chunks(n, transformRows, func(w, lo, hi int) {
		if errs[w] != nil {
			return
		}
		g, err := mp.kernelBlock(x.Slice(lo, hi, 0, d).(*mat.Dense), projected, lo)
		if err != nil {
			errs[w] = err
			return
		}
		for i := 0; i < hi-lo; i++ {
			for _, v := range g.RawRowView(i) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					errs[w] = fmt.Errorf("%w (kernel value %v of row %d)", features.ErrOverflow, v, lo+i)
					return
				}
			}
		}
		dst.Slice(lo, hi, 0, m).(*mat.Dense).Mul(g, mp.norm)
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// kernelBlock returns k(X, L) for a block of rows starting at row lo,
// from the kernel, or from the rows of projected (XLᵀ of all rows) for a
// map on a projector.
func (mp *Map) kernelBlock(x, projected *mat.Dense, lo int) (*mat.Dense, error) {
	if projected == nil {
		return kernel.GramOf(mp.k, x, mp.l)
	}
	n, _ := x.Dims()
	m := mp.spec.Components
	g := mat.DenseCopyOf(projected.Slice(lo, lo+n, 0, m))
	for i := 0; i < n; i++ {
		xr := x.RawRowView(i)
		nx2 := mat.Dot(mat.NewVecDense(len(xr), xr), mat.NewVecDense(len(xr), xr))
		row := g.RawRowView(i)
		for j, ip := range row {
			row[j] = fromInner(mp.k, ip, nx2, mp.ln2[j])
		}
	}
	return g, nil
}

// fromInner evaluates a kernel of the projector seam from xᵀl and the
// squared norms.
func fromInner(k kernel.Kernel, ip, nx2, nl2 float64) float64 {
	switch k := k.(type) {
	case kernel.RBF:
		return math.Exp(-k.Gamma * math.Max(0, nx2+nl2-2*ip))
	case kernel.Softmax:
		return math.Exp(ip)
	case kernel.Polynomial:
		return math.Pow(k.Gamma*ip+k.Coef0, float64(k.Degree))
	case kernel.ArcCos:
		nx, nl := math.Sqrt(nx2), math.Sqrt(nl2)
		if nx == 0 || nl == 0 {
			if k.Order == 0 {
				return 0.5
			}
			return 0
		}
		return kernel.ArcCosFromCos(k.Order, ip/(nx*nl), nx, nl)
	}
	panic("nystrom: kernel without a projector seam") // WithProjectors admits only the cases above
}
