package model

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
)

// raggedBatches returns the rows of a data set in batches of sizes that
// ignore the size asked for (some smaller, some larger), standing for a
// reader that cuts the rows anywhere.
type raggedBatches struct {
	ds  *data.Dataset
	pos int
	i   int
}

// raggedSizes are the sizes of raggedBatches' batches, in turn.
var raggedSizes = []int{1, 777, 5000, 3, 20011, 64}

func (b *raggedBatches) Read(max int) (*mat.Dense, []float64, error) {
	bt, err := b.ReadBatch(max)
	if err != nil {
		return nil, nil, err
	}
	return bt.X, bt.Y, nil
}

func (b *raggedBatches) ReadBatch(int) (*data.Batch, error) {
	n := b.ds.Rows()
	if b.pos == n {
		return nil, io.EOF
	}
	hi := min(n, b.pos+raggedSizes[b.i%len(raggedSizes)])
	b.i++
	idx := make([]int, 0, hi-b.pos)
	for i := b.pos; i < hi; i++ {
		idx = append(idx, i)
	}
	b.pos = hi
	s := b.ds.Subset(idx)
	return &data.Batch{X: s.X, Y: s.Y, Targets: s.Targets, Weights: s.Weights}, nil
}

// saved returns the bytes of m's model file.
func saved(t *testing.T, m *Model) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// firstDiff describes where two model files first differ.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-60)
	return fmt.Sprintf("at byte %d: …%s… against …%s…", i, a[lo:min(len(a), i+40)], b[lo:min(len(b), i+40)])
}

// TestSameBytes (issue 24): the same rows and options give byte-identical
// model files from memory (Fit) and from a stream (FitStreamColumns),
// whether the reader returns batches of the size asked for (memBatches) or
// of any size (raggedBatches), for a plain fit, sample and class weights,
// GCV and k-fold selection, a multi-output regression, a calibration (with
// and without weights), float32 statistics and the task decided from
// the rows (Auto). The 20000 rows of letter
// are more than one block of the scaler (scalerBlock), so the scaler's
// block merges are compared too. The file also records the label, the
// targets' names and the columns, as Fit's does.
func TestSameBytes(t *testing.T) {
	ctx := context.Background()
	letter := data.Letter()
	if letter.Rows() <= scalerBlock {
		t.Fatalf("letter has %d rows, not more than one scaler block (%d)", letter.Rows(), scalerBlock)
	}
	weighted := *letter
	weighted.Weights, weighted.WeightColumn = make([]float64, letter.Rows()), "w"
	for i := range weighted.Weights {
		weighted.Weights[i] = 0.5 * float64(i%4) // a quarter of the rows weigh zero
	}
	multi := regressionSet(scalerBlock+1000, 5, 3, 7)
	multi.Names, multi.TargetNames = []string{"a", "b", "c", "d", "e"}, []string{"t1", "t2", "t3"}
	one := column(multi, 1)
	one.Names, one.Label = multi.Names, "t2"
	feat := features.Config{Kernel: "rbf", Gamma: 0.1, Features: 48, Seed: 5}
	cls := Options{Task: Classification, Standardize: true, Lambda: 0.5, Features: feat, ChunkRows: 1000}
	reg := cls
	reg.Task = Regression
	with := func(o Options, f func(*Options)) Options { f(&o); return o }
	for _, c := range []struct {
		name string
		opt  Options
		ds   *data.Dataset
	}{
		{"plain", cls, letter},
		{"unstandardised", with(cls, func(o *Options) { o.Standardize = false }), letter},
		{"weights", with(cls, func(o *Options) { o.ClassWeight = "balanced" }), &weighted},
		{"gcv", with(cls, func(o *Options) { o.Select = "gcv" }), letter},
		{"kfold", with(cls, func(o *Options) { o.Select, o.Folds = "kfold", 3 }), &weighted},
		{"multi-output", with(reg, func(o *Options) { o.Select = "gcv" }), multi},
		{"one target", reg, one},
		{"calibrate", with(cls, func(o *Options) { o.Calibrate, o.Folds = true, 3 }), letter},
		{"calibrate weights", with(cls, func(o *Options) { o.Calibrate, o.Select, o.ClassWeights = true, "kfold", map[int]float64{3: 2} }), &weighted},
		{"float32", with(cls, func(o *Options) { o.Float32, o.Features.Float32 = true, true }), letter},
		{"auto classification", with(cls, func(o *Options) { o.Task = Auto }), letter},
		{"auto regression", with(cls, func(o *Options) { o.Task = Auto }), one},
		{"auto multi-output", with(cls, func(o *Options) { o.Task = Auto }), multi},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem, err := Fit(ctx, c.opt, c.ds)
			if err != nil {
				t.Fatal(err)
			}
			want := saved(t, mem)
			if wantTask := map[bool]Task{true: Classification, false: Regression}[c.ds.Targets == nil && c.ds.Label != "t2"]; mem.Task != wantTask {
				t.Errorf("task %q, want %q", mem.Task, wantTask)
			}
			if c.opt.Calibrate && mem.Calibration == nil {
				t.Fatal("calibrated fit without a calibration")
			}
			if !bytes.Contains(want, []byte(`"columns":`)) || (c.ds.Label != "" && !bytes.Contains(want, []byte(`"label":"`+c.ds.Label+`"`))) ||
				(c.ds.TargetNames != nil && !bytes.Contains(want, []byte(`"targets":["t1","t2","t3"]`))) {
				t.Errorf("model file without the columns, label or targets of the data: %.300s", want)
			}
			cols := Columns{Names: c.ds.Names, Label: c.ds.Label, Targets: c.ds.TargetNames}
			for _, r := range []struct {
				name string
				open Opener
			}{
				{"batches of the size asked", opener(c.ds)},
				{"ragged batches", func() (Batches, func() error, error) {
					return &raggedBatches{ds: c.ds}, func() error { return nil }, nil
				}},
			} {
				s, err := FitStreamColumns(ctx, c.opt, r.open, cols)
				if err != nil {
					t.Fatal(err)
				}
				if got := saved(t, s); !bytes.Equal(got, want) {
					t.Errorf("%s: the streamed model file differs from the in-memory one %s", r.name, firstDiff(got, want))
				}
			}
		})
	}
}

