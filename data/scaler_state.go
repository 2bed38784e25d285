package data

import (
	"encoding/json"
	"errors"
	"math"
)

// scalerState is the encoded state of a ScalerAccumulator.
type scalerState struct {
	N    float64   `json:"n"`
	Mean []float64 `json:"mean"`
	M2   []float64 `json:"m2"`
}

// MarshalJSON encodes the accumulator's state (the total weight, the
// means and the sums of squared deviations), so that accumulators of a
// distributed pass can travel between processes and Merge there. Floats
// round-trip exactly; a non-finite moment is an error.
func (a *ScalerAccumulator) MarshalJSON() ([]byte, error) {
	return json.Marshal(scalerState{N: a.n, Mean: a.mean, M2: a.m2})
}

// UnmarshalJSON decodes a state written by MarshalJSON, checking that the
// means and squared deviations have one entry per column and that the
// weight and squared deviations are non-negative.
func (a *ScalerAccumulator) UnmarshalJSON(b []byte) error {
	var s scalerState
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if len(s.Mean) != len(s.M2) {
		return errors.New("data: scaler state: means and squared deviations of different widths")
	}
	if !(s.N >= 0) || math.IsInf(s.N, 0) {
		return errors.New("data: scaler state: weight is not a finite non-negative number")
	}
	for _, v := range s.M2 {
		if !(v >= 0) {
			return errors.New("data: scaler state: negative squared deviation")
		}
	}
	a.n, a.mean, a.m2 = s.N, s.Mean, s.M2
	return nil
}

// Widen makes the accumulator cols columns wide, the new columns zero in
// every row accumulated so far (mean 0, no deviation): exact for rows
// whose missing entries are zero, as LIBSVM rows' are. It is an error to
// narrow it.
func (a *ScalerAccumulator) Widen(cols int) error {
	switch {
	case cols < len(a.mean):
		return errors.New("data: scaler accumulator cannot be narrowed")
	case cols == len(a.mean):
		return nil
	}
	a.mean = append(a.mean, make([]float64, cols-len(a.mean))...)
	a.m2 = append(a.m2, make([]float64, cols-len(a.m2))...)
	return nil
}
