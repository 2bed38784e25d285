package data_test

import (
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
)

// ReadCSV reads a header row and numeric cells; the last column is the
// label unless CSVOptions names another.
func Example() {
	csv := `height,weight,class
1.70,65,0
1.82,80,1
1.60,52,0
`
	d, err := data.ReadCSV(strings.NewReader(csv), data.CSVOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Rows(), "rows,", d.Cols(), "features", d.Names, "label", d.Label)
	labels, classes, err := d.Labels()
	if err != nil {
		panic(err)
	}
	fmt.Println("labels", labels, "classes", classes)
	fmt.Println("first row", mat.Row(nil, 0, d.X))
	// Output:
	// 3 rows, 2 features [height weight] label class
	// labels [0 1 0] classes 2
	// first row [1.7 65]
}

// ReadLIBSVM reads sparse "label index:value" lines; features a line does
// not list are zero. With dim = 0 the width is the largest index.
func ExampleReadLIBSVM() {
	svm := `1 1:0.5 3:2
0 2:1.5 # a comment
`
	d, err := data.ReadLIBSVM(strings.NewReader(svm), 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v\n", mat.Formatted(d.X))
	fmt.Println("labels", d.Y)
	// Output:
	// ⎡0.5    0    2⎤
	// ⎣  0  1.5    0⎦
	// labels [1 0]
}

// Standardize fits the scaler on the training rows only and applies it to
// both sets, as every study and model fit does: the test rows are scaled
// by the training means and (population) standard deviations, here 1 and
// 1 for the first column and 10 and 5 for the second.
func ExampleStandardize() {
	train := mat.NewDense(2, 2, []float64{
		0, 5,
		2, 15,
	})
	test := mat.NewDense(2, 2, []float64{
		3, 10,
		-1, 25,
	})
	xtr, xte, err := data.Standardize(train, test)
	if err != nil {
		panic(err)
	}
	fmt.Printf("train %v\n", mat.Formatted(xtr, mat.Prefix("      ")))
	fmt.Printf("test  %v\n", mat.Formatted(xte, mat.Prefix("      ")))
	// Output:
	// train ⎡-1  -1⎤
	//       ⎣ 1   1⎦
	// test  ⎡ 2   0⎤
	//       ⎣-2   3⎦
}

// Letter is the embedded UCI letter recognition data; Split shuffles it
// with a seed into training and test sets.
func ExampleLetter() {
	d := data.Letter()
	_, classes, err := d.Labels()
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Rows(), "rows,", d.Cols(), "features,", classes, "classes")
	train, test, err := d.Split(0.2, 1)
	if err != nil {
		panic(err)
	}
	fmt.Println(train.Rows(), "training rows,", test.Rows(), "test rows")
	// Output:
	// 20000 rows, 16 features, 26 classes
	// 16000 training rows, 4000 test rows
}
