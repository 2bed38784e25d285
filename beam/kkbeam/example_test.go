package kkbeam_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kernelkit/kernelkit/beam/kkbeam"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
)

// ReadFile parses one shard in order: good rows in batches with their line
// numbers, bad lines reported with package data's message for the file.
func ExampleReadFile() {
	text := "a,b,label\n1,2,0\n3,x,1\n5,6,1\n"
	err := kkbeam.ReadFile("shard.csv", strings.NewReader(text), kkbeam.Source{},
		func(b *kkbeam.Batch) error {
			fmt.Println("rows on lines", b.Lines, "features", b.X, "labels", b.Y, "columns", b.Header.Columns)
			return nil
		},
		func(r *kkbeam.BadRow) error {
			fmt.Println("bad:", r)
			return nil
		})
	fmt.Println("error:", err)
	// Output:
	// bad: shard.csv: data: CSV line 3, column 2: "x" is not a number (want a plain decimal such as -1.5e3)
	// rows on lines [2 4] features [1 2 5 6] labels [0 1] columns [a b]
	// error: <nil>
}

// Fit fits a model on the shards matching a glob, here with the Prism
// runner in this process.
func ExampleFit() {
	dir, err := os.MkdirTemp("", "kkbeam-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	// Two shards of an XOR-like problem.
	shards := []string{
		"x1,x2,y\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n",
		"x1,x2,y\n0.1,0.1,0\n0.1,0.9,1\n0.9,0.1,1\n0.9,0.9,0\n",
	}
	for i, s := range shards {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.csv", i)), []byte(s), 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}
	res, err := kkbeam.Fit(context.Background(), kkbeam.FitOptions{
		Input: filepath.Join(dir, "part-*.csv"),
		Model: model.Options{Features: features.Config{Kernel: "rbf", Gamma: 2, Features: 256, Seed: 1}, Lambda: 1e-3},
		Run:   kkbeam.RunOptions{Runner: "prism"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	m := res.Model
	fmt.Println(res.Files, "files,", res.Rows, "rows,", m.Task, "with", m.Classes, "classes, columns", m.Columns)
	// Output:
	// 2 files, 8 rows, classification with 2 classes, columns [x1 x2]
}
