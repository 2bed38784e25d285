// Package blas selects the BLAS implementation behind gonum's blas64 and
// blas32 packages, through which all of kernelkit's matrix products run.
//
// kernelkit builds and runs in pure Go (gonum's native BLAS, CGO_ENABLED=0
// works). For speed, UseOpenBLAS loads the OpenBLAS shared library at run
// time with github.com/ebitengine/purego — no cgo at build time — and
// installs an implementation whose GEMM, SYRK, TRSM and GEMV call
// OpenBLAS; every other routine stays gonum's. It also installs, for
// gonum's lapack64 (and so package mat), OpenBLAS's LAPACK Cholesky
// factorisation and symmetric eigendecomposition (see LAPACK). On Debian:
// apt-get install libopenblas-dev.
//
// Debian's OpenBLAS picks its kernels by CPU detection. OpenBLAS 0.3.21
// takes AMD's AVX-512 parts (Zen 4, Zen 5) for Zen and runs its Haswell
// AVX2 kernels there; OPENBLAS_CORETYPE=SkylakeX selects the AVX-512
// kernels, which on a 2-core AVX-512 machine raised float64 GEMM from about
// 110 to 180 GFLOP/s and the float32 training step 1.3-fold. So when the
// CPU has the AVX-512 subsets those kernels need and OPENBLAS_CORETYPE is
// unset, LoadOpenBLAS sets it to SkylakeX while it loads the library (and
// unsets it after); a value the user set is kept (OPENBLAS_CORETYPE=Haswell
// keeps the AVX2 kernels). It is never set on CPUs without AVX-512, where
// SkylakeX kernels would stop the process with an illegal instruction.
// Name reports the core in use.
//
// UseOpenBLAS sets OpenBLAS to one thread: kernelkit splits its work into
// row chunks that run on all cores in goroutines, each calling BLAS on its
// chunk, and OpenBLAS threads on top of that oversubscribe the cores (on 2
// cores the letter transform ran 1.8 times slower with OpenBLAS's 2
// threads). SetThreads changes it for programs that make large single BLAS
// calls of their own.
//
// Installing a BLAS implementation is process-wide state owned by gonum
// (blas64.Use); call UseOpenBLAS once at program start, before any
// goroutine computes.
//
// The package shares its name with gonum's blas, whose types (Transpose,
// Uplo, Float64Level3…) its implementations take: kernelkit's files that
// import both, this package's included, import gonum's as gblas.
package blas

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Candidate library names, in the order tried.
var libNames = []string{
	"libopenblas.so.0", "libopenblas.so",
	"/usr/lib/x86_64-linux-gnu/libopenblas.so.0", "/usr/lib/aarch64-linux-gnu/libopenblas.so.0",
	"libopenblas.dylib", "/opt/homebrew/opt/openblas/lib/libopenblas.dylib",
}

const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
	cblasTrans    = 112
	cblasUpper    = 121
	cblasLower    = 122
	cblasNonUnit  = 131
	cblasUnit     = 132
	cblasLeft     = 141
	cblasRight    = 142
)

