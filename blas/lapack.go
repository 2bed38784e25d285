package blas

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// LAPACK is a lapack.Float64 implementation (for gonum's lapack64, which
// package mat uses) whose Cholesky factorisation Dpotrf, its condition
// estimate Dpocon and the symmetric eigendecomposition Dsyev call the
// LAPACK inside the OpenBLAS library (dpotrf, dpocon, and dsyevr, the MRRR
// algorithm, for Dsyev); every other routine is gonum's.
//
// gonum's LAPACK works on row-major matrices and Fortran's on
// column-major ones. A row-major symmetric matrix read column-major is the
// same matrix with the other triangle, so the calls swap the triangle;
// dsyevr's eigenvectors, the columns of a column-major matrix, are
// transposed into the columns of the row-major result (n² copies beside
// the O(n³) decomposition).
type LAPACK struct {
	lapackgonum.Implementation

	dpotrf func(uplo *byte, n *int32, a unsafe.Pointer, lda *int32, info *int32, luplo uintptr)
	dpocon func(uplo *byte, n *int32, a unsafe.Pointer, lda *int32, anorm, rcond *float64, work, iwork unsafe.Pointer, info *int32, luplo uintptr)
	dsyevr func(jobz, rng, uplo *byte, n *int32, a unsafe.Pointer, lda *int32, vl, vu *float64, il, iu *int32,
		abstol *float64, m *int32, w, z unsafe.Pointer, ldz *int32, isuppz, work unsafe.Pointer, lwork *int32,
		iwork unsafe.Pointer, liwork *int32, info *int32, ljobz, lrng, luplo uintptr)
}

// loadLAPACK binds the LAPACK routines of the library handle h, or
// returns an error if it lacks one.
func loadLAPACK(h uintptr, path string) (*LAPACK, error) {
	l := &LAPACK{}
	for _, f := range []struct {
		ptr  any
		name string
	}{{&l.dpotrf, "dpotrf_"}, {&l.dpocon, "dpocon_"}, {&l.dsyevr, "dsyevr_"}} {
		if _, err := purego.Dlsym(h, f.name); err != nil {
			return nil, fmt.Errorf("blas: %s lacks %s: %w", path, f.name, err)
		}
		purego.RegisterLibFunc(f.ptr, h, f.name)
	}
	return l, nil
}

// swapUplo returns the Fortran triangle flag of the row-major triangle ul.
func swapUplo(ul gblas.Uplo) byte {
	if ul == gblas.Upper {
		return 'L'
	}
	return 'U'
}

// Dpotrf computes the Cholesky factorisation of the symmetric positive
// definite row-major matrix a (the triangle ul) with OpenBLAS's dpotrf:
// a = UᵀU (Upper) or L·Lᵀ (Lower). It reports whether a is positive
// definite; it panics on bad arguments, as gonum's does.
func (l *LAPACK) Dpotrf(ul gblas.Uplo, n int, a []float64, lda int) bool {
	switch {
	case ul != gblas.Upper && ul != gblas.Lower:
		panic("blas: Dpotrf: bad uplo")
	case n < 0 || lda < max(1, n):
		panic("blas: Dpotrf: bad size or leading dimension")
	}
	if n == 0 {
		return true
	}
	if len(a) < (n-1)*lda+n {
		panic("blas: Dpotrf: short matrix")
	}
	uplo := swapUplo(ul)
	n32, lda32 := int32(n), int32(lda)
	var info int32
	l.dpotrf(&uplo, &n32, unsafe.Pointer(&a[0]), &lda32, &info, 1)
	if info < 0 {
		panic(fmt.Sprintf("blas: dpotrf: argument %d illegal", -info))
	}
	return info == 0
}

