package data

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// ParquetReader streams batches of rows from a Parquet file, as
// CSVReader streams a CSV file: its columns are the CSV header's, matched
// by CSVOptions in the same way (the label, weight and target columns by
// name, every other column a feature), and its batches are Batches.
//
// The columns must be flat (no groups, lists or maps), of the physical
// types INT32, INT64, FLOAT, DOUBLE or BOOLEAN (true is 1, false 0),
// without a logical type other than an integer's (unsigned integers read
// as such); DECIMAL, DATE, TIME, TIMESTAMP and the other annotated types
// are refused rather than read as their stored integers. Columns may be
// required or optional, but a null is refused, as is a NaN or an
// infinity: kernelkit reads no missing values. Each of these errors is one
// line naming the row group, the column and the row (counted from 1 over
// the whole file).
//
// Rows are read column chunk by column chunk, a page at a time for each
// column, so that a reader holds one page per column besides the batch
// it returns, whatever the size of the row groups.
type ParquetReader struct {
	columnRoles
	r      io.ReaderAt
	size   int64
	file   *parquet.File
	meta   *format.FileMetaData
	groups []parquet.RowGroup
	cols   []*pqColumn // every column, in the schema's order
	rows   int64       // in the file
	done   int64       // rows returned
}

// pqColumn is one column of a ParquetReader and its position in the file.
type pqColumn struct {
	name     string
	index    int // leaf column index
	kind     parquet.Kind
	unsigned bool
	maxDef   byte // the definition level of a value (1 for an optional column)

	group int           // row group of the chunk being read, −1 before the first
	left  int64         // values of the chunk not yet loaded from its pages
	pages parquet.Pages // of the chunk being read
	vals  []float64     // the current page's values; vals[off:] are not yet returned
	off   int
	row   int64 // file row (from 0) of vals[off]

	dict     parquet.Dictionary // the dictionary dictVals converts
	dictVals []float64
}

// NewParquetReader reads the metadata of the Parquet file r of size bytes
// and prepares to stream its rows with the columns chosen by opt. Every
// size the file states (its footer, the row and column counts, each page's
// size and values) is checked against the file and the limits before
// memory of that size is allocated; encrypted files, and files whose
// column chunks are in other files, are refused.
func NewParquetReader(r io.ReaderAt, size int64, opt CSVOptions) (*ParquetReader, error) {
	if err := checkParquetFooter(r, size); err != nil {
		return nil, fmt.Errorf("data: Parquet: %w", err)
	}
	var f *parquet.File
	err := safely(func() (err error) {
		f, err = parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(64<<10))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("data: Parquet: %w", shorten(err))
	}
	p := &ParquetReader{r: r, size: size, file: f, meta: f.Metadata(), groups: f.RowGroups(), rows: f.NumRows()}
	fields := f.Root().Columns()
	if len(fields) > limits.MaxDim+1 {
		return nil, fmt.Errorf("data: Parquet file has %d columns, above the limit of %d feature columns", len(fields), limits.MaxDim)
	}
	header := make([]string, len(fields))
	for i, c := range fields {
		header[i] = c.Name()
		pc := &pqColumn{name: c.Name(), index: i, group: -1}
		if err := safely(func() error { return pc.setType(c) }); err != nil {
			return nil, fmt.Errorf("data: Parquet row group 1, column %s, row 1: %w", quote(c.Name()), err)
		}
		p.cols = append(p.cols, pc)
	}
	if len(p.groups) != len(p.meta.RowGroups) {
		return nil, fmt.Errorf("data: Parquet: %d row groups in the metadata, %d opened", len(p.meta.RowGroups), len(p.groups))
	}
	var sum int64
	for g := range p.meta.RowGroups {
		rg := &p.meta.RowGroups[g]
		if rg.NumRows < 0 || rg.NumRows > math.MaxInt64-sum {
			return nil, fmt.Errorf("data: Parquet row group %d has %d rows", g+1, rg.NumRows)
		}
		if len(rg.Columns) != len(fields) {
			return nil, fmt.Errorf("data: Parquet row group %d has %d column chunks for %d columns", g+1, len(rg.Columns), len(fields))
		}
		sum += rg.NumRows
	}
	if sum != p.rows {
		return nil, fmt.Errorf("data: Parquet file states %d rows, its row groups hold %d", p.rows, sum)
	}
	if p.columnRoles, err = matchColumns("Parquet", header, opt); err != nil {
		return nil, err
	}
	return p, nil
}

