package arch

import "math/rand"

// RNGStateSize is the number of words of a run's generator state: GoMLX's
// random-number generator state (graph.RNGStateShape, uint64[3]).
const RNGStateSize = 3

// RNGStateName is the name of the generator state variable, at the root
// scope ("/") of a run's variables (GoMLX's context stores it there).
const RNGStateName = "#rngState"

// RNGStateFromSeed returns the generator state GoMLX's
// graph.RNGStateFromSeed(seed) returns (GoMLX v0.26): the first
// RNGStateSize values of Uint64 of math/rand's generator seeded with seed.
// A training run of seed s starts from RNGStateFromSeed(int64(s>>1))
// (RunRNGState); the native engine draws nothing from it, but a checkpoint
// carries it so that a GoMLX run can resume from it.
func RNGStateFromSeed(seed int64) [RNGStateSize]uint64 {
	r := rand.New(rand.NewSource(seed)) //nolint:gosec // GoMLX's generator, reproduced exactly
	var st [RNGStateSize]uint64
	for i := range st {
		st[i] = r.Uint64()
	}
	return st
}

// RunRNGState returns the generator state a training run with the given
// seed starts from: RNGStateFromSeed(int64(seed>>1)), as package train's
// GoMLX engine seeds its context (context.SetRNGStateFromSeed).
func RunRNGState(seed uint64) [RNGStateSize]uint64 {
	return RNGStateFromSeed(int64(seed >> 1))
}
