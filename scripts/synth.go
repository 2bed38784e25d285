//go:build ignore

// Command synth writes a synthetic two-class data set shaped like HIGGS
// (UCI; Baldi, Sadowski and Whiteson 2014): 28 feature columns — 21
// "low-level" ones and 7 "high-level" ones computed from them, as HIGGS's
// invariant masses are — and a 0/1 label last, as CSV with a header row.
// The label is a noisy non-linear function of the low-level features, so
// a linear model does poorly and a kernel model well (about 0.7 and 0.8
// test accuracy at a few thousand RBF features), close to HIGGS's own
// difficulty. The same seed writes the same bytes. Run from the
// repository root:
//
//	go run scripts/synth.go --rows 220000 --out /tmp/synth.csv
//	go run scripts/synth.go --rows 8800000 --out /tmp/higgs-synth.csv   # HIGGS-sized, 2.4 GB
//	go run scripts/synth.go --rows 100000 --part 1 --out /tmp/higgs-test.csv
//
// Rows are independent and identically distributed: the first rows of a
// file can train and the rest test (scripts/compare.sh's TRAIN and TEST),
// or another --part of the same --seed gives a separate test file.
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/internal/atomicfile"
	"github.com/kernelkit/kernelkit/internal/rng"
)

const (
	low  = 21 // low-level features
	high = 7  // high-level features
)

func main() {
	rows := pflag.Int("rows", 200000, "number of rows")
	out := pflag.String("out", "", "output CSV file (required)")
	seed := pflag.Uint64("seed", 1, "random seed of the problem (the hidden decision function) and of the rows")
	part := pflag.Uint64("part", 0, "draw the rows from random stream number part of the seed: parts of one seed are independent samples of the same problem (e.g. --part 1 for a test set)")
	pflag.Parse()
	if *out == "" || *rows <= 0 {
		fmt.Fprintln(os.Stderr, "synth: --out and a positive --rows are required")
		os.Exit(1)
	}
	err := atomicfile.Write(*out, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := write(w, *rows, *seed, *part); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "synth:", err)
		os.Exit(1)
	}
}

// write writes the header and rows rows of the problem of seed, drawn
// from the random stream part.
func write(w *bufio.Writer, rows int, seed, part uint64) error {
	// The hidden decision function: random directions drawn once from the
	// seed's first stream.
	r := rng.NewStream(seed, 0)
	var dir [6][low]float64
	for i := range dir {
		var n float64
		for j := range dir[i] {
			dir[i][j] = r.NormFloat64()
			n += dir[i][j] * dir[i][j]
		}
		for j := range dir[i] {
			dir[i][j] /= math.Sqrt(n)
		}
	}
	for j := 0; j < low+high; j++ {
		if j > 0 {
			w.WriteByte(',')
		}
		if j < low {
			fmt.Fprintf(w, "low%02d", j+1)
		} else {
			fmt.Fprintf(w, "high%d", j-low+1)
		}
	}
	w.WriteString(",label\n")
	// The label threshold: the median score of a calibration sample of
	// its own stream, so that the classes are balanced.
	cal := make([]float64, 20001)
	r = rng.NewStream(seed, 1<<40)
	for i := range cal {
		var x [low + high]float64
		cal[i] = draw(r, &dir, &x)
	}
	slices.Sort(cal)
	threshold := cal[len(cal)/2]
	r = rng.NewStream(seed, 1+part)
	var x [low + high]float64
	buf := make([]byte, 0, 32)
	for i := 0; i < rows; i++ {
		label := 0
		if draw(r, &dir, &x) > threshold {
			label = 1
		}
		for j, v := range x {
			if j > 0 {
				w.WriteByte(',')
			}
			buf = strconv.AppendFloat(buf[:0], v, 'g', 7, 64)
			w.Write(buf)
		}
		w.WriteByte(',')
		w.WriteString(strconv.Itoa(label))
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return nil
}

// draw fills x with a row's features drawn from r and returns the row's
// noisy score.
func draw(r *rand.Rand, dir *[6][low]float64, x *[low + high]float64) float64 {
	// Low-level features: momenta-like (positive, skewed) and angle-like
	// (uniform) columns, as in HIGGS.
	for j := 0; j < low; j++ {
		switch j % 3 {
		case 0:
			x[j] = math.Exp(0.5 * r.NormFloat64())
		case 1:
			x[j] = r.NormFloat64()
		default:
			x[j] = math.Pi * (2*r.Float64() - 1)
		}
	}
	var p [6]float64
	for k := range p {
		for j := 0; j < low; j++ {
			p[k] += dir[k][j] * x[j]
		}
	}
	// High-level features: "masses" of pairs of projections, with
	// measurement noise.
	for k := 0; k < high; k++ {
		a, b := p[k%6], p[(k+1)%6]
		x[low+k] = math.Sqrt(a*a+b*b+0.1) * math.Exp(0.1*r.NormFloat64())
	}
	return 1.2*math.Sin(2*p[0]) + p[1]*p[2] - 0.6*(p[3]*p[3]-1) + 0.8*math.Cos(p[4]+p[5]) + 0.7*r.NormFloat64()
}
