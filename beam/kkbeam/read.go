package kkbeam

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// Source describes how the files of a pipeline are read and parsed. It is
// part of the serialised configuration of the reading DoFn, so every field
// is exported and JSON-encodable.
type Source struct {
	// Format is "csv", "libsvm", "parquet", or "" (also "auto"): LIBSVM
	// for the extensions .svm, .libsvm and .svmlight, CSV for .csv (after
	// removing a compression extension such as .gz), Parquet for .parquet,
	// otherwise Parquet when the file starts with Parquet's magic bytes
	// PAR1 and else by the first data line, as data.Open decides. ReadFile
	// reads CSV and LIBSVM, ReadParquet Parquet (see ReadInput).
	Format string
	// Label names the CSV target column; empty means the last column. With
	// Columns set it is optional (see Columns).
	Label string
	// NoLabel reads every CSV column as a feature (rows to predict).
	NoLabel bool
	// Columns, if set, are the expected CSV feature columns in order (the
	// columns of the first pass, or a model's): a file's columns are
	// matched by name as data.Open matches them, and a file that lacks one
	// or has a column that is neither one of them nor the label is refused.
	//
	// Label, NoLabel, Columns and Width choose a CSV file's columns
	// through data.MatchColumns, the matcher of data.Open and of
	// kernelkit fit, so that a Beam fit takes the columns (and refuses the
	// headers, with the same messages) that kernelkit fit does.
	Columns []string
	// Width, if positive, is the width of LIBSVM rows (the largest index of
	// the first pass, or a model's input dimension): an index above it is
	// a bad row. With Width 0 each chunk is as wide as its largest index.
	// A CSV file without Columns is then matched by position: Width
	// feature columns and an optional label, as data.Open matches it.
	Width int
	// Chunk is the number of rows per Batch (default 2048).
	Chunk int
	// Weight names a column of row weights (CSV and Parquet), read into
	// Batch.Weights and left out of the features; Targets names several
	// target columns (multi-output regression), read into Batch.Targets
	// instead of one label. They are data.OpenOptions.Weight and Targets,
	// chosen by data.MatchColumns: required without Columns and Width,
	// read if the file has them with either.
	Weight  string   `json:",omitempty"`
	Targets []string `json:",omitempty"`
	// CountClasses sets each batch's Before: the rows of each class
	// before it in its file (of positive weight, with weights).
	CountClasses bool
}

// Batch is a chunk of consecutive good rows of one file: the unit of work
// of both passes. Row i of the batch is record Start+i of the file's good
// rows (records that parsed), which was line Lines[i] of the file.
type Batch struct {
	File  string
	Start int64
	Lines []int64
	// Cols is the width of X (n×Cols, row-major).
	Cols int
	X    []float64
	// Y holds the targets (nil without a label column, or with several
	// target columns).
	Y []float64
	// Weights holds the rows' weights (Source.Weight; nil without).
	Weights []float64
	// Targets holds several targets per row (Source.Targets), n×K
	// row-major with K = len(Targets)/n; nil without.
	Targets []float64
	// Bad is the number of bad lines among the lines this batch covers and
	// FirstBad the first of them (nil if none).
	Bad      int64
	FirstBad *BadRow
	// Before, with Source.CountClasses, holds the rows of each class
	// (label l counted at index l; with weights, only the rows of positive
	// weight) among the file's good rows before this batch: with the counts of the files before it, where a
	// calibration's stratified folds resume (model.Plan.Prepare).
	Before []int64
	// Header carries a CSV file's column names and label (only on the
	// first batch of each file) so that the first pass can check that all
	// shards agree.
	Header *Header
	// FileErr, if set, is an error of the file as a whole (see FileError);
	// the batch then has no rows and the file no further batches.
	FileErr string
}

// Rows returns the number of rows of b.
func (b *Batch) Rows() int { return len(b.Lines) }

