// Package limits holds the size limits that kernelkit checks before it
// allocates memory for a size that comes from a user or a file, and the
// overflow-checked arithmetic used to apply them.
package limits

import (
	"fmt"
	"math"
	"math/bits"
)

// MaxElements is the largest number of float64 values kernelkit allocates
// for one dense matrix: 2³⁰ values, 8 GiB.
const MaxElements = 1 << 30

// MaxDim is the largest input or feature dimension accepted (2²⁴).
const MaxDim = 1 << 24

// MaxClasses is the largest number of classes of a classifier (2²⁰): class
// indices run from 0 to MaxClasses−1.
const MaxClasses = 1 << 20

// MaxCount is the largest number of repetitions a study or a training
// loop accepts (draws of a random map, epochs): 2²⁰. Their results are
// kept per repetition, and a million repetitions already run for hours.
const MaxCount = 1 << 20

// Count checks a repetition count (what names it, e.g. "hrf: draws")
// against lo…MaxCount.
func Count(what string, n, lo int) error {
	if n < lo || n > MaxCount {
		return fmt.Errorf("%s must be between %d and %d, got %d", what, lo, MaxCount, n)
	}
	return nil
}

// Mul returns a·b, or an error if either is negative or the product
// overflows int.
func Mul(a, b int) (int, error) {
	if a < 0 || b < 0 {
		return 0, fmt.Errorf("negative size %d×%d", a, b)
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt {
		return 0, fmt.Errorf("size %d×%d overflows", a, b)
	}
	return int(lo), nil
}

// Matrix checks that a rows×cols float64 matrix (what names it, e.g. "the
// feature matrix") fits MaxElements and returns its element count. The
// error states the memory the matrix would need.
func Matrix(what string, rows, cols int) (int, error) {
	n, err := Mul(rows, cols)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if n > MaxElements {
		return 0, fmt.Errorf("%s of %d×%d would need %s (limit %s)", what, rows, cols, Bytes(float64(n)*8), Bytes(MaxElements*8))
	}
	return n, nil
}

// Dim checks a dimension against 1…MaxDim.
func Dim(what string, d int) error {
	if d <= 0 || d > MaxDim {
		return fmt.Errorf("%s must be between 1 and %d, got %d", what, MaxDim, d)
	}
	return nil
}

// Bytes formats a byte count with a binary unit, e.g. "8 GiB".
func Bytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if b == math.Trunc(b) {
		return fmt.Sprintf("%.0f %s", b, units[i])
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}
