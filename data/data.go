package data

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/rng"
)

// Dataset is a table of numeric features with one target per row.
type Dataset struct {
	X *mat.Dense
	// Y holds the targets: class indices for classification, real values
	// for regression. It is nil for unlabelled data.
	Y []float64
	// Names holds the feature column names (nil for LIBSVM data).
	Names []string
	// Label is the name of the target column ("" if none).
	Label string
}

// Rows returns the number of rows.
func (d *Dataset) Rows() int { r, _ := d.X.Dims(); return r }

// Cols returns the number of feature columns.
func (d *Dataset) Cols() int { _, c := d.X.Dims(); return c }

// CSVOptions selects the label column of a CSV file.
type CSVOptions struct {
	// Label names the target column. Empty means the last column, unless
	// NoLabel is set.
	Label string
	// NoLabel reads every column as a feature.
	NoLabel bool
}

// CSVReader streams batches of rows from a CSV file with a header row.
type CSVReader struct {
	r      *csv.Reader
	names  []string
	label  int // column index of the label, −1 if none
	line   int
	labelN string
}

// NewCSVReader reads the header and prepares to stream rows.
func NewCSVReader(r io.Reader, opt CSVOptions) (*CSVReader, error) {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("data: CSV is empty (no header row)")
	}
	if err != nil {
		return nil, fmt.Errorf("data: CSV header: %w", err)
	}
	header = append([]string(nil), header...)
	c := &CSVReader{r: cr, line: 1, label: -1}
	switch {
	case opt.NoLabel:
	case opt.Label == "":
		c.label = len(header) - 1
	default:
		for i, h := range header {
			if strings.TrimSpace(h) == opt.Label {
				c.label = i
			}
		}
		if c.label < 0 {
			return nil, fmt.Errorf("data: CSV has no column %q (columns: %s)", opt.Label, strings.Join(header, ", "))
		}
	}
	for i, h := range header {
		if i == c.label {
			c.labelN = strings.TrimSpace(h)
			continue
		}
		c.names = append(c.names, strings.TrimSpace(h))
	}
	if len(c.names) == 0 {
		return nil, errors.New("data: CSV has no feature columns")
	}
	return c, nil
}

// Names returns the feature column names.
func (c *CSVReader) Names() []string { return c.names }

// Read returns up to max rows (all remaining rows if max ≤ 0) as a feature
// matrix and targets (nil without a label column). At the end of the file
// it returns io.EOF with no rows.
func (c *CSVReader) Read(max int) (*mat.Dense, []float64, error) {
	width := len(c.names)
	var xs, ys []float64
	n := 0
	for max <= 0 || n < max {
		rec, err := c.r.Read()
		if err == io.EOF {
			break
		}
		c.line++
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
				return nil, nil, fmt.Errorf("data: CSV line %d has %d fields, header has %d", pe.Line, len(rec), width+btoi(c.label >= 0))
			}
			return nil, nil, fmt.Errorf("data: CSV line %d: %w", c.line, err)
		}
		for i, cell := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
			if err != nil {
				return nil, nil, fmt.Errorf("data: CSV line %d, column %d: %q is not a number", c.line, i+1, cell)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("data: CSV line %d, column %d: value %q is not finite", c.line, i+1, cell)
			}
			if i == c.label {
				ys = append(ys, v)
			} else {
				xs = append(xs, v)
			}
		}
		n++
	}
	if n == 0 {
		return nil, nil, io.EOF
	}
	if c.label < 0 {
		ys = nil
	}
	return mat.NewDense(n, width, xs), ys, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ReadCSV reads a whole CSV file with a header row.
func ReadCSV(r io.Reader, opt CSVOptions) (*Dataset, error) {
	c, err := NewCSVReader(r, opt)
	if err != nil {
		return nil, err
	}
	x, y, err := c.Read(0)
	if err == io.EOF {
		return nil, errors.New("data: CSV has a header but no rows")
	}
	if err != nil {
		return nil, err
	}
	return &Dataset{X: x, Y: y, Names: c.names, Label: c.labelN}, nil
}

// ReadLIBSVM reads the LIBSVM/SVMlight format "label idx:val idx:val ..."
// with 1-based, increasing indices. dim fixes the number of features; if
// dim ≤ 0 it is the largest index seen. Comments after '#' are ignored.
func ReadLIBSVM(r io.Reader, dim int) (*Dataset, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	type entry struct {
		idx int
		val float64
	}
	var rows [][]entry
	var ys []float64
	maxIdx := 0
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		y, err := strconv.ParseFloat(fields[0], 64)
		if err != nil || math.IsNaN(y) || math.IsInf(y, 0) {
			return nil, fmt.Errorf("data: LIBSVM line %d: label %q is not a finite number", line, fields[0])
		}
		var row []entry
		last := 0
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(f, ":")
			if !ok {
				return nil, fmt.Errorf("data: LIBSVM line %d: %q is not index:value", line, f)
			}
			idx, err := strconv.Atoi(k)
			if err != nil || idx < 1 {
				return nil, fmt.Errorf("data: LIBSVM line %d: index %q is not a positive integer", line, k)
			}
			if idx <= last {
				return nil, fmt.Errorf("data: LIBSVM line %d: indices not increasing at %d", line, idx)
			}
			last = idx
			val, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(val) || math.IsInf(val, 0) {
				return nil, fmt.Errorf("data: LIBSVM line %d: value %q is not a finite number", line, v)
			}
			if dim > 0 && idx > dim {
				return nil, fmt.Errorf("data: LIBSVM line %d: index %d beyond dimension %d", line, idx, dim)
			}
			maxIdx = max(maxIdx, idx)
			row = append(row, entry{idx, val})
		}
		rows = append(rows, row)
		ys = append(ys, y)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("data: LIBSVM: %w", err)
	}
	if len(rows) == 0 {
		return nil, errors.New("data: LIBSVM file has no rows")
	}
	if dim <= 0 {
		dim = maxIdx
	}
	if dim == 0 {
		return nil, errors.New("data: LIBSVM file has no features")
	}
	x := mat.NewDense(len(rows), dim, nil)
	for i, row := range rows {
		for _, e := range row {
			x.Set(i, e.idx-1, e.val)
		}
	}
	return &Dataset{X: x, Y: ys}, nil
}

