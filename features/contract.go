package features

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/sampler"
)

// This file holds the feature-map contract that every package of kernelkit
// shares: attention, hybrid, snnk, analog and model take these types, and a
// new backend (an accelerator projector, a distributed fit) plugs in here.

// Transformer is a feature map z: R^d → R^D applied to batches of rows. It
// is the small interface that linear models, attention and the studies
// consume; *Map, the SNNK input towers and the Nyström maps implement it.
type Transformer interface {
	// Transform writes the features of the rows of x into the rows of dst,
	// which must be n×Dim() for x of n×InputDim(). Shape mismatches,
	// non-finite inputs and overflow are returned as errors.
	Transform(dst, x *mat.Dense) error
	// Dim returns the output dimension D.
	Dim() int
	// InputDim returns the input dimension d.
	InputDim() int
}

// ScaledTransformer is a Transformer that can also return row-scaled
// features with their log-scales (the log-domain variant): it writes
// ẑ(x_i) = exp(−s_i)·z(x_i) and returns the s_i, so that features whose
// magnitude is beyond float64 stay usable where a normalisation cancels the
// scales (attention). *Map implements it.
type ScaledTransformer interface {
	Transformer
	TransformScaled(dst, x *mat.Dense) ([]float64, error)
}

// Pair is an asymmetric random feature map: the estimate of a kernel is
// Query(x)ᵀKey(y). Hybrid random features, the clustered estimators and
// attention with different query and key maps use it; Symmetric makes a
// Pair of a Transformer.
type Pair interface {
	// Dim is the feature dimension of both sides.
	Dim() int
	// InputDim is the input dimension d.
	InputDim() int
	// Query writes Φ₁ of the rows of x into dst (n×Dim).
	Query(dst, x *mat.Dense) error
	// Key writes Φ₂ of the rows of y into dst (n×Dim).
	Key(dst, y *mat.Dense) error
}

// Adaptive is implemented by maps whose parameters are fitted to the
// queries and keys they estimate the kernel on: the optimal positive and
// dense-exponential features of package prf (FAVOR++, FAVOR#). Adapt
// returns the map, with the same random projection, fitted to the rows of
// x (queries) and y (keys); the estimate is unbiased for any fit, the fit
// only lowers its variance. attention.Linear adapts such a map (or pair) to
// the queries and keys of each non-causal call.
type Adaptive interface {
	Adapt(x, y *mat.Dense) (Pair, error)
}

// Symmetric returns the Pair whose query and key maps are both t.
// AsTransformer recovers t from it.
func Symmetric(t Transformer) Pair { return symmetric{t} }

type symmetric struct{ t Transformer }

func (s symmetric) Dim() int                      { return s.t.Dim() }
func (s symmetric) InputDim() int                 { return s.t.InputDim() }
func (s symmetric) Query(dst, x *mat.Dense) error { return s.t.Transform(dst, x) }
func (s symmetric) Key(dst, y *mat.Dense) error   { return s.t.Transform(dst, y) }
func (s symmetric) String() string                { return fmt.Sprint(s.t) }

// WithProjectors runs the underlying map's projections on projectors made by
// np (see Projectable).
func (s symmetric) WithProjectors(np NewProjector) (Pair, error) {
	t, err := WithProjectors(s.t, np)
	if err != nil {
		return nil, err
	}
	return symmetric{t}, nil
}

// AsTransformer returns the map of a Pair made by Symmetric, and false for
// an asymmetric pair.
func AsTransformer(p Pair) (Transformer, bool) {
	s, ok := p.(symmetric)
	if !ok {
		return nil, false
	}
	return s.t, true
}

// Apply returns the n×D feature matrix of x.
func Apply(t Transformer, x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	if n == 0 {
		return nil, errors.New("features: no rows to transform")
	}
	if d != t.InputDim() {
		return nil, fmt.Errorf("features: input has %d columns, map expects %d", d, t.InputDim())
	}
	z := mat.NewDense(n, t.Dim(), nil)
	if err := t.Transform(z, x); err != nil {
		return nil, err
	}
	return z, nil
}