// setType checks that c is a flat column of a type kernelkit reads, and
// records how its values convert to float64.
func (pc *pqColumn) setType(c *parquet.Column) error {
	if !c.Leaf() || c.Repeated() || c.MaxDefinitionLevel() > 1 {
		return errors.New("a nested column (group, list or map); kernelkit reads flat columns of numbers")
	}
	pc.maxDef = byte(c.MaxDefinitionLevel())
	t := c.Type()
	switch pc.kind = t.Kind(); pc.kind {
	case parquet.Boolean, parquet.Int32, parquet.Int64, parquet.Float, parquet.Double:
	default:
		return fmt.Errorf("type %s is not int32, int64, float, double or boolean", t)
	}
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		it, ok := lt.Value.(*format.IntType)
		if !ok {
			return fmt.Errorf("logical type %s is not read as a number (want a plain or integer column)", lt)
		}
		pc.unsigned = !it.IsSigned
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.Int8, deprecated.Int16, deprecated.Int32, deprecated.Int64:
		case deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
			pc.unsigned = true
		default:
			return fmt.Errorf("converted type %v is not read as a number (want a plain or integer column)", *ct)
		}
	}
	return nil
}

// Names returns the feature column names.
func (p *ParquetReader) Names() []string { return p.names }

// Label returns the name of the label column ("" if none).
func (p *ParquetReader) Label() string { return p.labelN }

// TargetNames returns the names of several target columns (nil if none).
func (p *ParquetReader) TargetNames() []string { return p.targetN }

// WeightColumn returns the name of the weight column ("" if none).
func (p *ParquetReader) WeightColumn() string { return p.weightN }

// Rows returns the number of rows of the file.
func (p *ParquetReader) Rows() int64 { return p.rows }

// Read returns up to max rows (all remaining rows if max ≤ 0) as a
// feature matrix and targets, as CSVReader.Read does; at the end of the
// file it returns io.EOF with no rows.
func (p *ParquetReader) Read(max int) (*mat.Dense, []float64, error) {
	b, err := p.ReadBatch(max)
	if err != nil {
		return nil, nil, err
	}
	return b.X, b.Y, nil
}

// ReadBatch is Read with the weights and the several targets of the rows,
// as CSVReader.ReadBatch. A batch larger than limits.MaxElements values is
// refused before it is allocated.
func (p *ParquetReader) ReadBatch(max int) (*Batch, error) {
	n64 := p.rows - p.done
	if max > 0 && int64(max) < n64 {
		n64 = int64(max)
	}
	if n64 == 0 {
		return nil, io.EOF
	}
	width, k := len(p.names), len(p.targetN)
	if n64 > int64(limits.MaxElements) {
		_, err := limits.Matrix("the data matrix", limits.MaxElements+1, width)
		return nil, fmt.Errorf("data: Parquet: %d rows: %w; read the file in batches", n64, err)
	}
	n := int(n64)
	if _, err := limits.Matrix("the data matrix", n, width); err != nil {
		return nil, fmt.Errorf("data: Parquet: %w; read the file in batches", err)
	}
	if k > 0 {
		if _, err := limits.Matrix("the target matrix", n, k); err != nil {
			return nil, fmt.Errorf("data: Parquet: %w", err)
		}
	}
	b := &Batch{X: mat.NewDense(n, width, nil)}
	xs := b.X.RawMatrix().Data
	if p.label >= 0 {
		b.Y = make([]float64, n)
	}
	if p.weight >= 0 {
		b.Weights = make([]float64, n)
	}
	var ts []float64
	if k > 0 {
		b.Targets = mat.NewDense(n, k, nil)
		ts = b.Targets.RawMatrix().Data
	}
	// Rows are filled in blocks of about 1 MiB, a column at a time, so
	// that the strided writes of a column stay in the cache instead of
	// walking the whole matrix once per column.
	block := 1 + (1<<17)/(width+k+2)
	for lo := 0; lo < n; lo += block {
		m := min(block, n-lo)
		fj := 0
		for i, c := range p.cols {
			var err error
			switch {
			case i == p.label:
				err = p.take(c, m, b.Y, lo, 1)
			case i == p.weight:
				err = p.take(c, m, b.Weights, lo, 1)
			case p.isTarget(i):
				err = p.take(c, m, ts, lo*k+p.target[i], k)
			default:
				err = p.take(c, m, xs, lo*width+fj, width)
				fj++
			}
			if err != nil {
				return nil, err
			}
		}
	}
	p.done += n64
	return b, nil
}

// take writes the next n values of column c to dst[at], dst[at+stride], …
func (p *ParquetReader) take(c *pqColumn, n int, dst []float64, at, stride int) error {
	for n > 0 {
		if c.off == len(c.vals) {
			if err := p.nextPage(c); err != nil {
				return err
			}
		}
		m := min(n, len(c.vals)-c.off)
		for _, v := range c.vals[c.off : c.off+m] {
			dst[at] = v
			at += stride
		}
		c.off += m
		c.row += int64(m)
		n -= m
	}
	return nil
}

