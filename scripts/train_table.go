//go:build ignore

// Command train_table summarises `kernelkit train --json` reports over
// seeds (train.Summarize) as a Markdown table, best mean first.
//
//	go run scripts/train_table.go REPORT.json...
package main

import (
	"fmt"
	"os"

	"github.com/kernelkit/kernelkit/train"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/train_table.go REPORT.json...")
		os.Exit(2)
	}
	var reports []train.JobReport
	for _, path := range os.Args[1:] {
		rep, err := train.ReadReport(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "train_table:", err)
			os.Exit(1)
		}
		reports = append(reports, *rep)
	}
	if err := train.WriteTable(os.Stdout, train.Summarize(reports)); err != nil {
		fmt.Fprintln(os.Stderr, "train_table:", err)
		os.Exit(1)
	}
}
