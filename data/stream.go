package data

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ScalerAccumulator fits a Scaler over batches of rows in one pass, with
// the pairwise update of Chan, Golub and LeVeque for means and squared
// deviations, so that files larger than memory can be standardised.
// Accumulators of disjoint batches Merge like sufficient statistics.
type ScalerAccumulator struct {
	n    float64
	mean []float64
	m2   []float64
}

// Add accumulates the rows of x.
func (a *ScalerAccumulator) Add(x *mat.Dense) error {
	r, c := x.Dims()
	if r == 0 {
		return nil
	}
	if a.mean == nil {
		a.mean = make([]float64, c)
		a.m2 = make([]float64, c)
	}
	if c != len(a.mean) {
		return errors.New("data: scaler batches have different widths")
	}
	b := &ScalerAccumulator{n: float64(r), mean: make([]float64, c), m2: make([]float64, c)}
	for i := 0; i < r; i++ {
		for j, v := range x.RawRowView(i) {
			b.mean[j] += v
		}
	}
	for j := range b.mean {
		b.mean[j] /= b.n
	}
	for i := 0; i < r; i++ {
		for j, v := range x.RawRowView(i) {
			d := v - b.mean[j]
			b.m2[j] += d * d
		}
	}
	return a.Merge(b)
}

// Merge adds the statistics of b.
func (a *ScalerAccumulator) Merge(b *ScalerAccumulator) error {
	if b.n == 0 {
		return nil
	}
	if a.n == 0 {
		a.n = b.n
		a.mean = append([]float64(nil), b.mean...)
		a.m2 = append([]float64(nil), b.m2...)
		return nil
	}
	if len(a.mean) != len(b.mean) {
		return errors.New("data: scaler batches have different widths")
	}
	n := a.n + b.n
	for j := range a.mean {
		d := b.mean[j] - a.mean[j]
		a.mean[j] += d * b.n / n
		a.m2[j] += b.m2[j] + d*d*a.n*b.n/n
	}
	a.n = n
	return nil
}

// Scaler returns the fitted scaler (population standard deviations,
// constant columns scaled by 1), as FitScaler would on all rows at once,
// and FitScaler's error for a column whose statistics overflow.
func (a *ScalerAccumulator) Scaler() (*Scaler, error) {
	if a.n == 0 {
		return nil, errors.New("data: cannot fit a scaler on no rows")
	}
	s := &Scaler{Mean: append([]float64(nil), a.mean...), Scale: make([]float64, len(a.mean))}
	for j := range s.Scale {
		s.Scale[j] = math.Sqrt(a.m2[j] / a.n)
		if s.Scale[j] < 1e-12*math.Max(1, math.Abs(s.Mean[j])) {
			s.Scale[j] = 1
		}
	}
	return s, s.finite()
}
