package blas

import (
	"fmt"
	"math"
	"testing"
	"unsafe"

	gblas "gonum.org/v1/gonum/blas"
)

// TestGemmFortranSameBits checks that Sgemm and Dgemm, which call
// OpenBLAS's Fortran interface (fortranGemm), give the bits of its
// cblas_sgemm and cblas_dgemm with CblasRowMajor, which swap the operands
// the same way before the same driver: every pair of transposes, strided
// operands, k = 0, one row or column, and alpha and beta of 0, 1 and
// other values.
func TestGemmFortranSameBits(t *testing.T) {
	o, err := LoadOpenBLAS()
	if err != nil {
		t.Skipf("OpenBLAS not available: %v", err)
	}
	if o.sgemmF == 0 || o.dgemmF == 0 {
		t.Skipf("%s has no sgemm_/dgemm_: the cblas form serves", o.path)
	}
	trans := []gblas.Transpose{gblas.NoTrans, gblas.Trans}
	seed := uint64(1)
	for _, sh := range []struct{ m, n, k int }{{1, 1, 1}, {7, 5, 3}, {64, 17, 33}, {3, 40, 0}, {1, 29, 70}, {130, 1, 9}} {
		for _, tA := range trans {
			for _, tB := range trans {
				for _, ab := range [][2]float64{{1, 0}, {1, 1}, {-0.7, 0.3}, {0, 2}} {
					name := fmt.Sprintf("%dx%dx%d/%v%v/%v", sh.m, sh.n, sh.k, tA, tB, ab)
					ar, ac := sh.m, sh.k
					if tA != gblas.NoTrans {
						ar, ac = ac, ar
					}
					br, bc := sh.k, sh.n
					if tB != gblas.NoTrans {
						br, bc = bc, br
					}
					lda, ldb, ldc := max(ac, 1)+2, max(bc, 1)+1, sh.n+3
					a := randSlice(max(ar*lda, 1), seed)
					b := randSlice(max(br*ldb, 1), seed+1)
					c0 := randSlice(sh.m*ldc, seed+2)
					seed += 3
					c, want := append([]float64(nil), c0...), append([]float64(nil), c0...)
					o.Dgemm(tA, tB, sh.m, sh.n, sh.k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
					o.dgemm(cblasRowMajor, tr(tA), tr(tB), int32(sh.m), int32(sh.n), int32(sh.k), ab[0], p64(a), int32(lda),
						p64(b), int32(ldb), ab[1], p64(want), int32(ldc))
					for i := range c {
						if math.Float64bits(c[i]) != math.Float64bits(want[i]) {
							t.Fatalf("Dgemm %s: c[%d] = %v, cblas %v", name, i, c[i], want[i])
						}
					}
					a32, b32, c32, w32 := to32(a), to32(b), to32(c0), to32(c0)
					o.Sgemm(tA, tB, sh.m, sh.n, sh.k, float32(ab[0]), a32, lda, b32, ldb, float32(ab[1]), c32, ldc)
					o.sgemm(cblasRowMajor, tr(tA), tr(tB), int32(sh.m), int32(sh.n), int32(sh.k), float32(ab[0]), p32(a32), int32(lda),
						p32(b32), int32(ldb), float32(ab[1]), p32(w32), int32(ldc))
					for i := range c32 {
						if math.Float32bits(c32[i]) != math.Float32bits(w32[i]) {
							t.Fatalf("Sgemm %s: c[%d] = %v, cblas %v", name, i, c32[i], w32[i])
						}
					}
				}
			}
		}
	}
}

func to32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

// BenchmarkGemmCall times a call of Sgemm (the Fortran interface by
// purego.SyscallN) against the cblas_sgemm registered with
// purego.RegisterLibFunc, on one thread: a 1×1×1 product (the call's own
// cost) and the shapes of a performer head's feature products.
func BenchmarkGemmCall(b *testing.B) {
	o, err := LoadOpenBLAS()
	if err != nil {
		b.Skip(err)
	}
	if o.setThreads != nil {
		o.setThreads(1)
	}
	for _, sh := range []struct{ m, n, k int }{{1, 1, 1}, {512, 32, 16}, {32, 17, 512}} {
		a, w, c := make([]float32, sh.m*sh.k), make([]float32, sh.k*sh.n), make([]float32, sh.m*sh.n)
		b.Run(fmt.Sprintf("%dx%dx%d/fortran", sh.m, sh.n, sh.k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				o.Sgemm(gblas.NoTrans, gblas.NoTrans, sh.m, sh.n, sh.k, 1, a, sh.k, w, sh.n, 0, c, sh.n)
			}
		})
		b.Run(fmt.Sprintf("%dx%dx%d/cblas", sh.m, sh.n, sh.k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				o.sgemm(cblasRowMajor, cblasNoTrans, cblasNoTrans, int32(sh.m), int32(sh.n), int32(sh.k), 1,
					unsafe.Pointer(&a[0]), int32(sh.k), unsafe.Pointer(&w[0]), int32(sh.n), 0, unsafe.Pointer(&c[0]), int32(sh.n))
			}
		})
	}
}
