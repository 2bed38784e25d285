package nystrom

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/cluster"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/internal/rng"
	"github.com/kernelkit/kernelkit/kernel"
)

// Method is a way of choosing landmarks.
type Method string

// The landmark methods.
const (
	// Uniform takes m distinct rows uniformly at random (scikit-learn's
	// Nystroem): the first m of a seeded random permutation, so that the
	// landmarks of a smaller m are a subset of those of a larger one.
	Uniform Method = "uniform"
	// KMeans takes the m centres of k-means (k-means++ seeding, Arthur &
	// Vassilvitskii 2007, then Lloyd iterations): the landmark choice of
	// Zhang, Tsang & Kwok (ICML 2008), whose error bound falls with the
	// quantisation error of the landmarks.
	KMeans Method = "kmeans"
	// Leverage samples m distinct rows with probabilities proportional to
	// approximate ridge leverage scores, in two passes (see
	// LeverageScores): Alaoui & Mahoney (NeurIPS 2015), with the one-level
	// estimator of Musco & Musco (NeurIPS 2017).
	Leverage Method = "leverage"
)

// ParseMethod returns the method named by s ("" means Uniform).
func ParseMethod(s string) (Method, error) {
	switch Method(s) {
	case "", Uniform:
		return Uniform, nil
	case KMeans, Leverage:
		return Method(s), nil
	}
	return "", fmt.Errorf("nystrom: unknown landmark method %.40q (want uniform, kmeans or leverage)", s)
}

// Config configures Fit.
type Config struct {
	// Kernel is the kernel to approximate.
	Kernel kernel.Kernel
	// Components is the number of landmarks m, the feature dimension.
	Components int
	// Method chooses the landmarks; "" means Uniform.
	Method Method
	// Seed seeds every random choice.
	Seed uint64
	// Floor is the relative eigenvalue floor (see Options).
	Floor float64
	// Iterations is the number of Lloyd iterations of KMeans (default
	// 10; k-means++ seeding alone with a negative value).
	Iterations int
	// Pilot is the size of the uniform pilot sample of Leverage (default
	// min(n, 2m)).
	Pilot int
}

// Fit chooses landmarks among (or, for KMeans, from) the rows of x and
// returns the Nyström map of cfg.Kernel on them.
func Fit(x *mat.Dense, cfg Config) (*Map, error) {
	method, err := ParseMethod(string(cfg.Method))
	if err != nil {
		return nil, err
	}
	l, err := Landmarks(x, cfg)
	if err != nil {
		return nil, err
	}
	return New(cfg.Kernel, l, Options{Floor: cfg.Floor, Method: method, Seed: cfg.Seed})
}

// Landmarks returns the m×d landmarks cfg.Method chooses from the rows of
// x. It is an error if x has fewer than m rows or non-finite entries.
func Landmarks(x *mat.Dense, cfg Config) (*mat.Dense, error) {
	method, err := ParseMethod(string(cfg.Method))
	if err != nil {
		return nil, err
	}
	n, _ := x.Dims()
	m := cfg.Components
	if err := limits.Dim("nystrom: number of landmarks", m); err != nil {
		return nil, err
	}
	if m > n {
		return nil, fmt.Errorf("nystrom: %d landmarks requested from %d rows", m, n)
	}
	for i := 0; i < n; i++ {
		for _, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("nystrom: row %d has a non-finite value", i)
			}
		}
	}
	switch method {
	case KMeans:
		iters := cfg.Iterations
		if iters == 0 {
			iters = 10
		}
		return kmeans(x, m, iters, cfg.Seed)
	case Leverage:
		if cfg.Kernel == nil {
			return nil, errors.New("nystrom: leverage-score landmarks need a kernel")
		}
		pilot := cfg.Pilot
		if pilot == 0 {
			pilot = min(n, 2*m)
		}
		scores, err := LeverageScores(x, cfg.Kernel, m, pilot, cfg.Seed)
		if err != nil {
			return nil, err
		}
		return rows(x, weightedSample(scores, m, rng.NewStream(cfg.Seed, streamLeverage))), nil
	}
	perm := rng.New(cfg.Seed).Perm(n)
	return rows(x, perm[:m]), nil
}

