package backend

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

func randSlice(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 2))
	s := make([]float64, n)
	for i := range s {
		s[i] = r.NormFloat64()
	}
	return s
}

func close64(a, b []float64, tol float64) bool {
	for i := range a {
		d := a[i] - b[i]
		if d > tol || d < -tol {
			return false
		}
	}
	return true
}

// TestOpenBLASMatchesGonum compares every routine the backend overrides
// with gonum's, on strided, transposed operands. It is skipped, with a
// notice, where OpenBLAS is not installed; CI installs it.
func TestOpenBLASMatchesGonum(t *testing.T) {
	o, err := LoadOpenBLAS()
	if err != nil {
		t.Skipf("OpenBLAS not available: %v", err)
	}
	t.Logf("testing %s", o)
	var g gonum.Implementation
	for _, ta := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, tb := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			m, n, k := 7, 5, 6
			lda, ldb, ldc := 9, 8, 7
			a := randSlice(9*9, 1)
			b := randSlice(9*8, 2)
			c1 := randSlice(m*ldc, 3)
			c2 := append([]float64(nil), c1...)
			o.Dgemm(ta, tb, m, n, k, 1.5, a, lda, b, ldb, 0.5, c1, ldc)
			g.Dgemm(ta, tb, m, n, k, 1.5, a, lda, b, ldb, 0.5, c2, ldc)
			if !close64(c1, c2, 1e-12) {
				t.Errorf("Dgemm %c%c differs", ta, tb)
			}
			a32 := make([]float32, len(a))
			b32 := make([]float32, len(b))
			for i := range a {
				a32[i] = float32(a[i])
			}
			for i := range b {
				b32[i] = float32(b[i])
			}
			s1 := make([]float32, m*ldc)
			s2 := make([]float32, m*ldc)
			o.Sgemm(ta, tb, m, n, k, 1, a32, lda, b32, ldb, 0, s1, ldc)
			g.Sgemm(ta, tb, m, n, k, 1, a32, lda, b32, ldb, 0, s2, ldc)
			for i := range s1 {
				if d := s1[i] - s2[i]; d > 1e-4 || d < -1e-4 {
					t.Fatalf("Sgemm %c%c differs", ta, tb)
				}
			}
		}
		for _, u := range []blas.Uplo{blas.Upper, blas.Lower} {
			a := randSlice(8*8, 4)
			c1 := randSlice(6*7, 5)
			c2 := append([]float64(nil), c1...)
			o.Dsyrk(u, ta, 6, 5, 2, a, 8, 1, c1, 7)
			g.Dsyrk(u, ta, 6, 5, 2, a, 8, 1, c2, 7)
			if !close64(c1, c2, 1e-12) {
				t.Errorf("Dsyrk %c %c differs", u, ta)
			}
		}
		a := randSlice(6*8, 6)
		x := randSlice(20, 7)
		y1 := randSlice(20, 8)
		y2 := append([]float64(nil), y1...)
		o.Dgemv(ta, 6, 5, 0.7, a, 8, x, 2, 0.3, y1, 3)
		g.Dgemv(ta, 6, 5, 0.7, a, 8, x, 2, 0.3, y2, 3)
		if !close64(y1, y2, 1e-12) {
			t.Errorf("Dgemv %c differs", ta)
		}
	}
}
