package fft

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// FFTW planner flag FFTW_ESTIMATE (fftw3.h).
const fftwEstimate = 1 << 6

// fftwLib is one precision's FFTW library: its planners, new-array
// executors and plan destructor.
type fftwLib struct {
	path    string
	mu      sync.Mutex // FFTW's planner is not thread-safe; execution is
	r2c     func(rank int32, n unsafe.Pointer, howmany int32, in unsafe.Pointer, inembed unsafe.Pointer, istride, idist int32, out unsafe.Pointer, onembed unsafe.Pointer, ostride, odist int32, flags uint32) uintptr
	c2r     func(rank int32, n unsafe.Pointer, howmany int32, in unsafe.Pointer, inembed unsafe.Pointer, istride, idist int32, out unsafe.Pointer, onembed unsafe.Pointer, ostride, odist int32, flags uint32) uintptr
	destroy func(p uintptr)
	// The new-array executors fftw_execute_dft_r2c and _c2r (plan, in,
	// out): called by purego.SyscallN, not through a registered function,
	// which purego calls by reflection (about 1–2 µs and a dozen
	// allocations a call, as blas.fortranGemm measures; the transforms of
	// a training step are thousands of calls).
	execR2C, execC2R uintptr
}

// Library names by precision, in the order tried.
var (
	singleNames = []string{"libfftw3f.so.3", "libfftw3f.so", "libfftw3f.3.dylib", "/opt/homebrew/lib/libfftw3f.3.dylib"}
	doubleNames = []string{"libfftw3.so.3", "libfftw3.so", "libfftw3.3.dylib", "/opt/homebrew/lib/libfftw3.3.dylib"}
)

var (
	singleOnce, doubleOnce sync.Once
	single, double         *fftwLib
	singleErr, doubleErr   error
)

// load returns the FFTW library of T's precision, opening it once.
func load[T Float]() (*fftwLib, error) {
	var zero T
	if _, ok := any(zero).(float32); ok {
		singleOnce.Do(func() { single, singleErr = open(singleNames, "fftwf_") })
		return single, singleErr
	}
	doubleOnce.Do(func() { double, doubleErr = open(doubleNames, "fftw_") })
	return double, doubleErr
}

// open loads the first library of names that opens and resolves its
// functions with the given prefix.
func open(names []string, prefix string) (*fftwLib, error) {
	var errs []error
	for _, name := range names {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		l := &fftwLib{path: name}
		for _, f := range []struct {
			ptr  any
			name string
		}{
			{&l.r2c, "plan_many_dft_r2c"}, {&l.c2r, "plan_many_dft_c2r"},
			{&l.destroy, "destroy_plan"},
		} {
			if _, err := purego.Dlsym(h, prefix+f.name); err != nil {
				return nil, fmt.Errorf("fft: %s lacks %s%s: %w", name, prefix, f.name, err)
			}
			purego.RegisterLibFunc(f.ptr, h, prefix+f.name)
		}
		for _, f := range []struct {
			ptr  *uintptr
			name string
		}{{&l.execR2C, "execute_dft_r2c"}, {&l.execC2R, "execute_dft_c2r"}} {
			if *f.ptr, err = purego.Dlsym(h, prefix+f.name); err != nil {
				return nil, fmt.Errorf("fft: %s lacks %s%s: %w", name, prefix, f.name, err)
			}
		}
		return l, nil
	}
	return nil, fmt.Errorf("fft: FFTW not found (install libfftw3-single3 and libfftw3-double3): %w", errors.Join(errs...))
}

// fftwPlan is a pair of FFTW plans (forward r2c, inverse c2r) over h
// signals. FFTW plans live outside Go's heap; a cleanup destroys them when
// the plan is collected. The pool holds aligned copies for callers'
// slices that are not aligned.
type fftwPlan[T Float] struct {
	n, h     int
	lib      *fftwLib
	fwd, inv uintptr
	pool     sync.Pool // *[2][]T: signal and spectrum
}

// newFFTW makes the r2c and c2r plans of size n over h signals. The
// planner runs on aligned scratch arrays of the plan's shapes
// (FFTW_ESTIMATE does not read them).
func newFFTW[T Float](l *fftwLib, n, h int) Plan[T] {
	p := &fftwPlan[T]{n: n, h: h, lib: l}
	p.pool.New = func() any { return &[2][]T{Make[T](n * h), Make[T](2 * (n/2 + 1) * h)} }
	x := Make[T](n * h)
	spec := Make[T](2 * (n/2 + 1) * h)
	size := [1]int32{int32(n)}
	nb := int32(n/2 + 1)
	flags := uint32(fftwEstimate)
	l.mu.Lock()
	p.fwd = l.r2c(1, unsafe.Pointer(&size[0]), int32(h), unsafe.Pointer(&x[0]), nil, 1, int32(n),
		unsafe.Pointer(&spec[0]), nil, 1, nb, flags)
	p.inv = l.c2r(1, unsafe.Pointer(&size[0]), int32(h), unsafe.Pointer(&spec[0]), nil, 1, nb,
		unsafe.Pointer(&x[0]), nil, 1, int32(n), flags)
	l.mu.Unlock()
	runtime.KeepAlive(x)
	runtime.KeepAlive(spec)
	if p.fwd == 0 || p.inv == 0 {
		panic(fmt.Sprintf("fft: FFTW could not plan size %d over %d channels", n, h))
	}
	runtime.AddCleanup(p, func(pl [2]uintptr) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.destroy(pl[0])
		l.destroy(pl[1])
	}, [2]uintptr{p.fwd, p.inv})
	return p
}

func (p *fftwPlan[T]) Size() int    { return p.n }
func (p *fftwPlan[T]) Signals() int { return p.h }
func (p *fftwPlan[T]) Impl() string { return "fftw" }

func (p *fftwPlan[T]) Forward(spec, x []T) {
	checkLens(p.n, p.h, len(spec), len(x))
	if !aligned(x) || !aligned(spec) {
		b := p.pool.Get().(*[2][]T)
		defer p.pool.Put(b)
		copy(b[0], x)
		p.Forward(b[1], b[0])
		copy(spec, b[1])
		return
	}
	purego.SyscallN(p.lib.execR2C, p.fwd, uintptr(unsafe.Pointer(&x[0])), uintptr(unsafe.Pointer(&spec[0])))
	runtime.KeepAlive(x)
	runtime.KeepAlive(spec)
}

func (p *fftwPlan[T]) Inverse(x, spec []T) {
	checkLens(p.n, p.h, len(spec), len(x))
	if !aligned(x) || !aligned(spec) {
		b := p.pool.Get().(*[2][]T)
		defer p.pool.Put(b)
		copy(b[1], spec)
		p.Inverse(b[0], b[1])
		copy(x, b[0])
		return
	}
	purego.SyscallN(p.lib.execC2R, p.inv, uintptr(unsafe.Pointer(&spec[0])), uintptr(unsafe.Pointer(&x[0])))
	runtime.KeepAlive(x)
	runtime.KeepAlive(spec)
}
