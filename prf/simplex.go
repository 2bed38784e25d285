package prf

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/sampler"
)

// simplexStream is the random stream of the simplex sampler's row norms
// and block seeds ("simplex").
const simplexStream uint64 = 0x73696d706c6578

// Simplex draws simplex random features (SimRFs, Reid et al., ICML 2023,
// Sec. 3): blocks of d rows w_i = ρ_i·R·s_i, where s_1 … s_d are the unit
// vectors from the centre to the vertices of a regular simplex
// (s_iᵀs_j = −1/(d−1) for i ≠ j), R is a Haar-random rotation drawn
// afresh for each block and the norms ρ_i are independent χ(d) draws. Each
// row is marginally N(0, I_d), so every map built on these rows stays
// unbiased; the obtuse coupling of the directions lowers the mean squared
// error of positive random features below that of orthogonal ones (SimRF
// Theorem 3.3). For m > d the blocks are independent and the last one is
// cut; for d = 1 (no simplex) the rows are iid.
type Simplex struct{}

// Name returns "simplex".
func (Simplex) Name() string { return "simplex" }

// Sample returns an m×d simplex projection. The rotation of each block is
// the row-normalised orthogonal block of sampler.Orthogonal (Householder
// QR in pure Go), so the same seed gives the same bits with every BLAS
// backend.
func (Simplex) Sample(m, d int, seed uint64) (*mat.Dense, error) {
	if m <= 0 {
		return nil, fmt.Errorf("prf: number of rows must be positive, got %d", m)
	}
	if err := limits.Dim("prf: dimension", d); err != nil {
		return nil, err
	}
	if _, err := limits.Matrix("prf: simplex projection", m, d); err != nil {
		return nil, err
	}
	if d == 1 {
		return sampler.Gaussian{}.Sample(m, d, seed)
	}
	if _, err := limits.Matrix("prf: simplex block", d, d); err != nil {
		return nil, err
	}
	r := rng.NewStream(seed, simplexStream)
	out := mat.NewDense(m, d, nil)
	// The simplex: s_i = √(d/(d−1))·(e_i − 𝟙/d), unit vectors with
	// s_iᵀs_j = −1/(d−1).
	c := math.Sqrt(float64(d) / float64(d-1))
	for start := 0; start < m; start += d {
		rot, err := sampler.Orthogonal{}.Sample(d, d, r.Uint64())
		if err != nil {
			return nil, err
		}
		// Rows of the orthogonal block are χ(d)-scaled orthonormal
		// vectors; normalise them back to an orthogonal matrix O.
		mean := make([]float64, d)
		for k := 0; k < d; k++ {
			row := rot.RawRowView(k)
			n := math.Sqrt(dot(row, row))
			for j := range row {
				row[j] /= n
				mean[j] += row[j] / float64(d)
			}
		}
		rows := min(d, m-start)
		for i := 0; i < rows; i++ {
			// R s_i = c·(o_i − mean of the o_k), o_k the rows of O.
			var s float64
			for k := 0; k < d; k++ {
				v := r.NormFloat64()
				s += v * v
			}
			rho := math.Sqrt(s)
			oi := rot.RawRowView(i)
			row := out.RawRowView(start + i)
			for j := range row {
				row[j] = rho * c * (oi[j] - mean[j])
			}
		}
	}
	return out, nil
}

func dot(x, y []float64) float64 {
	var s float64
	for i, v := range x {
		s += v * y[i]
	}
	return s
}
