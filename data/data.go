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
	"unicode/utf8"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/internal/rng"
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

// CSVOptions selects the label column of a CSV file, and the weight and
// target columns that are not features.
type CSVOptions struct {
	// Label names the target column. Empty means the last column, unless
	// NoLabel or Targets is set.
	Label string
	// NoLabel reads every column as a feature (but Weight).
	NoLabel bool
	// Targets names several target columns (multi-output regression),
	// read into Dataset.Targets (Batch.Targets) in this order instead of
	// one label; one name is the same as Label. It excludes Label and
	// NoLabel, and every name must be a column of the file, once.
	Targets []string
	// Weight names a column of per-row sample weights, read into
	// Dataset.Weights (Batch.Weights) and left out of the features. The
	// values are parsed like every cell; whether they are valid weights
	// (finite, non-negative) is for the fit to check.
	Weight string
}

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

// CSVReader streams batches of rows from a CSV file with a header row.
type CSVReader struct {
	columnRoles
	r    *csv.Reader
	in   *recordLimiter
	line int // line of the last record read
}

// columnRoles are the roles of a table's columns (a CSV header's, a
// Parquet schema's), chosen by CSVOptions: the label, the weight, the
// several targets and the features.
type columnRoles struct {
	names   []string // the feature columns' names
	label   int      // column index of the label, −1 if none
	labelN  string
	weight  int // column index of the weight, −1 if none
	weightN string
	target  []int // target index of each column (−1: not a target), nil without Targets
	targetN []string
}

// NewCSVReader reads the header and prepares to stream rows. A UTF-8
// byte-order mark at the start of r is skipped.
func NewCSVReader(r io.Reader, opt CSVOptions) (*CSVReader, error) {
	in := &recordLimiter{r: newLineGate(r)}
	in.start(0)
	br, err := skipBOM(in)
	if err != nil {
		return nil, fmt.Errorf("data: CSV header: %w", err)
	}
	cr := csv.NewReader(br)
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("data: CSV is empty (no header row)")
	}
	if err != nil {
		return nil, fmt.Errorf("data: CSV header: %w", err)
	}
	if len(header) > limits.MaxDim+1 {
		return nil, fmt.Errorf("data: CSV header has %d columns, above the limit of %d feature columns", len(header), limits.MaxDim)
	}
	header = append([]string(nil), header...)
	roles, err := matchColumns("CSV", header, opt)
	if err != nil {
		return nil, err
	}
	return &CSVReader{columnRoles: roles, r: cr, in: in, line: 1}, nil
}

// matchColumns returns the roles that opt gives the columns of header, a
// table of the format kind ("CSV", "Parquet"): the one matcher of the
// label, weight and target columns by name, for every format with named
// columns. Every name opt gives must be a column; the features must be
// at least one, and named once each.
func matchColumns(kind string, header []string, opt CSVOptions) (columnRoles, error) {
	c := columnRoles{label: -1, weight: -1}
	if len(opt.Targets) == 1 && opt.Label == "" {
		opt.Label, opt.Targets = opt.Targets[0], nil
	}
	if len(opt.Targets) > 0 && (opt.Label != "" || opt.NoLabel) {
		return c, fmt.Errorf("data: %s options name several target columns and a label (or none)", kind)
	}
	if opt.Weight != "" {
		if c.weight = column(header, opt.Weight); c.weight < 0 {
			return c, fmt.Errorf("data: %s has no weight column %s (columns: %s)", kind, quote(opt.Weight), quote(strings.Join(header, ", ")))
		}
		c.weightN = opt.Weight
	}
	if len(opt.Targets) > 0 {
		c.target = make([]int, len(header))
		for i := range c.target {
			c.target[i] = -1
		}
		for t, name := range opt.Targets {
			i := column(header, name)
			if i < 0 {
				return c, fmt.Errorf("data: %s has no target column %s (columns: %s)", kind, quote(name), quote(strings.Join(header, ", ")))
			}
			if c.target[i] >= 0 || i == c.weight {
				return c, fmt.Errorf("data: %s column %s named twice as a target or weight", kind, quote(name))
			}
			c.target[i] = t
		}
		c.targetN = append([]string(nil), opt.Targets...)
	}
	switch {
	case opt.NoLabel || c.target != nil:
	case opt.Label == "":
		c.label = len(header) - 1
		if c.label == c.weight {
			return c, fmt.Errorf("data: %s weight column is the last column, the default label; name the label", kind)
		}
	default:
		for i, h := range header {
			if strings.TrimSpace(h) == opt.Label {
				c.label = i
			}
		}
		if c.label < 0 {
			return c, fmt.Errorf("data: %s has no column %s (columns: %s)", kind, quote(opt.Label), quote(strings.Join(header, ", ")))
		}
		if c.label == c.weight {
			return c, fmt.Errorf("data: %s column %s is both the label and the weight", kind, quote(opt.Label))
		}
	}
	for i, h := range header {
		switch {
		case i == c.label:
			c.labelN = strings.TrimSpace(h)
		case i == c.weight || c.isTarget(i):
		default:
			c.names = append(c.names, strings.TrimSpace(h))
		}
	}
	if len(c.names) == 0 {
		return c, fmt.Errorf("data: %s has no feature columns", kind)
	}
	// A model names its inputs by column, and predict matches them by
	// name: two feature columns of one name would give a model no file
	// can be predicted with.
	seen := make(map[string]bool, len(c.names))
	for _, n := range c.names {
		if seen[n] {
			return c, fmt.Errorf("data: %s column %s appears twice", kind, quote(n))
		}
		seen[n] = true
	}
	return c, nil
}

