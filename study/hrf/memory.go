package hrf

import "github.com/kernelkit/kernelkit/internal/limits"

// MapMemory estimates the largest memory of a study that draws the maps
// of estimators estimators with a feature budget of features on inputs
// input columns and evaluates them on rows rows at a time: each map's
// projections (at most 2·features × inputs, hybrids and sin/cos pairs
// included) and the features of the rows (2·features each). It is a
// bound from the sizes alone, in float64, for the CLI's --max-memory.
func MapMemory(estimators, features, inputs, rows int) limits.Estimate {
	var e limits.Estimate
	e.Add("projections", max(estimators, 1), 2, features, inputs)
	e.Add("features", max(estimators, 1), 2, max(rows, 1), features)
	return e
}
