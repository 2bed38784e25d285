package data

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// ReadLIBSVM reads the LIBSVM/SVMlight format "label idx:val idx:val ..."
// with 1-based, increasing indices; comments after '#' are ignored. Labels
// and values must be plain decimal numbers.
//
// dim is the width of the returned matrix when the caller knows it (the
// input dimension of a model, or the width of the training file): indices
// up to dim are accepted and features a row does not list are zero, so a
// test file whose largest index is smaller than the training width reads
// at the training width; an index above dim is an error. If dim ≤ 0 the
// width is the largest index in the file.
//
// The file is read sparsely: memory while reading follows the entries,
// not the width, and the dense matrix is allocated only after its size
// (rows × width) has been checked against limits.MaxElements. Indices above
// limits.MaxDim and lines longer than MaxLineBytes are errors.
func ReadLIBSVM(r io.Reader, dim int) (*Dataset, error) {
	if dim > limits.MaxDim {
		return nil, fmt.Errorf("data: LIBSVM width %d is above the limit %d", dim, limits.MaxDim)
	}
	p, err := newLIBSVMLines(r, dim)
	if err != nil {
		return nil, err
	}
	var (
		idx    []int32   // feature index − 1 of each stored entry
		vals   []float64 // its value
		ends   []int     // end of each row's entries in idx and vals
		ys     []float64 // labels
		maxIdx int
	)
	for {
		y, last, err := p.next(&idx, &vals)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		maxIdx = max(maxIdx, last)
		ends = append(ends, len(idx))
		ys = append(ys, y)
		// Stop as soon as the dense matrix would be too large, before
		// reading (or allocating for) the rest of the file.
		if _, err := limits.Matrix("the data matrix", len(ys), max(dim, maxIdx)); err != nil {
			return nil, fmt.Errorf("data: LIBSVM line %d: %w", p.line, err)
		}
	}
	if len(ys) == 0 {
		return nil, errors.New("data: LIBSVM file has no rows")
	}
	width := dim
	if width <= 0 {
		width = maxIdx
	}
	if width == 0 {
		return nil, errors.New("data: LIBSVM file has no features")
	}
	n, err := limits.Matrix("the data matrix", len(ys), width)
	if err != nil {
		return nil, fmt.Errorf("data: LIBSVM: %w", err)
	}
	raw := make([]float64, n)
	lo := 0
	for i, hi := range ends {
		row := raw[i*width : (i+1)*width]
		for e := lo; e < hi; e++ {
			row[idx[e]] = vals[e]
		}
		lo = hi
	}
	return &Dataset{X: mat.NewDense(len(ys), width, raw), Y: ys}, nil
}

// libsvmLines parses the rows of LIBSVM data one line at a time, for
// ReadLIBSVM and the streaming LIBSVMReader: a leading byte-order mark is
// skipped, comments after '#' and blank lines are ignored, and a line
// longer than maxLineBytes is an error after at most that many bytes.
type libsvmLines struct {
	sc   *bufio.Scanner
	dim  int // > 0: the width, which indices may not pass
	line int // the line last read, from 1
}

func newLIBSVMLines(r io.Reader, dim int) (*libsvmLines, error) {
	br, err := skipBOM(newLineGate(r))
	if err != nil {
		if errors.Is(err, errLineTooLong) {
			return nil, fmt.Errorf("data: LIBSVM line 1 is longer than the limit of %s", limits.Bytes(float64(maxLineBytes)))
		}
		return nil, fmt.Errorf("data: LIBSVM: %w", err)
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	return &libsvmLines{sc: sc, dim: dim}, nil
}

// next parses the next row: it returns the label and the row's largest
// index (0 for a row of no entries) and appends the entries with non-zero
// values to *idx (index − 1) and *vals. At the end it returns io.EOF.
func (p *libsvmLines) next(idx *[]int32, vals *[]float64) (y float64, last int, err error) {
	for p.sc.Scan() {
		p.line++
		line := p.line
		text := p.sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		y, err := parseDecimal(fields[0])
		if err != nil {
			return 0, 0, fmt.Errorf("data: LIBSVM line %d: label: %w", line, err)
		}
		last := 0
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(f, ":")
			if !ok {
				return 0, 0, fmt.Errorf("data: LIBSVM line %d: %s is not index:value", line, quote(f))
			}
			j, err := parseIndex(k)
			if err != nil {
				return 0, 0, fmt.Errorf("data: LIBSVM line %d: %w", line, err)
			}
			if j <= last {
				return 0, 0, fmt.Errorf("data: LIBSVM line %d: indices not increasing at %d", line, j)
			}
			if p.dim > 0 && j > p.dim {
				return 0, 0, fmt.Errorf("data: LIBSVM line %d: feature index %d is beyond the width %d (the model's or training data's)", line, j, p.dim)
			}
			last = j
			val, err := parseDecimal(v)
			if err != nil {
				return 0, 0, fmt.Errorf("data: LIBSVM line %d, index %d: %w", line, j, err)
			}
			if val != 0 {
				*idx = append(*idx, int32(j-1))
				*vals = append(*vals, val)
			}
		}
		return y, last, nil
	}
	if err := p.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) || errors.Is(err, errLineTooLong) {
			return 0, 0, fmt.Errorf("data: LIBSVM line %d is longer than the limit of %s", p.line+1, limits.Bytes(float64(maxLineBytes)))
		}
		return 0, 0, fmt.Errorf("data: LIBSVM: %w", err)
	}
	return 0, 0, io.EOF
}
