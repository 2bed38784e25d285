package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// Census is the state of the fit's first pass (see pipeline.go): what the
// rows are, checked as they arrive — columns, target columns, labels,
// weights — the rows of each class, and the scaler's moments
// (Options.Standardize). Fit and FitStream add the rows to one Census in
// batches of scalerBlock rows; a distributed fit (package kkbeam of the
// beam module) adds each worker's batches to a Census of their own and
// merges them (Merge), and encodes them between workers (MarshalJSON).
// Plan then decides the later passes.
type Census struct {
	task        Task
	standardize bool
	pad         bool // batches may be narrower than others (PadColumns)
	rows, cols  int
	outputs     int  // target columns of every batch
	multi       bool // the batches have data.Batch.Targets
	weighted    bool // the batches have weights
	positive    bool // some sample weight is positive
	classLike   bool // every label so far is an integer from 0 to 999 (Auto)
	classes     int  // the largest label + 1 (classification)
	two         []float64
	counts      []int // rows of each class
	positives   []int // rows of positive sample weight of each class
	scaler      data.ScalerAccumulator
}

// NewCensus checks the options of a fit that the rows do not decide (λ,
// the task, class weights, folds) and returns an empty census for it.
func NewCensus(opt Options) (*Census, error) {
	if !(opt.Lambda >= 0) || math.IsInf(opt.Lambda, 0) {
		return nil, fmt.Errorf("model: lambda must be non-negative and finite, got %v", opt.Lambda)
	}
	if opt.Task != Classification && opt.Task != Regression && opt.Task != Auto {
		return nil, fmt.Errorf("model: unknown task %q (want classification, regression or auto)", opt.Task)
	}
	// With Auto, the options are checked as a classification's first and
	// again once the census has decided the task (Plan).
	pre := opt
	if pre.Task == Auto {
		pre.Task = Classification
	}
	if err := pre.checkClassWeights(); err != nil {
		return nil, err
	}
	if _, err := pre.fitFolds(); err != nil {
		return nil, err
	}
	return &Census{task: opt.Task, standardize: opt.Standardize, classLike: true}, nil
}

// PadColumns lets the census take batches of different widths, a batch
// narrower than the widest counted as if its missing columns were zero:
// LIBSVM rows, whose absent entries are zero and whose width is the
// largest index seen. It must be set before the first batch, on every
// census that is merged.
func (c *Census) PadColumns() { c.pad = true }

// Rows returns the number of rows counted.
func (c *Census) Rows() int { return c.rows }

// ClassRows returns the rows of positive sample weight of each class
// counted so far (classification), the counts of a calibration's
// stratified folds (Plan.Prepare).
func (c *Census) ClassRows() []int { return slices.Clone(c.positives) }

// LabelError is a training label that is no class index, in the row Row
// of the rows given to a census (counted from 0).
type LabelError struct {
	Row   int
	Label float64
}

// Error names the label and its row.
func (e *LabelError) Error() string {
	return fmt.Sprintf("model: label %v of row %d is not a class index (an integer from 0 to %d)", e.Label, e.Row, limits.MaxClasses-1)
}

// Add checks and counts the rows of b, the next batch. A label that is no
// class index (classification) is a *LabelError.
func (c *Census) Add(b *data.Batch) error {
	if b.X == nil {
		return errors.New("model: a batch has no rows")
	}
	n, d := b.X.Dims()
	if n == 0 {
		return nil
	}
	out, err := batchOutputs(b, n, c.task)
	if err != nil {
		return err
	}
	x := b.X
	if c.pad && c.rows > 0 && d != c.cols {
		if d < c.cols {
			x, d = padColumns(b.X, c.cols), c.cols
		} else {
			if err := c.widen(d); err != nil {
				return err
			}
		}
	}
	if c.rows > 0 {
		switch {
		case d != c.cols:
			return fmt.Errorf("model: a batch has %d feature columns, an earlier one %d", d, c.cols)
		case out != c.outputs || (b.Targets != nil) != c.multi:
			return fmt.Errorf("model: a batch has %d target columns, an earlier one %d", out, c.outputs)
		case (b.Weights != nil) != c.weighted:
			return errors.New("model: some batches have weights and some do not")
		}
	}
	c.cols, c.outputs, c.multi, c.weighted = d, out, b.Targets != nil, b.Weights != nil
	if c.weighted {
		if len(b.Weights) != n {
			return fmt.Errorf("model: a batch of %d rows has %d weights", n, len(b.Weights))
		}
		if err := checkRowWeights(b.Weights, c.rows); err != nil {
			return err
		}
		c.positive = c.positive || positiveTotal(b.Weights) == nil
	}
	if c.task == Auto && c.classLike {
		for _, v := range b.Y {
			if v < 0 || v != math.Trunc(v) || v >= 1000 {
				c.classLike = false
				break
			}
		}
	}
	if c.task == Classification || (c.task == Auto && c.classLike && b.Targets == nil) {
		for i, v := range b.Y {
			if v < 0 || v != math.Trunc(v) || v >= limits.MaxClasses {
				return &LabelError{Row: c.rows + i, Label: v}
			}
			l := int(v)
			c.grow(l + 1)
			c.counts[l]++
			if !c.weighted || b.Weights[i] > 0 {
				c.positives[l]++
			}
			c.addTwo(v)
		}
		c.classes = len(c.counts)
	}
	c.rows += n
	if c.standardize {
		return c.scaler.AddWeighted(x, b.Weights)
	}
	return nil
}

