// Package fft computes batched real discrete Fourier transforms: h signals
// of length N stored one after another (an h×N row-major array, sample k
// of signal c at index c·N + k) and their half spectra, an h×(N/2+1) array
// of complex numbers stored as (re, im) pairs, bin m of signal c at
// indices 2(c·(N/2+1) + m) and 2(c·(N/2+1) + m) + 1:
//
//	X_m,c = Σ_{k=0}^{N−1} x_k,c · exp(−2πi·mk/N),    m = 0 … N/2,
//
// and the inverse (unnormalised, as FFTW's) x_k,c = Σ_{m=0}^{N−1} X_m,c ·
// exp(+2πi·mk/N), with X_{N−m} = conj(X_m), so that Inverse(Forward(x)) =
// N·x. The imaginary parts of bins 0 and N/2 (N even) are ignored by
// Inverse, as the real transform's definition requires.
//
// Two implementations stand behind one Plan interface:
//
//   - FFTW 3 (libfftw3f for float32, libfftw3 for float64), loaded at run
//     time with purego as package blas loads OpenBLAS, no cgo: one
//     fftw_plan_many_dft_r2c/c2r over the h signals. Plans are made with
//     FFTW_ESTIMATE, so the algorithm does not depend on timing, on
//     64-byte aligned arrays; a slice that is not 64-byte aligned (Make
//     returns aligned ones) goes through an aligned copy, so FFTW's SIMD
//     codelets, which depend on alignment, are the same on every call and
//     the same input gives the same bits on every run. (The channel-major
//     layout and the aligned plans are measured choices: with the
//     channels interleaved, or with FFTW_UNALIGNED, FFTW_ESTIMATE's plans
//     ran 3–6 times slower.) On Debian: apt-get install libfftw3-single3
//     libfftw3-double3 (scripts/setup.sh does).
//   - gonum's dsp/fourier (pure Go, float64 arithmetic), one channel at a
//     time; used where FFTW is missing, when KERNELKIT_FFT=go, and with
//     NewGo.
//
// Rounding: for either, ‖X̂ − X‖₂ ≤ c·log₂N·u·‖X‖₂ with u the unit roundoff
// of the arithmetic (Higham, Accuracy and Stability of Numerical
// Algorithms, Thm 24.2); the tests check that bound against an exact DFT.
//
// Errors: sizes below 2 or an odd N, and slices of the wrong length, are
// programmer errors and panic. Loading FFTW returns an error (Load) and New
// falls back to pure Go.
package fft