// OpenBLAS is a blas64/blas32 implementation whose level-3 routines GEMM,
// SYRK and (float64) TRSM and the level-2 GEMV call OpenBLAS; the rest is
// gonum's.
type OpenBLAS struct {
	gonum.Implementation
	path     string
	corename string
	lapack   *LAPACK // nil if the library has no LAPACK

	dgemm      func(order, ta, tb, m, n, k int32, alpha float64, a unsafe.Pointer, lda int32, b unsafe.Pointer, ldb int32, beta float64, c unsafe.Pointer, ldc int32)
	sgemm      func(order, ta, tb, m, n, k int32, alpha float32, a unsafe.Pointer, lda int32, b unsafe.Pointer, ldb int32, beta float32, c unsafe.Pointer, ldc int32)
	dsyrk      func(order, uplo, trans, n, k int32, alpha float64, a unsafe.Pointer, lda int32, beta float64, c unsafe.Pointer, ldc int32)
	ssyrk      func(order, uplo, trans, n, k int32, alpha float32, a unsafe.Pointer, lda int32, beta float32, c unsafe.Pointer, ldc int32)
	dtrsm      func(order, side, uplo, ta, diag, m, n int32, alpha float64, a unsafe.Pointer, lda int32, b unsafe.Pointer, ldb int32)
	dgemv      func(order, ta, m, n int32, alpha float64, a unsafe.Pointer, lda int32, x unsafe.Pointer, incx int32, beta float64, y unsafe.Pointer, incy int32)
	sgemv      func(order, ta, m, n int32, alpha float32, a unsafe.Pointer, lda int32, x unsafe.Pointer, incx int32, beta float32, y unsafe.Pointer, incy int32)
	setThreads func(n int32)
	getThreads func() int32

	// The Fortran-interface GEMMs (sgemm_, dgemm_; 0 when absent), which
	// take every argument by address and so are called by purego.SyscallN
	// directly (fortranGemm).
	sgemmF, dgemmF uintptr
}

var (
	mu      sync.Mutex
	current = "gonum (pure Go)"
	loaded  *OpenBLAS
)

// LoadOpenBLAS opens the OpenBLAS library without installing it.
func LoadOpenBLAS() (*OpenBLAS, error) {
	var h uintptr
	var path string
	var errs []error
	names := libNames
	if p := os.Getenv("KERNELKIT_OPENBLAS"); p != "" {
		names = []string{p}
	}
	restore := preferAVX512()
	for _, name := range names {
		var err error
		h, err = purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			path = name
			break
		}
		errs = append(errs, err)
	}
	if err := restore(); err != nil {
		return nil, fmt.Errorf("blas: restoring %s after loading OpenBLAS: %w", coreTypeEnv, err)
	}
	if h == 0 {
		return nil, fmt.Errorf("blas: OpenBLAS not found (install libopenblas-dev, or set KERNELKIT_OPENBLAS): %w", errors.Join(errs...))
	}
	o := &OpenBLAS{path: path}
	for _, f := range []struct {
		ptr  any
		name string
	}{
		{&o.dgemm, "cblas_dgemm"}, {&o.sgemm, "cblas_sgemm"},
		{&o.dsyrk, "cblas_dsyrk"}, {&o.ssyrk, "cblas_ssyrk"},
		{&o.dgemv, "cblas_dgemv"}, {&o.sgemv, "cblas_sgemv"},
		{&o.dtrsm, "cblas_dtrsm"},
	} {
		if _, err := purego.Dlsym(h, f.name); err != nil {
			return nil, fmt.Errorf("blas: %s lacks %s: %w", path, f.name, err)
		}
		purego.RegisterLibFunc(f.ptr, h, f.name)
	}
	// The Fortran GEMMs where the library has them; without them (an error
	// from Dlsym) the cblas forms registered above serve.
	if p, err := purego.Dlsym(h, "sgemm_"); err == nil {
		o.sgemmF = p
	}
	if p, err := purego.Dlsym(h, "dgemm_"); err == nil {
		o.dgemmF = p
	}
	if l, err := loadLAPACK(h, path); err == nil {
		o.lapack = l
	}
	if _, err := purego.Dlsym(h, "openblas_get_corename"); err == nil {
		var core func() string
		purego.RegisterLibFunc(&core, h, "openblas_get_corename")
		o.corename = core()
	}
	if _, err := purego.Dlsym(h, "openblas_set_num_threads"); err == nil {
		purego.RegisterLibFunc(&o.setThreads, h, "openblas_set_num_threads")
		purego.RegisterLibFunc(&o.getThreads, h, "openblas_get_num_threads")
	}
	return o, nil
}

