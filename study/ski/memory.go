package ski

import (
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/parallel"
)

// This file holds the memory estimates of the Toeplitz studies: the
// largest memory each run holds at once, added up from its configuration
// alone, before anything is allocated, so that a run above a budget
// (kernelkit's --max-memory) is refused at once. The sizes are float64
// products (limits.Estimate), so huge configurations give huge, finite
// totals rather than overflowing. They are upper bounds of the dominant
// allocations within a small factor, not an accounting of every byte.

// Memory estimates the largest memory the run holds at once: for the
// largest rank r (the ranks run one after the other), the dense n×n
// matrices of toeplitz.SKIError — T, W A Wᵀ, the SVD's copy of T and its
// factors U and Vᵀ with their copies, the best rank-r approximation, the
// Nyström approximation and three differences: 11·n² — and its n×r
// factors (W, F, B and two products) and r×r matrices.
func (c ErrorBoundConfig) Memory() limits.Estimate {
	c = c.withDefaults()
	r := 0
	for _, v := range c.Ranks {
		r = max(r, v)
	}
	var e limits.Estimate
	e.Add("dense n×n matrices", 11, c.N, c.N)
	e.Add("n×r factors", 5, c.N, r)
	e.Add("r×r matrices", 3, r, r)
	return e
}

// Memory estimates the largest memory the run holds at once: for one
// activation (they run one after the other), the MLP's weights (a
// matrix between each pair of consecutive widths 1, Hidden…, 1) and the
// outputs of one evaluation, the n+1 complex frequency samples and their
// frequencies, the inverse real FFT of length 2n (its output and its work
// arrays, 6n values) and the n+1 normalised magnitudes.
func (c ImpulseConfig) Memory() limits.Estimate {
	c = c.withDefaults()
	n := float64(max(c.N, 0))
	var e limits.Estimate
	prev := 1.0
	for _, h := range append(append([]int(nil), c.Hidden...), 1) {
		w := float64(max(h, 0))
		e.AddBytes("MLP weights", 8*(prev+2)*w)
		prev = w
	}
	e.AddBytes("frequency samples", 8*3*(n+1))
	e.AddBytes("inverse FFT of length 2n", 8*(2+6)*n)
	e.AddBytes("impulse response", 8*(n+1))
	return e
}

// Memory estimates the largest memory the run holds at once: at the
// longest length n ≤ MaxN (the lengths run one after the other and every
// term grows with n), the n×d input, the d Toeplitz matrices (2n−1
// coefficients each) and filters, plus the largest of the operators, which
// follow each other: the FFT operator (d spectra of L/2+1 complex values,
// L = 2^⌈log₂(2n−1)⌉, the transposed input and output and the result,
// n×d each, and per worker an FFT workspace of about 5L values), SKI (the
// FFT result kept for the error, the interpolation weights — two slices of
// two entries per row, about 80 bytes —, per-worker partial sums WᵀX of
// r×d, the result) and the causal frequency-domain operator (the MLP's
// response at n+1 frequencies, d spectra of n+1 complex values, the
// transposed input and output and the result, FFT workspaces of length 2n
// per worker).
func (c TimingConfig) Memory() limits.Estimate {
	n := 0
	if c.MaxN >= 512 {
		n = 512
		for n <= c.MaxN/2 {
			n *= 2
		}
	}
	e, _ := timingMemory(c, n)
	return e
}

