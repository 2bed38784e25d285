package baseline

import (
	"context"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/nystrom"
)

// letterRows returns rows lo…hi−1 of the embedded letter data.
func letterRows(lo, hi int) *data.Dataset {
	idx := make([]int, hi-lo)
	for i := range idx {
		idx[i] = lo + i
	}
	return data.Letter().Subset(idx)
}

// Nystrom returns one row per method and seed (and RFF), with
// accuracies well above chance on letter and Gram errors in (0, 1); the
// table has one row per method.
func TestNystrom(t *testing.T) {
	train, test := letterRows(0, 1000), letterRows(19800, 20000)
	rows, err := Nystrom(context.Background(), NystromConfig{Name: "letter", Train: train, Test: test, Components: 64,
		Gamma: 1.0 / 16, Seeds: 2, RFF: true, GramRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 8 {
		t.Fatalf("%d rows, want 8", len(rows))
	}
	for _, r := range rows {
		if !(r.TestAccuracy > 0.3) || !(r.GramError > 0 && r.GramError < 1) || r.GramRows != 100 {
			t.Errorf("row %+v", r)
		}
	}
	var b strings.Builder
	if err := NystromTable(rows).Render(&b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	for _, m := range []nystrom.Method{nystrom.Uniform, nystrom.KMeans, nystrom.Leverage} {
		if !strings.Contains(b.String(), string(m)) {
			t.Errorf("table lacks %s:\n%s", m, b.String())
		}
	}
}
