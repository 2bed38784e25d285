package sampler

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/kernelkit/kernelkit/internal/rng"
)

// Sampler draws an m×d projection matrix from a seed.
type Sampler interface {
	// Sample returns an m×d matrix. The same (m, d, seed) gives the same
	// matrix on every call and platform.
	Sample(m, d int, seed uint64) (*mat.Dense, error)
	// Name returns the sampler's short name as used on the command line.
	Name() string
}

func check(m, d int) error {
	if m <= 0 {
		return fmt.Errorf("sampler: number of rows must be positive, got %d", m)
	}
	if d <= 0 {
		return fmt.Errorf("sampler: dimension must be positive, got %d", d)
	}
	return nil
}

// Gaussian draws iid N(0, 1) entries.
type Gaussian struct{}

// Name returns "iid".
func (Gaussian) Name() string { return "iid" }

// Sample returns an m×d matrix of iid standard normal entries.
func (Gaussian) Sample(m, d int, seed uint64) (*mat.Dense, error) {
	if err := check(m, d); err != nil {
		return nil, err
	}
	rng := rng.New(seed)
	data := make([]float64, m*d)
	for i := range data {
		data[i] = rng.NormFloat64()
	}
	return mat.NewDense(m, d, data), nil
}

// Orthogonal draws orthogonal random features (ORF).
type Orthogonal struct{}

// Name returns "orf".
func (Orthogonal) Name() string { return "orf" }

// Sample returns ⌈m/d⌉ stacked blocks of d mutually orthogonal rows, cut to
// m rows. Row norms are independent χ(d) draws, so every row is marginally
// N(0, I_d).
func (Orthogonal) Sample(m, d int, seed uint64) (*mat.Dense, error) {
	if err := check(m, d); err != nil {
		return nil, err
	}
	rng := rng.New(seed)
	out := mat.NewDense(m, d, nil)
	g := mat.NewDense(d, d, nil)
	var qr mat.QR
	var q, r mat.Dense
	for start := 0; start < m; start += d {
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				g.Set(i, j, rng.NormFloat64())
			}
		}
		qr.Factorize(g)
		qr.QTo(&q)
		// Fix the signs so that Q is Haar distributed: Q·diag(sign(R_jj)).
		qr.RTo(&r)
		for j := 0; j < d; j++ {
			if r.At(j, j) < 0 {
				for i := 0; i < d; i++ {
					q.Set(i, j, -q.At(i, j))
				}
			}
		}
		rows := min(d, m-start)
		for i := 0; i < rows; i++ {
			// Norm of an independent Gaussian vector: χ(d).
			var s float64
			for j := 0; j < d; j++ {
				v := rng.NormFloat64()
				s += v * v
			}
			norm := math.Sqrt(s)
			// Rows of Qᵀ (columns of Q) are orthonormal.
			for j := 0; j < d; j++ {
				out.Set(start+i, j, norm*q.At(j, i))
			}
		}
	}
	return out, nil
}

// Structured draws structured orthogonal random features (SORF).
type Structured struct{}

// Name returns "sorf".
func (Structured) Name() string { return "sorf" }

// Sample returns ⌈m/n⌉ stacked blocks √n·H D₁ H D₂ H D₃ (n the power of two
// at least d), keeping the first d columns and m rows.
func (Structured) Sample(m, d int, seed uint64) (*mat.Dense, error) {
	if err := check(m, d); err != nil {
		return nil, err
	}
	rng := rng.New(seed)
	n := 1
	for n < d {
		n <<= 1
	}
	out := mat.NewDense(m, d, nil)
	signs := make([][]float64, 3)
	col := make([]float64, n)
	scale := math.Sqrt(float64(n)) / math.Pow(math.Sqrt(float64(n)), 3) // √n · (1/√n)³ for the three normalised H
	for start := 0; start < m; start += n {
		for k := range signs {
			signs[k] = make([]float64, n)
			for i := range signs[k] {
				if rng.Uint64()&1 == 0 {
					signs[k][i] = 1
				} else {
					signs[k][i] = -1
				}
			}
		}
		rows := min(n, m-start)
		for j := 0; j < d; j++ {
			// Column j of the block is the block applied to e_j:
			// H D1 H D2 H D3 e_j, right to left.
			clear(col)
			col[j] = signs[2][j]
			fwht(col)
			for i := range col {
				col[i] *= signs[1][i]
			}
			fwht(col)
			for i := range col {
				col[i] *= signs[0][i]
			}
			fwht(col)
			for i := 0; i < rows; i++ {
				out.Set(start+i, j, scale*col[i])
			}
		}
		// The rows of H D₁ H D₂ H D₃ all have the same norm, which biases
		// the kernel estimate for small d (Yu et al. 2016 bound the bias by
		// O(1/√d)); rescaling each row to an independent χ(d) norm, as for
		// ORF, removes the norm part of that bias.
		for i := 0; i < rows; i++ {
			row := out.RawRowView(start + i)
			var s, c float64
			for _, v := range row {
				s += v * v
			}
			for k := 0; k < d; k++ {
				g := rng.NormFloat64()
				c += g * g
			}
			if s > 0 {
				f := math.Sqrt(c / s)
				for k := range row {
					row[k] *= f
				}
			}
		}
	}
	return out, nil
}

