package data

import (
	"bytes"
	_ "embed"
)

//go:embed letter.csv
var letterCSV []byte

// Letter returns the embedded UCI Letter Recognition data set (20000 rows,
// 16 integer features, label 0..25 for A..Z).
func Letter() *Dataset {
	d, err := ReadCSV(bytes.NewReader(letterCSV), CSVOptions{})
	if err != nil {
		panic("data: embedded letter data is corrupt: " + err.Error())
	}
	return d
}
