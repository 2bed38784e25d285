package linear

import (
	"math"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// withProcs runs fn with GOMAXPROCS set to p.
func withProcs(p int, fn func()) {
	old := runtime.GOMAXPROCS(p)
	defer runtime.GOMAXPROCS(old)
	fn()
}

// TestUpperTilesCover: for sizes around the tile sides, the tiles of
// upperTiles cover every entry of the upper triangle exactly once and
// nothing below it.
func TestUpperTilesCover(t *testing.T) {
	for _, d := range []int{1, 5, 127, 128, 129, 300, 1024, 1025, 2100} {
		tb := tileSide(d)
		seen := make([]int, d*d)
		for _, tl := range upperTiles(d, tb) {
			i0, i1, j0, j1 := tl.bounds(d, tb)
			for i := i0; i < i1; i++ {
				for j := j0; j < j1; j++ {
					if i0 == j0 && j < i {
						continue // a SYRK tile touches its upper triangle only
					}
					seen[i*d+j]++
				}
			}
		}
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				want := 0
				if j >= i {
					want = 1
				}
				if seen[i*d+j] != want {
					t.Fatalf("d=%d (tiles of %d): entry (%d,%d) covered %d times, want %d", d, tb, i, j, seen[i*d+j], want)
				}
			}
		}
	}
}

// naiveStats returns ZᵀZ (full), Zᵀy and Σz by loops.
func naiveStats(z, y *mat.Dense) (ztz, zty *mat.Dense, sumZ []float64) {
	n, d := z.Dims()
	_, k := y.Dims()
	ztz = mat.NewDense(d, d, nil)
	ztz.Mul(z.T(), z)
	zty = mat.NewDense(d, k, nil)
	zty.Mul(z.T(), y)
	sumZ = make([]float64, d)
	for i := 0; i < n; i++ {
		for j := range sumZ {
			sumZ[j] += z.At(i, j)
		}
	}
	return ztz, zty, sumZ
}

// TestAddTiled: with D = 300 (tiles of 192, the second partial) Add's
// statistics equal the direct products to rounding, in two chunks, and
// have the same bits on 1, 2 and 3 cores; AddFloat32 on the same rows,
// rounded to float32, is within float32 accuracy of them (the entries of
// ZᵀZ to 2⁻²⁴·√n·Σ|z_i z_j| plus the rounding of the inputs) and also has
// the same bits on every core count; likewise AddSerial and
// AddFloat32Serial. Targets are dense (Zᵀy by a GEMM) and one-hot (by row
// sums).
func TestAddTiled(t *testing.T) {
	const n, d, k = 333, 300, 5
	z := randDense(n, d, 3)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = (i * 7) % k
	}
	oneHot, err := OneHot(labels, k)
	if err != nil {
		t.Fatal(err)
	}
	// Dense targets go through a GEMM, one-hot ones through row sums.
	for _, y := range []*mat.Dense{randDense(n, k, 4), oneHot} {
		testAddTiled(t, z, y)
	}
}

func testAddTiled(t *testing.T, z, y *mat.Dense) {
	ztz, zty, sumZ := naiveStats(z, y)
	for _, serial := range []bool{false, true} {
		testAddTiledMode(t, z, y, ztz, zty, sumZ, serial)
	}
}

