package sampler

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
)

// Sampler draws an m×d projection matrix from a seed.
type Sampler interface {
	// Sample returns an m×d matrix, or an error for sizes that are not
	// positive, d above 2²⁴, or matrices of more than 2³⁰ values (8 GiB).
	// The same (m, d, seed) gives the same matrix on every call and with
	// every BLAS backend.
	Sample(m, d int, seed uint64) (*mat.Dense, error)
	// Name returns the sampler's short name as used on the command line.
	Name() string
}

// check validates the size of an m×d projection before anything is
// allocated: m ≥ 1, 1 ≤ d ≤ limits.MaxDim and m·d ≤ limits.MaxElements,
// with the memory the matrix would need in the error.
func check(m, d int) error {
	if m <= 0 {
		return fmt.Errorf("sampler: number of rows must be positive, got %d", m)
	}
	if err := limits.Dim("sampler: dimension", d); err != nil {
		return err
	}
	if _, err := limits.Matrix("sampler: projection", m, d); err != nil {
		return err
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
// N(0, I_d). The QR factorisation is computed in pure Go (see haarQ), never
// through the BLAS implementation installed in blas64, so the same seed
// gives the same bits with every BLAS backend.
func (Orthogonal) Sample(m, d int, seed uint64) (*mat.Dense, error) {
	if err := check(m, d); err != nil {
		return nil, err
	}
	if _, err := limits.Matrix("sampler: orthogonal block", d, d); err != nil {
		return nil, err
	}
	rng := rng.New(seed)
	out := mat.NewDense(m, d, nil)
	g := make([]float64, d*d)
	q := make([]float64, d*d)
	work := make([]float64, 3*d)
	for start := 0; start < m; start += d {
		for i := range g {
			g[i] = rng.NormFloat64()
		}
		haarQ(g, q, d, work)
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
			row := out.RawRowView(start + i)
			for j := range row {
				row[j] = norm * q[j*d+i]
			}
		}
	}
	return out, nil
}

// haarQ sets q (d×d, row-major) to the orthogonal factor of the QR
// factorisation g = QR with the signs of R's diagonal made positive, which
// is the unique such factorisation and, for a Gaussian g, a Haar
// distributed Q (Mezzadri 2007). g (d×d, row-major) is overwritten and work
// needs 3d values.
//
// It is Householder QR (LAPACK's dgeqr2 and dorg2r) with the level-2
// operations of gonum's pure-Go BLAS called directly: gonum's lapack and
// mat.QR go through blas64's global implementation, which package blas
// may replace with OpenBLAS, and the bits of Q would then depend on the
// backend.
func haarQ(g, q []float64, d int, work []float64) {
	var impl gonum.Implementation
	tau := work[:d]
	sign := work[d : 2*d]
	w := work[2*d : 3*d]
	for j := 0; j < d; j++ {
		// Reflector H_j = I − τ v vᵀ with v = (1, x/(α−β)) annihilating
		// column j below the diagonal; R_jj = β.
		m := d - j
		alpha := g[j*d+j]
		var xnorm float64
		if m > 1 {
			xnorm = impl.Dnrm2(m-1, g[(j+1)*d+j:], d)
		}
		if xnorm == 0 {
			tau[j] = 0
			sign[j] = math.Copysign(1, alpha)
			continue
		}
		beta := -math.Copysign(math.Hypot(alpha, xnorm), alpha)
		tau[j] = (beta - alpha) / beta
		impl.Dscal(m-1, 1/(alpha-beta), g[(j+1)*d+j:], d)
		sign[j] = math.Copysign(1, beta)
		g[j*d+j] = 1
		if n := d - j - 1; n > 0 {
			// G[j:, j+1:] −= τ v (vᵀ G[j:, j+1:]).
			impl.Dgemv(blas.Trans, m, n, 1, g[j*d+j+1:], d, g[j*d+j:], d, 0, w, 1)
			impl.Dger(m, n, -tau[j], g[j*d+j:], d, w, 1, g[j*d+j+1:], d)
		}
	}
	// Q = H_0 H_1 ⋯ H_{d−1}, accumulated from the right: H_j only touches
	// rows and columns j and beyond of the partial product.
	clear(q)
	for i := 0; i < d; i++ {
		q[i*d+i] = 1
	}
	for j := d - 1; j >= 0; j-- {
		if tau[j] == 0 {
			continue
		}
		m := d - j
		impl.Dgemv(blas.Trans, m, m, 1, q[j*d+j:], d, g[j*d+j:], d, 0, w, 1)
		impl.Dger(m, m, -tau[j], g[j*d+j:], d, w, 1, q[j*d+j:], d)
	}
	// Q·diag(sign(R_jj)).
	for i := 0; i < d; i++ {
		row := q[i*d : (i+1)*d]
		for j, s := range sign {
			row[j] *= s
		}
	}
}

// Structured draws structured orthogonal random features (SORF).
type Structured struct{}

// Name returns "sorf".
func (Structured) Name() string { return "sorf" }

// Sample returns ⌈m/n⌉ stacked blocks √n·H D₁ H D₂ H D₃ (n the power of two
// at least d), keeping the first d columns and m rows. Each row is computed
// by three fast Walsh-Hadamard transforms, O(n log n), so the cost is
// O(m·n log n) whatever the ratio of m to d.
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
	var neg [3][]bool // the −1 entries of D₁, D₂, D₃
	for k := range neg {
		neg[k] = make([]bool, n)
	}
	col := make([]float64, n)
	scale := math.Sqrt(float64(n)) / math.Pow(math.Sqrt(float64(n)), 3) // √n · (1/√n)³ for the three normalised H
	for start := 0; start < m; start += n {
		for k := range neg {
			for i := range neg[k] {
				neg[k][i] = rng.Uint64()&1 != 0
			}
		}
		rows := min(n, m-start)
		for i := 0; i < rows; i++ {
			// Row i of the block B = H D₁ H D₂ H D₃ is Bᵀe_i =
			// D₃ H D₂ H D₁ H e_i (H is symmetric), right to left. Every
			// intermediate value is an integer below n², so the result does
			// not depend on the order of the operations. Computing rows,
			// not columns, costs O(n log n) per row drawn, whatever d.
			clear(col)
			col[i] = 1
			for k := range neg {
				fwht(col)
				for j, flip := range neg[k] {
					if flip {
						col[j] = -col[j]
					}
				}
			}
			row := out.RawRowView(start + i)
			for j := range row {
				row[j] = scale * col[j]
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
