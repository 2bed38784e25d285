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
	"path/filepath"
	"strings"

	"github.com/kernelkit/kernelkit/train"
)

func main() {
	curves := flag.Bool("curves", false, "also fit the learning curves and extrapolate to the paper's accuracies")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/train_table.go [-curves] REPORT.json...")
		os.Exit(2)
	}
	var reports []train.JobReport
	var names []string
	for _, path := range flag.Args() {
		rep, err := train.ReadReport(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "train_table:", err)
			os.Exit(1)
		}
		reports = append(reports, *rep)
		names = append(names, strings.TrimSuffix(filepath.Base(path), ".json"))
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