// fail returns an error at row group g (from 0), column c and file row
// row (from 0).
func (c *pqColumn) fail(g int, row int64, format string, args ...any) error {
	return fmt.Errorf("data: Parquet row group %d, column %s, row %d: %s", g+1, quote(c.name), row+1, fmt.Sprintf(format, args...))
}

// nextPage loads the next page of values of column c, moving on to the
// chunk of the next row group at the end of one.
func (p *ParquetReader) nextPage(c *pqColumn) error {
	for {
		if c.pages == nil || c.left == 0 {
			if err := p.nextChunk(c); err != nil {
				return err
			}
			continue
		}
		var page parquet.Page
		err := safely(func() (err error) {
			page, err = c.pages.ReadPage()
			return err
		})
		if err == io.EOF {
			return c.fail(c.group, c.row, "the column chunk ends %d values before the row group's end", c.left)
		}
		if err != nil {
			return c.fail(c.group, c.row, "%v", shorten(err))
		}
		err = safely(func() error { return c.load(page) })
		parquet.Release(page)
		if err != nil {
			return c.fail(c.group, c.row+int64(c.off), "%v", shorten(err))
		}
		if int64(len(c.vals)) > c.left {
			return c.fail(c.group, c.row, "a page of %d values passes the row group's end (%d values left)", len(c.vals), c.left)
		}
		c.left -= int64(len(c.vals))
		if len(c.vals) > 0 {
			return nil
		}
	}
}

// nextChunk moves column c to its chunk of the next row group, checked
// by checkChunk before its pages are read.
func (p *ParquetReader) nextChunk(c *pqColumn) error {
	if c.pages != nil {
		err := c.pages.Close()
		c.pages, c.dict, c.dictVals = nil, nil, nil
		if err != nil {
			return c.fail(c.group, c.row, "%v", shorten(err))
		}
	}
	c.group++
	if c.group >= len(p.groups) {
		return c.fail(c.group-1, c.row, "no more row groups")
	}
	rows := p.meta.RowGroups[c.group].NumRows
	if err := checkChunk(p.r, p.size, &p.meta.RowGroups[c.group].Columns[c.index], rows); err != nil {
		return c.fail(c.group, c.row, "%v", shorten(err))
	}
	if err := safely(func() error { c.pages = p.groups[c.group].ColumnChunks()[c.index].Pages(); return nil }); err != nil {
		return c.fail(c.group, c.row, "%v", shorten(err))
	}
	c.left = rows
	c.vals, c.off = c.vals[:0], 0
	return nil
}

// load converts the values of page to float64 into c.vals (from
// c.off = 0), refusing nulls and non-finite values.
func (c *pqColumn) load(page parquet.Page) error {
	c.vals, c.off = c.vals[:0], 0
	if nulls := page.NumNulls(); nulls > 0 {
		for i, l := range page.DefinitionLevels() {
			if l < c.maxDef {
				c.off = i
				break
			}
		}
		return errors.New("a null value (kernelkit reads no missing values: fill or drop the row)")
	}
	count := int(page.NumValues())
	if dict := page.Dictionary(); dict != nil {
		if dict != c.dict {
			var err error
			dp := dict.Page()
			data := dp.Data()
			if c.dictVals, err = appendFloats(c.dictVals[:0], &data, c.kind, c.unsigned, int(dp.NumValues())); err != nil {
				return fmt.Errorf("dictionary: %w", err)
			}
			c.dict = dict
		}
		data := page.Data()
		idx := data.Int32()
		if len(idx) < count {
			return fmt.Errorf("a dictionary page of %d indices for %d values", len(idx), count)
		}
		for i, j := range idx[:count] {
			if j < 0 || int(j) >= len(c.dictVals) {
				c.off = i
				return fmt.Errorf("dictionary index %d outside its %d entries", j, len(c.dictVals))
			}
			c.vals = append(c.vals, c.dictVals[j])
		}
	} else {
		var err error
		data := page.Data()
		if c.vals, err = appendFloats(c.vals, &data, c.kind, c.unsigned, count); err != nil {
			return err
		}
	}
	if c.kind == parquet.Float || c.kind == parquet.Double {
		for i, v := range c.vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				c.off = i
				c.vals = c.vals[:0]
				return fmt.Errorf("value %v is not finite", v)
			}
		}
	}
	return nil
}

