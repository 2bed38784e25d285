package data

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Scaler standardises features: x' = (x − Mean)/Scale, with Scale = 1 for
// constant columns.
type Scaler struct {
	Mean  []float64 `json:"mean"`
	Scale []float64 `json:"scale"`
}

// FitScaler computes column means and (population) standard deviations.
// It returns an error when a column's mean or deviation overflows float64
// (values beyond about 1e154), which no standardisation can represent.
func FitScaler(x *mat.Dense) (*Scaler, error) {
	n, d := x.Dims()
	if n == 0 {
		return nil, errors.New("data: cannot fit a scaler on no rows")
	}
	s := &Scaler{Mean: make([]float64, d), Scale: make([]float64, d)}
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			s.Mean[j] += v
		}
	}
	for j := range s.Mean {
		s.Mean[j] /= float64(n)
	}
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			d := v - s.Mean[j]
			s.Scale[j] += d * d
		}
	}
	for j := range s.Scale {
		s.Scale[j] = math.Sqrt(s.Scale[j] / float64(n))
		if s.Scale[j] < 1e-12*math.Max(1, math.Abs(s.Mean[j])) {
			s.Scale[j] = 1
		}
	}
	return s, s.finite()
}

// finite reports an error for a column whose mean or standard deviation
// overflowed float64 (finite values beyond about 1e154 square to +Inf),
// which would otherwise standardise the column to zeros or NaN.
func (s *Scaler) finite() error {
	for j := range s.Mean {
		if math.IsInf(s.Mean[j], 0) || math.IsNaN(s.Mean[j]) || math.IsInf(s.Scale[j], 0) || math.IsNaN(s.Scale[j]) {
			return fmt.Errorf("data: column %d: values too large to standardise (mean %g, standard deviation %g overflow float64)", j+1, s.Mean[j], s.Scale[j])
		}
	}
	return nil
}

// Transform returns the standardised copy of x.
func (s *Scaler) Transform(x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	if d != len(s.Mean) {
		return nil, fmt.Errorf("data: scaler fitted on %d columns, got %d", len(s.Mean), d)
	}
	out := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		src := x.RawRowView(i)
		dst := out.RawRowView(i)
		for j, v := range src {
			dst[j] = (v - s.Mean[j]) / s.Scale[j]
		}
	}
	return out, nil
}

// Standardize fits a Scaler on train and returns the standardised copies
// of train and test (the test rows scaled by the training statistics).
func Standardize(train, test *mat.Dense) (xtr, xte *mat.Dense, err error) {
	sc, err := FitScaler(train)
	if err != nil {
		return nil, nil, err
	}
	if xtr, err = sc.Transform(train); err != nil {
		return nil, nil, err
	}
	if xte, err = sc.Transform(test); err != nil {
		return nil, nil, err
	}
	return xtr, xte, nil
}