// testAddTiledMode checks Add and AddFloat32 (serial false) or AddSerial
// and AddFloat32Serial (serial true) against the direct products.
func testAddTiledMode(t *testing.T, z, y, ztz, zty *mat.Dense, sumZ []float64, serial bool) {
	n, d := z.Dims()
	_, k := y.Dims()
	add := func(f32 bool) *Stats {
		s := NewStats(d, k)
		for _, r := range [][2]int{{0, 200}, {200, n}} {
			zs := z.Slice(r[0], r[1], 0, d).(*mat.Dense)
			ys := y.Slice(r[0], r[1], 0, k).(*mat.Dense)
			var err error
			if f32 {
				rows := r[1] - r[0]
				z32 := make([]float32, rows*d)
				for i := 0; i < rows; i++ {
					for j := 0; j < d; j++ {
						z32[i*d+j] = float32(zs.At(i, j))
					}
				}
				zg := blas32.General{Rows: rows, Cols: d, Stride: d, Data: z32}
				if serial {
					err = s.AddFloat32Serial(zg, ys)
				} else {
					err = s.AddFloat32(zg, ys)
				}
			} else if serial {
				err = s.AddSerial(zs, ys)
			} else {
				err = s.Add(zs, ys)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	for _, f32 := range []bool{false, true} {
		var ref *Stats
		for _, p := range []int{2, 1, 3} {
			var s *Stats
			withProcs(p, func() { s = add(f32) })
			if ref == nil {
				ref = s
				continue
			}
			for i, v := range s.ZtZ {
				if math.Float64bits(v) != math.Float64bits(ref.ZtZ[i]) {
					t.Fatalf("float32=%v, GOMAXPROCS=%d: ZᵀZ entry %d has other bits than on 2 cores", f32, p, i)
				}
			}
			for i, v := range s.ZtY {
				if math.Float64bits(v) != math.Float64bits(ref.ZtY[i]) {
					t.Fatalf("float32=%v, GOMAXPROCS=%d: Zᵀy entry %d has other bits than on 2 cores", f32, p, i)
				}
			}
		}
		tol := 1e-12
		if f32 {
			tol = 4 * 0x1p-24 * math.Sqrt(float64(n))
		}
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				// |Σ z z| ≤ Σ|z z| ≤ ‖z_i‖‖z_j‖, with ‖z_i‖² ≈ n.
				scale := math.Sqrt(ztz.At(i, i) * ztz.At(j, j))
				if diff := math.Abs(ref.ZtZ[i*d+j] - ztz.At(i, j)); diff > tol*scale {
					t.Fatalf("float32=%v: ZᵀZ(%d,%d) = %v, want %v", f32, i, j, ref.ZtZ[i*d+j], ztz.At(i, j))
				}
			}
			for j := 0; j < k; j++ {
				if diff := math.Abs(ref.ZtY[i*k+j] - zty.At(i, j)); diff > tol*float64(n) {
					t.Fatalf("float32=%v: Zᵀy(%d,%d) = %v, want %v", f32, i, j, ref.ZtY[i*k+j], zty.At(i, j))
				}
			}
			if diff := math.Abs(ref.SumZ[i] - sumZ[i]); diff > tol*float64(n) {
				t.Fatalf("float32=%v: Σz[%d] = %v, want %v", f32, i, ref.SumZ[i], sumZ[i])
			}
		}
		if ref.N != n {
			t.Errorf("float32=%v: N = %d, want %d", f32, ref.N, n)
		}
	}
}

// TestAddFloat32Shapes: mismatched shapes are errors.
func TestAddFloat32Shapes(t *testing.T) {
	s := NewStats(3, 2)
	z := blas32.General{Rows: 2, Cols: 4, Stride: 4, Data: make([]float32, 8)}
	if err := s.AddFloat32(z, mat.NewDense(2, 2, nil)); err == nil {
		t.Error("AddFloat32 with 4 feature columns for D = 3: no error")
	}
	z = blas32.General{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 6)}
	if err := s.AddFloat32(z, mat.NewDense(3, 2, nil)); err == nil {
		t.Error("AddFloat32 with 2 feature rows and 3 target rows: no error")
	}
}

// spd returns a d×d symmetric positive definite matrix ZᵀZ/n + I/2 in
// the upper triangle of a row-major slice.
func spd(d int, seed uint64) []float64 {
	z := randDense(d+20, d, seed)
	var a mat.Dense
	a.Mul(z.T(), z)
	u := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			u[i*d+j] = a.At(i, j) / float64(d+20)
		}
		u[i*d+i] += 0.5
	}
	return u
}

