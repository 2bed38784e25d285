package model

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// Batches yields batches of rows (features and targets); Read returns
// io.EOF at the end. data.CSVReader implements it. A Batches that also
// implements BatchReader (data.CSVReader and data.CSVFile do) is read
// through ReadBatch, which carries the rows' weights and several targets.
type Batches interface {
	Read(max int) (*mat.Dense, []float64, error)
}

// BatchReader is implemented by Batches whose rows may have sample
// weights (data.Batch.Weights) or several targets (data.Batch.Targets,
// multi-output regression). ReadBatch returns io.EOF at the end.
type BatchReader interface {
	ReadBatch(max int) (*data.Batch, error)
}

// readBatch reads the next batch of b, through ReadBatch if b has it.
func readBatch(b Batches, max int) (*data.Batch, error) {
	if br, ok := b.(BatchReader); ok {
		bt, err := br.ReadBatch(max)
		if err == nil && bt == nil {
			err = errors.New("model: ReadBatch returned no batch and no error")
		}
		return bt, err
	}
	x, y, err := b.Read(max)
	if err != nil {
		return nil, err
	}
	return &data.Batch{X: x, Y: y}, nil
}

// Opener opens a fresh pass over the rows; close releases it.
type Opener func() (b Batches, close func() error, err error)

// batchOutputs checks the targets of a batch of n rows for the task and
// returns the number of target columns.
func batchOutputs(b *data.Batch, n int, task Task) (int, error) {
	if b.Targets != nil {
		if task == Classification {
			return 0, errors.New("model: classification takes one label column, the data has several target columns")
		}
		r, c := b.Targets.Dims()
		if r != n {
			return 0, fmt.Errorf("model: a batch of %d rows has %d rows of targets", n, r)
		}
		return c, nil
	}
	if b.Y == nil {
		return 0, errors.New("model: the data has no target column")
	}
	if len(b.Y) != n {
		return 0, fmt.Errorf("model: a batch of %d rows has %d targets", n, len(b.Y))
	}
	return 1, nil
}

// streamBatch is the number of chunks the fit's second and third passes
// read at a time: a whole number of chunks for each lane of the
// accumulator, so that every lane has work in every batch.
const streamBatch = 4 * statLanes

// pass reads every batch of one opening of the rows, in batches of
// exactly chunk rows but the last (see blocks).
func pass(open Opener, chunk int, fn func(b *data.Batch) error) (err error) {
	b, closeFn, err := open()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeFn()) }()
	r := &blocks{b: b, size: chunk}
	for {
		bt, err := r.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(bt); err != nil {
			return err
		}
	}
}

