// Package data reads and prepares tabular data for kernelkit: CSV files
// with a header row, the LIBSVM/SVMlight sparse text format that kernel
// benchmark sets ship in, standardisation fitted on training rows, and
// seeded train/test splits.
//
// Readers stream: CSVReader.Read returns the next batch of rows, so a fit
// can accumulate statistics over files larger than memory. Every reader
// rejects malformed input with an error naming the line: empty files,
// rows of the wrong length, non-numeric cells and NaN or Inf values.
//
// Besides the features, a CSV file may have a column of row weights
// (CSVOptions.Weight → Dataset.Weights) and several target columns for
// multi-output regression (CSVOptions.Targets → Dataset.Targets); neither
// is a feature, and CSVReader.ReadBatch streams them with the rows.
// FitScalerWeighted and ScalerAccumulator.AddWeighted standardise with
// the weights (an integer weight counts as that many copies of the row).
//
// # Parquet
//
// Parquet files (through github.com/parquet-go/parquet-go) are tables
// with named columns, read as CSV files are: Open with Format "parquet"
// (or "auto" and the extension .parquet or the magic bytes PAR1),
// ReadParquet, and ParquetReader, which streams a page of each column at
// a time, choose the label, weight and target columns with the same
// matcher as the CSV reader. Columns are INT32, INT64 (signed or
// unsigned), FLOAT, DOUBLE or BOOLEAN, required or optional; a null, a NaN
// or an infinity, a nested column and any other type are refused in one
// line naming the row group, the column and the row. The footer and the
// page headers are checked before the library decodes them, so that the
// sizes a file states are bounded by the file and the limits below.
// WriteParquet writes INT64 and DOUBLE columns, for command outputs.
//
// # Numbers
//
// A cell of a CSV file, and a label or value of a LIBSVM file, is a plain
// decimal number: an optional sign, digits with an optional fraction (at
// least one digit in all: 1, -2.5, .5 and 5. are numbers), and an optional
// exponent (1e3, 2.5E-7). The other forms that Go's strconv.ParseFloat
// accepts are refused: digit separators (1_000), hexadecimal (0x1p4), Inf,
// Infinity and NaN in any case; so are numbers beyond the float64 range
// (1e400), while numbers below it round to zero (1e-400). CSV cells may be
// quoted and are trimmed of spaces. A UTF-8 byte-order mark at the start
// of a file is skipped.
//
// # Limits
//
// Every size that comes from a file is checked before memory of that size
// is allocated (the limits are those of package internal/limits):
//
//   - a LIBSVM feature index, and so the width of a LIBSVM data set, is at
//     most limits.MaxDim (2²⁴); a CSV header has at most limits.MaxDim
//     feature columns;
//   - a matrix read at once (a whole file, or one CSVReader.Read batch)
//     holds at most limits.MaxElements (2³⁰) values, 8 GiB; larger CSV
//     files can be streamed in batches;
//   - a LIBSVM line, or a CSV record, is at most MaxLineBytes (256 MiB);
//     a line is held back until its end has been read, in blocks that are
//     never copied, so that one without an end (/dev/zero) is refused
//     after about that much memory, not the several times it that the
//     readers' growing buffers would take;
//   - class labels are integers from 0 to limits.MaxClasses−1 (2²⁰−1).
//
// LIBSVM files are read sparsely: while reading, memory follows the stored
// entries (zeros are not stored), not the width; the dense matrix is
// allocated at the end, once rows × width has been checked, and a file
// that passes the limit is refused at the line where it does. ReadLIBSVM
// takes the width from the caller when it is known (the input dimension of
// a model, or the width of the training file), so that a test file whose
// largest index is smaller reads at the right width.
//
// Error messages are one line and quote at most a short prefix (40 bytes)
// of the offending text, with its length, the line and the column.
//
// The UCI Letter Recognition data set (20000 rows, 16 features, 26
// classes; Frey & Slate 1991, as shipped in Debian's r-cran-mlbench) is
// embedded as the default data set; its conventional split is the first
// 16000 rows for training and the last 4000 for testing.
package data
