package fft

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Float is the element type of signals and spectra.
type Float interface{ ~float32 | ~float64 }

// Plan computes real FFTs of size N of h signals (see the package
// documentation for the layouts). A Plan may be used by several
// goroutines at once, each with its own slices.
type Plan[T Float] interface {
	// Size returns N, the transform size.
	Size() int
	// Signals returns h, the number of signals transformed at once.
	Signals() int
	// Forward sets spec (h·(N/2+1) complex numbers, 2h(N/2+1) values)
	// to the spectra of x (h·N values); x is not modified.
	Forward(spec, x []T)
	// Inverse sets x (N·h values) to the unnormalised inverse transform
	// of spec, N times the signal whose spectrum spec is. spec is used as
	// scratch space and overwritten.
	Inverse(x, spec []T)
	// Impl names the implementation: "fftw" or "go".
	Impl() string
}

// check panics unless the sizes describe a plan.
func check(n, h int) {
	if n < 2 || n%2 != 0 || h < 1 {
		panic(fmt.Sprintf("fft: size %d (need an even size ≥ 2) and %d signals (need ≥ 1)", n, h))
	}
}

// checkLens panics unless spec and x have a plan's lengths.
func checkLens(n, h, spec, x int) {
	if spec != 2*(n/2+1)*h || x != n*h {
		panic(fmt.Sprintf("fft: spectra of %d and signals of %d values for size %d, %d signals (want %d and %d)",
			spec, x, n, h, 2*(n/2+1)*h, n*h))
	}
}

// New returns a plan for size n and h signals on FFTW where it loads
// (unless KERNELKIT_FFT=go) and on gonum's pure-Go FFT otherwise.
func New[T Float](n, h int) Plan[T] {
	check(n, h)
	if os.Getenv("KERNELKIT_FFT") != "go" {
		if lib, err := load[T](); err == nil {
			return newFFTW[T](lib, n, h)
		}
	}
	return NewGo[T](n, h)
}

// Name describes the FFT that New uses for element type T, e.g. "fftw
// (libfftw3f.so.3)" or "go (gonum dsp/fourier)".
func Name[T Float]() string {
	if os.Getenv("KERNELKIT_FFT") == "go" {
		return "go (gonum dsp/fourier; KERNELKIT_FFT=go)"
	}
	lib, err := load[T]()
	if err != nil {
		return "go (gonum dsp/fourier)"
	}
	return "fftw (" + lib.path + ")"
}

// Load opens the FFTW libraries for both precisions and returns an error
// saying why when either is missing.
func Load() error {
	if _, err := load[float32](); err != nil {
		return err
	}
	_, err := load[float64]()
	return err
}

// goPlan is the pure-Go plan: gonum's real FFT in float64, one signal at
// a time, with per-goroutine scratch from a pool.
type goPlan[T Float] struct {
	n, h int
	pool sync.Pool // *goWork
}

// goWork is one goroutine's transform and scratch.
type goWork struct {
	f    *fourier.FFT
	re   []float64
	spec []complex128
}

// NewGo returns the pure-Go plan for size n and h signals.
func NewGo[T Float](n, h int) Plan[T] {
	check(n, h)
	p := &goPlan[T]{n: n, h: h}
	p.pool.New = func() any {
		return &goWork{f: fourier.NewFFT(n), re: make([]float64, n), spec: make([]complex128, n/2+1)}
	}
	return p
}

func (p *goPlan[T]) Size() int    { return p.n }
func (p *goPlan[T]) Signals() int { return p.h }
func (p *goPlan[T]) Impl() string { return "go" }

func (p *goPlan[T]) Forward(spec, x []T) {
	n, h := p.n, p.h
	checkLens(n, h, len(spec), len(x))
	w := p.pool.Get().(*goWork)
	defer p.pool.Put(w)
	nb := n/2 + 1
	for c := 0; c < h; c++ {
		for k, v := range x[c*n : (c+1)*n] {
			w.re[k] = float64(v)
		}
		w.f.Coefficients(w.spec, w.re)
		s := spec[2*c*nb : 2*(c+1)*nb]
		for m, v := range w.spec {
			s[2*m] = T(real(v))
			s[2*m+1] = T(imag(v))
		}
	}
}

func (p *goPlan[T]) Inverse(x, spec []T) {
	n, h := p.n, p.h
	checkLens(n, h, len(spec), len(x))
	w := p.pool.Get().(*goWork)
	defer p.pool.Put(w)
	nb := n/2 + 1
	for c := 0; c < h; c++ {
		s := spec[2*c*nb : 2*(c+1)*nb]
		for m := range w.spec {
			im := float64(s[2*m+1])
			if m == 0 || m == nb-1 {
				im = 0
			}
			w.spec[m] = complex(float64(s[2*m]), im)
		}
		w.f.Sequence(w.re, w.spec)
		out := x[c*n : (c+1)*n]
		for k, v := range w.re {
			out[k] = T(v)
		}
	}
}

// Alignment is the byte alignment of the slices Make returns, the one
// FFTW's plans assume.
const Alignment = 64

// Make returns a zeroed slice of n values whose first element is
// Alignment-byte aligned.
func Make[T Float](n int) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	pad := Alignment / size
	buf := make([]T, n+pad)
	if n == 0 {
		return buf[:0:0]
	}
	off := int(uintptr(unsafe.Pointer(&buf[0])) % Alignment / uintptr(size))
	if off != 0 {
		off = pad - off
	}
	return buf[off : off+n : off+n]
}

// aligned reports whether s starts at an Alignment-byte boundary.
func aligned[T Float](s []T) bool {
	return len(s) == 0 || uintptr(unsafe.Pointer(&s[0]))%Alignment == 0
}