// Header is the column layout of a CSV or Parquet file: its feature
// columns, label, weight column and several target columns.
type Header struct {
	File    string
	Columns []string
	Label   string
	Weight  string   `json:",omitempty"`
	Targets []string `json:",omitempty"`
}

// K returns the number of target columns of b's Targets (0 without).
func (b *Batch) K() int {
	if n := b.Rows(); n > 0 {
		return len(b.Targets) / n
	}
	return 0
}

// BadRow is a line that did not parse, with its file, line number, the
// error (as data.Open would report it for that file) and the text of the
// line (cut to maxBadText bytes).
type BadRow struct {
	File string
	Line int64
	Err  string
	Text string
}

// Error returns the row's message: the file name, then data's message,
// which names the line.
func (r *BadRow) Error() string { return r.File + ": " + r.Err }

// before reports whether r comes before o in (file, line) order; nil comes
// last.
func (r *BadRow) before(o *BadRow) bool {
	if o == nil {
		return r != nil
	}
	if r == nil {
		return false
	}
	if r.File != o.File {
		return r.File < o.File
	}
	return r.Line < o.Line
}

// maxBadText is the most bytes of a bad line kept in the dead-letter output.
const maxBadText = 1 << 10

// defaultChunk is the number of rows per Batch when Source.Chunk is 0.
const defaultChunk = 2048

// FileError is a problem with a whole file (its header, its format, a line
// beyond the length limit) rather than with one row.
type FileError struct {
	File string
	Err  error
}

// Error returns the file name and the problem.
func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }

// Unwrap returns the problem.
func (e *FileError) Unwrap() error { return e.Err }

// line is one physical line of a file with its 1-based number.
type line struct {
	no   int64
	text string
}

// ReadFile parses the file name read from r into batches of at most
// src.Chunk rows, calling emit for each batch (a file with no good row
// still gets one empty batch, which carries its header and bad-row count)
// and bad for each line that does not parse. Errors of the file as a whole
// (an unreadable header, missing columns, a line longer than
// data.MaxLineBytes, a read error) are returned as *FileError.
//
// Lines are parsed with the rules of package data: a chunk of lines is
// handed to data.NewCSVReader (behind the file's header line) or
// data.ReadLIBSVM at once, and when that fails, each line on its own, so
// that each bad line is found with data's own message, rewritten to the
// line's number in the file. A CSV record must therefore fit on one line
// (a quoted cell cannot hold a line break, which no number does).
func ReadFile(name string, r io.Reader, src Source, emit func(*Batch) error, bad func(*BadRow) error) error {
	format, br, err := sniff(name, r, src.Format)
	if err != nil {
		return &FileError{name, err}
	}
	chunk := src.Chunk
	if chunk <= 0 {
		chunk = defaultChunk
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), data.MaxLineBytes)
	var no int64
	next := func() (line, bool) {
		for sc.Scan() {
			no++
			t := sc.Text()
			if no == 1 {
				t = strings.TrimPrefix(t, "\ufeff")
			}
			if !blank(t, format) {
				return line{no, t}, true
			}
		}
		return line{}, false
	}
	var p parser
	if format == "csv" {
		h, ok := next()
		if !ok {
			if err := scanErr(sc, name, no); err != nil {
				return err
			}
			return &FileError{name, errors.New("data: CSV is empty (no header row)")}
		}
		c, err := newCSVParser(name, h, src)
		if err != nil {
			return &FileError{name, err}
		}
		p = c
	} else {
		if len(src.Targets) > 1 || (src.Weight != "" && len(src.Columns) == 0 && src.Width <= 0) {
			return &FileError{name, errors.New("data: a LIBSVM file has one label and no weight column; use CSV for several targets or weights")}
		}
		p = &libsvmParser{file: name, width: src.Width}
	}
	var start int64
	var before []int64
	first := true
	lines := make([]line, 0, chunk)
	flush := func(final bool) error {
		if len(lines) == 0 && !(final && first) {
			return nil
		}
		b, bads, err := p.parse(lines)
		if err != nil {
			return &FileError{name, err}
		}
		b.File, b.Start = name, start
		if first {
			b.Header = p.header()
			first = false
		}
		for _, r := range bads {
			b.Bad++
			if b.FirstBad == nil {
				b.FirstBad = r
			}
			if err := bad(r); err != nil {
				return err
			}
		}
		start += int64(b.Rows())
		lines = lines[:0]
		if src.CountClasses {
			b.Before = slices.Clone(before)
			before = countClasses(before, b.Y, b.Weights)
		}
		return emit(b)
	}
	for {
		l, ok := next()
		if !ok {
			break
		}
		lines = append(lines, l)
		if len(lines) == chunk {
			if err := flush(false); err != nil {
				return err
			}
		}
	}
	if err := scanErr(sc, name, no); err != nil {
		return err
	}
	return flush(true)
}