// streamLeverage is the random stream of the leverage-score sampling
// ("leverage"), independent of the pilot sample's.
const streamLeverage uint64 = 0x6c65766572616765

// rows returns the rows of x with the given indices, in increasing order.
func rows(x *mat.Dense, idx []int) *mat.Dense {
	idx = append([]int(nil), idx...)
	sort.Ints(idx)
	_, d := x.Dims()
	out := mat.NewDense(len(idx), d, nil)
	for i, r := range idx {
		copy(out.RawRowView(i), x.RawRowView(r))
	}
	return out
}

// weightedSample returns m distinct indices drawn without replacement with
// probabilities proportional to w (Efraimidis & Spirakis 2006: the m
// largest keys log(u_i)/w_i). Zero weights come last.
func weightedSample(w []float64, m int, r *rand.Rand) []int {
	type key struct {
		k float64
		i int
	}
	keys := make([]key, len(w))
	for i, v := range w {
		u := r.Float64()
		for u == 0 {
			u = r.Float64()
		}
		k := math.Inf(-1)
		if v > 0 {
			k = math.Log(u) / v
		}
		keys[i] = key{k, i}
	}
	sort.SliceStable(keys, func(a, b int) bool { return keys[a].k > keys[b].k })
	out := make([]int, m)
	for i := range out {
		out[i] = keys[i].i
	}
	return out
}

