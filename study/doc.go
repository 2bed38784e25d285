// Package study holds kernelkit's experiments as library functions: the
// replications and measurements of the four papers that the command-line
// tool runs (estimator studies of the HRF paper, linear-attention error and
// timing, analog-hardware emulation, SNNK classification and bundling,
// Toeplitz operator timing, the letter demo).
//
// Each study is a function taking a configuration struct, a context (long
// studies stop early with its error) and a progress callback (nil: none),
// and returning typed rows with JSON tags; the rows' Table and Plot methods
// build the text and PNG renderings of package report. Studies are
// deterministic functions of their configuration and seeds.
//
// Errors follow the policy of the whole module: invalid configurations,
// data and sizes return errors; only misuse of shapes by a Go caller may
// panic.
package study