// countClasses adds to counts (label l at index l) the labels y that are
// class indices (model.Census has checked them in the first pass), of the
// rows of positive weight w (every row if w is nil): the rows
// model.Census.ClassRows counts.
func countClasses(counts []int64, y, w []float64) []int64 {
	for i, v := range y {
		if v < 0 || v != math.Trunc(v) || v > maxClassLabel || (w != nil && !(w[i] > 0)) {
			continue
		}
		l := int(v)
		if l >= len(counts) {
			counts = append(counts, make([]int64, l+1-len(counts))...)
		}
		counts[l]++
	}
	return counts
}

// maxClassLabel is the largest class index (limits.MaxClasses − 1).
const maxClassLabel = limits.MaxClasses - 1

// scanErr returns the error of a scanner over file name that stopped after
// line no: a *FileError for a line beyond the length limit, a plain error
// (which a runner may retry) for a failed read.
func scanErr(sc *bufio.Scanner, name string, no int64) error {
	err := sc.Err()
	if err == nil {
		return nil
	}
	if errors.Is(err, bufio.ErrTooLong) {
		return &FileError{name, fmt.Errorf("data: line %d is longer than the limit of %s", no+1, limits.Bytes(float64(data.MaxLineBytes)))}
	}
	return fmt.Errorf("%s: reading after line %d: %w", name, no, err)
}

// blank reports whether a line holds no record: empty (CSV, as
// encoding/csv skips it) or, for LIBSVM, nothing but white space and a
// comment (as data.ReadLIBSVM skips it).
func blank(t, format string) bool {
	if format == "csv" {
		return t == ""
	}
	if i := strings.IndexByte(t, '#'); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(t) == ""
}

// compressionExt lists the extensions Beam's fileio decompresses.
var compressionExt = map[string]bool{".gz": true}

// sniff returns the format of the file: format itself, or for "" and
// "auto" the one its extension or first data line shows (the rule of
// data.Open), and a reader positioned at the start.
func sniff(name string, r io.Reader, format string) (string, *bufio.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	switch format {
	case "csv", "libsvm":
		return format, br, nil
	case "", "auto":
	default:
		return "", nil, fmt.Errorf("data: unknown format %.40q (want auto, csv, libsvm or parquet)", format)
	}
	base := path.Base(name)
	if ext := strings.ToLower(path.Ext(base)); compressionExt[ext] {
		base = strings.TrimSuffix(base, path.Ext(base))
	}
	switch strings.ToLower(path.Ext(base)) {
	case ".svm", ".libsvm", ".svmlight":
		return "libsvm", br, nil
	case ".csv":
		return "csv", br, nil
	}
	head, err := br.Peek(br.Size())
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", nil, err
	}
	for l := range bytes.Lines(head) {
		if i := bytes.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		fields := bytes.Fields(l)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 || bytes.IndexByte(l, ',') >= 0 {
			return "csv", br, nil
		}
		for _, f := range fields[1:] {
			k, _, ok := bytes.Cut(f, []byte(":"))
			if !ok || len(k) == 0 || len(bytes.Trim(k, "0123456789")) != 0 {
				return "csv", br, nil
			}
		}
		return "libsvm", br, nil
	}
	return "csv", br, nil
}

