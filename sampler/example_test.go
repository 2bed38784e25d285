package sampler_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"github.com/kernelkit/kernelkit/sampler"
)

// Samplers are chosen by their command-line names; every one draws an m×d
// matrix from a seed, the same bits on every call.
func Example() {
	for _, name := range []string{"iid", "orf", "sorf", "halton", "truncated"} {
		s, err := sampler.ByName(name)
		if err != nil {
			panic(err)
		}
		w, err := s.Sample(6, 4, 1)
		if err != nil {
			panic(err)
		}
		again, err := s.Sample(6, 4, 1)
		if err != nil {
			panic(err)
		}
		r, c := w.Dims()
		fmt.Printf("%-9s %d×%d, same matrix again: %v\n", s.Name(), r, c, floats.Equal(w.RawMatrix().Data, again.RawMatrix().Data))
	}
	_, err := sampler.ByName("sobol")
	fmt.Println("unknown name refused:", err != nil)
	// Output:
	// iid       6×4, same matrix again: true
	// orf       6×4, same matrix again: true
	// sorf      6×4, same matrix again: true
	// halton    6×4, same matrix again: true
	// truncated 6×4, same matrix again: true
	// unknown name refused: true
}

// Orthogonal draws blocks of d exactly orthogonal rows (ORF): within a
// block every pair of rows has a cosine at the level of rounding, and the
// row norms are independent χ(d) draws, so each row stays N(0, I).
func ExampleOrthogonal() {
	const d = 8
	w, err := sampler.Orthogonal{}.Sample(d, d, 3)
	if err != nil {
		panic(err)
	}
	worst := 0.0
	for i := 0; i < d; i++ {
		for j := 0; j < i; j++ {
			a, b := w.RawRowView(i), w.RawRowView(j)
			worst = math.Max(worst, math.Abs(floats.Dot(a, b))/(floats.Norm(a, 2)*floats.Norm(b, 2)))
		}
	}
	fmt.Println("largest |cos| between rows below 1e-12:", worst < 1e-12)
	// Output: largest |cos| between rows below 1e-12: true
}

// Truncated keeps every entry within K standard deviations, at the price
// of a variance below 1 (TruncatedVariance), so the kernel it estimates
// is a slightly narrower one.
func ExampleTruncated() {
	w, err := sampler.Truncated{K: 2}.Sample(1000, 16, 1)
	if err != nil {
		panic(err)
	}
	fmt.Println("largest |w| at most 2:", floats.Max(w.RawMatrix().Data) <= 2 && floats.Min(w.RawMatrix().Data) >= -2)
	fmt.Printf("entry variance %.4f\n", sampler.TruncatedVariance(2))
	// Output:
	// largest |w| at most 2: true
	// entry variance 0.7737
}