func applySide(p Pair, x *mat.Dense, query bool) (*mat.Dense, error) {
	n, d := x.Dims()
	if n == 0 {
		return nil, errors.New("features: no rows to transform")
	}
	if d != p.InputDim() {
		return nil, fmt.Errorf("features: input has %d columns, map expects %d", d, p.InputDim())
	}
	z := mat.NewDense(n, p.Dim(), nil)
	var err error
	if query {
		err = p.Query(z, x)
	} else {
		err = p.Key(z, x)
	}
	if err != nil {
		return nil, err
	}
	return z, nil
}

// Queries returns Φ₁ of the rows of x.
func Queries(p Pair, x *mat.Dense) (*mat.Dense, error) { return applySide(p, x, true) }

// Keys returns Φ₂ of the rows of y.
func Keys(p Pair, y *mat.Dense) (*mat.Dense, error) { return applySide(p, y, false) }

// EstimatePair returns Φ₁(x)ᵀΦ₂(y) for two single vectors.
func EstimatePair(p Pair, x, y []float64) (float64, error) {
	if len(x) != p.InputDim() || len(y) != p.InputDim() {
		return 0, fmt.Errorf("features: inputs of lengths %d and %d, map expects %d", len(x), len(y), p.InputDim())
	}
	qx, err := Queries(p, mat.NewDense(1, len(x), append([]float64(nil), x...)))
	if err != nil {
		return 0, err
	}
	ky, err := Keys(p, mat.NewDense(1, len(y), append([]float64(nil), y...)))
	if err != nil {
		return 0, err
	}
	return mat.Dot(qx.RowView(0), ky.RowView(0)), nil
}

// PairEstimates returns Φ₁(x_i)ᵀΦ₂(y_i) for the paired rows of x and y.
func PairEstimates(p Pair, x, y *mat.Dense) ([]float64, error) {
	if nx, _ := x.Dims(); nx != y.RawMatrix().Rows {
		return nil, fmt.Errorf("features: %d query rows and %d key rows", nx, y.RawMatrix().Rows)
	}
	qx, err := Queries(p, x)
	if err != nil {
		return nil, err
	}
	ky, err := Keys(p, y)
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	out := make([]float64, n)
	for i := range out {
		out[i] = mat.Dot(qx.RowView(i), ky.RowView(i))
	}
	return out, nil
}

// Matrix returns the n×p matrix of estimates Φ₁(x_i)ᵀΦ₂(y_j).
func Matrix(p Pair, x, y *mat.Dense) (*mat.Dense, error) {
	qx, err := Queries(p, x)
	if err != nil {
		return nil, err
	}
	ky, err := Keys(p, y)
	if err != nil {
		return nil, err
	}
	var out mat.Dense
	out.Mul(qx, ky.T())
	return &out, nil
}

// Projector computes the projection A = XWᵀ (n×m) of a batch of rows for
// one fixed m×d matrix W. ProjectFrom receives the index of the batch's
// first row, for projectors whose noise depends on the row. An emulated
// analog crossbar (package analog) is a Projector; a GPU is the next.
type Projector interface {
	ProjectFrom(dst, x *mat.Dense, offset int) error
}

// NewProjector makes the Projector that computes XWᵀ for a given W (m×d,
// bandwidth included). Maps call it once per projection matrix they hold.
type NewProjector func(w *mat.Dense) (Projector, error)

// Projectable is implemented by maps whose inputs enter only through
// projections XWᵀ followed by element-wise functions: the projector seam.
// WithProjectors returns a copy of the map in which every projection is
// computed by a projector made by np for its W; everything after the
// projection is unchanged.
type Projectable interface {
	WithProjectors(np NewProjector) (Transformer, error)
}

// ProjectablePair is the projector seam of a Pair (see Projectable).
type ProjectablePair interface {
	WithProjectors(np NewProjector) (Pair, error)
}

// ErrNoProjector is returned by WithProjectors and PairWithProjectors for a
// map that has no projector seam.
var ErrNoProjector = errors.New("features: map has no projection that a projector can compute")

// WithProjectors returns t with its projections computed by projectors made
// by np, or ErrNoProjector if t does not implement Projectable.
func WithProjectors(t Transformer, np NewProjector) (Transformer, error) {
	p, ok := t.(Projectable)
	if !ok {
		return nil, fmt.Errorf("%w (%T)", ErrNoProjector, t)
	}
	return p.WithProjectors(np)
}

