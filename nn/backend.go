package nn

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/kernelkit/kernelkit/internal/gomlxbackend"
)

// DefaultBackend is the GoMLX configuration of the default backend
// (gomlxbackend.Default): the pure-Go backend with the ops of a graph
// executed one after another, so that results are reproducible.
const DefaultBackend = gomlxbackend.Default

// Backend returns the GoMLX backend of the given configuration (empty or
// "go": DefaultBackend; "xla:cuda" where linked in), opened once per
// configuration and shared (gomlxbackend.Open); a backend that is not
// linked in or fails to start is an error.
func Backend(config string) (backends.Backend, error) { return gomlxbackend.Open(config) }

// Backends lists the GoMLX backends linked into this program, sorted.
func Backends() []string { return gomlxbackend.List() }

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
