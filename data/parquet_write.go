package data

import (
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// ParquetColumn is one column of a table that WriteParquet writes.
type ParquetColumn struct {
	// Name is the column's name.
	Name string
	// Int makes the column INT64 (class indices); otherwise it is DOUBLE.
	// Values of an INT64 column are converted with int64(v).
	Int bool
	// Value returns the column's value at a row, from 0.
	Value func(row int) float64
}

// ParquetRowGroupRows is the most rows of the row groups that
// WriteParquet writes: 65536. A row group is also held to about
// ParquetRowGroupValues values (but at least 1024 rows), since the writer
// holds a row group in memory until it is complete, and so does a reader
// that reads a row group at a time.
const ParquetRowGroupRows = 1 << 16

// ParquetRowGroupValues is the number of values (32 MiB of float64)
// above which WriteParquet's row groups hold fewer than
// ParquetRowGroupRows rows.
const ParquetRowGroupValues = 1 << 22

// WriteParquet writes rows rows of the columns cols to w as a Parquet
// file: flat, required INT64 or DOUBLE columns in the order of cols,
// Snappy-compressed, in row groups of ParquetRowGroupRows rows (fewer for
// wide tables, see ParquetRowGroupValues). stop, if not nil, is called
// before every 1024 rows and at the end, and its error (an interrupted
// command's) ends the write. Column names must be distinct and non-empty.
func WriteParquet(w io.Writer, rows int, cols []ParquetColumn, stop func() error) error {
	group := ParquetRowGroupRows
	if len(cols) > 0 {
		group = max(1024, min(group, ParquetRowGroupValues/len(cols)/1024*1024))
	}
	return writeParquet(w, rows, cols, stop, group)
}

// WriteParquetRowGroups is WriteParquet with row groups of groupRows
// rows (a positive multiple of 1024) instead of ParquetRowGroupRows.
func WriteParquetRowGroups(w io.Writer, rows, groupRows int, cols []ParquetColumn, stop func() error) error {
	if groupRows <= 0 || groupRows%1024 != 0 {
		return fmt.Errorf("data: Parquet row groups of %d rows (want a positive multiple of 1024)", groupRows)
	}
	return writeParquet(w, rows, cols, stop, groupRows)
}

// writeParquet writes row groups of groupRows rows (a multiple of 1024).
func writeParquet(w io.Writer, rows int, cols []ParquetColumn, stop func() error, groupRows int) error {
	if len(cols) == 0 {
		return errors.New("data: Parquet output needs at least one column")
	}
	if rows < 0 {
		return fmt.Errorf("data: Parquet output of %d rows", rows)
	}
	seen := make(map[string]bool, len(cols))
	fields := make([]parquet.Field, len(cols))
	for i, c := range cols {
		if c.Name == "" || seen[c.Name] {
			return fmt.Errorf("data: Parquet output column %s is empty or named twice", quote(c.Name))
		}
		seen[c.Name] = true
		typ := parquet.DoubleType
		if c.Int {
			typ = parquet.Int64Type
		}
		fields[i] = orderedField{Node: parquet.Required(parquet.Leaf(typ)), name: c.Name}
	}
	pw := parquet.NewWriter(w, parquet.NewSchema("kernelkit", orderedGroup(fields)),
		parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(int64(groupRows)))
	const chunk = 1024
	batch := make([]parquet.Row, chunk) // reused: the writer copies the values
	for i := range batch {
		batch[i] = make(parquet.Row, len(cols))
	}
	for lo := 0; lo < rows; lo += chunk {
		if stop != nil {
			if err := stop(); err != nil {
				return err
			}
		}
		n := min(chunk, rows-lo)
		for i := lo; i < lo+n; i++ {
			row := batch[i-lo]
			for j, c := range cols {
				v := c.Value(i)
				if c.Int {
					row[j] = parquet.Int64Value(int64(v)).Level(0, 0, j)
				} else {
					row[j] = parquet.DoubleValue(v).Level(0, 0, j)
				}
			}
		}
		if _, err := pw.WriteRows(batch[:n]); err != nil {
			return fmt.Errorf("data: Parquet output: %w", err)
		}
	}
	if stop != nil {
		if err := stop(); err != nil {
			return err
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("data: Parquet output: %w", err)
	}
	return nil
}

// orderedGroup is a Parquet group whose fields keep their order (the
// library's Group, a map, sorts them by name: z10 before z2).
type orderedGroup []parquet.Field

func (g orderedGroup) ID() int                     { return 0 }
func (g orderedGroup) String() string              { return "group" }
func (g orderedGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Fields() []parquet.Field     { return g }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }
func (g orderedGroup) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }

// orderedField is a named field of an orderedGroup.
type orderedField struct {
	parquet.Node
	name string
}

func (f orderedField) Name() string { return f.name }

func (f orderedField) Value(base reflect.Value) reflect.Value {
	return base.MapIndex(reflect.ValueOf(f.name))
}
