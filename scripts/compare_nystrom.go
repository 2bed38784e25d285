//go:build ignore

// Command compare_nystrom runs baseline.Nystrom: Nyström features with
// uniform, k-means and ridge-leverage-score landmarks (and RFF at the same
// dimension) on a data set split into training and test rows, standardised
// on the training rows, RBF kernel, ridge classification. It prints one
// JSON row per fit with --json, else the table of means. Run from the
// repository root:
//
//	go run scripts/compare_nystrom.go --data letter --components 512 --gamma 0.0625
//	go run scripts/compare_nystrom.go --data /work/shared/data/digits.csv --train-rows 1437 --components 256
//
// scripts/compare_nystrom.sh runs it next to scikit-learn's Nystroem.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/nystrom"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/study/baseline"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "compare_nystrom:", err)
		os.Exit(1)
	}
}

func run() error {
	fl := pflag.NewFlagSet("compare_nystrom", pflag.ContinueOnError)
	path := fl.String("data", "letter", "data set: letter (embedded, 16000 train / 4000 test) or a CSV file with a label column last")
	name := fl.String("name", "", "label of the rows (default: the data argument)")
	trainRows := fl.Int("train-rows", 0, "first rows for training, the rest for testing (CSV; default 80%)")
	m := fl.Int("components", 512, "number of landmarks m (and RFF features D)")
	gamma := fl.Float64("gamma", 0, "RBF bandwidth γ (default 1/d)")
	lambda := fl.Float64("lambda", 0.5, "ridge λ")
	methods := fl.StringSlice("methods", []string{"uniform", "kmeans", "leverage"}, "landmark methods")
	seeds := fl.Int("seeds", 3, "seeds per method")
	rff := fl.Bool("rff", true, "add RFF rows at D = m")
	asJSON := fl.Bool("json", false, "print one JSON object per fit")
	if err := fl.Parse(os.Args[1:]); err != nil {
		return err
	}
	if err := blas.UseOpenBLAS(); err != nil {
		fmt.Fprintln(os.Stderr, "notice: pure-Go BLAS:", err)
	}
	var ds *data.Dataset
	var err error
	if *path == "letter" {
		ds = data.Letter()
		if *trainRows == 0 {
			*trainRows = 16000
		}
	} else if ds, err = data.Open(*path, data.OpenOptions{}); err != nil {
		return err
	}
	if *trainRows == 0 {
		*trainRows = ds.Rows() * 4 / 5
	}
	train, test, err := ds.SplitAt(*trainRows)
	if err != nil {
		return err
	}
	cfg := baseline.NystromConfig{Name: *name, Train: train, Test: test, Components: *m, Gamma: *gamma, Lambda: *lambda,
		Seeds: *seeds, RFF: *rff}
	if cfg.Name == "" {
		cfg.Name = *path
	}
	for _, s := range *methods {
		mt, err := nystrom.ParseMethod(s)
		if err != nil {
			return err
		}
		cfg.Methods = append(cfg.Methods, mt)
	}
	rows, err := baseline.Nystrom(context.Background(), cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		for _, r := range rows {
			if err := report.JSON(os.Stdout, r); err != nil {
				return err
			}
		}
		return nil
	}
	t := baseline.NystromTable(rows)
	t.Title = fmt.Sprintf("%s: %d train / %d test rows, backend %s", cfg.Name, train.Rows(), test.Rows(), blas.Name())
	return t.Render(os.Stdout)
}