// timingMemory returns the estimate of Timing at length n, and that of its
// inputs alone.
func timingMemory(c TimingConfig, n int) (limits.Estimate, limits.Estimate) {
	d, r, m := max(c.Channels, 0), max(c.Inducing, 0), max(c.FilterWidth, 0)
	r = min(r, n)
	fn, fd := float64(n), float64(d)
	l := fftLen(n)
	workers := float64(parallel.Workers(d))
	var in limits.Estimate
	in.Add("input", n, d)
	in.AddBytes("Toeplitz matrices", 8*fd*(2*fn))
	in.Add("filters", d, m)

	var fft limits.Estimate
	fft.AddBytes("FFT spectra", 16*fd*(l/2+1))
	fft.Add("transposed input, output and result", 3, n, d)
	fft.AddBytes("FFT workspaces", 8*workers*5*l)

	var ski limits.Estimate
	ski.Add("FFT result", n, d)
	ski.AddBytes("SKI interpolation weights", 92*fn)
	ski.Add("SKI partial sums", parallel.Workers(n/4096+1)+2, r, d)
	ski.AddBytes("SKI spectra", 16*fd*(fftLen(r)/2+1))
	ski.Add("SKI result and error", 2, n, d)

	var fd2 limits.Estimate
	fd2.AddBytes("frequency response", 8*(fn+1)*(fd+3+32))
	fd2.AddBytes("causal spectra", 16*fd*(fn+1))
	fd2.Add("transposed input, output and result", 3, n, d)
	fd2.AddBytes("FFT workspaces", 8*workers*10*fn)

	var e limits.Estimate
	e.Merge(in)
	e.Merge(largest(fft, ski, fd2))
	return e, in
}

// fftLen returns the circulant size of an n×n Toeplitz matrix, the power
// of two at least 2n−1, as a float64 (1 for n ≤ 1).
func fftLen(n int) float64 {
	l := 1.0
	for l < 2*float64(n)-1 {
		l *= 2
	}
	return l
}

// largest returns a copy of the estimate of es with the largest total:
// the peak of steps that run one after the other and free what they
// allocate.
func largest(es ...limits.Estimate) limits.Estimate {
	best := 0
	for i, e := range es {
		if e.Bytes() > es[best].Bytes() {
			best = i
		}
	}
	var out limits.Estimate
	if len(es) > 0 {
		out.Merge(es[best])
	}
	return out
}

// deviceBufferCopies is the number of n×d arrays a device's Toeplitz graph
// holds at once (the check of device.Mixer.Apply: 8 per sequence).
const deviceBufferCopies = 8

// deviceDenseCopies and deviceIndexCopies are the numbers of n×n arrays
// per channel and in all (the gather indices of the Toeplitz matrices and
// their copies) that a device graph without an FFT op holds at once on
// GoMLX's pure-Go backend, measured (TestDeviceMemoryMeasured).
const (
	deviceDenseCopies = 3
	deviceIndexCopies = 4
)

// Memory estimates the largest memory the run holds at once, on the host:
// the CPU side of each operator as TimingConfig.Memory counts it, and, at
// the lengths the device runs, the device side — the host copies of the
// input and output, the operator's parameters (the Toeplitz coefficients
// (2n−1)·d, the SKI interpolation matrix n×r, or the frequency response
// (n+1)·d; each twice, as kernelkit builds it and as a tensor) and, as on
// GoMLX's pure-Go backend where a graph's values are in host memory, its
// buffers (8·n·d values) and, without an FFT op, the dense n×n operators
// of the channels with their gather indices ((3d+4)·n² values). Memory counts the device side as host memory for
// every device (an upper bound for a GPU).
func (c DeviceConfig) Memory() limits.Estimate {
	tc := c.Timing
	var best limits.Estimate
	fft := c.Device != nil && c.Device.HasFFT()
	for n := 512; n <= tc.MaxN && n > 0; n *= 2 {
		cpu, in := timingMemory(tc, n)
		d := max(tc.Channels, 0)
		onDevice := c.Device != nil && (fft || (n <= tc.MaxDense && float64(d)*float64(n)*float64(n) <= denseMax))
		if !onDevice {
			best = largest(best, cpu)
			continue
		}
		fn, fd := float64(n), float64(d)
		r := float64(min(max(tc.Inducing, 0), n))
		params := 2 * 8 * max(fd*(2*fn-1), fn*r, (fn+1)*fd)
		var dev limits.Estimate
		dev.Merge(in)
		dev.AddBytes("device operator parameters", params)
		dev.Add("device input, output and result", 3, n, d)
		dev.Add("device graph buffers", deviceBufferCopies, n, d)
		if !fft {
			dev.AddBytes("device dense operators", 8*(deviceDenseCopies*fd+deviceIndexCopies)*fn*fn)
		}
		best = largest(best, cpu, dev)
		if n > tc.MaxN/2 {
			break
		}
	}
	return best
}
