// Package cluster holds the k-means clustering that data-dependent
// estimators use: the clustered hybrid estimators of the HRF paper
// (App. H) choose their per-cluster-pair matrices from centres, and
// landmark-based maps choose landmarks.
package cluster

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/rng"
)

// KMeans clusters the rows of x into k groups (k-means++ seeding, then
// Lloyd iterations until assignments settle or iters is reached) and
// returns the k×d centres and each row's cluster.
func KMeans(x *mat.Dense, k int, seed uint64, iters int) (*mat.Dense, []int, error) {
	n, d := x.Dims()
	if k <= 0 {
		return nil, nil, fmt.Errorf("cluster: k-means needs k ≥ 1, got %d", k)
	}
	if k > n {
		return nil, nil, fmt.Errorf("cluster: k-means with k = %d on only %d points", k, n)
	}
	rng := rng.New(seed)
	centres := mat.NewDense(k, d, nil)
	dist := make([]float64, n)
	copy(centres.RawRowView(0), x.RawRowView(rng.IntN(n)))
	for c := 1; c < k; c++ {
		var tot float64
		for i := 0; i < n; i++ {
			dist[i] = math.Inf(1)
			for j := 0; j < c; j++ {
				dist[i] = math.Min(dist[i], sqDist(x.RawRowView(i), centres.RawRowView(j)))
			}
			tot += dist[i]
		}
		pick := n - 1
		if tot > 0 {
			u := rng.Float64() * tot
			for i, v := range dist {
				u -= v
				if u <= 0 {
					pick = i
					break
				}
			}
		} else {
			pick = rng.IntN(n)
		}
		copy(centres.RawRowView(c), x.RawRowView(pick))
	}
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
