package linear

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/parallel"
)

// Stats holds the sufficient statistics of a least-squares problem with D
// features and K targets. The zero value is not usable; call NewStats.
// Stats values form a commutative monoid under Merge, with NewStats as the
// identity, up to rounding: floating-point addition is not associative,
// so the order of Adds and Merges changes the last bits, and a reduction
// that must give the same bits on every run merges in a fixed order (as
// model.Accumulate does, in chunk order). With row weights
// (AddWeighted) the sums are weighted: ZtZ = ZᵀWZ, ZtY = ZᵀWY,
// SumZ = Σw_i z_i, SumY = Σw_i y_i and SumY2 = Σw_i y_i², W = diag(w).
type Stats struct {
	D, K int
	// N is the number of rows added (by AddWeighted: of rows with a
	// positive weight).
	N int
	// SumW is the total weight Σw_i of the rows when Weighted is set, as
	// it is once AddWeighted has added weighted rows (a row added by Add
	// weighs 1). Without Weighted the total weight is N and SumW is
	// unused: statistics filled by Add alone, or built by hand with N set,
	// are unweighted. Weight returns the total weight in either case.
	SumW     float64
	Weighted bool
	// ZtZ holds ZᵀZ in its upper triangle (row-major D×D); the lower
	// triangle is not referenced.
	ZtZ   []float64
	ZtY   []float64 // D×K row-major
	SumZ  []float64 // D
	SumY  []float64 // K
	SumY2 []float64 // K: Σ y_k²

	scratch scratch // Add's working memory, not part of the statistics
}

// NewStats returns empty statistics for d features and k targets. It
// allocates d² + d·k + d + 2k values, so sizes that come from users must be
// checked before (kernelkit's own callers check them against its
// documented limits).
func NewStats(d, k int) *Stats {
	return &Stats{D: d, K: k, ZtZ: make([]float64, d*d), ZtY: make([]float64, d*k),
		SumZ: make([]float64, d), SumY: make([]float64, k), SumY2: make([]float64, k)}
}

// Add accumulates the rows of z (n×D) and targets y (n×K).
//
// The work runs on all cores. ZᵀZ is split into square tiles whose side
// depends on D only (tileSide); each upper tile is one BLAS call — a SYRK
// for a diagonal tile, a GEMM for the others — and the tile of block row i
// on the diagonal also adds block row i of Zᵀy and Σz (Zᵀy by a GEMM, or,
// for targets with at most one non-zero per row on average such as
// one-hot classes, as sums of the rows of each class, k times fewer
// operations). A tile's entries
// are thus computed by the same call, with the same rounding, whichever
// core runs it and however many cores there are, so Add gives the same
// bits on any number of cores; only the BLAS backend changes the rounding.
func (s *Stats) Add(z, y *mat.Dense) error {
	_, d := z.Dims()
	return s.add(z, y, tileSide(d))
}

// AddSerial is Add on the calling goroutine alone, with all of ZᵀZ one
// SYRK call: the BLAS's best rate on one core. Callers that fill several
// Stats at once, one goroutine each, use it to keep every core on one big
// call (package model's accumulator does, with two Stats). Its result has
// the same bits on every run, but not necessarily those of Add, whose
// tiles round differently.
func (s *Stats) AddSerial(z, y *mat.Dense) error {
	_, d := z.Dims()
	return s.add(z, y, max(d, 1))
}

// add is Add with tiles of side tb.
func (s *Stats) add(z, y *mat.Dense, tb int) error {
	n, d := z.Dims()
	ny, k := y.Dims()
	if d != s.D || k != s.K || n != ny {
		return fmt.Errorf("linear: Add: got features %dx%d and targets %dx%d, want D=%d, K=%d and equal rows", n, d, ny, k, s.D, s.K)
	}
	if n == 0 {
		return nil
	}
	yr := y.RawMatrix()
	s.addTargets(yr)
	s.addTiles(z.RawMatrix(), yr, s.ones(n), tb)
	s.count(n)
	return nil
}

// count adds n unit-weight rows to the row count (and to the total
// weight of weighted statistics).
func (s *Stats) count(n int) {
	s.N += n
	if s.Weighted {
		s.SumW += float64(n)
	}
}

