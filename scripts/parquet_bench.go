//go:build ignore

// Command parquet_bench measures how fast kernelkit reads a data set as
// CSV and as Parquet, for scripts/parquet_bench.sh:
//
//	go run scripts/parquet_bench.go convert IN.csv OUT.parquet
//	go run scripts/parquet_bench.go read FILE            # in memory: data.Open
//	go run scripts/parquet_bench.go read --stream FILE   # a pass of fit --stream
//
// convert writes the CSV file's columns as a Parquet file of DOUBLE
// columns (data.WriteParquet: Snappy, row groups of 65536 rows). read
// reads the file once, in memory as fit reads its training file, or as
// one pass of fit --stream reads it (model.StreamFile's opener, batches
// of 16384 rows), and prints the rows, the seconds and the rows a second
// as one line of JSON.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/model"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "parquet_bench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 3 && args[0] == "convert":
		return convert(args[1], args[2])
	case len(args) == 2 && args[0] == "read":
		return read(args[1], false)
	case len(args) == 3 && args[0] == "read" && args[1] == "--stream":
		return read(args[2], true)
	}
	return errors.New("usage: parquet_bench convert IN.csv OUT.parquet | read [--stream] FILE")
}

func convert(in, out string) error {
	ds, err := data.Open(in, data.OpenOptions{Format: "csv", NoLabel: true})
	if err != nil {
		return err
	}
	cols := make([]data.ParquetColumn, len(ds.Names))
	for j, name := range ds.Names {
		cols[j] = data.ParquetColumn{Name: name, Value: func(i int) float64 { return ds.X.At(i, j) }}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := data.WriteParquet(f, ds.Rows(), cols, nil); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

func read(path string, stream bool) error {
	start := time.Now()
	rows, width := 0, 0
	if stream {
		open, _, w, err := model.StreamFile(path, "auto", data.CSVOptions{})
		if err != nil {
			return err
		}
		width = w
		b, closeFn, err := open()
		if err != nil {
			return err
		}
		br, ok := b.(model.BatchReader)
		if !ok {
			return errors.New("the stream has no ReadBatch")
		}
		for {
			bt, err := br.ReadBatch(16384)
			if err == io.EOF {
				break
			}
			if err != nil {
				return errors.Join(err, closeFn())
			}
			n, _ := bt.X.Dims()
			rows += n
		}
		if err := closeFn(); err != nil {
			return err
		}
	} else {
		ds, err := data.Open(path, data.OpenOptions{})
		if err != nil {
			return err
		}
		rows, width = ds.Rows(), ds.Cols()
	}
	s := time.Since(start).Seconds()
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"file": path, "stream": stream, "rows": rows, "features": width,
		"seconds": s, "rows_per_s": float64(rows) / s,
	})
}
