package native

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// Float is the element type of the engine's tensors.
type Float interface{ float32 | float64 }

func transpose(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// gemm computes C = alpha·op(A)·op(B) + beta·C on row-major slices with the
// installed BLAS (blas32/blas64's implementation: OpenBLAS where kernelkit
// loaded it, gonum otherwise). op(A) is m×k, op(B) k×n, C m×n.
func gemm[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	switch a := any(a).(type) {
	case []float32:
		blas32.Implementation().Sgemm(transpose(tA), transpose(tB), m, n, k, float32(alpha), a, lda,
			any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		blas64.Implementation().Dgemm(transpose(tA), transpose(tB), m, n, k, float64(alpha), a, lda,
			any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}