// addTiles adds ZᵀZ, Zᵀy and Σz of the rows of zr and targets yr, the tiles
// split over the cores as Add describes; ones holds the coefficients of Σz
// (ones, or √w for rows scaled by √w).
func (s *Stats) addTiles(zr, yr blas64.General, ones []float64, tb int) {
	n, d, k := zr.Rows, zr.Cols, yr.Cols
	tiles := upperTiles(d, tb)
	sparse := sparseTargets(yr)
	var acc [][]float64
	if sparse {
		acc = s.scratch.acc(parallel.Workers(len(tiles)), k*tb)
	}
	parallel.Tasks(len(tiles), func(w, t int) {
		i0, i1, j0, j1 := tiles[t].bounds(d, tb)
		a := blas64.General{Rows: n, Cols: i1 - i0, Stride: zr.Stride, Data: zr.Data[i0:]}
		if i0 != j0 {
			b := blas64.General{Rows: n, Cols: j1 - j0, Stride: zr.Stride, Data: zr.Data[j0:]}
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, a, b, 1, blas64.General{Rows: i1 - i0, Cols: j1 - j0, Stride: d, Data: s.ZtZ[i0*d+j0:]})
			return
		}
		blas64.Syrk(blas.Trans, 1, a, 1, blas64.Symmetric{N: i1 - i0, Stride: d, Uplo: blas.Upper, Data: s.ZtZ[i0*d+i0:]})
		blas64.Gemv(blas.Trans, 1, a, blas64.Vector{N: n, Inc: 1, Data: ones}, 1, blas64.Vector{N: i1 - i0, Inc: 1, Data: s.SumZ[i0:]})
		if !sparse {
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, a, yr, 1, blas64.General{Rows: i1 - i0, Cols: k, Stride: k, Data: s.ZtY[i0*k:]})
			return
		}
		// Few non-zero targets (one-hot classes): Zᵀy as sums of the rows
		// of each class, y_rc·z_r added row by row into row c of a
		// transposed scratch, then into Zᵀy — n·(i1 − i0) additions where
		// a GEMM would do k times as many.
		w0 := i1 - i0
		yt := acc[w][:k*w0]
		clear(yt)
		for r := 0; r < n; r++ {
			zrow := zr.Data[r*zr.Stride+i0 : r*zr.Stride+i1]
			for c, v := range yr.Data[r*yr.Stride : r*yr.Stride+k] {
				if v != 0 {
					floats.AddScaled(yt[c*w0:(c+1)*w0], v, zrow)
				}
			}
		}
		for i := 0; i < w0; i++ {
			row := s.ZtY[(i0+i)*k : (i0+i+1)*k]
			for c := range row {
				row[c] += yt[c*w0+i]
			}
		}
	})
}

// sparseTargets reports whether the targets have at most one non-zero
// per row on average (one-hot classes), when Add sums rows instead of
// multiplying by y.
func sparseTargets(y blas64.General) bool {
	if y.Cols < 4 {
		return false
	}
	nnz := 0
	for i := 0; i < y.Rows; i++ {
		for _, v := range y.Data[i*y.Stride : i*y.Stride+y.Cols] {
			if v != 0 {
				nnz++
			}
		}
	}
	return nnz <= y.Rows
}

// AddFloat32 accumulates the rows of z (n×D, single precision) and
// targets y (n×K): each tile of ZᵀZ and Zᵀy is computed in single
// precision (SSYRK, SGEMM), at about twice the double-precision rate, and
// added into the float64 statistics, so rounding grows with the rows of
// one call, not with the rows of the whole fit; Σz is summed in double
// precision. The work is split as in Add, with the same bits on any number
// of cores. Relative to Add the entries of ZᵀZ change by about
// 2⁻²⁴·√n relative (n the rows of one call); package model's float32 path
// measures what that does to a fit.
func (s *Stats) AddFloat32(z blas32.General, y *mat.Dense) error {
	return s.addFloat32(z, y, tileSide(z.Cols))
}

// AddFloat32Serial is AddFloat32 on the calling goroutine alone, with all
// of ZᵀZ one SSYRK call, as AddSerial is for Add. It keeps a D×D
// single-precision scratch matrix.
func (s *Stats) AddFloat32Serial(z blas32.General, y *mat.Dense) error {
	return s.addFloat32(z, y, max(z.Cols, 1))
}

