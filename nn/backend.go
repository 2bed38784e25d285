package nn

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // pure-Go backend
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// DefaultBackend is the GoMLX configuration of the default backend: the
// pure-Go backend ("go", simplego) with the ops of a graph executed one
// after another. Concurrent execution of independent ops races inside the
// backend and makes floating-point results depend on scheduling; each op
// may still split its own work (a large matrix product) across goroutines,
// a split fixed by the shapes, so results are reproducible.
const DefaultBackend = "go:ops_sequential"

var (
	backendMu sync.Mutex
	opened    = map[string]backends.Backend{}
)

// Backend returns the GoMLX backend of the given configuration (empty or
// "go": DefaultBackend, since the pure-Go backend's concurrent op
// execution can also deadlock on a 2-core machine, its workers all waiting
// for the sub-tasks of their matrix products), opened once per
// configuration and shared. Backends other
// than the pure-Go one (e.g. "xla:cuda") must be linked into the program
// (the xla build tag); a backend that is not linked in, or that fails to
// start (no plugin, no device), is an error, never a panic.
func Backend(config string) (backends.Backend, error) {
	if config == "" || config == "go" {
		config = DefaultBackend
	}
	name, _, _ := strings.Cut(config, ":")
	if !slices.Contains(backends.List(), name) {
		if name == "xla" {
			return nil, fmt.Errorf("nn: GoMLX backend %q is not linked into this program (build with CGO_ENABLED=1 and -tags xla)", config)
		}
		return nil, fmt.Errorf("nn: unknown GoMLX backend %q (linked in: %s)", config, strings.Join(Backends(), ", "))
	}
	backendMu.Lock()
	defer backendMu.Unlock()
	if b, ok := opened[config]; ok {
		return b, nil
	}
	b, err := newBackend(config)
	if err != nil {
		return nil, fmt.Errorf("nn: GoMLX backend %q: %w", config, err)
	}
	opened[config] = b
	return b, nil
}

// Backends lists the GoMLX backends linked into this program, sorted.
func Backends() []string {
	l := backends.List()
	slices.Sort(l)
	return l
}

// newBackend opens a backend, turning GoMLX's panics (it reports some
// failures to start a plugin that way) into errors.
func newBackend(config string) (b backends.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return backends.NewWithConfig(config)
}

// HasFFT reports whether the backend implements the FFT op (XLA does, the
// pure-Go backend does not). The FFT forms of the Toeplitz operators need it.
func HasFFT(b backends.Backend) bool {
	return b.Capabilities().Operations[backends.OpTypeFFT]
}

// constant returns a constant of the given dtype holding data (row-major,
// the given dimensions), computed in float64 and converted.
func constant(g *Graph, dtype dtypes.DType, data []float64, dims ...int) *Node {
	c := ConstTensor(g, tensors.FromFlatDataAndDimensions(data, dims...))
	return ConvertDType(c, dtype)
}

// constInt returns an int32 constant.
func constInt(g *Graph, data []int32, dims ...int) *Node {
	return ConstTensor(g, tensors.FromFlatDataAndDimensions(data, dims...))
}
