//go:build ignore

// Command train_plot draws the training-loss curves (and evaluation
// accuracies) of several `kernelkit train --json` reports in one plot,
// against the training examples seen (step × batch; against the step if a
// report has no batch, as evaluation reports do).
//
//	go run scripts/train_plot.go TITLE OUT.png [OUT-acc.png|-] REPORT.json...
package main

import (
	"fmt"
	"os"

	"github.com/kernelkit/kernelkit/train"
)

func main() {
	if len(os.Args) < 5 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/train_plot.go TITLE OUT.png OUT-acc.png|- REPORT.json...")
		os.Exit(2)
	}
	title, out, acc := os.Args[1], os.Args[2], os.Args[3]
	if acc == "-" {
		acc = ""
	}
	reps, names, err := train.ReadReports(os.Args[4:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "train_plot:", err)
		os.Exit(1)
	}
	var curves []train.Curve
	for i, rep := range reps {
		curves = append(curves, train.Curve{Name: fmt.Sprintf("%s (test %.1f %%)", names[i], 100*rep.TestAcc), Res: rep.Result, Batch: rep.Batch})
	}
	if err := train.SavePlot(out, acc, title, curves, 20); err != nil {
		fmt.Fprintln(os.Stderr, "train_plot:", err)
		os.Exit(1)
	}
}