// addFloat32 is AddFloat32 with tiles of side tb.
func (s *Stats) addFloat32(z blas32.General, y *mat.Dense, tb int) error {
	n, d := z.Rows, z.Cols
	ny, k := y.Dims()
	if d != s.D || k != s.K || n != ny {
		return fmt.Errorf("linear: AddFloat32: got features %dx%d and targets %dx%d, want D=%d, K=%d and equal rows", n, d, ny, k, s.D, s.K)
	}
	if n == 0 {
		return nil
	}
	if z.Stride < d || len(z.Data) < (n-1)*z.Stride+d {
		panic("linear: AddFloat32: short feature matrix")
	}
	yr := y.RawMatrix()
	s.addTargets(yr)
	s.addTiles32(z, yr, nil, tb)
	s.count(n)
	return nil
}

// addTiles32 is addTiles in single precision (see AddFloat32); sw, if not
// nil, holds the coefficients of Σz (√w for rows scaled by √w).
func (s *Stats) addTiles32(z blas32.General, yr blas64.General, sw []float64, tb int) {
	n, d, k := z.Rows, z.Cols, yr.Cols
	y32 := s.scratch.y32(n * k)
	for i := 0; i < n; i++ {
		for j, v := range yr.Data[i*yr.Stride : i*yr.Stride+k] {
			y32[i*k+j] = float32(v)
		}
	}
	tiles := upperTiles(d, tb)
	bufs := s.scratch.tiles(parallel.Workers(len(tiles)), tb*max(tb, k))
	parallel.Tasks(len(tiles), func(w, t int) {
		i0, i1, j0, j1 := tiles[t].bounds(d, tb)
		rows, cols := i1-i0, j1-j0
		c := bufs[w][:rows*cols]
		a := blas32.General{Rows: n, Cols: rows, Stride: z.Stride, Data: z.Data[i0:]}
		if i0 != j0 {
			b := blas32.General{Rows: n, Cols: cols, Stride: z.Stride, Data: z.Data[j0:]}
			blas32.Gemm(blas.Trans, blas.NoTrans, 1, a, b, 0, blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: c})
			for i := 0; i < rows; i++ {
				dst := s.ZtZ[(i0+i)*d+j0 : (i0+i)*d+j1]
				for j, v := range c[i*cols : (i+1)*cols] {
					dst[j] += float64(v)
				}
			}
			return
		}
		blas32.Syrk(blas.Trans, 1, a, 0, blas32.Symmetric{N: rows, Stride: rows, Uplo: blas.Upper, Data: c})
		for i := 0; i < rows; i++ {
			dst := s.ZtZ[(i0+i)*d+i0+i : (i0+i)*d+i1]
			for j, v := range c[i*rows+i : (i+1)*rows] {
				dst[j] += float64(v)
			}
		}
		c = c[:rows*k]
		blas32.Gemm(blas.Trans, blas.NoTrans, 1, a, blas32.General{Rows: n, Cols: k, Stride: k, Data: y32}, 0, blas32.General{Rows: rows, Cols: k, Stride: k, Data: c})
		for i, v := range c {
			s.ZtY[i0*k+i] += float64(v)
		}
		sum := s.SumZ[i0:i1]
		for r := 0; r < n; r++ {
			row := z.Data[r*z.Stride+i0 : r*z.Stride+i1]
			if sw == nil {
				for j, v := range row {
					sum[j] += float64(v)
				}
				continue
			}
			for j, v := range row {
				sum[j] += sw[r] * float64(v)
			}
		}
	})
}

// addTargets adds the rows of y to Σy and Σy².
func (s *Stats) addTargets(yr blas64.General) {
	for i := 0; i < yr.Rows; i++ {
		for j, v := range yr.Data[i*yr.Stride : i*yr.Stride+yr.Cols] {
			s.SumY[j] += v
			s.SumY2[j] += v * v
		}
	}
}

// ones returns a slice of n ones, kept between calls.
func (s *Stats) ones(n int) []float64 {
	if len(s.scratch.one) < n {
		s.scratch.one = make([]float64, n)
		for i := range s.scratch.one {
			s.scratch.one[i] = 1
		}
	}
	return s.scratch.one[:n]
}

// scratch is the working memory Add and AddFloat32 keep between calls: a
// vector of ones, the targets in single precision, one single-precision
// tile per worker and one transposed block of Zᵀy per worker; and for
// AddWeighted the square roots of the weights and the rows scaled by them.
type scratch struct {
	one  []float64
	y    []float32
	t    [][]float32
	yt   [][]float64
	sw   []float64
	zw   []float64
	zw32 []float32
	ys   []float64
}

