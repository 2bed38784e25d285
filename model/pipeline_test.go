package model

import (
	"context"
	"io"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
)

// listBatches returns the given batches in turn, whatever the size
// asked for.
type listBatches struct {
	b []*data.Batch
	i int
}

func (l *listBatches) Read(max int) (*mat.Dense, []float64, error) {
	b, err := l.ReadBatch(max)
	if err != nil {
		return nil, nil, err
	}
	return b.X, b.Y, nil
}

func (l *listBatches) ReadBatch(int) (*data.Batch, error) {
	if l.i == len(l.b) {
		return nil, io.EOF
	}
	l.i++
	return l.b[l.i-1], nil
}

// rowsBatch returns a batch of n rows of two columns, labels i mod 2 and,
// with weighted set, weight 1 each.
func rowsBatch(n int, weighted bool) *data.Batch {
	b := &data.Batch{X: mat.NewDense(n, 2, nil), Y: make([]float64, n)}
	for i := range n {
		b.X.Set(i, 0, float64(i))
		b.X.Set(i, 1, float64(i*i%7))
		b.Y[i] = float64(i % 2)
	}
	if weighted {
		b.Weights = make([]float64, n)
		for i := range b.Weights {
			b.Weights[i] = 1
		}
	}
	return b
}

// TestStreamBatchErrors: batches that disagree with each other — within a
// pass (weights in some only, another width, labels or weights of the
// wrong length, when they are joined to whole blocks or not) or between
// passes (a later pass with more, fewer or other rows) — are refused with
// one line each, never a panic.
func TestStreamBatchErrors(t *testing.T) {
	ctx := context.Background()
	opt := Options{Task: Classification, Lambda: 0.5, Calibrate: true, Folds: 2,
		Features: features.Config{Kernel: "rbf", Gamma: 0.1, Features: 8, Seed: 1}}
	short := rowsBatch(5, false)
	short.Y = short.Y[:4]
	shortW := rowsBatch(5, true)
	shortW.Weights = shortW.Weights[:3]
	wide := &data.Batch{X: mat.NewDense(3, 3, nil), Y: []float64{0, 1, 0}}
	for _, c := range []struct {
		name   string
		passes [][]*data.Batch // the batches of each pass (the last repeats)
		want   string
	}{
		{"weights in some batches", [][]*data.Batch{{rowsBatch(10, true), rowsBatch(10, false)}}, "some batches have weights and some do not"},
		{"another width", [][]*data.Batch{{rowsBatch(10, false), wide}}, "feature columns"},
		{"labels of the wrong length", [][]*data.Batch{{short}}, "a batch of 5 rows has 4 targets"},
		{"weights of the wrong length", [][]*data.Batch{{rowsBatch(4, true), shortW}}, "a batch of 5 rows has 3 weights"},
		{"more rows later", [][]*data.Batch{{rowsBatch(10, false)}, {rowsBatch(12, false)}}, "a later pass's rows differ from the first's"},
		{"fewer rows later", [][]*data.Batch{{rowsBatch(10, false)}, {rowsBatch(8, false)}}, "the second pass has 8 rows, the first 10"},
		{"fewer rows in the third pass", [][]*data.Batch{{rowsBatch(10, false)}, {rowsBatch(10, false)}, {rowsBatch(9, false)}}, "the third pass has 9 rows, the first 10"},
		{"weights later", [][]*data.Batch{{rowsBatch(10, false)}, {rowsBatch(10, true)}}, "a later pass's weights differ from the first's"},
	} {
		pass := 0
		open := func() (Batches, func() error, error) {
			b := c.passes[min(pass, len(c.passes)-1)]
			pass++
			return &listBatches{b: b}, func() error { return nil }, nil
		}
		_, err := FitStream(ctx, opt, open, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
}

// TestBlocks: blocks cuts and joins the batches of a reader into batches
// of exactly the size asked for but the last, with the rows, labels,
// targets and weights in order.
func TestBlocks(t *testing.T) {
	var parts []*data.Batch
	total := 0
	for _, n := range []int{1, 7, 3, 20, 2} {
		b := rowsBatch(n, true)
		for i := range n {
			b.X.Set(i, 0, float64(total+i))
			b.Weights[i] = float64(total + i)
		}
		b.Targets = mat.NewDense(n, 1, b.Weights)
		b.Y = nil
		parts = append(parts, b)
		total += n
	}
	r := &blocks{b: &listBatches{b: parts}, size: 6}
	seen := 0
	for {
		b, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n := batchLen(b)
		if n != min(6, total-seen) {
			t.Fatalf("a batch of %d rows after %d, want %d", n, seen, min(6, total-seen))
		}
		for i := range n {
			if b.X.At(i, 0) != float64(seen+i) || b.Weights[i] != float64(seen+i) || b.Targets.At(i, 0) != float64(seen+i) {
				t.Fatalf("row %d of the batch after %d: x %v, weight %v, target %v", i, seen, b.X.At(i, 0), b.Weights[i], b.Targets.At(i, 0))
			}
		}
		seen += n
	}
	if seen != total {
		t.Errorf("%d rows, want %d", seen, total)
	}
}