// appendFloats appends the count values of v, of kind, to dst as float64:
// integers (unsigned when unsigned is set) rounded to the nearest float64
// as strconv.ParseFloat rounds their decimal form, booleans as 0 and 1.
func appendFloats(dst []float64, v *encoding.Values, kind parquet.Kind, unsigned bool, count int) ([]float64, error) {
	short := func(n int) error { return fmt.Errorf("a page of %d values holds %d", count, n) }
	switch kind {
	case parquet.Boolean:
		bits := v.Boolean()
		if len(bits)*8 < count {
			return nil, short(len(bits) * 8)
		}
		for i := range count {
			dst = append(dst, float64(bits[i>>3]>>(i&7)&1))
		}
	case parquet.Int32:
		s := v.Int32()
		if len(s) < count {
			return nil, short(len(s))
		}
		for _, x := range s[:count] {
			if unsigned {
				dst = append(dst, float64(uint32(x)))
			} else {
				dst = append(dst, float64(x))
			}
		}
	case parquet.Int64:
		s := v.Int64()
		if len(s) < count {
			return nil, short(len(s))
		}
		for _, x := range s[:count] {
			if unsigned {
				dst = append(dst, float64(uint64(x)))
			} else {
				dst = append(dst, float64(x))
			}
		}
	case parquet.Float:
		s := v.Float()
		if len(s) < count {
			return nil, short(len(s))
		}
		for _, x := range s[:count] {
			dst = append(dst, float64(x))
		}
	case parquet.Double:
		s := v.Double()
		if len(s) < count {
			return nil, short(len(s))
		}
		dst = append(dst, s[:count]...)
	default:
		return nil, fmt.Errorf("values of kind %v", kind)
	}
	return dst, nil
}

// Close releases the pages being read.
func (p *ParquetReader) Close() error {
	var errs []error
	for _, c := range p.cols {
		if c.pages != nil {
			errs = append(errs, c.pages.Close())
			c.pages = nil
		}
	}
	return errors.Join(errs...)
}

// ReadParquet reads the whole Parquet file r of size bytes with the
// columns chosen by opt (see ParquetReader).
func ReadParquet(r io.ReaderAt, size int64, opt CSVOptions) (*Dataset, error) {
	p, err := NewParquetReader(r, size, opt)
	if err != nil {
		return nil, err
	}
	b, err := p.ReadBatch(0)
	if cerr := p.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err == io.EOF {
		return nil, errors.New("data: Parquet file has no rows")
	}
	if err != nil {
		return nil, err
	}
	return &Dataset{X: b.X, Y: b.Y, Names: p.names, Label: p.labelN,
		Targets: b.Targets, TargetNames: p.targetN, Weights: b.Weights, WeightColumn: p.weightN}, nil
}

// ParquetFile streams a Parquet file for a fit in passes
// (model.FitStream): a ParquetReader whose errors name the file.
type ParquetFile struct {
	*ParquetReader
	f    *os.File
	path string
}

// OpenParquet opens the Parquet file at path and reads its metadata.
func OpenParquet(path string, opt CSVOptions) (*ParquetFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	p, err := newParquetFile(f, path, opt)
	if err != nil {
		if cerr := f.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func newParquetFile(f *os.File, path string, opt CSVOptions) (*ParquetFile, error) {
	size, err := parquetSize(f)
	if err != nil {
		return nil, err
	}
	r, err := NewParquetReader(f, size, opt)
	if err != nil {
		return nil, err
	}
	return &ParquetFile{ParquetReader: r, f: f, path: path}, nil
}

// Read returns the next batch of rows as ParquetReader.Read does.
func (p *ParquetFile) Read(max int) (*mat.Dense, []float64, error) {
	x, y, err := p.ParquetReader.Read(max)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", p.path, err)
	}
	return x, y, err
}

// ReadBatch returns the next batch of rows as ParquetReader.ReadBatch
// does.
func (p *ParquetFile) ReadBatch(max int) (*Batch, error) {
	b, err := p.ParquetReader.ReadBatch(max)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", p.path, err)
	}
	return b, err
}

// Close releases the pages being read and closes the file.
func (p *ParquetFile) Close() error {
	return errors.Join(p.ParquetReader.Close(), p.f.Close())
}

// safely calls fn and returns its error, or an error for a panic of the
// Parquet library on a damaged file (a slice out of range, a type it
// cannot handle): the file's data must give an error, never a crash.
func safely(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("damaged file (the Parquet library failed: %w)", shorten(fmt.Errorf("%v", r)))
		}
	}()
	return fn()
}

// maxLibraryMessage bounds the part of an error message that comes from
// the Parquet library (its decoder's errors can name a path through the
// file's metadata of any length): kernelkit's errors are one short line.
const maxLibraryMessage = 100

// shortError is a library error with its message cut to one short line;
// it unwraps to the whole error.
type shortError struct {
	msg string
	err error
}

func (e *shortError) Error() string { return e.msg }
func (e *shortError) Unwrap() error { return e.err }

// shorten returns err with its message on one line of at most
// maxLibraryMessage bytes (cut at a rune boundary and ended with "…"),
// or err itself when it is that short already.
func shorten(err error) error {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if len(msg) <= maxLibraryMessage && msg == err.Error() {
		return err
	}
	if len(msg) > maxLibraryMessage {
		cut := maxLibraryMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return &shortError{msg: msg, err: err}
}