// Dpocon returns the reciprocal of the 1-norm condition number estimate
// of the symmetric positive definite matrix whose Cholesky factor (the
// triangle ul, from Dpotrf) is in a, anorm being the 1-norm of the
// matrix, with OpenBLAS's dpocon. work and iwork are not used (it
// allocates its own); they are accepted for gonum's signature.
func (l *LAPACK) Dpocon(ul gblas.Uplo, n int, a []float64, lda int, anorm float64, work []float64, iwork []int) float64 {
	switch {
	case ul != gblas.Upper && ul != gblas.Lower:
		panic("blas: Dpocon: bad uplo")
	case n < 0 || lda < max(1, n):
		panic("blas: Dpocon: bad size or leading dimension")
	case anorm < 0:
		panic("blas: Dpocon: negative anorm")
	}
	if n == 0 {
		return 1
	}
	if len(a) < (n-1)*lda+n {
		panic("blas: Dpocon: short matrix")
	}
	uplo := swapUplo(ul)
	n32, lda32 := int32(n), int32(lda)
	var rcond float64
	var info int32
	w := make([]float64, 3*n)
	iw := make([]int32, n)
	l.dpocon(&uplo, &n32, unsafe.Pointer(&a[0]), &lda32, &anorm, &rcond, unsafe.Pointer(&w[0]), unsafe.Pointer(&iw[0]), &info, 1)
	if info < 0 {
		panic(fmt.Sprintf("blas: dpocon: argument %d illegal", -info))
	}
	return rcond
}

// Dsyev computes the eigenvalues of the symmetric row-major matrix a (the
// triangle uplo) in ascending order into w and, with jobz EVCompute, the
// orthonormal eigenvectors into the columns of a, with OpenBLAS's dsyevr.
// It allocates its own workspace: a workspace query (lwork = −1) returns
// 1 in work[0]. It reports whether the decomposition converged.
func (l *LAPACK) Dsyev(jobz lapack.EVJob, uplo gblas.Uplo, n int, a []float64, lda int, w, work []float64, lwork int) bool {
	switch {
	case jobz != lapack.EVNone && jobz != lapack.EVCompute:
		panic("blas: Dsyev: bad job")
	case uplo != gblas.Upper && uplo != gblas.Lower:
		panic("blas: Dsyev: bad uplo")
	case n < 0 || lda < max(1, n):
		panic("blas: Dsyev: bad size or leading dimension")
	case lwork < 1 && lwork != -1:
		panic("blas: Dsyev: bad lwork")
	case len(work) < 1:
		panic("blas: Dsyev: short work")
	}
	if lwork == -1 {
		work[0] = 1
		return true
	}
	if n == 0 {
		return true
	}
	if len(a) < (n-1)*lda+n || len(w) < n {
		panic("blas: Dsyev: short matrix or eigenvalue slice")
	}
	job := byte('N')
	ldz := 1
	if jobz == lapack.EVCompute {
		job, ldz = 'V', n
	}
	rng, ul := byte('A'), swapUplo(uplo)
	n32, lda32, ldz32 := int32(n), int32(lda), int32(ldz)
	var vl, vu, abstol float64
	var il, iu, m, info int32
	z := make([]float64, ldz*n)
	if jobz == lapack.EVNone {
		z = make([]float64, 1)
	}
	isuppz := make([]int32, 2*n)
	// Workspace query, then the decomposition.
	wq := make([]float64, 1)
	iq := make([]int32, 1)
	lw, liw := int32(-1), int32(-1)
	call := func(work []float64, iwork []int32) {
		l.dsyevr(&job, &rng, &ul, &n32, unsafe.Pointer(&a[0]), &lda32, &vl, &vu, &il, &iu, &abstol, &m,
			unsafe.Pointer(&w[0]), unsafe.Pointer(&z[0]), &ldz32, unsafe.Pointer(&isuppz[0]),
			unsafe.Pointer(&work[0]), &lw, unsafe.Pointer(&iwork[0]), &liw, &info, 1, 1, 1)
	}
	call(wq, iq)
	if info != 0 {
		panic(fmt.Sprintf("blas: dsyevr workspace query: info %d", info))
	}
	lw, liw = int32(max(wq[0], float64(26*n))), max(iq[0], int32(10*n))
	call(make([]float64, lw), make([]int32, liw))
	if info < 0 {
		panic(fmt.Sprintf("blas: dsyevr: argument %d illegal", -info))
	}
	if info > 0 || int(m) != n {
		return false
	}
	if jobz == lapack.EVCompute {
		// Column j of the column-major z is eigenvector j: a[i][j] =
		// z[j·n+i], copied in blocks that stay in cache.
		const bs = 64
		for i0 := 0; i0 < n; i0 += bs {
			for j0 := 0; j0 < n; j0 += bs {
				for i := i0; i < min(i0+bs, n); i++ {
					row := a[i*lda : i*lda+n]
					for j := j0; j < min(j0+bs, n); j++ {
						row[j] = z[j*n+i]
					}
				}
			}
		}
	}
	return true
}