// PairWithProjectors is WithProjectors for a Pair.
func PairWithProjectors(p Pair, np NewProjector) (Pair, error) {
	pp, ok := p.(ProjectablePair)
	if !ok {
		return nil, fmt.Errorf("%w (%T)", ErrNoProjector, p)
	}
	return pp.WithProjectors(np)
}

// Encoder is implemented by maps that can be stored in a model file: the
// kind names the decoder in a Registry, and the spec is its JSON
// description (the drawn projections included, so a stored map does not
// depend on the random number generator of the version that wrote it).
type Encoder interface {
	EncodeSpec() (kind string, spec json.RawMessage, err error)
}

// Options are the generic parameters a registered map is built from. A map
// uses the fields it needs and ignores the others.
type Options struct {
	// InputDim is the input dimension d.
	InputDim int
	// Features is the feature budget D. Maps that need an even dimension
	// round it up; the hybrids match its FLOPs (see package hybrid).
	Features int
	// Gamma is the bandwidth of shift-invariant kernels, exp(−γ‖x−y‖²).
	Gamma float64
	// Sampler draws the projections; nil means sampler.Default().
	Sampler sampler.Sampler
	// Seed seeds every random draw of the map.
	Seed uint64
	// Float32 computes projections in single precision where supported.
	Float32 bool
	// Norm is the typical input norm, for estimators tuned to it (the
	// bipolar Gaussian hybrid); 0 means 1.
	Norm float64
	// Temperature is τ of the softmax kernel exp(xᵀy/τ): 0 means none (τ =
	// 1, the kernel exp(xᵀy)); otherwise it must be positive and finite,
	// and the map's kernel softmax (Registry.Pair refuses it for any other
	// kernel). Registry.Pair builds the entry's map of exp(xᵀy) with Data,
	// QueryCentres, KeyCentres and Norm scaled by 1/√τ (data-fitted maps
	// are fitted on the scaled rows) and returns it tempered (TemperPair):
	// it applies the map to x/√τ.
	Temperature float64
	// QueryCentres and KeyCentres are cluster centres (k×d) for the
	// clustered estimators.
	QueryCentres, KeyCentres *mat.Dense
	// Data holds sample rows for data-dependent maps (landmarks).
	Data *mat.Dense
}

// Entry is one named map of a Registry.
type Entry struct {
	// Name is the name used on the command line and in studies, e.g.
	// "rbf", "positive", "angular".
	Name string
	// Aliases are other accepted names.
	Aliases []string
	// Kernel names the kernel the map estimates ("rbf", "softmax", …).
	Kernel string
	// Doc is a one-line description.
	Doc string
	// Asymmetric marks maps that exist only as query/key pairs; they
	// cannot be used where a single map is needed (a ridge fit).
	Asymmetric bool
	// New builds the map. Symmetric maps return Symmetric(t).
	New func(o Options) (Pair, error)
}

// Decoder rebuilds a stored map from its spec (see Encoder).
type Decoder func(spec json.RawMessage) (Transformer, error)

// Registry maps names to map constructors and spec kinds to decoders. Build
// one with NewRegistry and Register; package catalog returns the registry
// of every map kernelkit provides. A Registry is not safe for concurrent
// registration, but lookups may run concurrently once it is built.
type Registry struct {
	entries  map[string]*Entry
	names    []string
	decoders map[string]Decoder
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{entries: map[string]*Entry{}, decoders: map[string]Decoder{}}
}

// Register adds an entry. It returns an error if the name or an alias is
// taken or the entry has no constructor.
func (r *Registry) Register(e Entry) error {
	if e.Name == "" || e.New == nil {
		return errors.New("features: registry entry needs a name and a constructor")
	}
	for _, n := range append([]string{e.Name}, e.Aliases...) {
		key := strings.ToLower(n)
		if _, dup := r.entries[key]; dup {
			return fmt.Errorf("features: map name %q registered twice", n)
		}
	}
	ep := &e
	for _, n := range append([]string{e.Name}, e.Aliases...) {
		r.entries[strings.ToLower(n)] = ep
	}
	r.names = append(r.names, e.Name)
	return nil
}

