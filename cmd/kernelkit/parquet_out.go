package main

import (
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/internal/atomicfile"
	"github.com/kernelkit/kernelkit/model"
)

// isParquetPath reports whether an output path names a Parquet file: the
// extension .parquet (any case). Other paths, "-" and "" get CSV.
func isParquetPath(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".parquet")
}

// outWriter is writeOut's signature: it writes the CSV text that fn
// writes to the command's output path.
type outWriter func(cmd *cobra.Command, path string, fn func(w io.Writer) error) error

// parquetOut returns the writer of predict's and transform's output:
// writeOut for CSV, and for a path that names a Parquet file one that
// writes cols (rows rows) as Parquet (data.WriteParquet) in place of the
// CSV text, with the same column names. The file is written atomically
// (internal/atomicfile: the old file stays unless the whole write
// succeeds; a named pipe or a character device is written in place), and
// writing stops with the context's error when the command is
// interrupted.
func parquetOut(path string, rows int, cols func() []data.ParquetColumn) outWriter {
	if !isParquetPath(path) {
		return writeOut
	}
	return func(cmd *cobra.Command, path string, _ func(w io.Writer) error) error {
		ctx := commandContext(cmd)
		return atomicfile.Write(path, func(w io.Writer) error {
			return data.WriteParquet(w, rows, cols(), ctx.Err)
		})
	}
}

// predictColumns returns the columns of predict's output for the scores
// s (n×k) of model m: as the CSV header names them, the class (INT64)
// of a classifier, then with scores its scores and, calibrated, its
// probabilities; the value, or one column per target, of a regression.
func predictColumns(m *model.Model, s *mat.Dense, pred []int, probs *mat.Dense, scores bool) []data.ParquetColumn {
	_, k := s.Dims()
	if m.Task != model.Classification {
		names := []string{"prediction"}
		if k > 1 {
			names = outputNames(m, k)
		}
		cols := make([]data.ParquetColumn, k)
		for j := range cols {
			cols[j] = data.ParquetColumn{Name: names[j], Value: func(i int) float64 { return s.At(i, j) }}
		}
		return cols
	}
	cols := []data.ParquetColumn{{Name: "prediction", Int: true, Value: func(i int) float64 { return float64(pred[i]) }}}
	if scores {
		cols = append(cols, matrixColumns("score", s)...)
		if probs != nil {
			cols = append(cols, matrixColumns("prob", probs)...)
		}
	}
	return cols
}

// transformColumns returns the columns of transform's output: the
// features z0… of z and, with log-scales, log_scale.
func transformColumns(z *mat.Dense, logScale []float64) []data.ParquetColumn {
	cols := matrixColumns("z", z)
	if logScale != nil {
		cols = append(cols, data.ParquetColumn{Name: "log_scale", Value: func(i int) float64 { return logScale[i] }})
	}
	return cols
}

// matrixColumns returns the columns prefix0, prefix1, … of the matrix a.
func matrixColumns(prefix string, a *mat.Dense) []data.ParquetColumn {
	_, k := a.Dims()
	cols := make([]data.ParquetColumn, k)
	for j := range cols {
		cols[j] = data.ParquetColumn{Name: prefix + strconv.Itoa(j), Value: func(i int) float64 { return a.At(i, j) }}
	}
	return cols
}