// fwht applies the unnormalised Walsh-Hadamard transform in place;
// len(x) must be a power of two.
func fwht(x []float64) {
	for h := 1; h < len(x); h <<= 1 {
		for i := 0; i < len(x); i += h << 1 {
			for j := i; j < i+h; j++ {
				a, b := x[j], x[j+h]
				x[j], x[j+h] = a+b, a-b
			}
		}
	}
}

// Truncated draws iid N(0, 1) entries conditioned on |w| ≤ K.
type Truncated struct {
	// K is the truncation point in standard deviations; K > 0.
	K float64
}

// Name returns "truncated".
func (Truncated) Name() string { return "truncated" }

// Sample returns an m×d matrix of truncated normal entries (rejection
// sampling).
func (t Truncated) Sample(m, d int, seed uint64) (*mat.Dense, error) {
	if err := check(m, d); err != nil {
		return nil, err
	}
	if !(t.K > 0) || math.IsInf(t.K, 0) {
		return nil, fmt.Errorf("sampler: truncation point must be positive and finite, got %v", t.K)
	}
	if t.K < 0.1 {
		return nil, fmt.Errorf("sampler: truncation point %v is too small for rejection sampling (need ≥ 0.1)", t.K)
	}
	rng := rng.New(seed)
	data := make([]float64, m*d)
	for i := range data {
		for {
			v := rng.NormFloat64()
			if math.Abs(v) <= t.K {
				data[i] = v
				break
			}
		}
	}
	return mat.NewDense(m, d, data), nil
}

// TruncatedVariance returns the variance of N(0, 1) conditioned on |w| ≤ k:
// 1 − 2kφ(k)/(2Φ(k) − 1).
func TruncatedVariance(k float64) float64 {
	n := distuv.UnitNormal
	return 1 - 2*k*n.Prob(k)/(2*n.CDF(k)-1)
}

// Halton draws randomised quasi-Monte Carlo Gaussian rows.
type Halton struct{}

// Name returns "halton".
func (Halton) Name() string { return "halton" }

// Sample returns m rows Φ⁻¹(frac(h_{s+i} + u)) where h_k is the k-th point
// of the Halton sequence on the first d primes, s a random start index and u
// a uniform random shift.
func (Halton) Sample(m, d int, seed uint64) (*mat.Dense, error) {
	if err := check(m, d); err != nil {
		return nil, err
	}
	if d > 10000 {
		return nil, fmt.Errorf("sampler: Halton supports d ≤ 10000, got %d", d)
	}
	rng := rng.New(seed)
	primes := firstPrimes(d)
	shift := make([]float64, d)
	for j := range shift {
		shift[j] = rng.Float64()
	}
	start := 1 + rng.IntN(1<<16)
	out := mat.NewDense(m, d, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < d; j++ {
			u := radicalInverse(start+i, primes[j]) + shift[j]
			u -= math.Floor(u)
			// Keep away from 0 and 1, where the quantile is infinite.
			u = math.Min(math.Max(u, 1e-16), 1-1e-16)
			out.Set(i, j, distuv.UnitNormal.Quantile(u))
		}
	}
	return out, nil
}

func radicalInverse(k, base int) float64 {
	var r float64
	f := 1 / float64(base)
	inv := f
	for k > 0 {
		r += float64(k%base) * f
		k /= base
		f *= inv
	}
	return r
}

func firstPrimes(n int) []int {
	ps := make([]int, 0, n)
	for c := 2; len(ps) < n; c++ {
		prime := true
		for _, p := range ps {
			if p*p > c {
				break
			}
			if c%p == 0 {
				prime = false
				break
			}
		}
		if prime {
			ps = append(ps, c)
		}
	}
	return ps
}

// ByName returns the sampler for a command-line name: iid (or gaussian,
// rff), orf, sorf, halton (or qmc), truncated (at 3 standard deviations).
func ByName(name string) (Sampler, error) {
	switch strings.ToLower(name) {
	case "iid", "gaussian", "rff":
		return Gaussian{}, nil
	case "orf", "orthogonal":
		return Orthogonal{}, nil
	case "sorf", "structured":
		return Structured{}, nil
	case "halton", "qmc":
		return Halton{}, nil
	case "truncated":
		return Truncated{K: 3}, nil
	case "":
		return nil, errors.New("sampler: empty sampler name")
	}
	return nil, fmt.Errorf("sampler: unknown sampler %q (want iid, orf, sorf, halton or truncated)", name)
}

// Default returns the sampler used when none is given: iid Gaussian rows.
func Default() Sampler { return Gaussian{} }

// Or returns s, or Default() if s is nil.
func Or(s Sampler) Sampler {
	if s == nil {
		return Default()
	}
	return s
}
