package fft_test

import (
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/fft"
)

// A plan transforms h signals of length N at once (FFTW where it loads,
// gonum's pure-Go FFT otherwise; KERNELKIT_FFT=go forces the latter).
// Here two signals of length 8: a cosine of one cycle, whose half
// spectrum is N/2 = 4 at bin 1, and a constant 1, whose spectrum is N = 8
// at bin 0. The inverse is unnormalised: Inverse(Forward(x)) = N·x. The
// magnitudes are printed to three decimals; both implementations round
// at the level of 1e-15.
func Example() {
	const n, h = 8, 2
	p := fft.New[float64](n, h)
	x := fft.Make[float64](n * h)
	for k := 0; k < n; k++ {
		x[k] = math.Cos(2 * math.Pi * float64(k) / n) // signal 0
		x[n+k] = 1                                    // signal 1
	}
	spec := fft.Make[float64](2 * h * (n/2 + 1))
	p.Forward(spec, x)
	for c := 0; c < h; c++ {
		fmt.Printf("signal %d, |X_m| for m = 0…%d:", c, n/2)
		for m := 0; m <= n/2; m++ {
			i := 2 * (c*(n/2+1) + m)
			fmt.Printf(" %.3f", math.Hypot(spec[i], spec[i+1]))
		}
		fmt.Println()
	}

	back := fft.Make[float64](n * h)
	p.Inverse(back, spec)
	worst := 0.0
	for i := range x {
		worst = math.Max(worst, math.Abs(back[i]/n-x[i]))
	}
	fmt.Println("Inverse(Forward(x))/N = x to 1e-12:", worst < 1e-12)
	// Output:
	// signal 0, |X_m| for m = 0…4: 0.000 4.000 0.000 0.000 0.000
	// signal 1, |X_m| for m = 0…4: 8.000 0.000 0.000 0.000 0.000
	// Inverse(Forward(x))/N = x to 1e-12: true
}
