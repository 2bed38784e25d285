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
// The UCI Letter Recognition data set (20000 rows, 16 features, 26
// classes; Frey & Slate 1991, as shipped in Debian's r-cran-mlbench) is
// embedded as the default data set; its conventional split is the first
// 16000 rows for training and the last 4000 for testing.
package data
