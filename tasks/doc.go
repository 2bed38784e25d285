// Package tasks generates the training tasks of kernelkit's sequence
// models without any download, and reads and writes the Long Range Arena's
// file format.
//
// ListOps (Nangia & Bowman 2018, as generated for the Long Range Arena by
// lra_benchmarks/data/listops.py, Tay et al. 2021): nested expressions of
// the operators MAX, MIN, MED (median, rounded down) and SM (sum modulo
// 10) over the digits 0…9, whose value (10 classes) the model predicts.
// A tree is drawn recursively: a node at depth < max_depth is an operator
// with probability 0.25 (LRA's VALUE_P; otherwise a digit), with 2…10
// arguments (uniform); nodes at max_depth = 10 are digits. Sequences are
// kept when 500 < length < 2000 (length counting digits, operators and
// ']'), and duplicates are dropped. These defaults are the LRA code's
// flags; the window is a parameter here so that shorter sequences can be
// generated for CPU training.
//
// File format: a TSV with the header "Source\tTarget", the source written
// as LRA's to_string writes it, with parentheses, e.g.
// "( ( ( [MAX 2 ) 9 ) ] )" for [MAX 2 9 ] (value 9). Tokenize drops the
// parentheses; the model sees [MAX 2 9 ].
//
// Associative recall: key–value pairs scattered over a long sequence of
// filler, then a query key; the label is its value (10 classes). It tests
// memory over the whole length.
package tasks