func (sc *scratch) acc(workers, size int) [][]float64 {
	for len(sc.yt) < workers {
		sc.yt = append(sc.yt, nil)
	}
	for w := range sc.yt {
		if len(sc.yt[w]) < size {
			sc.yt[w] = make([]float64, size)
		}
	}
	return sc.yt
}

func (sc *scratch) y32(n int) []float32 {
	if len(sc.y) < n {
		sc.y = make([]float32, n)
	}
	return sc.y[:n]
}

func (sc *scratch) tiles(workers, size int) [][]float32 {
	for len(sc.t) < workers {
		sc.t = append(sc.t, nil)
	}
	for w := range sc.t {
		if len(sc.t[w]) < size {
			sc.t[w] = make([]float32, size)
		}
	}
	return sc.t
}

// tileSide returns the side of the square tiles into which Add splits
// ZᵀZ for D features. It depends on D alone, never on the number of cores,
// because the tiles fix the rounding of every entry. Larger tiles run
// closer to the BLAS's peak (each tile's GEMM packs its two panels of Z
// anew, an overhead in proportion to 1/side) and smaller ones balance
// better over the cores: up to D = 1024 the side is D/2 (three tasks, an
// even split on two cores), up to 2048 it is 256 (36 tasks at D = 2048),
// and 512 above (36 tasks at D = 4096); D ≤ 128 is a single SYRK.
func tileSide(d int) int {
	switch {
	case d <= 128:
		return max(d, 1)
	case d <= 1024:
		return (d/2 + 63) / 64 * 64
	case d <= 2048:
		return 256
	}
	return 512
}

// tile is block (i, j), j ≥ i, of the upper triangle.
type tile struct{ i, j int }

// bounds returns the rows [i0, i1) and columns [j0, j1) of the tile.
func (t tile) bounds(d, tb int) (i0, i1, j0, j1 int) {
	return t.i * tb, min((t.i+1)*tb, d), t.j * tb, min((t.j+1)*tb, d)
}

// upperTiles lists the tiles of the upper triangle of a d×d matrix in
// blocks of tb, the largest work first (off-diagonal tiles, then the
// diagonal ones, which are half a tile of SYRK plus the Zᵀy and Σz rows),
// so that dynamic scheduling finishes evenly.
func upperTiles(d, tb int) []tile {
	nb := (d + tb - 1) / tb
	ts := make([]tile, 0, nb*(nb+1)/2)
	for i := 0; i < nb; i++ {
		for j := i + 1; j < nb; j++ {
			ts = append(ts, tile{i, j})
		}
	}
	for i := 0; i < nb; i++ {
		ts = append(ts, tile{i, i})
	}
	return ts
}

// Merge adds the statistics of o into s.
func (s *Stats) Merge(o *Stats) error {
	return s.axpy(1, o)
}

func (s *Stats) axpy(a float64, o *Stats) error {
	if o.D != s.D || o.K != s.K {
		return fmt.Errorf("linear: Merge: shapes D=%d,K=%d and D=%d,K=%d differ", s.D, s.K, o.D, o.K)
	}
	// Only the upper triangle of ZᵀZ is referenced.
	d := s.D
	for i := 0; i < d; i++ {
		dst := s.ZtZ[i*d+i : (i+1)*d]
		for j, v := range o.ZtZ[i*d+i : (i+1)*d] {
			dst[j] += a * v
		}
	}
	for i, v := range o.ZtY {
		s.ZtY[i] += a * v
	}
	for i, v := range o.SumZ {
		s.SumZ[i] += a * v
	}
	for i, v := range o.SumY {
		s.SumY[i] += a * v
	}
	for i, v := range o.SumY2 {
		s.SumY2[i] += a * v
	}
	if s.Weighted || o.Weighted {
		s.SumW, s.Weighted = s.Weight()+a*o.Weight(), true
	}
	s.N += int(a) * o.N
	return nil
}

// Reset empties s, keeping its shape and memory.
func (s *Stats) Reset() {
	for _, arr := range [][]float64{s.ZtZ, s.ZtY, s.SumZ, s.SumY, s.SumY2} {
		clear(arr)
	}
	s.N, s.SumW, s.Weighted = 0, 0, false
}

