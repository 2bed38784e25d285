package data

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
)

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
