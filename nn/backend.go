package nn

import (
	"fmt"
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

// Backend returns the GoMLX backend of the given configuration (empty:
// DefaultBackend), opened once per configuration and shared. Backends other
// than the pure-Go one (e.g. "xla:cuda") must be linked into the program.
func Backend(config string) (backends.Backend, error) {
	if config == "" {
		config = DefaultBackend
	}
	backendMu.Lock()
	defer backendMu.Unlock()
	if b, ok := opened[config]; ok {
		return b, nil
	}
	b, err := backends.NewWithConfig(config)
	if err != nil {
		return nil, fmt.Errorf("nn: GoMLX backend %q: %w", config, err)
	}
	opened[config] = b
	return b, nil
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