// column returns the index of the column named name (spaces around the
// header cells trimmed), the last one if several are, or −1.
func column(header []string, name string) int {
	at := -1
	for i, h := range header {
		if strings.TrimSpace(h) == name {
			at = i
		}
	}
	return at
}

// isTarget reports whether column i is one of several target columns.
func (c *columnRoles) isTarget(i int) bool { return c.target != nil && c.target[i] >= 0 }

// Names returns the feature column names.
func (c *CSVReader) Names() []string { return c.names }

// Read returns up to max rows (all remaining rows if max ≤ 0) as a feature
// matrix and targets (nil without a label column, or with several target
// columns: ReadBatch returns those, and the weights). At the end of the
// file it returns io.EOF with no rows. Cells must be plain decimal numbers
// (see the package documentation); a batch larger than limits.MaxElements
// values is refused.
func (c *CSVReader) Read(max int) (*mat.Dense, []float64, error) {
	b, err := c.ReadBatch(max)
	if err != nil {
		return nil, nil, err
	}
	return b.X, b.Y, nil
}

// ReadBatch is Read with the weights (CSVOptions.Weight) and the several
// targets (CSVOptions.Targets) of the rows, if the reader has them.
func (c *CSVReader) ReadBatch(max int) (*Batch, error) {
	width := len(c.names)
	maxRows := limits.MaxElements / width
	k := len(c.targetN)
	var xs, ys, ws, ts []float64
	n := 0
	for max <= 0 || n < max {
		c.in.start(c.r.InputOffset())
		rec, err := c.r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				if errors.Is(pe.Err, csv.ErrFieldCount) {
					return nil, fmt.Errorf("data: CSV line %d has %d fields, header has %d", pe.StartLine, len(rec), width+btoi(c.label >= 0)+btoi(c.weight >= 0)+k)
				}
				return nil, fmt.Errorf("data: CSV: %w", err)
			}
			return nil, fmt.Errorf("data: CSV after line %d: %w", c.line, err)
		}
		line, _ := c.r.FieldPos(0)
		c.line = line
		if n == maxRows {
			_, err := limits.Matrix("the data matrix", n+1, width)
			return nil, fmt.Errorf("data: CSV line %d: %w; read the file in batches", line, err)
		}
		if k > 0 {
			ts = append(ts, make([]float64, k)...)
		}
		for i, cell := range rec {
			v, err := parseDecimal(strings.TrimSpace(cell))
			if err != nil {
				line, _ := c.r.FieldPos(i)
				return nil, fmt.Errorf("data: CSV line %d, column %d: %w", line, i+1, err)
			}
			switch {
			case i == c.label:
				ys = append(ys, v)
			case i == c.weight:
				ws = append(ws, v)
			case c.isTarget(i):
				ts[n*k+c.target[i]] = v
			default:
				xs = append(xs, v)
			}
		}
		n++
	}
	if n == 0 {
		return nil, io.EOF
	}
	b := &Batch{X: mat.NewDense(n, width, xs), Weights: ws}
	if c.label >= 0 {
		b.Y = ys
	}
	if k > 0 {
		b.Targets = mat.NewDense(n, k, ts)
	}
	return b, nil
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
	b, err := c.ReadBatch(0)
	if err == io.EOF {
		return nil, errors.New("data: CSV has a header but no rows")
	}
	if err != nil {
		return nil, err
	}
	return &Dataset{X: b.X, Y: b.Y, Names: c.names, Label: c.labelN,
		Targets: b.Targets, TargetNames: c.targetN, Weights: b.Weights, WeightColumn: c.weightN}, nil
}

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

// Scaler standardises features: x' = (x − Mean)/Scale, with Scale = 1 for
// constant columns.
type Scaler struct {
	Mean  []float64 `json:"mean"`
	Scale []float64 `json:"scale"`
}

// FitScaler computes column means and (population) standard deviations.
// It returns an error when a column's mean or deviation overflows float64
// (values beyond about 1e154), which no standardisation can represent.
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
	return s, s.finite()
}

