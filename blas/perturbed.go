package blas

import (
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Perturbed is a testing aid: gonum's pure-Go BLAS whose level-3 products
// (GEMM, SYRK) and GEMV — the routines kernelkit takes from OpenBLAS —
// add to every result element a deterministic perturbation of the size by
// which two conforming BLAS implementations may differ: δ·2√k·u·(|α|·|A||B|)ᵢⱼ
// with δ ∈ [−1, 1] a hash of the element's exact-order value and k the
// inner dimension (u = 2⁻⁵³ in float64, 2⁻²⁴ in float32); products with
// k = 1 are left alone, as every implementation rounds a single product the
// same way. Summation in
// another order, FMA or not, and other blockings (OpenBLAS's kernels for
// other CPUs, e.g. SkylakeX's AVX-512 ones) change a dot product of length
// k by about √k·u·Σ|aᵢbᵢ| (Higham, Accuracy and Stability of Numerical
// Algorithms, §3.1 and §3.5, for the statistical √k behaviour).
//
// A test suite that passes with Perturbed installed
// (KERNELKIT_BLAS=perturbed) takes its tolerances from the conditioning of
// what it checks, not from one machine's rounding. The perturbation is a
// function of the values only, so repeating a call gives the same bits.
type Perturbed struct {
	gonum.Implementation
}

// UsePerturbed installs Perturbed for blas64 and blas32, and gonum's
// LAPACK.
func UsePerturbed() {
	mu.Lock()
	defer mu.Unlock()
	blas64.Use(Perturbed{})
	blas32.Use(Perturbed{})
	lapack64.Use(lapackgonum.Implementation{})
	loaded = nil
	current = "perturbed (pure Go with rounding-level noise)"
}

// noise maps a value's bits to δ ∈ [−1, 1] (splitmix64 finaliser).
func noise(bits uint64) float64 {
	z := bits + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11)/(1<<52) - 1
}

func abs64(n int, a []float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Abs(a[i])
	}
	return out
}

func abs32(n int, a []float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(math.Abs(float64(a[i])))
	}
	return out
}

// Dgemm computes C = alpha·op(A)·op(B) + beta·C, then perturbs C.
func (p Perturbed) Dgemm(tA, tB gblas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	p.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	if m == 0 || n == 0 || k < 2 || alpha == 0 {
		return
	}
	mag := make([]float64, m*n)
	p.Implementation.Dgemm(tA, tB, m, n, k, math.Abs(alpha), abs64(len(a), a), lda, abs64(len(b), b), ldb, 0, mag, n)
	scale := 2 * math.Sqrt(float64(k)) * 0x1p-53
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			v := &c[i*ldc+j]
			*v += noise(math.Float64bits(*v)) * scale * mag[i*n+j]
		}
	}
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C, then perturbs C.
func (p Perturbed) Sgemm(tA, tB gblas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	p.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	if m == 0 || n == 0 || k < 2 || alpha == 0 {
		return
	}
	mag := make([]float32, m*n)
	p.Implementation.Sgemm(tA, tB, m, n, k, float32(math.Abs(float64(alpha))), abs32(len(a), a), lda, abs32(len(b), b), ldb, 0, mag, n)
	scale := 2 * math.Sqrt(float64(k)) * 0x1p-24
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			v := &c[i*ldc+j]
			*v += float32(noise(uint64(math.Float32bits(*v))) * scale * float64(mag[i*n+j]))
		}
	}
}

// Dsyrk computes one triangle of C = alpha·op(A)·op(A)ᵀ + beta·C, then
// perturbs it.
func (p Perturbed) Dsyrk(ul gblas.Uplo, t gblas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	p.Implementation.Dsyrk(ul, t, n, k, alpha, a, lda, beta, c, ldc)
	if n == 0 || k < 2 || alpha == 0 {
		return
	}
	mag := make([]float64, n*n)
	p.Implementation.Dsyrk(ul, t, n, k, math.Abs(alpha), abs64(len(a), a), lda, 0, mag, n)
	scale := 2 * math.Sqrt(float64(k)) * 0x1p-53
	for i := 0; i < n; i++ {
		lo, hi := i, n
		if ul == gblas.Lower {
			lo, hi = 0, i+1
		}
		for j := lo; j < hi; j++ {
			v := &c[i*ldc+j]
			*v += noise(math.Float64bits(*v)) * scale * mag[i*n+j]
		}
	}
}

// Ssyrk computes one triangle of C = alpha·op(A)·op(A)ᵀ + beta·C, then
// perturbs it.
func (p Perturbed) Ssyrk(ul gblas.Uplo, t gblas.Transpose, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	p.Implementation.Ssyrk(ul, t, n, k, alpha, a, lda, beta, c, ldc)
	if n == 0 || k < 2 || alpha == 0 {
		return
	}
	mag := make([]float32, n*n)
	p.Implementation.Ssyrk(ul, t, n, k, float32(math.Abs(float64(alpha))), abs32(len(a), a), lda, 0, mag, n)
	scale := 2 * math.Sqrt(float64(k)) * 0x1p-24
	for i := 0; i < n; i++ {
		lo, hi := i, n
		if ul == gblas.Lower {
			lo, hi = 0, i+1
		}
		for j := lo; j < hi; j++ {
			v := &c[i*ldc+j]
			*v += float32(noise(uint64(math.Float32bits(*v))) * scale * float64(mag[i*n+j]))
		}
	}
}

// Dgemv computes y = alpha·op(A)·x + beta·y, then perturbs y.
func (p Perturbed) Dgemv(t gblas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	p.Implementation.Dgemv(t, m, n, alpha, a, lda, x, incX, beta, y, incY)
	rows, k := m, n
	if t != gblas.NoTrans {
		rows, k = n, m
	}
	if rows == 0 || k < 2 || alpha == 0 {
		return
	}
	mag := make([]float64, rows)
	p.Implementation.Dgemv(t, m, n, math.Abs(alpha), abs64(len(a), a), lda, abs64(len(x), x), incX, 0, mag, 1)
	scale := 2 * math.Sqrt(float64(k)) * 0x1p-53
	iy := 0
	if incY < 0 {
		iy = (1 - rows) * incY
	}
	for i := 0; i < rows; i++ {
		v := &y[iy+i*incY]
		*v += noise(math.Float64bits(*v)) * scale * mag[i]
	}
}

// Sgemv computes y = alpha·op(A)·x + beta·y, then perturbs y.
func (p Perturbed) Sgemv(t gblas.Transpose, m, n int, alpha float32, a []float32, lda int, x []float32, incX int, beta float32, y []float32, incY int) {
	p.Implementation.Sgemv(t, m, n, alpha, a, lda, x, incX, beta, y, incY)
	rows, k := m, n
	if t != gblas.NoTrans {
		rows, k = n, m
	}
	if rows == 0 || k < 2 || alpha == 0 {
		return
	}
	mag := make([]float32, rows)
	p.Implementation.Sgemv(t, m, n, float32(math.Abs(float64(alpha))), abs32(len(a), a), lda, abs32(len(x), x), incX, 0, mag, 1)
	scale := 2 * math.Sqrt(float64(k)) * 0x1p-24
	iy := 0
	if incY < 0 {
		iy = (1 - rows) * incY
	}
	for i := 0; i < rows; i++ {
		v := &y[iy+i*incY]
		*v += float32(noise(uint64(math.Float32bits(*v))) * scale * float64(mag[i]))
	}
}