// grow makes the class counts at least k long.
func (c *Census) grow(k int) {
	if k > len(c.counts) {
		c.counts = append(c.counts, make([]int, k-len(c.counts))...)
		c.positives = append(c.positives, make([]int, k-len(c.positives))...)
	}
}

// addTwo records label v among the first two distinct labels.
func (c *Census) addTwo(v float64) {
	if len(c.two) == 0 || (len(c.two) == 1 && v != c.two[0]) {
		c.two = append(c.two, v)
	}
}

// widen makes a padding census d columns wide.
func (c *Census) widen(d int) error {
	c.cols = d
	if c.standardize {
		return c.scaler.Widen(d)
	}
	return nil
}

// padColumns returns x with zero columns appended up to cols columns.
func padColumns(x *mat.Dense, cols int) *mat.Dense {
	n, d := x.Dims()
	out := mat.NewDense(n, cols, nil)
	out.Slice(0, n, 0, d).(*mat.Dense).Copy(x)
	return out
}

// Merge adds the census o of the rows that follow c's (a worker's
// batches). The counts, labels and checks are those of one census given
// all the rows; the scaler's moments merge by the pairwise update
// (data.ScalerAccumulator.Merge), so merged in another order they agree
// to rounding. o is not changed.
func (c *Census) Merge(o *Census) error {
	if c.task != o.task || c.standardize != o.standardize || c.pad != o.pad {
		return errors.New("model: merging the censuses of fits with other options")
	}
	if o.rows == 0 {
		return nil
	}
	scaler := o.scaler
	if c.rows > 0 {
		d := o.cols
		if c.pad && d != c.cols {
			d = max(d, c.cols)
			if err := c.widen(d); err != nil {
				return err
			}
			if err := scaler.Widen(d); err != nil {
				return err
			}
		}
		switch {
		case d != c.cols:
			return fmt.Errorf("model: a batch has %d feature columns, an earlier one %d", o.cols, c.cols)
		case o.outputs != c.outputs || o.multi != c.multi:
			return fmt.Errorf("model: a batch has %d target columns, an earlier one %d", o.outputs, c.outputs)
		case o.weighted != c.weighted:
			return errors.New("model: some batches have weights and some do not")
		}
	}
	c.cols, c.outputs, c.multi, c.weighted = max(c.cols, o.cols), o.outputs, o.multi, o.weighted
	c.positive = c.positive || o.positive
	c.classLike = c.classLike && o.classLike
	c.grow(len(o.counts))
	for l, n := range o.counts {
		c.counts[l] += n
		c.positives[l] += o.positives[l]
	}
	c.classes = len(c.counts)
	for _, v := range o.two {
		c.addTwo(v)
	}
	c.rows += o.rows
	if c.standardize {
		return c.scaler.Merge(&scaler)
	}
	return nil
}

// censusJSON is the encoded state of a Census.
type censusJSON struct {
	Task        Task                    `json:"task"`
	Standardize bool                    `json:"standardize,omitempty"`
	Pad         bool                    `json:"pad,omitempty"`
	Rows        int                     `json:"rows"`
	Cols        int                     `json:"cols"`
	Outputs     int                     `json:"outputs"`
	Multi       bool                    `json:"multi,omitempty"`
	Weighted    bool                    `json:"weighted,omitempty"`
	Positive    bool                    `json:"positive,omitempty"`
	ClassLike   bool                    `json:"class_like"`
	Two         []float64               `json:"two,omitempty"`
	Counts      []int                   `json:"counts,omitempty"`
	Positives   []int                   `json:"positives,omitempty"`
	Scaler      *data.ScalerAccumulator `json:"scaler,omitempty"`
}

// MarshalJSON encodes the census, for a distributed fit's workers.
func (c *Census) MarshalJSON() ([]byte, error) {
	s := censusJSON{Task: c.task, Standardize: c.standardize, Pad: c.pad, Rows: c.rows, Cols: c.cols, Outputs: c.outputs,
		Multi: c.multi, Weighted: c.weighted, Positive: c.positive, ClassLike: c.classLike, Two: c.two,
		Counts: c.counts, Positives: c.positives}
	if c.standardize {
		s.Scaler = &c.scaler
	}
	return json.Marshal(s)
}

// UnmarshalJSON decodes a census written by MarshalJSON, checking its
// counts.
func (c *Census) UnmarshalJSON(b []byte) error {
	var s censusJSON
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s.Rows < 0 || s.Cols < 0 || s.Cols > limits.MaxDim || s.Outputs < 0 || len(s.Two) > 2 ||
		len(s.Counts) != len(s.Positives) || len(s.Counts) > limits.MaxClasses {
		return errors.New("model: census: counts out of range")
	}
	for l, n := range s.Counts {
		if n < 0 || s.Positives[l] < 0 || s.Positives[l] > n {
			return errors.New("model: census: counts out of range")
		}
	}
	*c = Census{task: s.Task, standardize: s.Standardize, pad: s.Pad, rows: s.Rows, cols: s.Cols, outputs: s.Outputs,
		multi: s.Multi, weighted: s.Weighted, positive: s.Positive, classLike: s.ClassLike, classes: len(s.Counts),
		two: s.Two, counts: s.Counts, positives: s.Positives}
	if s.Scaler != nil {
		c.scaler = *s.Scaler
	}
	return nil
}