// LeverageScores returns approximate λ-ridge leverage scores
// l_i(λ) = [K(K + λI)⁻¹]_ii of the rows of x for the kernel k, for m
// landmarks, from a uniform pilot sample S of the given size (two passes
// over the data: the pilot, then every row):
//
//	l̃_i = (K_ii − K_iS·(K_SS + (s/n)·λ·I)⁻¹·K_Si)/λ,
//
// the estimator of Musco & Musco (NeurIPS 2017, Eq. 3 and Lemma 6) with the
// pilot's rows weighted √(n/s), computed from a Cholesky factorisation of
// K_SS + (s/n)λI in O(n·s² + s³) time and O(s² + chunk·s) memory. λ is
// the tail average of their Theorem 3 for rank k = ⌈m / ln m⌉,
// λ = Σ_{i>k} σ̂_i / k, with σ̂_i = (n/s)·σ_i(K_SS) the pilot's estimate of
// the spectrum of K: sampling O(k log k) = O(m) rows by these scores then
// gives a rank-k approximation of K with spectral error O(λ).
func LeverageScores(x *mat.Dense, k kernel.Kernel, m, pilot int, seed uint64) ([]float64, error) {
	n, d := x.Dims()
	if pilot < 1 || pilot > n {
		return nil, fmt.Errorf("nystrom: pilot sample of %d rows from %d", pilot, n)
	}
	if _, err := limits.Matrix("nystrom: pilot kernel matrix", pilot, pilot); err != nil {
		return nil, err
	}
	perm := rng.New(seed).Perm(n)
	s := rows(x, perm[:pilot])
	kss, err := kernel.GramOf(k, s, s)
	if err != nil {
		return nil, fmt.Errorf("nystrom: pilot kernel: %w", err)
	}
	sym := mat.NewSymDense(pilot, nil)
	for i := 0; i < pilot; i++ {
		for j := i; j < pilot; j++ {
			sym.SetSym(i, j, 0.5*(kss.At(i, j)+kss.At(j, i)))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, false) {
		return nil, errors.New("nystrom: eigendecomposition of the pilot kernel matrix failed")
	}
	vals := eig.Values(nil) // ascending
	rank := max(1, int(math.Ceil(float64(m)/math.Log(math.Max(float64(m), math.E)))))
	var tail float64
	for i := 0; i < len(vals)-rank; i++ {
		tail += math.Max(vals[i], 0)
	}
	scale := float64(n) / float64(pilot)
	top := vals[len(vals)-1] * scale
	if !(top > 0) {
		return nil, errors.New("nystrom: the pilot kernel matrix is zero")
	}
	lambda := math.Max(scale*tail/float64(rank), 1e-10*top)
	// Cholesky of K_SS + (s/n)λI: K_SS's own eigenvalues are ≥ −ε·top, so
	// the shift (s/n)λ ≥ 1e-10·σ_max(K_SS) keeps it positive definite.
	a := mat.NewSymDense(pilot, nil)
	a.CopySym(sym)
	for i := 0; i < pilot; i++ {
		a.SetSym(i, i, a.At(i, i)+lambda/scale)
	}
	var chol mat.Cholesky
	if !chol.Factorize(a) {
		return nil, fmt.Errorf("nystrom: pilot kernel matrix plus ridge %.3g is not positive definite", lambda/scale)
	}
	// A = UᵀU, so K_iS·A⁻¹·K_Si = ‖K_iS·U⁻¹‖²: one triangular inverse,
	// then matrix products (GEMM) over chunks of rows on every core.
	var u mat.TriDense
	chol.UTo(&u)
	ur := u.RawTriangular()
	if !lapack64.Trtri(ur) {
		return nil, errors.New("nystrom: the Cholesky factor of the pilot kernel matrix is singular")
	}
	uinv := blas64.General{Rows: pilot, Cols: pilot, Stride: ur.Stride, Data: ur.Data}
	for i := 0; i < pilot; i++ { // clear the strict lower triangle
		for j := 0; j < i; j++ {
			uinv.Data[i*uinv.Stride+j] = 0
		}
	}
	scores := make([]float64, n)
	errs := make([]error, parallel.Workers((n+255)/256))
	parallel.Chunks(n, 256, func(w, lo, hi int) {
		if errs[w] != nil {
			return
		}
		kxs, err := kernel.GramOf(k, x.Slice(lo, hi, 0, d).(*mat.Dense), s) // (hi−lo)×s
		if err != nil {
			errs[w] = err
			return
		}
		b := mat.NewDense(hi-lo, pilot, nil)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, kxs.RawMatrix(), uinv, 0, b.RawMatrix())
		for i := lo; i < hi; i++ {
			row := b.RawRowView(i - lo)
			q := blas64.Dot(blas64.Vector{N: pilot, Inc: 1, Data: row}, blas64.Vector{N: pilot, Inc: 1, Data: row})
			xi := x.RawRowView(i)
			scores[i] = math.Max(0, (k.Eval(xi, xi)-q)/lambda)
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return scores, nil
}

// kmeans returns m k-means centres of the rows of x: k-means++ seeding
// (cluster.SeedPlusPlus, O(n·m·d)) and iters Lloyd
// iterations with distances from one GEMM per row chunk. Assignments are
// computed in parallel and centres summed in row order, so the result
// depends only on x, m, iters and seed. An emptied cluster keeps its
// previous centre.
func kmeans(x *mat.Dense, m, iters int, seed uint64) (*mat.Dense, error) {
	n, d := x.Dims()
	if _, err := limits.Matrix("nystrom: k-means centres", m, d); err != nil {
		return nil, err
	}
	c := cluster.SeedPlusPlus(x, m, rng.New(seed))
	assign := make([]int, n)
	for i := range assign {
		assign[i] = -1
	}
	counts := make([]int, m)
	cn := make([]float64, m)
	for it := 0; it < iters; it++ {
		for j := range cn {
			cj := c.RawRowView(j)
			cn[j] = blas64.Dot(blas64.Vector{N: d, Inc: 1, Data: cj}, blas64.Vector{N: d, Inc: 1, Data: cj})
		}
		changed := make([]bool, parallel.Workers((n+255)/256))
		xr := x.RawMatrix()
		parallel.Chunks(n, 256, func(w, lo, hi int) {
			g := make([]float64, (hi-lo)*m)
			blas64.Gemm(blas.NoTrans, blas.Trans, 1,
				blas64.General{Rows: hi - lo, Cols: d, Stride: xr.Stride, Data: xr.Data[lo*xr.Stride:]},
				c.RawMatrix(), 0, blas64.General{Rows: hi - lo, Cols: m, Stride: m, Data: g})
			for i := lo; i < hi; i++ {
				row := g[(i-lo)*m : (i-lo+1)*m]
				best, bd := 0, math.Inf(1)
				for j, ip := range row {
					if v := cn[j] - 2*ip; v < bd {
						best, bd = j, v
					}
				}
				if assign[i] != best {
					assign[i] = best
					changed[w] = true
				}
			}
		})
		moved := false
		for _, ch := range changed {
			moved = moved || ch
		}
		if !moved {
			break
		}
		sums := mat.NewDense(m, d, nil)
		clear(counts)
		for i, a := range assign {
			counts[a]++
			row := sums.RawRowView(a)
			for t, v := range x.RawRowView(i) {
				row[t] += v
			}
		}
		for j := 0; j < m; j++ {
			if counts[j] == 0 {
				continue
			}
			row, cj := sums.RawRowView(j), c.RawRowView(j)
			for t := range row {
				cj[t] = row[t] / float64(counts[j])
			}
		}
	}
	return c, nil
}

// Reservoir keeps a uniform random sample of fixed size of the rows it is
// given, in one pass and O(size·d) memory (Vitter's Algorithm R, ACM TOMS
// 1985): the landmarks of a streamed fit. After t rows every subset of
// min(t, size) rows is equally likely; the sample depends only on the
// seed and the order of the rows, not on how they are batched.
type Reservoir struct {
	size int
	r    *rand.Rand
	seen int
	d    int
	data []float64
}

// NewReservoir returns an empty reservoir of the given size.
func NewReservoir(size int, seed uint64) (*Reservoir, error) {
	if err := limits.Dim("nystrom: reservoir size", size); err != nil {
		return nil, err
	}
	return &Reservoir{size: size, r: rng.New(seed)}, nil
}

// Add offers the rows of x to the reservoir.
func (rv *Reservoir) Add(x *mat.Dense) error {
	n, d := x.Dims()
	if n == 0 {
		return nil
	}
	if d < 1 {
		return errors.New("nystrom: reservoir rows have no columns")
	}
	if rv.d == 0 {
		if _, err := limits.Matrix("nystrom: reservoir", rv.size, d); err != nil {
			return err
		}
		rv.d = d
	} else if d != rv.d {
		return fmt.Errorf("nystrom: reservoir rows have %d columns, batch has %d", rv.d, d)
	}
	for i := 0; i < n; i++ {
		row := x.RawRowView(i)
		for _, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("nystrom: reservoir row %d has a non-finite value", rv.seen+1)
			}
		}
		if rv.seen < rv.size {
			rv.data = append(rv.data, row...)
		} else if j := rv.r.IntN(rv.seen + 1); j < rv.size {
			copy(rv.data[j*d:(j+1)*d], row)
		}
		rv.seen++
	}
	return nil
}

// Seen returns the number of rows offered so far.
func (rv *Reservoir) Seen() int { return rv.seen }

// Sample returns a copy of the sample: min(Seen, size) rows, or nil if no
// row was offered.
func (rv *Reservoir) Sample() *mat.Dense {
	if rv.seen == 0 {
		return nil
	}
	return mat.NewDense(len(rv.data)/rv.d, rv.d, append([]float64(nil), rv.data...))
}

// Batches yields batches of rows (features and targets, the targets
// ignored here); Read returns io.EOF at the end. data.CSVFile and the
// batches of model.FitStream implement it.
type Batches interface {
	Read(max int) (*mat.Dense, []float64, error)
}

// SampleBatches reads every batch of b (at most chunk rows at a time) into
// a reservoir of the given size and returns its sample: the first pass of
// a streamed Nyström fit, whose landmarks are then chosen from the sample
// (Fit, Landmarks).
func SampleBatches(b Batches, size, chunk int, seed uint64) (*mat.Dense, error) {
	rv, err := NewReservoir(size, seed)
	if err != nil {
		return nil, err
	}
	if chunk <= 0 {
		chunk = 2048
	}
	for {
		x, _, err := b.Read(chunk)
		if x != nil {
			if aerr := rv.Add(x); aerr != nil {
				return nil, aerr
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	s := rv.Sample()
	if s == nil {
		return nil, errors.New("nystrom: no rows to sample")
	}
	return s, nil
}
