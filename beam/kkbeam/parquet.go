package kkbeam

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// MaxParquetBuffer is the largest Parquet file, in bytes, that a worker
// reads into memory: a Parquet file is read at random (its footer first,
// then each column chunk), which a local file allows (its reader is an
// io.ReaderAt) but the readers of other Beam file systems (gs://, s3://)
// do not, so a worker reads such a file whole before parsing it. A larger
// file is refused with its size; write the table as more, smaller files
// (Spark and Arrow write files of about 128 MiB by default).
const MaxParquetBuffer = 1 << 30

// ReadParquet parses the Parquet file name, of size bytes read through r,
// into batches of at most src.Chunk rows, calling emit for each (a file
// with no row still gets one empty batch, which carries its header), as
// ReadFile parses a CSV file: the file's columns are chosen by name with
// the rules of data.MatchColumns under src (Label, NoLabel, Columns,
// Width, Weight, Targets) — the columns a CSV file with the same header
// would give — and its rows are read by data.ParquetReader (see there for
// the column types read). Row i of the file, counted from 1, is line i of
// the batches.
//
// A Parquet file has no bad rows: a value kernelkit does not read (a
// null, a NaN, a column of an unsupported type) is an error of the whole
// file, a *FileError whose message names the row group, the column and
// the row, as data.Open reports it. Every error is a *FileError.
func ReadParquet(name string, r io.ReaderAt, size int64, src Source, emit func(*Batch) error) (err error) {
	switch src.Format {
	case "", "auto", "parquet":
	default:
		return &FileError{name, fmt.Errorf("data: the file is Parquet, not %.40s", src.Format)}
	}
	chunk := src.Chunk
	if chunk <= 0 {
		chunk = defaultChunk
	}
	pr, err := data.NewParquetReader(r, size, data.CSVOptions{NoLabel: true})
	if err != nil {
		return &FileError{name, err}
	}
	defer func() {
		if cerr := pr.Close(); err == nil && cerr != nil {
			err = &FileError{name, cerr}
		}
	}()
	m, err := matchColumns(pr.Names(), src)
	if err != nil {
		return &FileError{name, err}
	}
	h := header(name, m, src)
	all := len(pr.Names())
	var (
		start, row int64
		before     []int64
	)
	first := true
	for {
		db, err := pr.ReadBatch(chunk)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return &FileError{name, err}
		}
		n, _ := db.X.Dims()
		b := &Batch{File: name, Start: start, Cols: len(m.Features), Lines: make([]int64, n)}
		for i := range b.Lines {
			b.Lines[i] = row + int64(i) + 1
		}
		pick(b, db.X.RawMatrix().Data, all, m)
		if first {
			b.Header, first = h, false
		}
		if src.CountClasses {
			b.Before = slices.Clone(before)
			before = countClasses(before, b.Y, b.Weights)
		}
		start += int64(n)
		row += int64(n)
		if err := emit(b); err != nil {
			return err
		}
	}
	if first {
		return emit(&Batch{File: name, Cols: len(m.Features), Header: h})
	}
	return nil
}

// pick fills b's features, label, weights and targets from raw, n rows
// of all columns (row-major), with the columns m chose.
func pick(b *Batch, raw []float64, all int, m *data.ColumnMatch) {
	n := len(raw) / all
	b.X = make([]float64, 0, n*len(m.Features))
	if m.Label >= 0 {
		b.Y = make([]float64, 0, n)
	}
	if m.Weight >= 0 {
		b.Weights = make([]float64, 0, n)
	}
	if m.Targets != nil {
		b.Targets = make([]float64, 0, n*len(m.Targets))
	}
	for i := range n {
		appendRow(b, raw[i*all:(i+1)*all], m.Features, m.Label, m.Weight, m.Targets)
	}
}

// appendRow appends one parsed row's chosen columns to b: the features
// feat, the label (label < 0: none), the weight (weight < 0: none) and
// the targets. The CSV and Parquet readers share it.
func appendRow(b *Batch, row []float64, feat []int, label, weight int, targets []int) {
	for _, j := range feat {
		b.X = append(b.X, row[j])
	}
	if label >= 0 {
		b.Y = append(b.Y, row[label])
	}
	if weight >= 0 {
		b.Weights = append(b.Weights, row[weight])
	}
	for _, j := range targets {
		b.Targets = append(b.Targets, row[j])
	}
}

