package data

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// OpenOptions selects the format, the label column and the expected
// feature columns of a file read by Open.
type OpenOptions struct {
	// Format is "csv", "libsvm", "parquet", or "" (also "auto"): LIBSVM
	// for the extensions .svm, .libsvm and .svmlight, CSV for .csv,
	// Parquet for .parquet, and otherwise Parquet when the file starts
	// with Parquet's magic bytes PAR1, LIBSVM when the first data line
	// looks like "label idx:value ...", CSV if not. A Parquet file's
	// columns are chosen by name as a CSV file's are (see ParquetReader).
	Format string
	// Label names the CSV label column. Without Columns or Width, empty
	// means the last column (unless NoLabel is set) and a name the file
	// does not have is an error. With Columns it is optional: the column is
	// the label if the file has it.
	Label string
	// NoLabel reads every CSV column as a feature.
	NoLabel bool
	// Columns, if set, are the expected CSV feature columns in order (a
	// model's column names): the file's columns are matched by name and
	// reordered; a file that lacks one of them, or has a column that is
	// neither one of them nor the label, is refused with the names. With
	// Label empty, a single unexpected last column is taken as the label.
	Columns []string
	// Width, if positive, is the expected number of feature columns (a
	// model's input dimension). A CSV file without Columns is matched by
	// position: Width columns, or Width+1 with the label last (or named by
	// Label). A LIBSVM file gets exactly Width columns: features beyond
	// its largest index are zero, an index beyond Width is an error.
	Width int
	// Targets names several CSV target columns (multi-output regression)
	// instead of Label; see CSVOptions.Targets. With Columns or Width they
	// are optional, as Label is: read into Dataset.Targets if the file has
	// them all, an error if it has only some.
	Targets []string
	// Weight names a CSV column of row weights, read into Dataset.Weights
	// and left out of the features (CSVOptions.Weight). With Columns or
	// Width it is optional: the column is read if the file has it, so
	// that a test file with the training file's weight column matches the
	// model's columns. LIBSVM files have no weight column: Weight is an
	// error for them without Columns or Width, and ignored with them.
	Weight string
}

