package data

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// LIBSVMReader streams batches of rows from LIBSVM data at a width known
// beforehand (ScanLIBSVM finds a file's), as CSVReader streams a CSV file:
// the rows, labels and errors are those of ReadLIBSVM with that width.
type LIBSVMReader struct {
	p     *libsvmLines
	width int
	idx   []int32   // one row's entries (index − 1), reused
	vals  []float64 // their values
}

// NewLIBSVMReader prepares to stream the rows of r at width columns
// (1 to limits.MaxDim): features a row does not list are zero, an index
// beyond width is an error.
func NewLIBSVMReader(r io.Reader, width int) (*LIBSVMReader, error) {
	if width < 1 || width > limits.MaxDim {
		return nil, fmt.Errorf("data: LIBSVM width %d is outside 1 to %d", width, limits.MaxDim)
	}
	p, err := newLIBSVMLines(r, width)
	if err != nil {
		return nil, err
	}
	return &LIBSVMReader{p: p, width: width}, nil
}

// Width returns the number of feature columns.
func (l *LIBSVMReader) Width() int { return l.width }

// Read returns up to max rows (all remaining rows if max ≤ 0) and their
// labels; at the end of the data it returns io.EOF with no rows. A batch
// larger than limits.MaxElements values is refused.
func (l *LIBSVMReader) Read(max int) (*mat.Dense, []float64, error) {
	b, err := l.ReadBatch(max)
	if err != nil {
		return nil, nil, err
	}
	return b.X, b.Y, nil
}

// ReadBatch is Read as a Batch (LIBSVM rows have labels, and neither
// weights nor several targets).
func (l *LIBSVMReader) ReadBatch(max int) (*Batch, error) {
	maxRows := limits.MaxElements / l.width
	var xs, ys []float64
	n := 0
	for max <= 0 || n < max {
		l.idx, l.vals = l.idx[:0], l.vals[:0]
		y, _, err := l.p.next(&l.idx, &l.vals)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if n == maxRows {
			_, err := limits.Matrix("the data matrix", n+1, l.width)
			return nil, fmt.Errorf("data: LIBSVM line %d: %w; read the file in batches", l.p.line, err)
		}
		at := len(xs)
		xs = append(xs, make([]float64, l.width)...)
		for e, j := range l.idx {
			xs[at+int(j)] = l.vals[e]
		}
		ys = append(ys, y)
		n++
	}
	if n == 0 {
		return nil, io.EOF
	}
	return &Batch{X: mat.NewDense(n, l.width, xs), Y: ys}, nil
}

// ScanLIBSVM reads LIBSVM data line by line, in memory independent of its
// size, and returns its width (the largest feature index: the width
// ReadLIBSVM gives it with dim ≤ 0) and its number of rows. Every line is
// checked as ReadLIBSVM checks it, so a file that scans reads. It is the
// first pass of a streamed fit over a LIBSVM file, whose width no header
// gives.
func ScanLIBSVM(r io.Reader) (width, rows int, err error) {
	p, err := newLIBSVMLines(r, 0)
	if err != nil {
		return 0, 0, err
	}
	var idx []int32
	var vals []float64
	for {
		idx, vals = idx[:0], vals[:0]
		_, last, err := p.next(&idx, &vals)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		width = max(width, last)
		rows++
	}
	if rows == 0 {
		return 0, 0, errors.New("data: LIBSVM file has no rows")
	}
	if width == 0 {
		return 0, 0, errors.New("data: LIBSVM file has no features")
	}
	return width, rows, nil
}

// LIBSVMFile streams a LIBSVM file for a fit in passes (model.FitStream):
// a LIBSVMReader whose errors name the file.
type LIBSVMFile struct {
	r    *LIBSVMReader
	f    *os.File
	path string
}

// OpenLIBSVM opens the LIBSVM file at path to stream its rows at width
// columns (LIBSVMFileWidth finds the file's own).
func OpenLIBSVM(path string, width int) (*LIBSVMFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewLIBSVMReader(f, width)
	if err != nil {
		if cerr := f.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &LIBSVMFile{r: r, f: f, path: path}, nil
}

// Read returns the next batch of rows as LIBSVMReader.Read does.
func (l *LIBSVMFile) Read(max int) (*mat.Dense, []float64, error) {
	x, y, err := l.r.Read(max)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", l.path, err)
	}
	return x, y, err
}

// ReadBatch returns the next batch of rows as LIBSVMReader.ReadBatch does.
func (l *LIBSVMFile) ReadBatch(max int) (*Batch, error) {
	b, err := l.r.ReadBatch(max)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", l.path, err)
	}
	return b, err
}

// Close closes the file.
func (l *LIBSVMFile) Close() error { return l.f.Close() }

// LIBSVMFileWidth returns the width of the LIBSVM file at path (its
// largest feature index) with ScanLIBSVM, its errors naming the file.
func LIBSVMFileWidth(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	width, _, err := ScanLIBSVM(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return width, nil
}

// FileFormat returns the format Open reads the file at path in: format
// itself when it is "csv", "libsvm" or "parquet", and for "" or "auto"
// the one the extension, the magic bytes or the first data line show
// (see OpenOptions.Format). An unknown format is an error.
func FileFormat(path, format string) (string, error) {
	if format != "" && format != "auto" {
		return sniff(nil, path, format) // the format itself, or its error
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	got, err := sniff(bufio.NewReaderSize(f, 64<<10), path, format)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return got, nil
}
