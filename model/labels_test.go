package model

import (
	"context"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
)

// TestSingleLabelRefused: a classification training set whose labels are
// all one value is refused by Fit and by FitStream (whatever the value,
// and also when the one value sits in the last batch only), while two
// distinct labels fit, and a constant regression target is a valid
// problem.
func TestSingleLabelRefused(t *testing.T) {
	opt := Options{Task: Classification, Lambda: 0.5, ChunkRows: 2,
		Features: features.Config{Kernel: "rbf", Gamma: 0.5, Features: 8, Seed: 1}}
	for _, c := range []struct {
		name, csv string
		task      Task
		want      string // "" for success
	}{
		{"all ones", "a,b,label\n1,2,1\n3,4,1\n5,6,1\n7,8,1\n9,1,1\n", Classification, "every training label is 1"},
		{"all zeros", "a,b,label\n1,2,0\n3,4,0\n5,6,0\n", Classification, "every training label is 0"},
		{"all sevens", "a,b,label\n1,2,7\n3,4,7\n", Classification, "every training label is 7"},
		{"one row", "a,b,label\n1,2,3\n", Classification, "every training label is 3"},
		{"second class last", "a,b,label\n1,2,1\n3,4,1\n5,6,1\n7,8,1\n9,1,0\n", Classification, ""},
		{"two classes", "a,b,label\n1,2,0\n3,4,2\n5,6,0\n", Classification, ""},
		{"constant regression", "a,b,y\n1,2,4.5\n3,4,4.5\n5,6,4.5\n", Regression, ""},
	} {
		o := opt
		o.Task = c.task
		check := func(how string, m *Model, err error) {
			t.Helper()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s, %s: %v", c.name, how, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s, %s: error %v, want %q", c.name, how, err, c.want)
			case c.want != "" && strings.Contains(err.Error(), "\n"):
				t.Errorf("%s, %s: error %q is not one line", c.name, how, err)
			case c.want == "" && c.task == Classification && m.Classes < 2:
				t.Errorf("%s, %s: %d classes", c.name, how, m.Classes)
			}
		}
		train, err := data.ReadCSV(strings.NewReader(c.csv), data.CSVOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := Fit(context.Background(), o, train)
		check("Fit", m, err)
		open := func() (Batches, func() error, error) {
			r, err := data.NewCSVReader(strings.NewReader(c.csv), data.CSVOptions{})
			return r, func() error { return nil }, err
		}
		m, err = FitStream(context.Background(), o, open, train.Names)
		check("FitStream", m, err)
	}
}
