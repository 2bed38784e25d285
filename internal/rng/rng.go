// Package rng is kernelkit's random-number convention: every random draw
// of the library comes from a PCG generator seeded by the user's seed and
// a fixed stream constant naming what it draws, so the same seed gives the
// same numbers on every platform and BLAS backend, and two draws from one
// seed (a projection and its phases, say) are independent streams.
package rng

import "math/rand/v2"

// Stream constants of the draws that use their own stream.
const (
	// Default is the stream of projections and most draws ("kernelkt").
	Default uint64 = 0x6b65726e656c6b74
	// Bias is the stream of the RFF phases b ("bias").
	Bias uint64 = 0x62696173
)

// New returns the generator of a seed on the default stream.
func New(seed uint64) *rand.Rand { return NewStream(seed, Default) }

// NewStream returns the generator of a seed on a named stream.
func NewStream(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }
