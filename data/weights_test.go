package data

import (
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// rows returns the rows of a as slices (nil for a nil matrix).
func rows(a *mat.Dense) [][]float64 {
	if a == nil {
		return nil
	}
	r, _ := a.Dims()
	out := make([][]float64, r)
	for i := range out {
		out[i] = append([]float64(nil), a.RawRowView(i)...)
	}
	return out
}

// TestOpenWeightsTargets: a weight column and several target columns are
// read out of the features — in a training file (all named columns must
// be there) and in a file matched to a model's columns (optional: a file
// without them reads as unlabelled, unweighted rows; a file with only some
// of the targets is refused) — with every error naming the column.
func TestOpenWeightsTargets(t *testing.T) {
	const train = "a,w,t2,b,t1\n1,0.5,20,2,10\n3,2,40,4,30\n"
	for _, c := range []struct {
		name, content string
		opt           OpenOptions
		x, targets    [][]float64
		y, w          []float64
		names, tnames []string
		label         string
		err           string
	}{
		{name: "weights and label", content: "a,w,b,y\n1,0.5,2,0\n3,2,4,1\n", opt: OpenOptions{Weight: "w"},
			x: [][]float64{{1, 2}, {3, 4}}, y: []float64{0, 1}, w: []float64{0.5, 2}, names: []string{"a", "b"}, label: "y"},
		{name: "weights, targets", content: train, opt: OpenOptions{Weight: "w", Targets: []string{"t1", "t2"}},
			x: [][]float64{{1, 2}, {3, 4}}, targets: [][]float64{{10, 20}, {30, 40}}, w: []float64{0.5, 2},
			names: []string{"a", "b"}, tnames: []string{"t1", "t2"}},
		{name: "one target is the label", content: "a,y,b\n1,5,2\n", opt: OpenOptions{Targets: []string{"y"}},
			x: [][]float64{{1, 2}}, y: []float64{5}, names: []string{"a", "b"}, label: "y"},
		{name: "matched, all there", content: "b,t1,t2,w,a\n2,10,20,3,1\n",
			opt: OpenOptions{Columns: []string{"a", "b"}, Weight: "w", Targets: []string{"t1", "t2"}},
			x:   [][]float64{{1, 2}}, targets: [][]float64{{10, 20}}, w: []float64{3}, names: []string{"a", "b"}, tnames: []string{"t1", "t2"}},
		{name: "matched, none there", content: "b,a\n2,1\n",
			opt: OpenOptions{Columns: []string{"a", "b"}, Weight: "w", Targets: []string{"t1", "t2"}},
			x:   [][]float64{{1, 2}}, names: []string{"a", "b"}},
		{name: "matched by width with weight and label", content: "a,b,w,y\n1,2,3,4\n",
			opt: OpenOptions{Width: 2, Weight: "w"},
			x:   [][]float64{{1, 2}}, y: []float64{4}, w: []float64{3}, names: []string{"a", "b"}, label: "y"},
		{name: "matched, some targets", content: "a,b,t1\n1,2,3\n",
			opt: OpenOptions{Columns: []string{"a", "b"}, Targets: []string{"t1", "t2"}}, err: `no column "t2"`},
		{name: "unknown weight column", content: train, opt: OpenOptions{Weight: "v", Label: "t1"}, err: `no weight column "v"`},
		{name: "unknown target", content: train, opt: OpenOptions{Targets: []string{"t1", "t3"}}, err: `no target column "t3"`},
		{name: "target named twice", content: train, opt: OpenOptions{Targets: []string{"t1", "t1"}}, err: "named twice"},
		{name: "target is the weight", content: train, opt: OpenOptions{Weight: "t1", Targets: []string{"t1", "t2"}}, err: "named twice"},
		{name: "targets and label", content: train, opt: OpenOptions{Label: "a", Targets: []string{"t1", "t2"}}, err: "several target columns and a label"},
		{name: "weight is the default label", content: "a,b,w\n1,2,3\n", opt: OpenOptions{Weight: "w"}, err: "name the label"},
		{name: "weight is the label", content: train, opt: OpenOptions{Weight: "w", Label: "w"}, err: "both the label and the weight"},
		{name: "only weight and targets", content: "w,t1,t2\n1,2,3\n", opt: OpenOptions{Weight: "w", Targets: []string{"t1", "t2"}}, err: "no feature columns"},
	} {
		p := writeFile(t, "a.csv", c.content)
		ds, err := Open(p, c.opt)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(rows(ds.X), c.x) || !reflect.DeepEqual(rows(ds.Targets), c.targets) ||
			!reflect.DeepEqual(ds.Y, c.y) || !reflect.DeepEqual(ds.Weights, c.w) ||
			!reflect.DeepEqual(ds.Names, c.names) || !reflect.DeepEqual(ds.TargetNames, c.tnames) || ds.Label != c.label {
			t.Errorf("%s: got x %v targets %v y %v w %v names %q %q label %q", c.name, rows(ds.X), rows(ds.Targets), ds.Y, ds.Weights, ds.Names, ds.TargetNames, ds.Label)
		}
		if (ds.Weights != nil) != (ds.WeightColumn != "") {
			t.Errorf("%s: weights %v from column %q", c.name, ds.Weights, ds.WeightColumn)
		}
	}
	if _, err := Open(writeFile(t, "a.svm", "1 1:2\n"), OpenOptions{Weight: "w"}); err == nil {
		t.Error("LIBSVM file with a weight column accepted")
	}
}

// TestReadBatchStreams: a CSV reader with a weight column and several
// targets returns them batch by batch (ReadBatch), Read returns the
// features alone, and Subset keeps weights and targets with their rows.
func TestReadBatchStreams(t *testing.T) {
	const content = "a,t1,w,t2\n1,2,3,4\n5,6,7,8\n9,10,11,12\n"
	c, err := NewCSVReader(strings.NewReader(content), CSVOptions{Weight: "w", Targets: []string{"t2", "t1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Names(), []string{"a"}) {
		t.Fatalf("names %q", c.Names())
	}
	b, err := c.ReadBatch(2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows(b.X), [][]float64{{1}, {5}}) || !reflect.DeepEqual(rows(b.Targets), [][]float64{{4, 2}, {8, 6}}) ||
		!reflect.DeepEqual(b.Weights, []float64{3, 7}) || b.Y != nil {
		t.Errorf("first batch: x %v targets %v w %v y %v", rows(b.X), rows(b.Targets), b.Weights, b.Y)
	}
	x, y, err := c.Read(5)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows(x), [][]float64{{9}}) || y != nil {
		t.Errorf("Read: x %v y %v", rows(x), y)
	}
	if _, err := c.ReadBatch(1); err != io.EOF {
		t.Errorf("at the end: %v, want io.EOF", err)
	}
	ds, err := ReadCSV(strings.NewReader(content), CSVOptions{Weight: "w", Targets: []string{"t1", "t2"}})
	if err != nil {
		t.Fatal(err)
	}
	sub := ds.Subset([]int{2, 0})
	if !reflect.DeepEqual(sub.Weights, []float64{11, 3}) || !reflect.DeepEqual(rows(sub.Targets), [][]float64{{10, 12}, {2, 4}}) ||
		!reflect.DeepEqual(sub.TargetNames, []string{"t1", "t2"}) || sub.WeightColumn != "w" {
		t.Errorf("subset: w %v targets %v names %q %q", sub.Weights, rows(sub.Targets), sub.TargetNames, sub.WeightColumn)
	}
}

// TestFitScalerWeighted: integer weights give the scaler of the repeated
// rows (means and scales to 1e-14 relative), weight zero the scaler
// without the row (also when that row holds 1e300), the streamed
// accumulator over batches equals the one-shot fit to 1e-14, nil weights
// are FitScaler bit for bit, and bad weights are errors.
func TestFitScalerWeighted(t *testing.T) {
	x := mat.NewDense(5, 2, []float64{1, 10, 2, 20, 4, 1e300, 7, 70, -3, 5})
	w := []float64{2, 1, 0, 3, 1}
	rep := mat.NewDense(7, 2, []float64{1, 10, 1, 10, 2, 20, 7, 70, 7, 70, 7, 70, -3, 5})
	got, err := FitScalerWeighted(x, w)
	if err != nil {
		t.Fatal(err)
	}
	want, err := FitScaler(rep)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b []float64, tol float64) bool {
		for i := range a {
			if math.Abs(a[i]-b[i]) > tol*math.Abs(b[i]) {
				return false
			}
		}
		return true
	}
	if !near(got.Mean, want.Mean, 1e-14) || !near(got.Scale, want.Scale, 1e-14) {
		t.Errorf("weighted scaler %v, repeated rows %v", got, want)
	}
	var acc ScalerAccumulator
	for _, r := range [][2]int{{0, 2}, {2, 3}, {3, 5}} {
		if err := acc.AddWeighted(x.Slice(r[0], r[1], 0, 2).(*mat.Dense), w[r[0]:r[1]]); err != nil {
			t.Fatal(err)
		}
	}
	streamed, err := acc.Scaler()
	if err != nil {
		t.Fatal(err)
	}
	if !near(streamed.Mean, want.Mean, 1e-14) || !near(streamed.Scale, want.Scale, 1e-14) {
		t.Errorf("streamed weighted scaler %v, repeated rows %v", streamed, want)
	}
	// (x's 1e300, weighted zero above, would overflow an unweighted
	// scaler: TestScalerOverflow.)
	plain, err := FitScaler(rep)
	if err != nil {
		t.Fatal(err)
	}
	if nilW, err := FitScalerWeighted(rep, nil); err != nil || !reflect.DeepEqual(nilW, plain) {
		t.Errorf("nil weights: %v, %v; FitScaler %v", nilW, err, plain)
	}
	for _, bad := range [][]float64{{1, 1, -1, 1, 1}, {1, math.NaN(), 1, 1, 1}, {1, 1, 1, math.Inf(1), 1}, {1, 1}, make([]float64, 5)} {
		if _, err := FitScalerWeighted(x, bad); err == nil {
			t.Errorf("weights %v accepted", bad)
		}
	}
}
