//go:build ignore

// Command train_table summarises `kernelkit train --json` reports over
// seeds (train.Summarize) as a Markdown table, best mean first; with
// -curves, then the learning-curve fits of the runs of the kinds that the
// SKI-TNN paper reports on ListOps and the examples at which each fit
// reaches the paper's accuracy (train.WriteCurveTable).
//
//	go run scripts/train_table.go [-curves] REPORT.json...
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kernelkit/kernelkit/train"
)

func main() {
	curves := flag.Bool("curves", false, "also fit the learning curves and extrapolate to the paper's accuracies")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/train_table.go [-curves] REPORT.json...")
		os.Exit(2)
	}
	reports, names, err := train.ReadReports(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "train_table:", err)
		os.Exit(1)
	}
	if err := train.WriteTable(os.Stdout, train.Summarize(reports)); err != nil {
		fmt.Fprintln(os.Stderr, "train_table:", err)
		os.Exit(1)
	}
	if *curves {
		fmt.Println()
		if err := train.WriteCurveTable(os.Stdout, names, reports); err != nil {
			fmt.Fprintln(os.Stderr, "train_table:", err)
			os.Exit(1)
		}
	}
}
