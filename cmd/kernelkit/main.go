// Command kernelkit fits, applies and benchmarks kernel models built on
// random features.
//
//	kernelkit demo                      the letter benchmark table and plot
//	kernelkit fit --train A.csv ...     fit a model, report test metrics
//	kernelkit predict --model m.kk ...  predictions of a saved model
//	kernelkit transform ...             random features of rows, as CSV
//
// Every command reports errors as one line on standard error and exits
// with status 1.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRoot().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "kernelkit:", err)
		os.Exit(1)
	}
}
