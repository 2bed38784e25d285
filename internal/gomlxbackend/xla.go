//go:build xla

package gomlxbackend

// Built with -tags xla, the program links GoMLX's XLA backend, so that
// Open("xla:cuda") (or "xla:cpu") runs the same models on XLA, with the
// FFT forms of the Toeplitz operators. XLA loads its PJRT plugin at run
// time (see github.com/gomlx/gomlx/backends/xla).
import _ "github.com/gomlx/gomlx/backends/xla" // XLA backend
