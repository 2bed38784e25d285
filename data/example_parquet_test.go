package data_test

import (
	"bytes"
	"fmt"

	"github.com/kernelkit/kernelkit/data"
)

// Parquet columns are chosen by name as CSV columns are: here the weight
// column w and the label column y, the rest being features.
func ExampleReadParquet() {
	cols := []data.ParquetColumn{
		{Name: "a", Value: func(i int) float64 { return float64(i) / 2 }},
		{Name: "w", Value: func(i int) float64 { return 1 + float64(i%2) }},
		{Name: "b", Value: func(i int) float64 { return float64(-i) }},
		{Name: "y", Int: true, Value: func(i int) float64 { return float64(i % 3) }},
	}
	var buf bytes.Buffer
	if err := data.WriteParquet(&buf, 4, cols, nil); err != nil {
		panic(err)
	}
	ds, err := data.ReadParquet(bytes.NewReader(buf.Bytes()), int64(buf.Len()), data.CSVOptions{Label: "y", Weight: "w"})
	if err != nil {
		panic(err)
	}
	fmt.Println(ds.Names, ds.Label, ds.WeightColumn)
	for i := range ds.Rows() {
		fmt.Println(ds.X.RawRowView(i), ds.Y[i], ds.Weights[i])
	}
	// Output:
	// [a b] y w
	// [0 0] 0 1
	// [0.5 -1] 1 2
	// [1 -2] 2 1
	// [1.5 -3] 0 2
}