// TestCholeskyBlocked: the blocked factorisation of a 1100×1100 matrix
// (five blocks of 256, the last partial; trailing updates of up to three
// tiles of 512) has a backward error within Higham's bound (Thm 10.3, |UᵀU
// − A| ≤ γ_{d+1}·|U|ᵀ|U| entrywise, tripled for the blocked updates and
// the check's own product), matches gonum's mat.Cholesky within the
// forward bound that follows (κ(A)·γ_{d+1}·√a_ii ≈ 9·1.2e-13·√a_ii per
// entry for each factor, A's spectrum in [0.5, 4.5]; 1e-10·√a_ii leaves a
// hundredfold margin for the bound's constants), has the same bits on 1, 2
// and 3 cores, solves a system to the accuracy its condition allows, and
// reports an indefinite matrix. Both bounds hold for any summation order,
// so for any CPU's kernels.
func TestCholeskyBlocked(t *testing.T) {
	const d = 1100
	a := spd(d, 5)
	var ref mat.Cholesky
	if !ref.Factorize(mat.NewSymDense(d, append([]float64(nil), a...))) {
		t.Fatal("gonum: not positive definite")
	}
	var ru mat.TriDense
	ref.UTo(&ru)
	var first []float64
	for _, p := range []int{2, 1, 3} {
		u := append([]float64(nil), a...)
		var ok bool
		withProcs(p, func() { ok = cholesky(u, d) })
		if !ok {
			t.Fatalf("GOMAXPROCS=%d: positive definite matrix reported as not", p)
		}
		if first == nil {
			first = u
			checkCholeskyBackward(t, a, u, d)
			for i := 0; i < d; i++ {
				for j := i; j < d; j++ {
					if math.Abs(u[i*d+j]-ru.At(i, j)) > 1e-10*math.Sqrt(a[i*d+i]) {
						t.Fatalf("U(%d,%d) = %v, gonum %v", i, j, u[i*d+j], ru.At(i, j))
					}
				}
			}
			continue
		}
		for i := range u {
			if math.Float64bits(u[i]) != math.Float64bits(first[i]) {
				t.Fatalf("GOMAXPROCS=%d: factor entry %d has other bits than on 2 cores", p, i)
			}
		}
	}
	// Solve A X = B for a known X.
	x := randDense(d, 3, 6)
	full := mat.NewSymDense(d, append([]float64(nil), a...))
	var b mat.Dense
	b.Mul(full, x)
	cholSolve(first, d, b.RawMatrix())
	var diff mat.Dense
	diff.Sub(&b, x)
	if e := mat.Norm(&diff, math.Inf(1)) / mat.Norm(x, math.Inf(1)); e > 1e-10 {
		t.Errorf("solve: relative error %.3g", e)
	}
	bad := append([]float64(nil), a...)
	bad[400*d+400] = -1
	if cholesky(bad, d) {
		t.Error("matrix with a negative diagonal entry reported positive definite")
	}
}

// TestCentredNorm: centredUpper's 1-norm of C + λI equals LAPACK's
// (lapack64.Lansy) of the same matrix.
func TestCentredNorm(t *testing.T) {
	const n, d = 40, 30
	s := NewStats(d, 2)
	if err := s.Add(randDense(n, d, 7), randDense(n, 2, 8)); err != nil {
		t.Fatal(err)
	}
	zbar, _ := s.means(true)
	u, norm := s.centredUpper(zbar, 0.3)
	want := lapack64.Lansy(lapack.MaxColumnSum, mat.NewSymDense(d, u).RawSymmetric(), make([]float64, d))
	if math.Abs(norm-want) > 1e-13*want {
		t.Errorf("1-norm %v, LAPACK %v", norm, want)
	}
}

// checkCholeskyBackward checks the upper factor u of the symmetric a
// (upper triangles of d×d row-major arrays) against the backward error
// bound |UᵀU − A| ≤ γ_{d+1}·|U|ᵀ|U| entrywise (Higham, Accuracy and
// Stability of Numerical Algorithms, Thm 10.3), tripled: once for the
// factorisation, once for the rounding of UᵀU computed here, once for the
// blocked updates' extra rounding of the trailing matrix.
func checkCholeskyBackward(t *testing.T, a, u []float64, d int) {
	t.Helper()
	um, au := mat.NewDense(d, d, nil), mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			um.Set(i, j, u[i*d+j])
			au.Set(i, j, math.Abs(u[i*d+j]))
		}
	}
	var utu, bound mat.Dense
	utu.Mul(um.T(), um)
	bound.Mul(au.T(), au)
	const eps = 0x1p-53
	gamma := float64(d+1) * eps / (1 - float64(d+1)*eps)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			if r := math.Abs(utu.At(i, j) - a[i*d+j]); r > 3*gamma*bound.At(i, j) {
				t.Fatalf("|UᵀU − A|(%d,%d) = %.3g, bound 3γ_{d+1}(|U|ᵀ|U|) = %.3g", i, j, r, 3*gamma*bound.At(i, j))
			}
		}
	}
}
