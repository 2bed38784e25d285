package kkbeam

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

// Prep is the accumulator of the first pass: rows and bad rows, the good
// rows of each file (for the global row order of the later passes) and of
// each class in each file (for a calibration's stratified folds), the
// columns, and model's census of the rows (model.Census: labels, target
// columns, the scaler's moments), merged by model.Census.Merge.
type Prep struct {
	Rows, Bad int64
	FirstBad  *BadRow
	// FileErr is the error of a whole file (the first by name), if any.
	FileErr *BadRow
	// Err is the first row, in (file, line) order, that the census
	// refused (a label that is no class index), if any.
	Err   *BadRow
	Files map[string]int64
	// FileClasses holds the rows of each class in each file
	// (model.Census.ClassRows of the file's batches).
	FileClasses map[string][]int64
	Header      *Header
	// Mismatch records two files whose CSV columns differ.
	Mismatch  string
	Unlabeled string // a file without a label column
	Census    *model.Census
}

// newPrep returns an empty first-pass accumulator whose census counts
// the rows of a fit of the given task, standardised or not.
func newPrep(task model.Task, standardize bool) (*Prep, error) {
	c, err := newCensus(task, standardize)
	if err != nil {
		return nil, err
	}
	return &Prep{Files: map[string]int64{}, FileClasses: map[string][]int64{}, Census: c}, nil
}

// newCensus returns the census of a Beam fit: its batches' widths may
// differ (LIBSVM shards), narrower ones padded with zero columns.
func newCensus(task model.Task, standardize bool) (*model.Census, error) {
	c, err := model.NewCensus(model.Options{Task: task, Standardize: standardize})
	if err != nil {
		return nil, err
	}
	c.PadColumns()
	return c, nil
}

// Add accumulates a batch: its rows go through a census of their own,
// merged into p's, so that a refused row leaves p's census as it was.
func (p *Prep) Add(b *Batch, task model.Task, standardize bool) error {
	if b.FileErr != "" {
		if r := (&BadRow{File: b.File, Err: b.FileErr}); r.before(p.FileErr) {
			p.FileErr = r
		}
		return nil
	}
	n := b.Rows()
	p.Files[b.File] += int64(n)
	p.Rows += int64(n)
	p.Bad += b.Bad
	if b.FirstBad.before(p.FirstBad) {
		p.FirstBad = b.FirstBad
	}
	if b.Header != nil {
		p.mergeHeader(b.Header)
	}
	if n == 0 {
		return nil
	}
	if b.Y == nil && b.Targets == nil {
		if p.Unlabeled == "" || b.File < p.Unlabeled {
			p.Unlabeled = b.File
		}
		return nil
	}
	c, err := newCensus(task, standardize)
	if err != nil {
		return err
	}
	// A LIBSVM batch whose rows list no feature is one zero column wide.
	cols, x := b.Cols, b.X
	if cols == 0 {
		cols, x = 1, make([]float64, n)
	}
	for i, w := range b.Weights {
		// model.Census.Add refuses the same weights, naming the row of
		// the batch; this names the file's line.
		if !(w >= 0) || math.IsInf(w, 0) {
			r := &BadRow{File: b.File, Line: b.Lines[i], Err: fmt.Sprintf("line %d: model: weight %v is not a finite non-negative number", b.Lines[i], w)}
			if r.before(p.Err) {
				p.Err = r
			}
			return nil
		}
	}
	if err := c.Add(&data.Batch{X: mat.NewDense(n, cols, x), Y: b.Y, Weights: b.Weights, Targets: b.targets()}); err != nil {
		r := &BadRow{File: b.File, Line: b.Lines[0], Err: err.Error()}
		if le, ok := err.(*model.LabelError); ok {
			line := b.Lines[le.Row]
			r.Line, r.Err = line, fmt.Sprintf("line %d: model: label %v is not a class index (an integer from 0 to %d)", line, le.Label, limits.MaxClasses-1)
		}
		if r.before(p.Err) {
			p.Err = r
		}
		return nil
	}
	counts := p.FileClasses[b.File]
	for l, k := range c.ClassRows() {
		if l >= len(counts) {
			counts = append(counts, make([]int64, l+1-len(counts))...)
		}
		counts[l] += int64(k)
	}
	p.FileClasses[b.File] = counts
	return p.Census.Merge(c)
}

// mergeHeader keeps the header of the first file by name and records the
// first mismatch.
func (p *Prep) mergeHeader(h *Header) {
	if p.Header == nil {
		p.Header = h
		return
	}
	a, b := p.Header, h
	if b.File < a.File {
		a, b = b, a
		p.Header = a
	}
	if (!slices.Equal(a.Columns, b.Columns) || a.Label != b.Label) && p.Mismatch == "" {
		p.Mismatch = fmt.Sprintf("%s has the columns %s and label %q, but %s has %s and label %q",
			a.File, list(a.Columns), a.Label, b.File, list(b.Columns), b.Label)
	}
	if (a.Weight != b.Weight || !slices.Equal(a.Targets, b.Targets)) && p.Mismatch == "" {
		p.Mismatch = fmt.Sprintf("%s has the weight column %q and targets %s, but %s has %q and %s",
			a.File, a.Weight, list(a.Targets), b.File, b.Weight, list(b.Targets))
	}
}

// Merge adds the statistics of o.
func (p *Prep) Merge(o *Prep) error {
	for f, n := range o.Files {
		p.Files[f] += n
	}
	for f, counts := range o.FileClasses {
		mine := p.FileClasses[f]
		if len(mine) < len(counts) {
			mine = append(mine, make([]int64, len(counts)-len(mine))...)
		}
		for l, n := range counts {
			mine[l] += n
		}
		p.FileClasses[f] = mine
	}
	p.Rows += o.Rows
	p.Bad += o.Bad
	if o.FirstBad.before(p.FirstBad) {
		p.FirstBad = o.FirstBad
	}
	if o.FileErr.before(p.FileErr) {
		p.FileErr = o.FileErr
	}
	if o.Err.before(p.Err) {
		p.Err = o.Err
	}
	if o.Header != nil {
		p.mergeHeader(o.Header)
	}
	if p.Mismatch == "" {
		p.Mismatch = o.Mismatch
	}
	if o.Unlabeled != "" && (p.Unlabeled == "" || o.Unlabeled < p.Unlabeled) {
		p.Unlabeled = o.Unlabeled
	}
	return p.Census.Merge(o.Census)
}

// Stats is the accumulator of the second pass: the ridge statistics of
// each fold (one without k-fold selection), the rows and the bad lines
// skipped, which must match the first pass.
type Stats struct {
	Rows, Bad int64
	Folds     []*linear.Stats
}

// Merge adds the statistics of o into s.
func (s *Stats) Merge(o *Stats) error {
	s.Rows += o.Rows
	s.Bad += o.Bad
	if len(o.Folds) == 0 {
		return nil
	}
	if len(s.Folds) == 0 {
		s.Folds = o.Folds
		return nil
	}
	if len(s.Folds) != len(o.Folds) {
		return fmt.Errorf("kkbeam: merging statistics of %d and %d folds", len(s.Folds), len(o.Folds))
	}
	for f := range s.Folds {
		if err := s.Folds[f].Merge(o.Folds[f]); err != nil {
			return err
		}
	}
	return nil
}
