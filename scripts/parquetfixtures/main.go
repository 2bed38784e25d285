// Command parquetfixtures writes the Parquet test fixtures of package data
// (data/testdata/parquet) with Apache Arrow's Go implementation, a
// Parquet writer other than the parquet-go library kernelkit reads with,
// and a CSV file of the same rows. Debian has no python3-pyarrow, and the
// machines reach no other package registry, so pyarrow cannot write them.
//
// It is a module of its own, so that kernelkit does not depend on
// arrow-go. Run it from this directory:
//
//	go run . ../../data/testdata/parquet
//
// The files are small and committed, so that the tests need neither this
// program nor its modules.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// rows is the number of rows of the mixed tables.
const rows = 2000

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: parquetfixtures DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "parquetfixtures:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rec, csv := mixed()
	defer rec.Release()
	if err := os.WriteFile(filepath.Join(dir, "mixed.csv"), []byte(csv), 0o644); err != nil {
		return err
	}
	// Data pages v1, dictionary encoding (the default), Snappy, row
	// groups of 600 rows (4: 600, 600, 600, 200) and pages of 1 KiB.
	v1 := parquet.NewWriterProperties(parquet.WithDataPageVersion(parquet.DataPageV1),
		parquet.WithDictionaryDefault(true), parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(600), parquet.WithDataPageSize(1024), parquet.WithCreatedBy("arrow-go parquetfixtures"))
	if err := write(filepath.Join(dir, "mixed-v1-dict-snappy.parquet"), rec, v1); err != nil {
		return err
	}
	// Data pages v2, plain, delta and byte-stream-split encodings, no
	// dictionary, zstd, row groups of 750 rows.
	v2 := parquet.NewWriterProperties(parquet.WithDataPageVersion(parquet.DataPageV2),
		parquet.WithDictionaryDefault(false), parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithEncodingFor("b", parquet.Encodings.DeltaBinaryPacked),
		parquet.WithEncodingFor("d", parquet.Encodings.ByteStreamSplit),
		parquet.WithMaxRowGroupLength(750), parquet.WithDataPageSize(2048), parquet.WithCreatedBy("arrow-go parquetfixtures"))
	if err := write(filepath.Join(dir, "mixed-v2-plain-zstd.parquet"), rec, v2); err != nil {
		return err
	}
	nulls := withNull()
	defer nulls.Release()
	return write(filepath.Join(dir, "null.parquet"), nulls, parquet.NewWriterProperties(
		parquet.WithMaxRowGroupLength(400), parquet.WithCreatedBy("arrow-go parquetfixtures")))
}

// mixed returns the mixed table and its CSV text: a required INT32 a, an
// INT64 b, an optional (nullable, no null) FLOAT c, a DOUBLE d, a BOOLEAN
// e, an unsigned INT32 (UINT_32) u and an INT64 label. Every value is the
// number its CSV text parses to.
func mixed() (arrow.RecordBatch, string) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int32},
		{Name: "b", Type: arrow.PrimitiveTypes.Int64},
		{Name: "c", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "d", Type: arrow.PrimitiveTypes.Float64},
		{Name: "e", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "u", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	var csv strings.Builder
	csv.WriteString("a,b,c,d,e,u,label\n")
	for i := range rows {
		a := int32(i*7%50 - 10)
		b := int64(i)*1_000_003 - 7_000_000_000
		c := float32(i%97) / 8
		dText := strconv.FormatFloat(float64(i%1013)/1000-0.5, 'f', 3, 64)
		d, err := strconv.ParseFloat(dText, 64)
		if err != nil {
			panic(err)
		}
		e := i%3 == 0
		u := uint32(4_000_000_000 - i*1_000_001)
		label := int64(i * 13 % 3)
		bld.Field(0).(*array.Int32Builder).Append(a)
		bld.Field(1).(*array.Int64Builder).Append(b)
		bld.Field(2).(*array.Float32Builder).Append(c)
		bld.Field(3).(*array.Float64Builder).Append(d)
		bld.Field(4).(*array.BooleanBuilder).Append(e)
		bld.Field(5).(*array.Uint32Builder).Append(u)
		bld.Field(6).(*array.Int64Builder).Append(label)
		eText := "0"
		if e {
			eText = "1"
		}
		fmt.Fprintf(&csv, "%d,%d,%s,%s,%s,%d,%d\n", a, b, strconv.FormatFloat(float64(c), 'g', -1, 64), dText, eText, u, label)
	}
	return bld.NewRecordBatch(), csv.String()
}

// withNull returns a table of 1000 rows whose optional DOUBLE x is null
// at row 733 (counted from 1: the second row group of 400 rows).
func withNull() arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	for i := range 1000 {
		if i == 732 {
			bld.Field(0).(*array.Float64Builder).AppendNull()
		} else {
			bld.Field(0).(*array.Float64Builder).Append(float64(i) / 4)
		}
		bld.Field(1).(*array.Int64Builder).Append(int64(i % 2))
	}
	return bld.NewRecordBatch()
}

// write writes rec to path with the writer properties props.
func write(path string, rec arrow.RecordBatch, props *parquet.WriterProperties) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	if err := w.Write(rec); err != nil {
		return err
	}
	return w.Close() // closes f
}
