package data

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// Dataset is a table of numeric features with one target per row (or
// several, for multi-output regression) and optional row weights.
type Dataset struct {
	X *mat.Dense
	// Y holds the targets: class indices for classification, real values
	// for regression. It is nil for unlabelled data, and for data with
	// several target columns (Targets).
	Y []float64
	// Names holds the feature column names (nil for LIBSVM data).
	Names []string
	// Label is the name of the target column ("" if none).
	Label string
	// Targets holds the targets of multi-output regression, one column
	// per target column named by CSVOptions.Targets (n×k, k ≥ 2), with
	// their names in TargetNames; nil otherwise.
	Targets     *mat.Dense
	TargetNames []string
	// Weights holds the rows' sample weights, read from the column named
	// WeightColumn (CSVOptions.Weight); nil without one. They are not
	// features: X does not hold the column.
	Weights      []float64
	WeightColumn string
}

// Rows returns the number of rows.
func (d *Dataset) Rows() int { r, _ := d.X.Dims(); return r }

// Cols returns the number of feature columns.
func (d *Dataset) Cols() int { _, c := d.X.Dims(); return c }

// Batch is one batch of rows of a file: the features and whatever the
// file has of targets and weights.
type Batch struct {
	X *mat.Dense
	// Y holds one target per row (nil for unlabelled data or several
	// target columns).
	Y []float64
	// Targets holds several targets per row (n×k, CSVOptions.Targets),
	// nil otherwise.
	Targets *mat.Dense
	// Weights holds the rows' weights (CSVOptions.Weight), nil otherwise.
	Weights []float64
}

// Subset returns the rows of d with the given indices (copied).
func (d *Dataset) Subset(idx []int) *Dataset {
	_, c := d.X.Dims()
	x := mat.NewDense(len(idx), c, nil)
	var y, w []float64
	if d.Y != nil {
		y = make([]float64, len(idx))
	}
	if d.Weights != nil {
		w = make([]float64, len(idx))
	}
	var t *mat.Dense
	if d.Targets != nil {
		_, k := d.Targets.Dims()
		t = mat.NewDense(len(idx), k, nil)
	}
	for i, r := range idx {
		copy(x.RawRowView(i), d.X.RawRowView(r))
		if y != nil {
			y[i] = d.Y[r]
		}
		if w != nil {
			w[i] = d.Weights[r]
		}
		if t != nil {
			t.SetRow(i, d.Targets.RawRowView(r))
		}
	}
	return &Dataset{X: x, Y: y, Names: d.Names, Label: d.Label,
		Targets: t, TargetNames: d.TargetNames, Weights: w, WeightColumn: d.WeightColumn}
}

// Labels returns the targets as class indices, checking that they are
// integers from 0 to limits.MaxClasses−1, and the number of classes
// (largest label + 1).
func (d *Dataset) Labels() ([]int, int, error) {
	if d.Y == nil {
		return nil, 0, errors.New("data: the data set has no label column")
	}
	out := make([]int, len(d.Y))
	k := 0
	for i, v := range d.Y {
		if v < 0 || v != math.Trunc(v) || v >= limits.MaxClasses {
			return nil, 0, fmt.Errorf("data: label %v of row %d is not a class index (an integer from 0 to %d)", v, i, limits.MaxClasses-1)
		}
		out[i] = int(v)
		k = max(k, out[i]+1)
	}
	return out, k, nil
}
