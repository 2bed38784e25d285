package kkbeam

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/linear"
)

// Moments is the one-pass, mergeable scaler statistics of data.Scaler-
// Accumulator (the pairwise update of Chan, Golub and LeVeque) with its
// state exported, so that Beam can encode it between workers:
// data.ScalerAccumulator keeps its fields unexported. Added to in the
// same batches it holds the same numbers bit for bit (a test checks it).
//
// Columns a Moments does not have yet are zero in all its rows: merging a
// narrower Moments into a wider one pads it with zero means and squared
// deviations, which is exact for LIBSVM rows, whose missing entries are
// zero. CSV shards are checked to have the same columns before this
// matters.
type Moments struct {
	N    float64
	Mean []float64
	M2   []float64
}

// Add accumulates the rows of x (n×cols, row-major).
func (a *Moments) Add(x []float64, n, cols int) {
	if n == 0 {
		return
	}
	b := Moments{N: float64(n), Mean: make([]float64, cols), M2: make([]float64, cols)}
	for i := 0; i < n; i++ {
		for j, v := range x[i*cols : (i+1)*cols] {
			b.Mean[j] += v
		}
	}
	for j := range b.Mean {
		b.Mean[j] /= b.N
	}
	for i := 0; i < n; i++ {
		for j, v := range x[i*cols : (i+1)*cols] {
			d := v - b.Mean[j]
			b.M2[j] += d * d
		}
	}
	a.Merge(&b)
}

// Merge adds the statistics of b.
func (a *Moments) Merge(b *Moments) {
	if len(a.Mean) < len(b.Mean) {
		a.Mean = append(a.Mean, make([]float64, len(b.Mean)-len(a.Mean))...)
		a.M2 = append(a.M2, make([]float64, len(b.M2)-len(a.M2))...)
	}
	if b.N == 0 {
		return
	}
	if a.N == 0 {
		a.N = b.N
		copy(a.Mean, b.Mean)
		copy(a.M2, b.M2)
		return
	}
	n := a.N + b.N
	for j := range a.Mean {
		var bm, bm2 float64
		if j < len(b.Mean) {
			bm, bm2 = b.Mean[j], b.M2[j]
		}
		d := bm - a.Mean[j]
		a.Mean[j] += d * b.N / n
		a.M2[j] += bm2 + d*d*a.N*b.N/n
	}
	a.N = n
}

// Scaler returns the fitted scaler at width cols (population standard
// deviations, constant columns scaled by 1), as data.ScalerAccumulator's
// Scaler does.
func (a *Moments) Scaler(cols int) (*data.Scaler, error) {
	if a.N == 0 {
		return nil, errors.New("data: cannot fit a scaler on no rows")
	}
	s := &data.Scaler{Mean: make([]float64, cols), Scale: make([]float64, cols)}
	copy(s.Mean, a.Mean)
	for j := range s.Scale {
		var m2 float64
		if j < len(a.M2) {
			m2 = a.M2[j]
		}
		s.Scale[j] = math.Sqrt(m2 / a.N)
		if s.Scale[j] < 1e-12*math.Max(1, math.Abs(s.Mean[j])) {
			s.Scale[j] = 1
		}
	}
	return s, nil
}

// Labels summarises the targets for the task and class count: their
// maximum, whether two distinct values occur, whether all of them look
// like class indices (the rule of `kernelkit fit --task auto`) and the
// first row, in (file, line) order, whose label is no class index.
type Labels struct {
	Any, Two  bool
	First     float64
	Max       float64
	ClassLike bool // every label an integer in [0, 1000)
	NotClass  *BadRow
}

// maxClassLabel is the largest label model.Fit and model.FitStream accept
// as a class index (limits.MaxClasses − 1).
const maxClassLabel = limits.MaxClasses - 1

// add accumulates the labels y of rows at lines of file.
func (l *Labels) add(y []float64, file string, lines []int64) {
	for i, v := range y {
		if !l.Any {
			l.Any, l.First, l.Max, l.ClassLike = true, v, v, true
		}
		if v != l.First {
			l.Two = true
		}
		l.Max = math.Max(l.Max, v)
		integer := v == math.Trunc(v)
		if v < 0 || !integer || v >= 1000 {
			l.ClassLike = false
		}
		if v < 0 || !integer || v > maxClassLabel {
			r := &BadRow{File: file, Line: lines[i], Err: fmt.Sprintf("line %d: model: label %v is not a class index", lines[i], v)}
			if r.before(l.NotClass) {
				l.NotClass = r
			}
		}
	}
}

func (l *Labels) merge(o *Labels) {
	if !o.Any {
		return
	}
	if !l.Any {
		*l = *o
		return
	}
	l.Two = l.Two || o.Two || l.First != o.First
	l.Max = math.Max(l.Max, o.Max)
	l.ClassLike = l.ClassLike && o.ClassLike
	if o.NotClass.before(l.NotClass) {
		l.NotClass = o.NotClass
	}
}

// Prep is the accumulator of the first pass: rows and bad rows, the good
// rows of each file (for the k-fold assignment of the second pass), the
// columns, the scaler moments and the label summary.
type Prep struct {
	Rows, Bad int64
	FirstBad  *BadRow
	// FileErr is the error of a whole file (the first by name), if any.
	FileErr *BadRow
	Files   map[string]int64
	// Width is the number of feature columns: the CSV columns, or the
	// largest LIBSVM index.
	Width  int
	Header *Header
	// Mismatch records two files whose CSV columns differ.
	Mismatch  string
	Unlabeled string // a file without a label column
	Moments   Moments
	Labels    Labels
}

// Add accumulates a batch.
func (p *Prep) Add(b *Batch) {
	if p.Files == nil {
		p.Files = map[string]int64{}
	}
	if b.FileErr != "" {
		if r := (&BadRow{File: b.File, Err: b.FileErr}); r.before(p.FileErr) {
			p.FileErr = r
		}
		return
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
	if n > 0 && b.Y == nil && (p.Unlabeled == "" || b.File < p.Unlabeled) {
		p.Unlabeled = b.File
	}
	p.Width = max(p.Width, b.Cols)
	p.Moments.Add(b.X, n, b.Cols)
	p.Labels.add(b.Y, b.File, b.Lines)
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
}

// Merge adds the statistics of o.
func (p *Prep) Merge(o *Prep) {
	if p.Files == nil {
		p.Files = map[string]int64{}
	}
	for f, n := range o.Files {
		p.Files[f] += n
	}
	p.Rows += o.Rows
	p.Bad += o.Bad
	if o.FirstBad.before(p.FirstBad) {
		p.FirstBad = o.FirstBad
	}
	if o.FileErr.before(p.FileErr) {
		p.FileErr = o.FileErr
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
	p.Width = max(p.Width, o.Width)
	p.Moments.Merge(&o.Moments)
	p.Labels.merge(&o.Labels)
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
