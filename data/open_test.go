package data

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOpen: format sniffing, label choice, matching of columns by name
// (reordered) and by position, and the LIBSVM width taken from the caller.
func TestOpen(t *testing.T) {
	long := strings.Repeat("w", 5000)
	for _, c := range []struct {
		name, file, content string
		opt                 OpenOptions
		x                   [][]float64 // nil: want an error
		y                   []float64
		names               []string
		label               string
		err                 string
	}{
		{name: "csv by extension", file: "a.csv", content: "a,b,label\n1,2,0\n3,4,1\n",
			x: [][]float64{{1, 2}, {3, 4}}, y: []float64{0, 1}, names: []string{"a", "b"}, label: "label"},
		{name: "libsvm by extension", file: "a.svm", content: "1 1:0.5 3:2\n0 2:1\n",
			x: [][]float64{{0.5, 0, 2}, {0, 1, 0}}, y: []float64{1, 0}},
		{name: "libsvm by content", file: "a.txt", content: "# comment\n\n1 1:0.5 3:2\n0 2:1\n",
			x: [][]float64{{0.5, 0, 2}, {0, 1, 0}}, y: []float64{1, 0}},
		{name: "csv by content", file: "a.data", content: "a,b\n1,2\n", opt: OpenOptions{NoLabel: true},
			x: [][]float64{{1, 2}}, names: []string{"a", "b"}},
		{name: "forced csv", file: "a.svm", content: "a b\n1 2\n", opt: OpenOptions{Format: "csv", NoLabel: true},
			err: "not a number"},
		{name: "unknown format", file: "a.csv", content: "a\n1\n", opt: OpenOptions{Format: "arff"}, err: `unknown format "arff"`},
		{name: "named label first", file: "a.csv", content: "y,a,b\n5,1,2\n", opt: OpenOptions{Label: "y"},
			x: [][]float64{{1, 2}}, y: []float64{5}, names: []string{"a", "b"}, label: "y"},
		{name: "reordered by name", file: "a.csv", content: "b,label,a\n2,1,1\n4,0,3\n",
			opt: OpenOptions{Columns: []string{"a", "b"}, Label: "label", Width: 2},
			x:   [][]float64{{1, 2}, {3, 4}}, y: []float64{1, 0}, names: []string{"a", "b"}, label: "label"},
		{name: "label optional by name", file: "a.csv", content: "b,a\n2,1\n",
			opt: OpenOptions{Columns: []string{"a", "b"}, Label: "label"},
			x:   [][]float64{{1, 2}}, names: []string{"a", "b"}},
		{name: "one extra last column is the label", file: "a.csv", content: "b,a,class\n2,1,3\n",
			opt: OpenOptions{Columns: []string{"a", "b"}},
			x:   [][]float64{{1, 2}}, y: []float64{3}, names: []string{"a", "b"}, label: "class"},
		{name: "missing column", file: "a.csv", content: "a,label\n1,0\n",
			opt: OpenOptions{Columns: []string{"a", "b"}, Label: "label"}, err: `missing "b"`},
		{name: "extra column", file: "a.csv", content: "a,c,b,label\n1,9,2,0\n",
			opt: OpenOptions{Columns: []string{"a", "b"}, Label: "label"}, err: `unexpected "c"`},
		{name: "renamed column", file: "a.csv", content: "a,B,label\n1,2,0\n",
			opt: OpenOptions{Columns: []string{"a", "b"}, Label: "label"}, err: `missing "b"; unexpected "B"`},
		{name: "label among the features", file: "a.csv", content: "a,b\n1,2\n",
			opt: OpenOptions{Columns: []string{"a", "b", "label"}, Label: "label"}, err: `missing "label"`},
		{name: "duplicate column", file: "a.csv", content: "a,a,b\n1,2,3\n",
			opt: OpenOptions{Columns: []string{"a", "b"}}, err: `column "a" appears twice`},
		{name: "names and width disagree", file: "a.csv", content: "a,b\n1,2\n",
			opt: OpenOptions{Columns: []string{"a", "b"}, Width: 3}, err: "2 expected column names for width 3"},
		{name: "width without label", file: "a.csv", content: "p,q\n1,2\n",
			opt: OpenOptions{Width: 2}, x: [][]float64{{1, 2}}, names: []string{"p", "q"}},
		{name: "width with last label", file: "a.csv", content: "p,q,r\n1,2,0\n",
			opt: OpenOptions{Width: 2}, x: [][]float64{{1, 2}}, y: []float64{0}, names: []string{"p", "q"}, label: "r"},
		{name: "width too small", file: "a.csv", content: "p\n1\n", opt: OpenOptions{Width: 2},
			err: "1 feature columns, want 2"},
		{name: "width too large", file: "a.csv", content: "p,q,r,s\n1,2,3,4\n", opt: OpenOptions{Width: 2},
			err: "4 feature columns, want 2"},
		{name: "libsvm narrower than width", file: "a.svm", content: "1 1:0.5\n0 2:1\n", opt: OpenOptions{Width: 4},
			x: [][]float64{{0.5, 0, 0, 0}, {0, 1, 0, 0}}, y: []float64{1, 0}},
		{name: "libsvm wider than width", file: "a.svm", content: "1 1:0.5 5:1\n", opt: OpenOptions{Width: 4},
			err: "beyond"},
		{name: "long name quoted short", file: "a.csv", content: "a," + long + ",label\n1,2,0\n",
			opt: OpenOptions{Columns: []string{"a"}, Label: "label"}, err: `unexpected "wwww`},
	} {
		path := writeFile(t, c.file, c.content)
		ds, err := Open(path, c.opt)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("%s: error %v, want one naming the file and containing %q", c.name, err, c.err)
			} else if msg := err.Error(); strings.Contains(msg, "\n") || len(msg)-len(path) > 200 {
				t.Errorf("%s: error of %d bytes is not one short line", c.name, len(msg))
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var x [][]float64
		for i := 0; i < ds.Rows(); i++ {
			x = append(x, append([]float64(nil), ds.X.RawRowView(i)...))
		}
		if !reflect.DeepEqual(x, c.x) || !reflect.DeepEqual(ds.Y, c.y) || !reflect.DeepEqual(ds.Names, c.names) || ds.Label != c.label {
			t.Errorf("%s: got x %v y %v names %q label %q, want %v %v %q %q", c.name, x, ds.Y, ds.Names, ds.Label, c.x, c.y, c.names, c.label)
		}
	}
	if _, err := Open("", OpenOptions{}); err == nil {
		t.Error("empty path accepted")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.csv"), OpenOptions{}); err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("missing file: %v", err)
	}
}

// TestOpenCSV: the streaming reader reads the rows in batches and names
// the file in its errors.
func TestOpenCSV(t *testing.T) {
	path := writeFile(t, "s.csv", "a,b,label\n1,2,0\n3,4,1\n5,x,1\n")
	f, err := OpenCSV(path, CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Names(), []string{"a", "b"}) {
		t.Errorf("names %q", f.Names())
	}
	x, y, err := f.Read(2)
	if err != nil || x.At(1, 1) != 4 || !reflect.DeepEqual(y, []float64{0, 1}) {
		t.Errorf("first batch: %v, %v, %v", x, y, err)
	}
	if _, _, err := f.Read(2); err == nil || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("bad cell: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	if _, err := OpenCSV(writeFile(t, "e.csv", ""), CSVOptions{}); err == nil || !strings.Contains(err.Error(), "e.csv: ") {
		t.Errorf("empty file: %v", err)
	}
}