// parquetMagic starts (and ends) every Parquet file.
const parquetMagic = "PAR1"

// isParquet reports whether the file name is to be read as Parquet under
// format: "parquet", or for "" and "auto" the extension .parquet, or an
// extension that names no other format and the magic bytes PAR1 at the
// start of the file (open returns the file's reader), as data.Open
// decides. A compressed file (.gz) is never Parquet: Parquet compresses
// its pages itself, and is read at random, which a decompressing stream
// cannot do.
func isParquet(name, format string, open func() (io.ReadCloser, error)) (bool, error) {
	switch format {
	case "parquet":
		if compressionExt[strings.ToLower(path.Ext(name))] {
			return false, &FileError{name, errors.New("data: a Parquet file is read at random and cannot be compressed as a whole (Parquet compresses its pages itself)")}
		}
		return true, nil
	case "", "auto":
	default:
		return false, nil
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".parquet":
		return true, nil
	case ".csv", ".svm", ".libsvm", ".svmlight", ".gz":
		return false, nil
	}
	rc, err := open()
	if err != nil {
		return false, err
	}
	head := make([]byte, len(parquetMagic))
	_, err = io.ReadFull(rc, head)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil
	}
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	return string(head) == parquetMagic, err
}

// openParquet opens the file path of Beam's file systems for random
// access: a local file as it is (an io.ReaderAt), a file of another file
// system (gs://) read whole into memory, if it has at most
// MaxParquetBuffer bytes. close releases the file.
func openParquet(ctx context.Context, name string) (r io.ReaderAt, size int64, close func() error, err error) {
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return nil, 0, nil, err
	}
	defer closeFS(fs, &err)
	if size, err = fs.Size(ctx, name); err != nil {
		return nil, 0, nil, err
	}
	rc, err := fs.OpenRead(ctx, name)
	if err != nil {
		return nil, 0, nil, err
	}
	if ra, ok := rc.(io.ReaderAt); ok {
		return ra, size, rc.Close, nil
	}
	if size > MaxParquetBuffer {
		err := &FileError{name, fmt.Errorf("data: a Parquet file of %s: a file of this file system is read into memory, at most %s (kkbeam.MaxParquetBuffer); write smaller files",
			limits.Bytes(float64(size)), limits.Bytes(MaxParquetBuffer))}
		return nil, 0, nil, errors.Join(err, rc.Close())
	}
	buf, err := io.ReadAll(bufio.NewReader(io.LimitReader(rc, size+1)))
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, 0, nil, err
	}
	if int64(len(buf)) != size {
		return nil, 0, nil, fmt.Errorf("the file has %d bytes, its listing %d: did it change?", len(buf), size)
	}
	return bytes.NewReader(buf), size, func() error { return nil }, nil
}

// ReadInput reads one input file of a pipeline into batches: Parquet (see
// isParquet) with ReadParquet, opened for random access through Beam's
// file systems, any other file with ReadFile through fileio (which
// decompresses .gz). Errors are those of ReadParquet and ReadFile; a
// failed open or read is a plain error, which a runner may retry.
func ReadInput(ctx context.Context, file fileio.ReadableFile, src Source, emit func(*Batch) error, bad func(*BadRow) error) error {
	name := file.Metadata.Path
	pq, err := isParquet(name, src.Format, func() (io.ReadCloser, error) { return file.Open(ctx) })
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			return fe
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	if pq {
		r, size, closeFn, err := openParquet(ctx, name)
		if err != nil {
			var fe *FileError
			if errors.As(err, &fe) {
				return fe
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		err = ReadParquet(name, r, size, src, emit)
		if cerr := closeFn(); err == nil && cerr != nil {
			err = fmt.Errorf("%s: %w", name, cerr)
		}
		return err
	}
	rc, err := file.Open(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	err = ReadFile(name, rc, src, emit, bad)
	if cerr := rc.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%s: %w", name, cerr)
	}
	return err
}

// targets returns the n×K matrix of b's several targets (nil without).
func (b *Batch) targets() *mat.Dense {
	if b.Targets == nil || b.Rows() == 0 {
		return nil
	}
	return mat.NewDense(b.Rows(), b.K(), b.Targets)
}
