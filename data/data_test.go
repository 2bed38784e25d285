package data

import (
	"io"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestReadCSV(t *testing.T) {
	d, err := ReadCSV(strings.NewReader("a,b,y\n1,2,0\n3, 4.5,1\n"), CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Rows() != 2 || d.Cols() != 2 || d.X.At(1, 1) != 4.5 || d.Y[1] != 1 || d.Label != "y" {
		t.Errorf("parsed %v %v label %q", d.X, d.Y, d.Label)
	}
	d, err = ReadCSV(strings.NewReader("t,a,b\n7,1,2\n"), CSVOptions{Label: "t"})
	if err != nil || d.Y[0] != 7 || d.X.At(0, 0) != 1 {
		t.Errorf("label by name: %v %v", d, err)
	}
}

func TestCSVErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "empty"},
		{"a,b\n", "no rows"},
		{"a,b,y\n1,2,0\n1,2\n", "line 3 has 2 fields"},
		{"a,b,y\n1,x,0\n", "line 2, column 2"},
		{"a,b,y\n1,NaN,0\n", "not finite"},
		{"a,b,y\n1,Inf,0\n", "not finite"},
		{"y\n1\n", "no feature columns"},
	} {
		_, err := ReadCSV(strings.NewReader(c.in), CSVOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("input %q: error %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := ReadCSV(strings.NewReader("a,b\n1,2\n"), CSVOptions{Label: "z"}); err == nil {
		t.Error("missing label column accepted")
	}
}

func TestCSVStreaming(t *testing.T) {
	r, err := NewCSVReader(strings.NewReader("a,y\n1,0\n2,1\n3,0\n"), CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x, y, err := r.Read(2)
	if err != nil || x.RawMatrix().Rows != 2 || len(y) != 2 {
		t.Fatalf("first batch: %v %v %v", x, y, err)
	}
	x, _, err = r.Read(2)
	if err != nil || x.At(0, 0) != 3 {
		t.Fatalf("second batch: %v %v", x, err)
	}
	if _, _, err = r.Read(2); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

func TestLIBSVM(t *testing.T) {
	d, err := ReadLIBSVM(strings.NewReader("+1 1:0.5 3:2 # c\n-1 2:1\n\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.Cols() != 3 || d.X.At(0, 2) != 2 || d.X.At(1, 1) != 1 || d.Y[1] != -1 {
		t.Errorf("parsed %v", d.X)
	}
	for _, in := range []string{"", "1 0:1\n", "1 2:1 1:1\n", "1 1:x\n", "a 1:1\n", "1 1\n", "1 5:1\n"} {
		if _, err := ReadLIBSVM(strings.NewReader(in), 4); err == nil {
			t.Errorf("bad LIBSVM %q accepted", in)
		}
	}
}

func TestScalerAndSplit(t *testing.T) {
	d := Letter()
	if d.Rows() != 20000 || d.Cols() != 16 {
		t.Fatalf("letter is %dx%d", d.Rows(), d.Cols())
	}
	labels, k, err := d.Labels()
	if err != nil || k != 26 || len(labels) != 20000 {
		t.Fatalf("labels: k=%d err=%v", k, err)
	}
	tr, te, err := d.SplitAt(16000)
	if err != nil || tr.Rows() != 16000 || te.Rows() != 4000 {
		t.Fatal("SplitAt")
	}
	s, err := FitScaler(tr.X)
	if err != nil {
		t.Fatal(err)
	}
	z, err := s.Transform(tr.X)
	if err != nil {
		t.Fatal(err)
	}
	// Standardize is the same scaler applied to both sets.
	ztr, zte, err := Standardize(tr.X, te.X)
	if err != nil {
		t.Fatal(err)
	}
	zt, err := s.Transform(te.X)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(ztr, z) || !mat.Equal(zte, zt) {
		t.Error("Standardize differs from FitScaler and Transform")
	}
	if _, _, err := Standardize(tr.X, mat.NewDense(2, 3, nil)); err == nil {
		t.Error("Standardize: test set of other columns accepted")
	}
	for j := 0; j < 16; j++ {
		var m, v float64
		for i := 0; i < 16000; i++ {
			m += z.At(i, j)
		}
		m /= 16000
		for i := 0; i < 16000; i++ {
			v += (z.At(i, j) - m) * (z.At(i, j) - m)
		}
		if math.Abs(m) > 1e-9 || math.Abs(v/16000-1) > 1e-9 {
			t.Errorf("column %d: mean %v var %v", j, m, v/16000)
		}
	}
	a, b, err := d.Split(0.25, 3)
	a2, _, _ := d.Split(0.25, 3)
	if err != nil || a.Rows() != 15000 || b.Rows() != 5000 || a.X.At(0, 0) != a2.X.At(0, 0) {
		t.Error("seeded split")
	}
	if _, _, err := d.Split(1.5, 1); err == nil {
		t.Error("bad fraction accepted")
	}
	if _, _, err := (&Dataset{Y: []float64{0.5}}).Labels(); err == nil {
		t.Error("fractional label accepted")
	}
}

func TestScalerAccumulator(t *testing.T) {
	d := Letter()
	whole, _ := FitScaler(d.X)
	var acc, other ScalerAccumulator
	for lo := 0; lo < 20000; lo += 3001 {
		hi := min(lo+3001, 20000)
		dst := &acc
		if (lo/3001)%2 == 1 {
			dst = &other
		}
		if err := dst.Add(d.X.Slice(lo, hi, 0, 16).(*mat.Dense)); err != nil {
			t.Fatal(err)
		}
	}
	if err := acc.Merge(&other); err != nil {
		t.Fatal(err)
	}
	s, err := acc.Scaler()
	if err != nil {
		t.Fatal(err)
	}
	for j := range s.Mean {
		if math.Abs(s.Mean[j]-whole.Mean[j]) > 1e-12 || math.Abs(s.Scale[j]-whole.Scale[j]) > 1e-12 {
			t.Fatalf("column %d: streamed %v/%v, whole %v/%v", j, s.Mean[j], s.Scale[j], whole.Mean[j], whole.Scale[j])
		}
	}
	var empty ScalerAccumulator
	if _, err := empty.Scaler(); err == nil {
		t.Error("empty accumulator gave a scaler")
	}
}

// TestScalerOverflow: a column whose squared deviations overflow float64
// (a value of 1e160 among small ones) is refused by FitScaler and by the
// streaming accumulator, instead of being standardised to zeros.
func TestScalerOverflow(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{1, 1e160, 2, 3, 3, 4})
	if _, err := FitScaler(x); err == nil || !strings.Contains(err.Error(), "column 2") {
		t.Errorf("FitScaler: error %v, want one naming column 2", err)
	}
	var a ScalerAccumulator
	if err := a.Add(x); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Scaler(); err == nil || !strings.Contains(err.Error(), "column 2") {
		t.Errorf("ScalerAccumulator: error %v, want one naming column 2", err)
	}
	if _, err := FitScaler(mat.NewDense(2, 1, []float64{1e150, -1e150})); err != nil {
		t.Errorf("values of 1e150 (squares finite): %v", err)
	}
}

// TestCSVDuplicateFeatureColumns: two feature columns of one name are
// refused (a model fitted on them names its inputs ambiguously).
func TestCSVDuplicateFeatureColumns(t *testing.T) {
	if _, err := ReadCSV(strings.NewReader("a,a,label\n1,2,0\n3,4,1\n"), CSVOptions{}); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("header a,a,label: %v", err)
	}
}