// parser turns lines into a batch of good rows and the bad lines.
type parser interface {
	parse(lines []line) (*Batch, []*BadRow, error)
	header() *Header
}

// csvParser parses the lines of one CSV file behind its header line.
type csvParser struct {
	file    string
	head    string // the header line, as in the file
	all     int    // number of columns in the file
	feat    []int  // file column of each feature
	label   int    // file column of the label, −1 if none
	weight  int    // file column of the weight, −1 if none
	targets []int  // file columns of the several targets, nil if none
	h       *Header
	scratch bytes.Buffer
}

func newCSVParser(file string, h line, src Source) (*csvParser, error) {
	cr := csv.NewReader(strings.NewReader(h.text))
	cr.TrimLeadingSpace = true
	names, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("data: CSV header: %w", err)
	}
	if h.no != 1 {
		// The header is re-read behind every chunk as line 1.
		return nil, fmt.Errorf("data: CSV header on line %d: blank lines before the header are not supported", h.no)
	}
	// The columns are chosen by package data's matcher, the one of
	// data.Open, data.NewCSVReader and kernelkit fit, with its messages.
	m, err := matchColumns(names, src)
	if err != nil {
		return nil, err
	}
	c := &csvParser{file: file, head: h.text, all: len(names), feat: m.Features, label: m.Label, weight: m.Weight, targets: m.Targets}
	c.h = header(file, m, src)
	return c, nil
}

// matchColumns returns the roles of the columns names of a CSV or Parquet
// file under src, by data.MatchColumns.
func matchColumns(names []string, src Source) (*data.ColumnMatch, error) {
	return data.MatchColumns(names, data.OpenOptions{Label: src.Label, NoLabel: src.NoLabel, Columns: src.Columns, Width: src.Width,
		Weight: src.Weight, Targets: src.Targets})
}

// header returns the Header of file whose columns m matched under src.
func header(file string, m *data.ColumnMatch, src Source) *Header {
	h := &Header{File: file, Columns: m.Names, Label: m.LabelName}
	if m.Weight >= 0 {
		h.Weight = src.Weight
	}
	if m.Targets != nil {
		h.Targets = slices.Clone(src.Targets)
	}
	return h
}

// list returns names quoted and joined, cut after 8 of them.
func list(names []string) string {
	q := make([]string, 0, min(len(names), 9))
	for i, n := range names {
		if i == 8 {
			q = append(q, fmt.Sprintf("… (%d in all)", len(names)))
			break
		}
		q = append(q, fmt.Sprintf("%.40q", n))
	}
	return strings.Join(q, ", ")
}

func (c *csvParser) header() *Header { return c.h }