// RegisterDecoder adds the decoder of a spec kind. TemperedSpecKind is
// reserved: every Registry decodes tempered maps itself (Decode).
func (r *Registry) RegisterDecoder(kind string, d Decoder) error {
	if kind == "" || d == nil {
		return errors.New("features: decoder needs a kind and a function")
	}
	if kind == TemperedSpecKind {
		return fmt.Errorf("features: decoder kind %q is reserved for tempered maps", kind)
	}
	if _, dup := r.decoders[kind]; dup {
		return fmt.Errorf("features: decoder %q registered twice", kind)
	}
	r.decoders[kind] = d
	return nil
}

// Names returns the registered names in registration order.
func (r *Registry) Names() []string { return append([]string(nil), r.names...) }

// Lookup returns the entry of a name or alias (case-insensitive).
func (r *Registry) Lookup(name string) (Entry, error) {
	e, ok := r.entries[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return Entry{}, fmt.Errorf("features: unknown map %q (want one of %s)", name, strings.Join(r.names, ", "))
	}
	return *e, nil
}

// Pair builds the named map as a query/key pair. With o.Temperature set
// (softmax-kernel entries only) it builds the map of exp(xᵀy) on the
// options scaled by 1/√τ and tempers it (see Options.Temperature).
func (r *Registry) Pair(name string, o Options) (Pair, error) {
	e, err := r.Lookup(name)
	if err != nil {
		return nil, err
	}
	if o.InputDim <= 0 {
		return nil, fmt.Errorf("features: input dimension must be positive, got %d", o.InputDim)
	}
	if o.Features <= 0 {
		return nil, fmt.Errorf("features: number of features must be positive, got %d", o.Features)
	}
	if o.Temperature == 0 {
		return e.New(o)
	}
	if e.Kernel != "softmax" {
		return nil, fmt.Errorf("features: the temperature is a parameter of the softmax kernel exp(xᵀy/τ); map %q estimates the %s kernel", e.Name, e.Kernel)
	}
	tau := o.Temperature
	o, err = temperOptions(o)
	if err != nil {
		return nil, err
	}
	p, err := e.New(o)
	if err != nil {
		return nil, err
	}
	return TemperPair(p, tau)
}

// Map builds the named map as a single (symmetric) map. Asymmetric maps
// return an error.
func (r *Registry) Map(name string, o Options) (Transformer, error) {
	e, err := r.Lookup(name)
	if err != nil {
		return nil, err
	}
	if e.Asymmetric {
		return nil, fmt.Errorf("features: map %q is an asymmetric query/key pair; a single map is needed here", e.Name)
	}
	p, err := r.Pair(name, o)
	if err != nil {
		return nil, err
	}
	t, ok := AsTransformer(p)
	if !ok {
		return nil, fmt.Errorf("features: map %q did not build a symmetric map", e.Name)
	}
	return t, nil
}

// Decode rebuilds a stored map. A tempered map (TemperedSpecKind) is
// decoded here, its inner map by the registry's decoder of its kind.
func (r *Registry) Decode(kind string, spec json.RawMessage) (Transformer, error) {
	if kind == TemperedSpecKind {
		return r.decodeTempered(spec)
	}
	d, ok := r.decoders[kind]
	if !ok {
		kinds := make([]string, 0, len(r.decoders)+1)
		for k := range r.decoders {
			kinds = append(kinds, k)
		}
		kinds = append(kinds, TemperedSpecKind)
		sort.Strings(kinds)
		return nil, fmt.Errorf("features: unknown stored map kind %q (this kernelkit reads %s)", kind, strings.Join(kinds, ", "))
	}
	return d(spec)
}

// Encode returns the kind and spec of a map that implements Encoder.
func Encode(t Transformer) (kind string, spec json.RawMessage, err error) {
	e, ok := t.(Encoder)
	if !ok {
		return "", nil, fmt.Errorf("features: map %T cannot be stored in a model file", t)
	}
	return e.EncodeSpec()
}

// KernelEstimator is implemented by maps that know the exact kernel their
// inner products estimate (*Map does); Gram-error measures use it.
type KernelEstimator interface {
	Kernel() kernel.Kernel
}