// Open reads the data set in the file at path. Every error names the file.
// It checks the columns against opt (see OpenOptions), so that data meant
// for a fitted model reach it in the model's column order.
func Open(path string, opt OpenOptions) (*Dataset, error) {
	if path == "" {
		return nil, errors.New("data: no data file given")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	ds, err := read(bufio.NewReaderSize(f, 64<<10), path, opt, func(o CSVOptions) (*Dataset, error) {
		size, err := parquetSize(f)
		if err != nil {
			return nil, err
		}
		return ReadParquet(f, size, o)
	})
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ds, nil
}

// read reads the data set of br (the file at path) as Open does; parquet
// reads the file as Parquet with the columns a CSVOptions chooses.
func read(br *bufio.Reader, path string, opt OpenOptions, parquet func(CSVOptions) (*Dataset, error)) (*Dataset, error) {
	if len(opt.Columns) > 0 && opt.Width > 0 && len(opt.Columns) != opt.Width {
		return nil, fmt.Errorf("data: %d expected column names for width %d", len(opt.Columns), opt.Width)
	}
	format, err := sniff(br, path, opt.Format)
	if err != nil {
		return nil, err
	}
	expected := len(opt.Columns) > 0 || opt.Width > 0
	if len(opt.Targets) == 1 && opt.Label == "" {
		opt.Label, opt.Targets = opt.Targets[0], nil
	}
	if format == "libsvm" {
		if len(opt.Targets) > 1 || (opt.Weight != "" && !expected) {
			return nil, errors.New("data: a LIBSVM file has one label and no weight column; use CSV for several targets or weights")
		}
		return ReadLIBSVM(br, opt.Width)
	}
	// A table with named columns, CSV or Parquet: the columns are chosen
	// by the same code for both (matchColumns, then the matching below).
	table := func(o CSVOptions) (*Dataset, error) { return ReadCSV(br, o) }
	if format == "parquet" {
		if parquet == nil {
			return nil, errors.New("data: Parquet is read from a file")
		}
		table = parquet
	}
	if !expected {
		return table(CSVOptions{Label: opt.Label, NoLabel: opt.NoLabel, Targets: opt.Targets, Weight: opt.Weight})
	}
	if len(opt.Targets) > 0 && (opt.Label != "" || opt.NoLabel) {
		return nil, errors.New("data: options name several target columns and a label (or none)")
	}
	all, err := table(CSVOptions{NoLabel: true})
	if err != nil {
		return nil, err
	}
	var weights, targets *mat.Dense
	if opt.Weight != "" {
		if all, weights, err = takeColumns(all, []string{opt.Weight}, true); err != nil {
			return nil, err
		}
	}
	if len(opt.Targets) > 0 {
		if all, targets, err = takeColumns(all, opt.Targets, true); err != nil {
			return nil, err
		}
		opt.NoLabel = true // the targets are the labels
	}
	var feat []int
	label := -1
	if len(opt.Columns) > 0 {
		feat, label, err = matchNames(all.Names, opt)
	} else {
		feat, label, err = matchWidth(all.Names, opt)
	}
	if err != nil {
		return nil, err
	}
	ds := selectColumns(all, feat, label)
	if weights != nil {
		ds.Weights, ds.WeightColumn = weights.RawMatrix().Data, opt.Weight
	}
	if targets != nil {
		ds.Targets, ds.TargetNames = targets, append([]string(nil), opt.Targets...)
	}
	return ds, nil
}

// takeColumns returns ds without the columns named names and those
// columns (n×len(names), in the order of names), or a nil matrix if ds has
// none of them and optional is set. A name ds has twice, or some names but
// not all, is an error.
func takeColumns(ds *Dataset, names []string, optional bool) (*Dataset, *mat.Dense, error) {
	at := make(map[string]int, len(ds.Names))
	for i, n := range ds.Names {
		at[n] = i
	}
	cols, taken, missing, err := lookupNames(at, names)
	if err != nil {
		return nil, nil, err
	}
	if len(missing) == len(names) && optional {
		return ds, nil, nil
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("data: no column %s", nameList(missing))
	}
	var rest []int
	for i := range ds.Names {
		if !taken[i] {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 {
		return nil, nil, errors.New("data: CSV has no feature columns")
	}
	n := ds.Rows()
	out := mat.NewDense(n, len(cols), nil)
	for i := 0; i < n; i++ {
		src, dst := ds.X.RawRowView(i), out.RawRowView(i)
		for j, c := range cols {
			dst[j] = src[c]
		}
	}
	return selectColumns(ds, rest, -1), out, nil
}

// sniff returns the format to read: format itself, or for "" and "auto"
// the one the extension or the first data line shows.
func sniff(br *bufio.Reader, path, format string) (string, error) {
	switch format {
	case "csv", "libsvm", "parquet":
		return format, nil
	case "", "auto":
	default:
		return "", fmt.Errorf("data: unknown format %.40q (want auto, csv, libsvm or parquet)", format)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svm", ".libsvm", ".svmlight":
		return "libsvm", nil
	case ".csv":
		return "csv", nil
	case ".parquet":
		return "parquet", nil
	}
	head, err := br.Peek(br.Size())
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", err
	}
	if bytes.HasPrefix(head, []byte("PAR1")) {
		return "parquet", nil
	}
	for line := range bytes.Lines(head) {
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := bytes.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 || bytes.IndexByte(line, ',') >= 0 {
			return "csv", nil
		}
		for _, f := range fields[1:] {
			k, _, ok := bytes.Cut(f, []byte(":"))
			if !ok || len(k) == 0 || len(bytes.Trim(k, "0123456789")) != 0 {
				return "csv", nil
			}
		}
		return "libsvm", nil
	}
	return "csv", nil
}

// matchNames returns the column indices of opt.Columns in names, and of
// the label (−1 if none).
func matchNames(names []string, opt OpenOptions) (feat []int, label int, err error) {
	at := make(map[string]int, len(names))
	for i, n := range names {
		if _, dup := at[n]; dup {
			return nil, -1, fmt.Errorf("data: column %.40q appears twice", n)
		}
		at[n] = i
	}
	label = -1
	if i, ok := at[opt.Label]; ok && opt.Label != "" && !opt.NoLabel {
		label = i
	}
	used := make([]bool, len(names))
	var missing, extra []string
	for _, c := range opt.Columns {
		i, ok := at[c]
		if !ok || i == label {
			missing = append(missing, c)
			continue
		}
		feat = append(feat, i)
		used[i] = true
	}
	for i, n := range names {
		if !used[i] && i != label {
			extra = append(extra, n)
		}
	}
	if len(extra) == 1 && len(missing) == 0 && label < 0 && opt.Label == "" && !opt.NoLabel && !used[len(names)-1] {
		return feat, len(names) - 1, nil
	}
	if len(missing)+len(extra) > 0 {
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, "missing "+nameList(missing))
		}
		if len(extra) > 0 {
			parts = append(parts, "unexpected "+nameList(extra))
		}
		return nil, -1, fmt.Errorf("data: columns do not match the expected ones: %s", strings.Join(parts, "; "))
	}
	return feat, label, nil
}