// finite reports an error for a column whose mean or standard deviation
// overflowed float64 (finite values beyond about 1e154 square to +Inf),
// which would otherwise standardise the column to zeros or NaN.
func (s *Scaler) finite() error {
	for j := range s.Mean {
		if math.IsInf(s.Mean[j], 0) || math.IsNaN(s.Mean[j]) || math.IsInf(s.Scale[j], 0) || math.IsNaN(s.Scale[j]) {
			return fmt.Errorf("data: column %d: values too large to standardise (mean %g, standard deviation %g overflow float64)", j+1, s.Mean[j], s.Scale[j])
		}
	}
	return nil
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

// Standardize fits a Scaler on train and returns the standardised copies
// of train and test (the test rows scaled by the training statistics).
func Standardize(train, test *mat.Dense) (xtr, xte *mat.Dense, err error) {
	sc, err := FitScaler(train)
	if err != nil {
		return nil, nil, err
	}
	if xtr, err = sc.Transform(train); err != nil {
		return nil, nil, err
	}
	if xte, err = sc.Transform(test); err != nil {
		return nil, nil, err
	}
	return xtr, xte, nil
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

// MaxLineBytes is the longest line of a LIBSVM file, and the longest
// record of a CSV file, that the readers accept: 256 MiB. It bounds the
// memory one line can take before it is parsed.
const MaxLineBytes = 1 << 28

// maxLineBytes is MaxLineBytes; tests lower it.
var maxLineBytes = MaxLineBytes

// bom is the UTF-8 byte-order mark.
var bom = []byte{0xEF, 0xBB, 0xBF}

// skipBOM returns a buffered reader of r past a leading UTF-8 byte-order
// mark, if there is one.
func skipBOM(r io.Reader) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	b, err := br.Peek(len(bom))
	if err != nil && err != io.EOF {
		return nil, err
	}
	if bytes.Equal(b, bom) {
		if _, err := br.Discard(len(bom)); err != nil {
			return nil, err
		}
	}
	return br, nil
}

// recordLimiter reads from r and fails a read that would take the CSV
// record that starts at the offset given to start more than maxLineBytes
// (plus the read-ahead of the buffers above it) past that offset, so that
// one endless record cannot exhaust memory.
type recordLimiter struct {
	r     io.Reader
	read  int64 // bytes read from r so far
	limit int64 // offset that reads may not pass
}

// readAhead covers the bytes the buffered readers above a recordLimiter
// read ahead of the record being parsed.
const readAhead = 256 << 10

// start marks the start of a record at offset off of the parsed stream.
func (l *recordLimiter) start(off int64) { l.limit = off + int64(maxLineBytes) + readAhead }

func (l *recordLimiter) Read(p []byte) (int, error) {
	room := l.limit - l.read
	if room <= 0 {
		return 0, fmt.Errorf("a record is longer than the limit of %s", limits.Bytes(float64(maxLineBytes)))
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	l.read += int64(n)
	return n, err
}

// maxQuoted is the most bytes of an offending cell or token that an error
// message quotes (escapes counted); the rest is elided.
const maxQuoted = 40

// quote returns s quoted as by strconv.Quote, cut to maxQuoted bytes of
// quoted text with its length noted if it is longer, so that an error
// message stays one short line whatever the input.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	n := 0
	for i, w := 0, 0; i < len(s); i += w {
		_, w = utf8.DecodeRuneInString(s[i:])
		q := strconv.Quote(s[i : i+w])
		q = q[1 : len(q)-1]
		if n+len(q) > maxQuoted {
			fmt.Fprintf(&b, "\"… (%d bytes)", len(s))
			return b.String()
		}
		b.WriteString(q)
		n += len(q)
	}
	b.WriteByte('"')
	return b.String()
}

// isDecimal reports whether s is a plain decimal number: an optional sign,
// digits with an optional fraction (at least one digit in all), and an
// optional exponent e or E with an optional sign and at least one digit.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// parseDecimal parses a plain decimal number (see isDecimal) to a finite
// float64. It rejects the other forms strconv.ParseFloat accepts (digit
// separators as in 1_000, hexadecimal as in 0x1p4, Inf, Infinity and NaN)
// and numbers beyond the float64 range; numbers below it round to zero.
func parseDecimal(s string) (float64, error) {
	if !isDecimal(s) {
		switch strings.ToLower(strings.TrimLeft(s, "+-")) {
		case "inf", "infinity", "nan":
			return 0, fmt.Errorf("value %s is not finite", quote(s))
		}
		return 0, fmt.Errorf("%s is not a number (want a plain decimal such as -1.5e3)", quote(s))
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("value %s is not finite (beyond the float64 range)", quote(s))
	}
	return v, nil
}

// parseIndex parses a LIBSVM feature index: decimal digits, between 1 and
// limits.MaxDim.
func parseIndex(s string) (int, error) {
	if s == "" || strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, fmt.Errorf("index %s is not a positive integer", quote(s))
	}
	digits := strings.TrimLeft(s, "0")
	if digits == "" {
		return 0, errors.New("feature index 0: indices start at 1")
	}
	v := 0
	if len(digits) <= 9 { // below 10⁹: no overflow
		for i := 0; i < len(digits); i++ {
			v = 10*v + int(digits[i]-'0')
		}
	}
	if v == 0 || v > limits.MaxDim {
		if len(digits) > maxQuoted {
			digits = digits[:maxQuoted] + fmt.Sprintf("… (%d digits)", len(digits))
		}
		return 0, fmt.Errorf("feature index %s is above the limit %d", digits, limits.MaxDim)
	}
	return v, nil
}