// Clone returns a deep copy of s.
func (s *Stats) Clone() *Stats {
	c := NewStats(s.D, s.K)
	copy(c.ZtZ, s.ZtZ)
	copy(c.ZtY, s.ZtY)
	copy(c.SumZ, s.SumZ)
	copy(c.SumY, s.SumY)
	copy(c.SumY2, s.SumY2)
	c.N, c.SumW, c.Weighted = s.N, s.SumW, s.Weighted
	return c
}

// centred returns C = ZᵀZ − n z̄z̄ᵀ, c = Zᵀy − n z̄ȳᵀ, the centred
// Σ(y − ȳ)², z̄ and ȳ, n the total weight (the row count without
// weights). Without intercept it returns the raw ones.
func (s *Stats) centred(intercept bool) (c *mat.SymDense, cy *mat.Dense, yy, zbar, ybar []float64) {
	zbar, ybar = s.means(intercept)
	n := s.Weight()
	yy = make([]float64, s.K)
	for j := range yy {
		yy[j] = s.SumY2[j] - n*ybar[j]*ybar[j]
	}
	return s.centredSym(zbar), s.centredZtY(zbar, ybar), yy, zbar, ybar
}

// means returns z̄ and ȳ, or zeros without intercept.
func (s *Stats) means(intercept bool) (zbar, ybar []float64) {
	zbar = make([]float64, s.D)
	ybar = make([]float64, s.K)
	if n := s.Weight(); intercept && s.N > 0 && n > 0 {
		for j := range zbar {
			zbar[j] = s.SumZ[j] / n
		}
		for j := range ybar {
			ybar[j] = s.SumY[j] / n
		}
	}
	return zbar, ybar
}

// centredSym returns C = ZᵀZ − n z̄z̄ᵀ.
func (s *Stats) centredSym(zbar []float64) *mat.SymDense {
	d := s.D
	u, _ := s.centredUpper(zbar, 0)
	return mat.NewSymDense(d, u)
}

// centredUpper returns C + λI in the upper triangle of a d×d row-major
// slice (the lower triangle is zero), C = ZᵀZ − n z̄z̄ᵀ, and its 1-norm
// (largest column sum of magnitudes), computed in the same pass.
func (s *Stats) centredUpper(zbar []float64, lambda float64) (u []float64, norm1 float64) {
	d := s.D
	n := s.Weight()
	u = make([]float64, d*d)
	colSum := make([]float64, d)
	for i := 0; i < d; i++ {
		nz := n * zbar[i]
		dst := u[i*d+i : (i+1)*d]
		sums := colSum[i:]
		for j, v := range s.ZtZ[i*d+i : (i+1)*d] {
			dst[j] = v - nz*zbar[i+j]
		}
		dst[0] += lambda
		// Entry (i, j), j ≥ i, is in column j, and for j > i its mirror
		// (j, i) is in column i.
		var row float64
		for j, v := range dst {
			v = math.Abs(v)
			sums[j] += v
			row += v
		}
		sums[0] += row - math.Abs(dst[0])
	}
	for _, v := range colSum {
		norm1 = math.Max(norm1, v)
	}
	return u, norm1
}

// centredZtY returns c = Zᵀy − n z̄ȳᵀ (D×K).
func (s *Stats) centredZtY(zbar, ybar []float64) *mat.Dense {
	d, k := s.D, s.K
	n := s.Weight()
	cy := mat.NewDense(d, k, nil)
	cyr := cy.RawMatrix()
	for i := 0; i < d; i++ {
		nz := n * zbar[i]
		dy := cyr.Data[i*cyr.Stride : i*cyr.Stride+k]
		for j, v := range s.ZtY[i*k : (i+1)*k] {
			dy[j] = v - nz*ybar[j]
		}
	}
	return cy
}

// Validate reports non-finite statistics (from NaN or Inf rows).
func (s *Stats) Validate() error {
	if s.N == 0 {
		return errors.New("linear: no rows to fit (or every row has weight zero)")
	}
	if w := s.Weight(); !(w > 0) || math.IsInf(w, 0) {
		return fmt.Errorf("linear: total weight of the rows is %v, want positive and finite", w)
	}
	for _, arr := range [][]float64{s.ZtZ, s.ZtY, s.SumZ, s.SumY, s.SumY2} {
		for _, v := range arr {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return errors.New("linear: statistics contain NaN or Inf (non-finite features or targets)")
			}
		}
	}
	return nil
}