// matchWidth matches names by position to opt.Width feature columns and
// an optional label.
func matchWidth(names []string, opt OpenOptions) (feat []int, label int, err error) {
	label = -1
	switch {
	case opt.Label != "" && !opt.NoLabel:
		for i, n := range names {
			if n == opt.Label {
				label = i
			}
		}
		if label < 0 {
			return nil, -1, fmt.Errorf("data: no column %.40q", opt.Label)
		}
	case len(names) == opt.Width+1 && !opt.NoLabel:
		label = len(names) - 1
	}
	for i := range names {
		if i != label {
			feat = append(feat, i)
		}
	}
	if len(feat) != opt.Width {
		return nil, -1, fmt.Errorf("data: %d feature columns, want %d (plus an optional label)", len(feat), opt.Width)
	}
	return feat, label, nil
}

// selectColumns returns the data set of the columns feat of ds (all
// features), with column label (−1: none) as the target.
func selectColumns(ds *Dataset, feat []int, label int) *Dataset {
	n := ds.Rows()
	out := &Dataset{X: mat.NewDense(n, len(feat), nil), Names: make([]string, len(feat))}
	for j, c := range feat {
		out.Names[j] = ds.Names[c]
	}
	if label >= 0 {
		out.Label = ds.Names[label]
		out.Y = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		src, dst := ds.X.RawRowView(i), out.X.RawRowView(i)
		for j, c := range feat {
			dst[j] = src[c]
		}
		if label >= 0 {
			out.Y[i] = src[label]
		}
	}
	return out
}

// nameList quotes up to four names (each cut to 40 bytes) and counts the
// rest, so that an error message stays one short line.
func nameList(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i == 4 {
			fmt.Fprintf(&b, " and %d more", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.40q", n)
	}
	return b.String()
}

// parquetSize returns the size of the Parquet file f, which must be a
// regular file: Parquet is read from its footer, at the end.
func parquetSize(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, errors.New("data: a Parquet file is read from its footer first: give a regular file, not a pipe or device")
	}
	return st.Size(), nil
}

// CSVFile streams a CSV file for a fit in passes (model.FitStream): a
// CSVReader whose errors name the file.
type CSVFile struct {
	r    *CSVReader
	f    *os.File
	path string
}

// OpenCSV opens the CSV file at path and reads its header.
func OpenCSV(path string, opt CSVOptions) (*CSVFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewCSVReader(f, opt)
	if err != nil {
		if cerr := f.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &CSVFile{r: r, f: f, path: path}, nil
}

// Names returns the feature column names.
func (c *CSVFile) Names() []string { return c.r.Names() }

// Read returns the next batch of rows as CSVReader.Read does.
func (c *CSVFile) Read(max int) (*mat.Dense, []float64, error) {
	x, y, err := c.r.Read(max)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", c.path, err)
	}
	return x, y, err
}

// ReadBatch returns the next batch of rows, with their weights and several
// targets, as CSVReader.ReadBatch does.
func (c *CSVFile) ReadBatch(max int) (*Batch, error) {
	b, err := c.r.ReadBatch(max)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", c.path, err)
	}
	return b, err
}

// Close closes the file.
func (c *CSVFile) Close() error { return c.f.Close() }
