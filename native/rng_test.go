package native_test

import (
	"math"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/kernelkit/kernelkit/arch"
)

// TestRNGStateMatchesGoMLX checks that arch.RNGStateFromSeed, the pure-Go
// generator state the engine writes into checkpoints (/#rngState), equals
// GoMLX's graph.RNGStateFromSeed bit for bit (integers: no rounding), for
// seeds of both signs and the extremes, and that RunRNGState is the state
// of seed>>1, as package train's GoMLX engine seeds its context.
func TestRNGStateMatchesGoMLX(t *testing.T) {
	for _, seed := range []int64{0, 1, 2, 7, 42, -1, -12345, 1 << 40, math.MaxInt64, math.MinInt64} {
		st, err := graph.RNGStateFromSeed(seed)
		if err != nil {
			t.Fatal(err)
		}
		want := tensors.MustCopyFlatData[uint64](st)
		got := arch.RNGStateFromSeed(seed)
		if !slices.Equal(got[:], want) || !slices.Equal(st.Shape().Dimensions, []int{arch.RNGStateSize}) {
			t.Errorf("seed %d: state %v (dimensions %v), want %v", seed, got, st.Shape().Dimensions, want)
		}
	}
	for _, seed := range []uint64{0, 1, 7, 1 << 63, math.MaxUint64} {
		if got, want := arch.RunRNGState(seed), arch.RNGStateFromSeed(int64(seed>>1)); got != want {
			t.Errorf("run seed %d: %v, want %v", seed, got, want)
		}
	}
}