// Scaler standardises features: x' = (x − Mean)/Scale, with Scale = 1 for
// constant columns.
type Scaler struct {
	Mean  []float64 `json:"mean"`
	Scale []float64 `json:"scale"`
}

// FitScaler computes column means and (population) standard deviations.
func FitScaler(x *mat.Dense) (*Scaler, error) {
	n, d := x.Dims()
	if n == 0 {
		return nil, errors.New("data: cannot fit a scaler on no rows")
	}
	s := &Scaler{Mean: make([]float64, d), Scale: make([]float64, d)}
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			s.Mean[j] += v
		}
	}
	for j := range s.Mean {
		s.Mean[j] /= float64(n)
	}
	for i := 0; i < n; i++ {
		for j, v := range x.RawRowView(i) {
			d := v - s.Mean[j]
			s.Scale[j] += d * d
		}
	}
	for j := range s.Scale {
		s.Scale[j] = math.Sqrt(s.Scale[j] / float64(n))
		if s.Scale[j] < 1e-12*math.Max(1, math.Abs(s.Mean[j])) {
			s.Scale[j] = 1
		}
	}
	return s, nil
}

// Transform returns the standardised copy of x.
func (s *Scaler) Transform(x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	if d != len(s.Mean) {
		return nil, fmt.Errorf("data: scaler fitted on %d columns, got %d", len(s.Mean), d)
	}
	out := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		src := x.RawRowView(i)
		dst := out.RawRowView(i)
		for j, v := range src {
			dst[j] = (v - s.Mean[j]) / s.Scale[j]
		}
	}
	return out, nil
}

// Subset returns the rows of d with the given indices (copied).
func (d *Dataset) Subset(idx []int) *Dataset {
	_, c := d.X.Dims()
	x := mat.NewDense(len(idx), c, nil)
	var y []float64
	if d.Y != nil {
		y = make([]float64, len(idx))
	}
	for i, r := range idx {
		copy(x.RawRowView(i), d.X.RawRowView(r))
		if y != nil {
			y[i] = d.Y[r]
		}
	}
	return &Dataset{X: x, Y: y, Names: d.Names, Label: d.Label}
}

// SplitAt returns the first n rows and the rest.
func (d *Dataset) SplitAt(n int) (train, test *Dataset, err error) {
	rows := d.Rows()
	if n <= 0 || n >= rows {
		return nil, nil, fmt.Errorf("data: split point %d not inside (0, %d)", n, rows)
	}
	a := make([]int, n)
	b := make([]int, rows-n)
	for i := range a {
		a[i] = i
	}
	for i := range b {
		b[i] = n + i
	}
	return d.Subset(a), d.Subset(b), nil
}

// Split shuffles the rows with the seed and returns a training set and a
// test set holding the fraction testFrac of the rows.
func (d *Dataset) Split(testFrac float64, seed uint64) (train, test *Dataset, err error) {
	rows := d.Rows()
	if !(testFrac > 0 && testFrac < 1) {
		return nil, nil, fmt.Errorf("data: test fraction %v not in (0, 1)", testFrac)
	}
	nt := int(math.Round(testFrac * float64(rows)))
	if nt < 1 || nt >= rows {
		return nil, nil, fmt.Errorf("data: test fraction %v of %d rows leaves an empty side", testFrac, rows)
	}
	perm := rng.New(seed).Perm(rows)
	return d.Subset(perm[nt:]), d.Subset(perm[:nt]), nil
}

// Labels returns the targets as class indices, checking that they are
// non-negative integers, and the number of classes (largest label + 1).
func (d *Dataset) Labels() ([]int, int, error) {
	if d.Y == nil {
		return nil, 0, errors.New("data: the data set has no label column")
	}
	out := make([]int, len(d.Y))
	k := 0
	for i, v := range d.Y {
		if v < 0 || v != math.Trunc(v) || v > 1e6 {
			return nil, 0, fmt.Errorf("data: label %v of row %d is not a class index (a non-negative integer)", v, i)
		}
		out[i] = int(v)
		k = max(k, out[i]+1)
	}
	return out, k, nil
}

//go:embed letter.csv
var letterCSV []byte

// Letter returns the embedded UCI Letter Recognition data set (20000 rows,
// 16 integer features, label 0..25 for A..Z).
func Letter() *Dataset {
	d, err := ReadCSV(bytes.NewReader(letterCSV), CSVOptions{})
	if err != nil {
		panic("data: embedded letter data is corrupt: " + err.Error())
	}
	return d
}
