package data

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// checkWeights returns an error unless w has one finite, non-negative
// weight per row of x.
func checkWeights(x *mat.Dense, w []float64) error {
	if r, _ := x.Dims(); len(w) != r {
		return fmt.Errorf("data: %d weights for %d rows", len(w), r)
	}
	for i, v := range w {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("data: weight %v of row %d is not a finite non-negative number", v, i)
		}
	}
	return nil
}

// FitScalerWeighted is FitScaler with row weights: the weighted means
// Σw_i x_i/Σw_i and the weighted population standard deviations, so that
// an integer weight is the same, to rounding, as the row repeated that
// often and a row of weight zero is left out (scikit-learn's
// StandardScaler with sample_weight). A nil w is FitScaler. A weight that
// is negative, NaN or infinite, a length of w other than the rows of x, or
// weights that are all zero, is an error.
func FitScalerWeighted(x *mat.Dense, w []float64) (*Scaler, error) {
	if w == nil {
		return FitScaler(x)
	}
	var a ScalerAccumulator
	if err := a.AddWeighted(x, w); err != nil {
		return nil, err
	}
	return a.Scaler()
}

// AddWeighted accumulates the rows of x with weights w (one finite,
// non-negative weight per row; see FitScalerWeighted). A nil w is Add.
func (a *ScalerAccumulator) AddWeighted(x *mat.Dense, w []float64) error {
	if w == nil {
		return a.Add(x)
	}
	if err := checkWeights(x, w); err != nil {
		return err
	}
	r, c := x.Dims()
	if r == 0 {
		return nil
	}
	if a.mean != nil && c != len(a.mean) {
		return errors.New("data: scaler batches have different widths")
	}
	b := &ScalerAccumulator{mean: make([]float64, c), m2: make([]float64, c)}
	for i, wi := range w {
		if wi == 0 {
			continue
		}
		b.n += wi
		for j, v := range x.RawRowView(i) {
			b.mean[j] += wi * v
		}
	}
	if b.n == 0 {
		if a.mean == nil {
			a.mean = make([]float64, c)
			a.m2 = make([]float64, c)
		}
		return nil
	}
	for j := range b.mean {
		b.mean[j] /= b.n
	}
	for i, wi := range w {
		if wi == 0 {
			continue
		}
		for j, v := range x.RawRowView(i) {
			d := v - b.mean[j]
			b.m2[j] += wi * d * d
		}
	}
	return a.Merge(b)
}