// UseOpenBLAS loads OpenBLAS and installs it for blas64 and blas32. On
// failure the pure-Go implementation stays in place and the error says
// why. The environment variable KERNELKIT_BLAS=gonum (or perturbed, see
// Perturbed) disables it.
func UseOpenBLAS() error {
	mu.Lock()
	defer mu.Unlock()
	if v := os.Getenv("KERNELKIT_BLAS"); v == "gonum" || v == "perturbed" {
		return errors.New("blas: OpenBLAS disabled by KERNELKIT_BLAS=" + v)
	}
	if loaded != nil {
		return nil
	}
	o, err := LoadOpenBLAS()
	if err != nil {
		return err
	}
	if o.setThreads != nil {
		o.setThreads(1)
	}
	blas64.Use(o)
	blas32.Use(o)
	if o.lapack != nil {
		lapack64.Use(o.lapack)
	}
	loaded = o
	current = o.String()
	return nil
}

// UseGonum installs gonum's pure-Go implementation.
func UseGonum() {
	mu.Lock()
	defer mu.Unlock()
	blas64.Use(gonum.Implementation{})
	blas32.Use(gonum.Implementation{})
	lapack64.Use(lapackgonum.Implementation{})
	loaded = nil
	current = "gonum (pure Go)"
}

// Name describes the implementation installed, e.g.
// "openblas (libopenblas.so.0, core Haswell, 2 threads)".
func Name() string {
	mu.Lock()
	defer mu.Unlock()
	return current
}

// SetThreads sets OpenBLAS's thread count (no-op for pure Go).
func SetThreads(n int) {
	mu.Lock()
	o := loaded
	mu.Unlock()
	if o != nil && o.setThreads != nil {
		o.setThreads(int32(n))
	}
}

// LAPACK returns the library's LAPACK routines, or nil if it has none.
func (o *OpenBLAS) LAPACK() *LAPACK { return o.lapack }

// String describes the library.
func (o *OpenBLAS) String() string {
	s := "openblas (" + o.path
	if o.corename != "" {
		s += ", core " + o.corename
	}
	if o.getThreads != nil {
		s += fmt.Sprintf(", %d threads", o.getThreads())
	}
	return s + ")"
}

func tr(t gblas.Transpose) int32 {
	if t == gblas.NoTrans {
		return cblasNoTrans
	}
	return cblasTrans
}

func ul(u gblas.Uplo) int32 {
	if u == gblas.Upper {
		return cblasUpper
	}
	return cblasLower
}

func p64(s []float64) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

func p32(s []float32) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// fortranGemm holds the scalar arguments of a Fortran-interface GEMM call
// (sgemm_, dgemm_), which takes each by address. Why that interface: a
// function registered with purego.RegisterLibFunc is called through
// reflect.MakeFunc, which cost about 2 µs and 12 allocations a call here
// (a 1×1×1 cblas_sgemm: 2120 ns from Go against 31 ns from C;
// BenchmarkGemmCall), a third of the time of the 512×32×16 products of a
// performer's heads; purego.SyscallN calls a function of integer and
// pointer arguments without reflection (244 ns, 2 allocations). The
// row-major product C = op(A)·op(B) is the column-major Cᵀ =
// op(B)ᵀ·op(A)ᵀ, so the call swaps A with B, m with n and the transposes:
// what cblas_sgemm does for CblasRowMajor before the same driver, so the
// same kernels and the same bits (TestGemmFortranSameBits). The struct is
// allocated per call (goroutines call GEMM at once) and kept alive and in
// place during the call by SyscallN's go:uintptrescapes.
type fortranGemm[F float32 | float64] struct {
	ta, tb                 byte
	m, n, k, lda, ldb, ldc int32
	alpha, beta            F
}