// passAhead is pass with the next batch read (parsed) on another
// goroutine while fn works on the current one, so that reading overlaps
// the feature and statistics work. The batches reach fn in order.
func passAhead(open Opener, chunk int, fn func(b *data.Batch) error) (err error) {
	b, closeFn, err := open()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeFn()) }()
	r := &blocks{b: b, size: chunk}
	type batch struct {
		b   *data.Batch
		err error
	}
	next := make(chan batch, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(next)
		for {
			bt, err := r.next()
			select {
			case next <- batch{bt, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	})
	// Stop the reader before closeFn runs (deferred calls run last first).
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for bt := range next {
		if bt.err == io.EOF {
			return nil
		}
		if bt.err != nil {
			return bt.err
		}
		if err := fn(bt.b); err != nil {
			return err
		}
	}
	return nil
}

// blocks reads the batches of a Batches as batches of exactly size rows
// but the last, whatever the sizes of the batches it returns: a batch of
// the right size is passed on as it is, others are split or joined. So a
// pass sees the same batches, and the fit computes the same numbers,
// however the reader cuts the rows.
type blocks struct {
	b    Batches
	size int
	rest *data.Batch // rows read but not yet returned
}

// next returns the next batch, or io.EOF at the end.
func (r *blocks) next() (*data.Batch, error) {
	var parts []*data.Batch
	n := 0
	if r.rest != nil {
		parts, n, r.rest = append(parts, r.rest), batchLen(r.rest), nil
	}
	for n < r.size {
		bt, err := readBatch(r.b, r.size-n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := checkShape(bt); err != nil {
			return nil, err
		}
		if m := batchLen(bt); m > 0 {
			parts, n = append(parts, bt), n+m
		}
	}
	if len(parts) == 0 {
		return nil, io.EOF
	}
	if n > r.size {
		last := parts[len(parts)-1]
		m := batchLen(last)
		keep := m - (n - r.size)
		parts[len(parts)-1], r.rest = sliceBatch(last, 0, keep), sliceBatch(last, keep, m)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return joinBatches(parts)
}

// batchLen returns the rows of b.
func batchLen(b *data.Batch) int {
	if b.X == nil {
		return 0
	}
	n, _ := b.X.Dims()
	return n
}

// checkShape returns an error when the labels, targets or weights of b
// do not have one entry per row.
func checkShape(b *data.Batch) error {
	if b.X == nil {
		return errors.New("model: a batch has no rows")
	}
	n := batchLen(b)
	if b.Y != nil && len(b.Y) != n {
		return fmt.Errorf("model: a batch of %d rows has %d targets", n, len(b.Y))
	}
	if b.Targets != nil {
		if r, _ := b.Targets.Dims(); r != n {
			return fmt.Errorf("model: a batch of %d rows has %d rows of targets", n, r)
		}
	}
	if b.Weights != nil && len(b.Weights) != n {
		return fmt.Errorf("model: a batch of %d rows has %d weights", n, len(b.Weights))
	}
	return nil
}

// sliceBatch returns rows lo to hi of b (views).
func sliceBatch(b *data.Batch, lo, hi int) *data.Batch {
	_, d := b.X.Dims()
	s := &data.Batch{X: b.X.Slice(lo, hi, 0, d).(*mat.Dense)}
	if b.Y != nil {
		s.Y = b.Y[lo:hi]
	}
	if b.Targets != nil {
		_, k := b.Targets.Dims()
		s.Targets = b.Targets.Slice(lo, hi, 0, k).(*mat.Dense)
	}
	if b.Weights != nil {
		s.Weights = b.Weights[lo:hi]
	}
	return s
}

// joinBatches returns the rows of parts in one batch (copied). Parts that
// differ in their columns, or in having labels, targets or weights, are
// an error.
func joinBatches(parts []*data.Batch) (*data.Batch, error) {
	first := parts[0]
	_, d := first.X.Dims()
	k := 0
	if first.Targets != nil {
		_, k = first.Targets.Dims()
	}
	n := 0
	for _, p := range parts {
		_, pd := p.X.Dims()
		pk := 0
		if p.Targets != nil {
			_, pk = p.Targets.Dims()
		}
		switch {
		case pd != d:
			return nil, fmt.Errorf("model: a batch has %d feature columns, an earlier one %d", pd, d)
		case pk != k || (p.Targets != nil) != (first.Targets != nil) || (p.Y != nil) != (first.Y != nil):
			return nil, errors.New("model: some batches have other target columns than others")
		case (p.Weights != nil) != (first.Weights != nil):
			return nil, errors.New("model: some batches have weights and some do not")
		}
		n += batchLen(p)
	}
	if _, err := limits.Matrix("model: a batch", n, d); err != nil {
		return nil, err
	}
	out := &data.Batch{X: mat.NewDense(n, d, nil)}
	if first.Y != nil {
		out.Y = make([]float64, 0, n)
	}
	if first.Targets != nil {
		out.Targets = mat.NewDense(n, k, nil)
	}
	if first.Weights != nil {
		out.Weights = make([]float64, 0, n)
	}
	at := 0
	for _, p := range parts {
		m := batchLen(p)
		out.X.Slice(at, at+m, 0, d).(*mat.Dense).Copy(p.X)
		if out.Targets != nil {
			out.Targets.Slice(at, at+m, 0, k).(*mat.Dense).Copy(p.Targets)
		}
		out.Y = append(out.Y, p.Y...)
		out.Weights = append(out.Weights, p.Weights...)
		at += m
	}
	return out, nil
}

// StreamFile returns the opener of passes over the training file at path
// for Job.Stream, read in format ("csv", "libsvm", "parquet", or "" or "auto" for
// the format data.Open would read it in, data.FileFormat), the names of
// its columns and its width (the number of feature columns), so that a
// streamed fit reads the file as the in-memory fit of data.Open does and
// gives the same model file.
//
// A CSV file is streamed by StreamCSVColumns (opt selects its label,
// weight and target columns). A Parquet file is streamed as a CSV file
// is, its columns chosen by opt in the same way (data.ParquetReader):
// a pass reads one page of each column at a time, row group after row
// group. A LIBSVM file is scanned once here for its
// width, its largest feature index (data.ScanLIBSVM: a pass in constant
// memory, which also checks every line); its columns have no names and
// its label is the first field of each line, as data.Open reads it: opt's
// label is not used, and several targets or a weight column are an error,
// as they are for data.Open.
func StreamFile(path, format string, opt data.CSVOptions) (Opener, Columns, int, error) {
	format, err := data.FileFormat(path, format)
	if err != nil {
		return nil, Columns{}, 0, err
	}
	switch format {
	case "csv":
		open, cols, err := StreamCSVColumns(path, opt)
		return open, cols, len(cols.Names), err
	case "parquet":
		open, cols, err := streamParquet(path, opt)
		return open, cols, len(cols.Names), err
	}
	if len(opt.Targets) > 1 || opt.Weight != "" {
		return nil, Columns{}, 0, fmt.Errorf("%s: data: a LIBSVM file has one label and no weight column; use CSV for several targets or weights", path)
	}
	width, err := data.LIBSVMFileWidth(path)
	if err != nil {
		return nil, Columns{}, 0, err
	}
	open := func() (Batches, func() error, error) {
		f, err := data.OpenLIBSVM(path, width)
		if err != nil {
			return nil, nil, err
		}
		return f, f.Close, nil
	}
	return open, Columns{}, width, nil
}

// streamParquet returns the opener of passes over the Parquet file at
// path and the names of its columns, as StreamCSVColumns does for a CSV
// file.
func streamParquet(path string, opt data.CSVOptions) (Opener, Columns, error) {
	f, err := data.OpenParquet(path, opt)
	if err != nil {
		return nil, Columns{}, err
	}
	cols := Columns{Names: f.Names(), Label: f.Label()}
	if t := f.TargetNames(); len(t) > 1 {
		cols.Targets = t
	}
	if err := f.Close(); err != nil {
		return nil, Columns{}, err
	}
	open := func() (Batches, func() error, error) {
		f, err := data.OpenParquet(path, opt)
		if err != nil {
			return nil, nil, err
		}
		return f, f.Close, nil
	}
	return open, cols, nil
}