// TestScalerBlocks: the scaler of the census is that of
// data.FitScalerWeighted on all rows, bit for bit, up to scalerBlock rows
// (one block), and beyond it within the worst-case rounding bounds of the
// two summation orders: each mean is within γ_n·max|x| of the exact one
// (γ_n ≈ nε, recursive summation; the block merge is no worse), so
// |Δmean| ≤ 2nε·max|x|; each sum of squared deviations within
// γ_n(1 + nε·κ) of the exact one relative to itself (Chan, Golub and
// LeVeque's bound for the two-pass algorithm), κ = max(x−mean)²/var, so
// the scales (square roots) differ relatively by at most 2nε(1 + κ) to
// first order. Letter's features are integers 0…15: max|x| = 15 and
// κ ≤ 225/var.
func TestScalerBlocks(t *testing.T) {
	letter := data.Letter()
	for _, n := range []int{100, scalerBlock, letter.Rows()} {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		ds := letter.Subset(idx)
		want, err := data.FitScaler(ds.X)
		if err != nil {
			t.Fatal(err)
		}
		c := &Census{task: Classification, standardize: true}
		if err := (memRows{data.Batch{X: ds.X, Y: ds.Y}}).pass(scalerBlock, false, c.Add); err != nil {
			t.Fatal(err)
		}
		got, err := c.scaler.Scaler()
		if err != nil {
			t.Fatal(err)
		}
		const eps = 0x1p-53 // unit roundoff
		for j := range want.Mean {
			if n <= scalerBlock {
				if got.Mean[j] != want.Mean[j] || got.Scale[j] != want.Scale[j] {
					t.Errorf("%d rows, column %d: mean %v scale %v, FitScaler %v and %v", n, j, got.Mean[j], got.Scale[j], want.Mean[j], want.Scale[j])
				}
				continue
			}
			kappa := 225 / (want.Scale[j] * want.Scale[j])
			nEps := float64(n) * eps
			if dm := math.Abs(got.Mean[j] - want.Mean[j]); dm > 2*nEps*15 {
				t.Errorf("%d rows, column %d: means differ by %.3g", n, j, dm)
			}
			if ds := math.Abs(got.Scale[j]-want.Scale[j]) / want.Scale[j]; ds > 2*nEps*(1+kappa) {
				t.Errorf("%d rows, column %d: scales differ by %.3g (relative)", n, j, ds)
			}
		}
	}
}
