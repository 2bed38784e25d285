package linear

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/kernelkit/kernelkit/internal/parallel"
)

// cholBlock is the block size of cholesky: the diagonal blocks it hands to
// LAPACK and the column tiles of its panel solves; cholTile is the side of
// the tiles of its trailing updates. Like the tiles of Stats.Add they are
// constants, so the factor has the same bits on any number of cores.
const (
	cholBlock = 256
	cholTile  = 512
)

// cholesky overwrites the upper triangle of the d×d row-major symmetric
// matrix a (stride d) with its Cholesky factor U, a = UᵀU, and reports
// whether a is positive definite (if not, a is left partly overwritten).
// It is the right-looking blocked algorithm of LAPACK's dpotrf with the
// work spread over all cores: for each block row k it factors the
// diagonal block (lapack64.Potrf), solves the block row to its right
// (TRSM, one task per column tile) and updates the trailing triangle (SYRK
// on diagonal tiles, GEMM on the others, one task per tile), every tile by
// one BLAS call, so that the rounding of each entry does not depend on the
// number of cores.
func cholesky(a []float64, d int) bool {
	const nb = cholBlock
	for k0 := 0; k0 < d; k0 += nb {
		k1 := min(k0+nb, d)
		kw := k1 - k0
		if _, ok := lapack64.Potrf(blas64.Symmetric{N: kw, Stride: d, Uplo: blas.Upper, Data: a[k0*d+k0:]}); !ok {
			return false
		}
		if k1 == d {
			break
		}
		ukk := blas64.Triangular{N: kw, Stride: d, Uplo: blas.Upper, Diag: blas.NonUnit, Data: a[k0*d+k0:]}
		// The block row to the right, U_k,j = U_kk⁻ᵀ A_k,j, by column tiles.
		ncol := (d - k1 + nb - 1) / nb
		parallel.Tasks(ncol, func(_, t int) {
			j0 := k1 + t*nb
			j1 := min(j0+nb, d)
			blas64.Trsm(blas.Left, blas.Trans, 1, ukk, blas64.General{Rows: kw, Cols: j1 - j0, Stride: d, Data: a[k0*d+j0:]})
		})
		// The trailing triangle, A_ij −= U_kiᵀ U_kj for k1 ≤ i ≤ j.
		rest := d - k1
		tiles := upperTiles(rest, cholTile)
		parallel.Tasks(len(tiles), func(_, t int) {
			i0, i1, j0, j1 := tiles[t].bounds(rest, cholTile)
			i0, i1, j0, j1 = i0+k1, i1+k1, j0+k1, j1+k1
			ui := blas64.General{Rows: kw, Cols: i1 - i0, Stride: d, Data: a[k0*d+i0:]}
			if i0 == j0 {
				blas64.Syrk(blas.Trans, -1, ui, 1, blas64.Symmetric{N: i1 - i0, Stride: d, Uplo: blas.Upper, Data: a[i0*d+i0:]})
				return
			}
			uj := blas64.General{Rows: kw, Cols: j1 - j0, Stride: d, Data: a[k0*d+j0:]}
			blas64.Gemm(blas.Trans, blas.NoTrans, -1, ui, uj, 1, blas64.General{Rows: i1 - i0, Cols: j1 - j0, Stride: d, Data: a[i0*d+j0:]})
		})
	}
	return true
}

// cholSolve overwrites b (d×k) with the solution X of UᵀU X = B for the
// factor u of cholesky, by two triangular solves per tile of columns.
func cholSolve(u []float64, d int, b blas64.General) {
	const cols = 16 // columns per task, a constant for core-independent bits
	t := blas64.Triangular{N: d, Stride: d, Uplo: blas.Upper, Diag: blas.NonUnit, Data: u}
	parallel.Tasks((b.Cols+cols-1)/cols, func(_, i int) {
		c0, c1 := i*cols, min((i+1)*cols, b.Cols)
		bs := blas64.General{Rows: b.Rows, Cols: c1 - c0, Stride: b.Stride, Data: b.Data[c0:]}
		blas64.Trsm(blas.Left, blas.Trans, 1, t, bs)
		blas64.Trsm(blas.Left, blas.NoTrans, 1, t, bs)
	})
}