// newFortranGemm returns the column-major call's arguments for the
// row-major product of Sgemm or Dgemm.
func newFortranGemm[F float32 | float64](tA, tB gblas.Transpose, m, n, k int, alpha F, lda, ldb int, beta F, ldc int) *fortranGemm[F] {
	ch := func(t gblas.Transpose) byte {
		if t == gblas.NoTrans {
			return 'N'
		}
		return 'T'
	}
	return &fortranGemm[F]{ta: ch(tB), tb: ch(tA), m: int32(n), n: int32(m), k: int32(k),
		lda: int32(ldb), ldb: int32(lda), ldc: int32(ldc), alpha: alpha, beta: beta}
}

// Dgemm computes C = alpha·op(A)·op(B) + beta·C with OpenBLAS.
func (o *OpenBLAS) Dgemm(tA, tB gblas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	checkGemm(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if o.dgemmF != 0 {
		g := newFortranGemm(tA, tB, m, n, k, alpha, lda, ldb, beta, ldc)
		purego.SyscallN(o.dgemmF, uintptr(unsafe.Pointer(&g.ta)), uintptr(unsafe.Pointer(&g.tb)),
			uintptr(unsafe.Pointer(&g.m)), uintptr(unsafe.Pointer(&g.n)), uintptr(unsafe.Pointer(&g.k)),
			uintptr(unsafe.Pointer(&g.alpha)), uintptr(p64(b)), uintptr(unsafe.Pointer(&g.lda)),
			uintptr(p64(a)), uintptr(unsafe.Pointer(&g.ldb)), uintptr(unsafe.Pointer(&g.beta)),
			uintptr(p64(c)), uintptr(unsafe.Pointer(&g.ldc)))
		return
	}
	o.dgemm(cblasRowMajor, tr(tA), tr(tB), int32(m), int32(n), int32(k), alpha, p64(a), int32(lda), p64(b), int32(ldb), beta, p64(c), int32(ldc))
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C with OpenBLAS.
func (o *OpenBLAS) Sgemm(tA, tB gblas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	checkGemm(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if o.sgemmF != 0 {
		g := newFortranGemm(tA, tB, m, n, k, alpha, lda, ldb, beta, ldc)
		purego.SyscallN(o.sgemmF, uintptr(unsafe.Pointer(&g.ta)), uintptr(unsafe.Pointer(&g.tb)),
			uintptr(unsafe.Pointer(&g.m)), uintptr(unsafe.Pointer(&g.n)), uintptr(unsafe.Pointer(&g.k)),
			uintptr(unsafe.Pointer(&g.alpha)), uintptr(p32(b)), uintptr(unsafe.Pointer(&g.lda)),
			uintptr(p32(a)), uintptr(unsafe.Pointer(&g.ldb)), uintptr(unsafe.Pointer(&g.beta)),
			uintptr(p32(c)), uintptr(unsafe.Pointer(&g.ldc)))
		return
	}
	o.sgemm(cblasRowMajor, tr(tA), tr(tB), int32(m), int32(n), int32(k), alpha, p32(a), int32(lda), p32(b), int32(ldb), beta, p32(c), int32(ldc))
}

// Dsyrk computes C = alpha·op(A)·op(A)ᵀ + beta·C on one triangle.
func (o *OpenBLAS) Dsyrk(ul_ gblas.Uplo, t gblas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if n == 0 {
		return
	}
	checkSyrk(t, n, k, len(a), lda, len(c), ldc)
	o.dsyrk(cblasRowMajor, ul(ul_), tr(t), int32(n), int32(k), alpha, p64(a), int32(lda), beta, p64(c), int32(ldc))
}

// Ssyrk computes C = alpha·op(A)·op(A)ᵀ + beta·C on one triangle.
func (o *OpenBLAS) Ssyrk(ul_ gblas.Uplo, t gblas.Transpose, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	if n == 0 {
		return
	}
	checkSyrk(t, n, k, len(a), lda, len(c), ldc)
	o.ssyrk(cblasRowMajor, ul(ul_), tr(t), int32(n), int32(k), alpha, p32(a), int32(lda), beta, p32(c), int32(ldc))
}

// Dtrsm solves op(A)·X = alpha·B (side Left) or X·op(A) = alpha·B (side
// Right) for X, overwriting B, with A triangular, with OpenBLAS.
func (o *OpenBLAS) Dtrsm(s gblas.Side, ul_ gblas.Uplo, t gblas.Transpose, d gblas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	if m == 0 || n == 0 {
		return
	}
	k := n
	if s == gblas.Left {
		k = m
	}
	if lda < max(1, k) || ldb < max(1, n) {
		panic("blas: bad leading dimension or increment")
	}
	if len(a) < lda*(k-1)+k || len(b) < ldb*(m-1)+n {
		panic("blas: short slice in TRSM")
	}
	side := int32(cblasLeft)
	if s == gblas.Right {
		side = cblasRight
	}
	diag := int32(cblasNonUnit)
	if d == gblas.Unit {
		diag = cblasUnit
	}
	o.dtrsm(cblasRowMajor, side, ul(ul_), tr(t), diag, int32(m), int32(n), alpha, p64(a), int32(lda), p64(b), int32(ldb))
}

// Dgemv computes y = alpha·op(A)·x + beta·y.
func (o *OpenBLAS) Dgemv(t gblas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	if m == 0 || n == 0 || incX < 0 || incY < 0 {
		o.Implementation.Dgemv(t, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	checkGemv(t, m, n, len(a), lda, len(x), incX, len(y), incY)
	o.dgemv(cblasRowMajor, tr(t), int32(m), int32(n), alpha, p64(a), int32(lda), p64(x), int32(incX), beta, p64(y), int32(incY))
}

// Sgemv computes y = alpha·op(A)·x + beta·y.
func (o *OpenBLAS) Sgemv(t gblas.Transpose, m, n int, alpha float32, a []float32, lda int, x []float32, incX int, beta float32, y []float32, incY int) {
	if m == 0 || n == 0 || incX < 0 || incY < 0 {
		o.Implementation.Sgemv(t, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	checkGemv(t, m, n, len(a), lda, len(x), incX, len(y), incY)
	o.sgemv(cblasRowMajor, tr(t), int32(m), int32(n), alpha, p32(a), int32(lda), p32(x), int32(incX), beta, p32(y), int32(incY))
}

// The checks mirror gonum's: a short slice would make OpenBLAS read or
// write out of bounds, so it panics like gonum does.
func checkGemm(tA, tB gblas.Transpose, m, n, k, la, lda, lb, ldb, lc, ldc int) {
	ar, ac := m, k
	if tA != gblas.NoTrans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB != gblas.NoTrans {
		br, bc = n, k
	}
	if lda < max(1, ac) || ldb < max(1, bc) || ldc < max(1, n) {
		panic("blas: bad leading dimension or increment")
	}
	if (ar > 0 && la < lda*(ar-1)+ac) || (br > 0 && lb < ldb*(br-1)+bc) || lc < ldc*(m-1)+n {
		panic("blas: short slice in GEMM")
	}
}

func checkSyrk(t gblas.Transpose, n, k, la, lda, lc, ldc int) {
	ar, ac := n, k
	if t != gblas.NoTrans {
		ar, ac = k, n
	}
	if lda < max(1, ac) || ldc < max(1, n) {
		panic("blas: bad leading dimension or increment")
	}
	if (ar > 0 && la < lda*(ar-1)+ac) || lc < ldc*(n-1)+n {
		panic("blas: short slice in SYRK")
	}
}

func checkGemv(t gblas.Transpose, m, n, la, lda, lx, incX, ly, incY int) {
	if lda < max(1, n) || incX == 0 || incY == 0 {
		panic("blas: bad leading dimension or increment")
	}
	lenX, lenY := n, m
	if t != gblas.NoTrans {
		lenX, lenY = m, n
	}
	if la < lda*(m-1)+n || lx < 1+(lenX-1)*incX || ly < 1+(lenY-1)*incY {
		panic("blas: short slice in GEMV")
	}
}
