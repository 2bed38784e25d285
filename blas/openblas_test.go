package blas

import (
	"math"
	"math/rand/v2"
	"testing"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
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
	for _, ta := range []gblas.Transpose{gblas.NoTrans, gblas.Trans} {
		for _, tb := range []gblas.Transpose{gblas.NoTrans, gblas.Trans} {
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
		for _, u := range []gblas.Uplo{gblas.Upper, gblas.Lower} {
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

// TestTrsmMatchesGonum compares Dtrsm with gonum's for every side,
// triangle, transpose and diagonal, on strided operands.
func TestTrsmMatchesGonum(t *testing.T) {
	o, err := LoadOpenBLAS()
	if err != nil {
		t.Skipf("OpenBLAS not available: %v", err)
	}
	var g gonum.Implementation
	m, n := 6, 4
	for _, s := range []gblas.Side{gblas.Left, gblas.Right} {
		k, lda := m, 9
		if s == gblas.Right {
			k = n
		}
		// A well-conditioned triangle: a strong diagonal.
		a := randSlice(lda*k, 10)
		for i := 0; i < k; i++ {
			a[i*lda+i] = 4 + a[i*lda+i]*a[i*lda+i]
		}
		for _, u := range []gblas.Uplo{gblas.Upper, gblas.Lower} {
			for _, ta := range []gblas.Transpose{gblas.NoTrans, gblas.Trans} {
				for _, d := range []gblas.Diag{gblas.NonUnit, gblas.Unit} {
					b1 := randSlice(m*7, 11)
					b2 := append([]float64(nil), b1...)
					o.Dtrsm(s, u, ta, d, m, n, 0.5, a, lda, b1, 7)
					g.Dtrsm(s, u, ta, d, m, n, 0.5, a, lda, b2, 7)
					if !close64(b1, b2, 1e-12) {
						t.Errorf("Dtrsm side %c uplo %c trans %c diag %c differs", s, u, ta, d)
					}
				}
			}
		}
	}
}

// TestLAPACKMatchesGonum: OpenBLAS's Cholesky factor and eigendecomposition
// of a random symmetric positive definite matrix (row-major, strided,
// each triangle) agree with gonum's to rounding, a matrix that is not
// positive definite is reported as such, and the eigenvectors returned in
// the columns of a satisfy A v = λ v.
func TestLAPACKMatchesGonum(t *testing.T) {
	o, err := LoadOpenBLAS()
	if err != nil {
		t.Skipf("OpenBLAS not available: %v", err)
	}
	l := o.LAPACK()
	if l == nil {
		t.Skipf("%s has no LAPACK", o)
	}
	var g lapackgonum.Implementation
	const n, lda = 70, 73
	// A = BᵀB + I, symmetric positive definite.
	b := randSlice(n*n, 12)
	spd := make([]float64, n*lda)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for k := 0; k < n; k++ {
				s += b[k*n+i] * b[k*n+j]
			}
			if i == j {
				s++
			}
			spd[i*lda+j] = s
		}
	}
	for _, u := range []gblas.Uplo{gblas.Upper, gblas.Lower} {
		a1 := append([]float64(nil), spd...)
		a2 := append([]float64(nil), spd...)
		if !l.Dpotrf(u, n, a1, lda) || !g.Dpotrf(u, n, a2, lda) {
			t.Fatalf("Dpotrf %c: positive definite matrix reported as not", u)
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if (u == gblas.Upper) == (j >= i) && math.Abs(a1[i*lda+j]-a2[i*lda+j]) > 1e-10*math.Abs(a2[i*lda+i]) {
					t.Fatalf("Dpotrf %c: factor entry (%d,%d) %v, gonum %v", u, i, j, a1[i*lda+j], a2[i*lda+j])
				}
			}
		}
		// The condition estimates bracket the exact reciprocal condition
		// number 1/(‖A‖₁‖A⁻¹‖₁): Hager and Higham's estimator (Higham,
		// Accuracy and Stability, §15.3) gives a lower bound on ‖A⁻¹‖₁ (so
		// an upper bound on the reciprocal, up to the solves' rounding,
		// κ·u ≈ 1e-14 here, far inside 1e-8), usually exact and rarely off
		// by more than 3; 10 allows for that without depending on which
		// sign choices each implementation's rounding makes.
		anorm := g.Dlansy(lapack.MaxColumnSum, u, n, spd, lda, make([]float64, n))
		inv := append([]float64(nil), a2...)
		if !g.Dpotri(u, n, inv, lda) {
			t.Fatalf("Dpotri %c failed", u)
		}
		exact := 1 / (anorm * g.Dlansy(lapack.MaxColumnSum, u, n, inv, lda, make([]float64, n)))
		r1 := l.Dpocon(u, n, a1, lda, anorm, nil, nil)
		r2 := g.Dpocon(u, n, a2, lda, anorm, make([]float64, 3*n), make([]int, n))
		for _, r := range []struct {
			impl string
			v    float64
		}{{"OpenBLAS", r1}, {"gonum", r2}} {
			if r.v < exact*(1-1e-8) || r.v > 10*exact {
				t.Errorf("Dpocon %c (%s): reciprocal condition %v, exact %v", u, r.impl, r.v, exact)
			}
		}
		bad := append([]float64(nil), spd...)
		bad[5*lda+5] = -1
		if l.Dpotrf(u, n, bad, lda) {
			t.Errorf("Dpotrf %c: matrix with a negative diagonal entry reported positive definite", u)
		}

		work := []float64{0}
		if !l.Dsyev(lapack.EVCompute, u, n, nil, lda, nil, work, -1) || work[0] < 1 {
			t.Fatalf("Dsyev %c: workspace query gave %v", u, work[0])
		}
		a1 = append([]float64(nil), spd...)
		w1 := make([]float64, n)
		if !l.Dsyev(lapack.EVCompute, u, n, a1, lda, w1, work, 1) {
			t.Fatalf("Dsyev %c failed", u)
		}
		a2 = append([]float64(nil), spd...)
		w2 := make([]float64, n)
		gw := make([]float64, 3*n*n)
		if !g.Dsyev(lapack.EVCompute, u, n, a2, lda, w2, gw, len(gw)) {
			t.Fatalf("gonum Dsyev %c failed", u)
		}
		if !close64(w1, w2, 1e-10*w2[n-1]) {
			t.Errorf("Dsyev %c: eigenvalues differ from gonum's", u)
		}
		// A v_j = λ_j v_j for column j of a1.
		worst := 0.0
		for j := 0; j < n; j++ {
			for i := 0; i < n; i++ {
				var s float64
				for k := 0; k < n; k++ {
					s += spd[i*lda+k] * a1[k*lda+j]
				}
				worst = math.Max(worst, math.Abs(s-w1[j]*a1[i*lda+j]))
			}
		}
		if worst > 1e-10*w1[n-1] {
			t.Errorf("Dsyev %c: ‖Av − λv‖ up to %.3g", u, worst)
		}
		w3 := make([]float64, n)
		if !l.Dsyev(lapack.EVNone, u, n, append([]float64(nil), spd...), lda, w3, work, 1) || !close64(w3, w1, 1e-10*w1[n-1]) {
			t.Errorf("Dsyev %c: eigenvalues alone differ from those with vectors", u)
		}
	}
}
