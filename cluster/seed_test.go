package cluster

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/sampler"
)

// seedReference is k-means++ seeding by its definition, the O(n·k²·d)
// form KMeans used before SeedPlusPlus: every row's distance to its
// nearest centre recomputed over all centres chosen so far, then the first
// row whose running sum exceeds the draw.
func seedReference(x *mat.Dense, k int, seed uint64) *mat.Dense {
	n, d := x.Dims()
	r := rng.New(seed)
	c := mat.NewDense(k, d, nil)
	copy(c.RawRowView(0), x.RawRowView(r.IntN(n)))
	dist := make([]float64, n)
	for j := 1; j < k; j++ {
		var tot float64
		for i := 0; i < n; i++ {
			dist[i] = math.Inf(1)
			for t := 0; t < j; t++ {
				dist[i] = math.Min(dist[i], sqDist(x.RawRowView(i), c.RawRowView(t)))
			}
			tot += dist[i]
		}
		pick := n - 1
		if tot > 0 {
			u := r.Float64() * tot
			for i, v := range dist {
				u -= v
				if u < 0 {
					pick = i
					break
				}
			}
		} else {
			pick = r.IntN(n)
		}
		copy(c.RawRowView(j), x.RawRowView(pick))
	}
	return c
}

// TestSeedPlusPlusMatchesDefinition: the O(n·k·d) seeding (one distance
// update per new centre) picks the same centres, bit for bit, as the
// definition, for the same seed — on Gaussian rows, and on rows with many
// duplicates, where rows at distance 0 must never be picked and the draw
// falls back to a uniform row once every row is a centre (k = 6 > 5
// distinct rows).
func TestSeedPlusPlusMatchesDefinition(t *testing.T) {
	g, err := sampler.Gaussian{}.Sample(3000, 5, 7)
	if err != nil {
		t.Fatal(err)
	}
	dup := mat.NewDense(50, 2, nil)
	for i := 0; i < 50; i++ {
		dup.Set(i, 0, float64(i%5))
	}
	for _, tc := range []struct {
		x *mat.Dense
		k int
	}{{g, 1}, {g, 2}, {g, 17}, {g, 64}, {dup, 5}, {dup, 6}} {
		for seed := uint64(0); seed < 4; seed++ {
			name := fmt.Sprintf("n=%d k=%d seed=%d", tc.x.RawMatrix().Rows, tc.k, seed)
			got := SeedPlusPlus(tc.x, tc.k, rng.New(seed))
			want := seedReference(tc.x, tc.k, seed)
			if !mat.Equal(got, want) {
				t.Errorf("%s: centres differ from the definition", name)
			}
			if tc.x == dup && tc.k == 5 { // five distinct rows: each chosen once
				seen := map[float64]bool{}
				for j := 0; j < 5; j++ {
					seen[got.At(j, 0)] = true
				}
				if len(seen) != 5 {
					t.Errorf("%s: a row at distance 0 was picked: %v", name, mat.Col(nil, 0, got))
				}
			}
		}
	}
}

func TestSeedPlusPlusPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("k > n did not panic")
		}
	}()
	SeedPlusPlus(mat.NewDense(2, 1, nil), 3, rng.New(1))
}
