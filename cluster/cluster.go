// Package cluster holds the k-means clustering that data-dependent
// estimators use: the clustered hybrid estimators of the HRF paper
// (App. H) choose their per-cluster-pair matrices from centres, and
// landmark-based maps choose landmarks.
package cluster

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/internal/rng"
)

// KMeans clusters the rows of x into k groups (k-means++ seeding by
// SeedPlusPlus, then Lloyd iterations until assignments settle or iters is
// reached) and returns the k×d centres and each row's cluster. The random
// draws come from rng.New(seed): first the seeding's, then one per cluster
// that empties (re-seeded at a random row).
func KMeans(x *mat.Dense, k int, seed uint64, iters int) (*mat.Dense, []int, error) {
	n, d := x.Dims()
	if k <= 0 {
		return nil, nil, fmt.Errorf("cluster: k-means needs k ≥ 1, got %d", k)
	}
	if k > n {
		return nil, nil, fmt.Errorf("cluster: k-means with k = %d on only %d points", k, n)
	}
	if _, err := limits.Matrix("cluster: k-means centres", k, d); err != nil {
		return nil, nil, err
	}
	rng := rng.New(seed)
	centres := SeedPlusPlus(x, k, rng)
	assign := make([]int, n)
	for i := range assign {
		assign[i] = -1
	}
	counts := make([]int, k)
	for it := 0; it < max(iters, 1); it++ {
		changed := false
		for i := 0; i < n; i++ {
			a := Nearest(centres, x.RawRowView(i))
			if a != assign[i] {
				assign[i], changed = a, true
			}
		}
		if !changed {
			break
		}
		centres.Zero()
		clear(counts)
		for i, a := range assign {
			counts[a]++
			row := centres.RawRowView(a)
			for j, v := range x.RawRowView(i) {
				row[j] += v
			}
		}
		for c := 0; c < k; c++ {
			if counts[c] == 0 { // empty cluster: re-seed at a random point
				copy(centres.RawRowView(c), x.RawRowView(rng.IntN(n)))
				continue
			}
			row := centres.RawRowView(c)
			for j := range row {
				row[j] /= float64(counts[c])
			}
		}
	}
	return centres, assign, nil
}

// SeedPlusPlus returns k initial centres chosen among the rows of x by
// k-means++ (Arthur & Vassilvitskii, SODA 2007): the first uniformly, each
// next one with probability proportional to its squared distance to the
// nearest centre chosen so far. It keeps that distance for every row and
// updates it with the new centre only, so the cost is O(n·k·d) (not the
// O(n·k²·d) of recomputing it over every centre). The draws are one
// r.IntN(n) for the first centre and one r.Float64() for each next (or one
// r.IntN(n) when every row already coincides with a centre); the pick is
// the first row at which the running sum of distances exceeds the draw
// times their total, so rows at distance 0 are never picked. Distances are
// updated in parallel, each row on its own, so the result depends only on
// x, k and the state of r. It panics unless 1 ≤ k ≤ n (KMeans checks).
func SeedPlusPlus(x *mat.Dense, k int, r *rand.Rand) *mat.Dense {
	n, d := x.Dims()
	if k < 1 || k > n {
		panic(fmt.Sprintf("cluster: k-means++ seeding of %d centres from %d rows", k, n))
	}
	c := mat.NewDense(k, d, nil)
	dist := make([]float64, n)
	for i := range dist {
		dist[i] = math.Inf(1)
	}
	pick := r.IntN(n)
	for j := 0; j < k; j++ {
		cj := c.RawRowView(j)
		copy(cj, x.RawRowView(pick))
		parallel.Chunks(n, 1024, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				dist[i] = math.Min(dist[i], sqDist(x.RawRowView(i), cj))
			}
		})
		if j == k-1 {
			break
		}
		var tot float64
		last := -1 // last row at a positive distance
		for i, v := range dist {
			tot += v
			if v > 0 {
				last = i
			}
		}
		if !(tot > 0) { // every row already coincides with a centre: pick any
			pick = r.IntN(n)
			continue
		}
		u := r.Float64() * tot
		pick = last // if rounding leaves u ≥ 0 after the whole sum
		for i, v := range dist {
			u -= v
			if u < 0 {
				pick = i
				break
			}
		}
	}
	return c
}

func sqDist(a, b []float64) float64 {
	var s float64
	for i := range a {
		e := a[i] - b[i]
		s += e * e
	}
	return s
}

// Nearest returns the index of the centre (row) nearest to x.
func Nearest(centres *mat.Dense, x []float64) int {
	k, _ := centres.Dims()
	best, bd := 0, math.Inf(1)
	for c := 0; c < k; c++ {
		if d := sqDist(x, centres.RawRowView(c)); d < bd {
			best, bd = c, d
		}
	}
	return best
}