// read parses lines (behind the header) with data.NewCSVReader, every
// column a number, and returns the n×all matrix.
func (c *csvParser) read(lines []line) ([]float64, int, error) {
	c.scratch.Reset()
	c.scratch.WriteString(c.head)
	for _, l := range lines {
		c.scratch.WriteByte('\n')
		c.scratch.WriteString(l.text)
	}
	c.scratch.WriteByte('\n')
	r, err := data.NewCSVReader(bytes.NewReader(c.scratch.Bytes()), data.CSVOptions{NoLabel: true})
	if err != nil {
		return nil, 0, err
	}
	x, _, err := r.Read(0)
	if err == io.EOF {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	n, _ := x.Dims()
	return x.RawMatrix().Data, n, nil
}

func (c *csvParser) parse(lines []line) (*Batch, []*BadRow, error) {
	b := &Batch{Cols: len(c.feat)}
	if len(lines) == 0 {
		return b, nil, nil
	}
	raw, n, err := c.read(lines)
	if err == nil && n == len(lines) {
		c.take(b, raw, lines)
		return b, nil, nil
	}
	// Find the bad lines one by one.
	var bads []*BadRow
	for i := range lines {
		raw, n, err := c.read(lines[i : i+1])
		if err == nil && n != 1 {
			err = errors.New("data: CSV line 2 is not one record")
		}
		if err != nil {
			bads = append(bads, badRow(c.file, lines[i], err, 2))
			continue
		}
		c.take(b, raw, lines[i:i+1])
	}
	return b, bads, nil
}

// take appends the rows raw (one per line, c.all columns) to b.
func (c *csvParser) take(b *Batch, raw []float64, lines []line) {
	for i, l := range lines {
		appendRow(b, raw[i*c.all:(i+1)*c.all], c.feat, c.label, c.weight, c.targets)
		b.Lines = append(b.Lines, l.no)
	}
}

// libsvmParser parses LIBSVM lines with data.ReadLIBSVM.
type libsvmParser struct {
	file    string
	width   int
	scratch bytes.Buffer
}

func (p *libsvmParser) header() *Header { return nil }

// read parses lines with data.ReadLIBSVM at p.width; a chunk in which no
// row lists a feature (only possible without a width) is read at width 0.
func (p *libsvmParser) read(lines []line) (*data.Dataset, error) {
	p.scratch.Reset()
	for _, l := range lines {
		p.scratch.WriteString(l.text)
		p.scratch.WriteByte('\n')
	}
	ds, err := data.ReadLIBSVM(bytes.NewReader(p.scratch.Bytes()), p.width)
	if err != nil && p.width <= 0 && strings.Contains(err.Error(), "has no features") {
		// Labels only: read them at width 1, all zero, and drop the column.
		if ds, err = data.ReadLIBSVM(bytes.NewReader(p.scratch.Bytes()), 1); err == nil {
			ds.X = nil
		}
	}
	return ds, err
}

func (p *libsvmParser) parse(lines []line) (*Batch, []*BadRow, error) {
	b := &Batch{}
	if len(lines) == 0 {
		return b, nil, nil
	}
	if ds, err := p.read(lines); err == nil && len(ds.Y) == len(lines) {
		p.take(b, ds, lines)
		return b, nil, nil
	}
	var good []line
	var bads []*BadRow
	for i := range lines {
		ds, err := p.read(lines[i : i+1])
		if err != nil {
			bads = append(bads, badRow(p.file, lines[i], err, 1))
			continue
		}
		if len(ds.Y) != 1 {
			bads = append(bads, badRow(p.file, lines[i], errors.New("data: LIBSVM line 1 is not one row"), 1))
			continue
		}
		good = append(good, lines[i])
	}
	if len(good) > 0 {
		// The good lines together, so that the batch has one width.
		ds, err := p.read(good)
		if err != nil {
			return nil, nil, fmt.Errorf("data: LIBSVM lines %d to %d: %w", good[0].no, good[len(good)-1].no, err)
		}
		p.take(b, ds, good)
	}
	return b, bads, nil
}

func (p *libsvmParser) take(b *Batch, ds *data.Dataset, lines []line) {
	if ds.X != nil {
		b.Cols = ds.Cols()
		b.X = ds.X.RawMatrix().Data
	}
	b.Y = ds.Y
	for _, l := range lines {
		b.Lines = append(b.Lines, l.no)
	}
}

// lineRef matches the line number data's messages give a line parsed on
// its own.
var lineRef = map[int]*regexp.Regexp{
	1: regexp.MustCompile(`\bline 1\b`),
	2: regexp.MustCompile(`\bline 2\b`),
}

// badRow records line l of file, whose parse on its own (as line at of
// the text handed to package data) failed with err: data's message with
// the line's number in the file.
func badRow(file string, l line, err error, at int) *BadRow {
	msg := lineRef[at].ReplaceAllLiteralString(err.Error(), "line "+strconv.FormatInt(l.no, 10))
	text := l.text
	if len(text) > maxBadText {
		text = strings.ToValidUTF8(text[:maxBadText], "") + fmt.Sprintf("… (%d bytes)", len(l.text))
	}
	return &BadRow{File: file, Line: l.no, Err: msg, Text: text}
}
