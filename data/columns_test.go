package data

import (
	"bufio"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestMatchColumns checks that MatchColumns picks, for each header and
// options, the columns Open reads (the file's row holds each column's
// index, so the data set Open returns names the columns it took), and
// fails with Open's message where Open fails.
func TestMatchColumns(t *testing.T) {
	cases := []struct {
		header string
		opt    OpenOptions
	}{
		{"a,b,y", OpenOptions{}},
		{" a , b , y ", OpenOptions{Label: "a"}},
		{"a,b,y", OpenOptions{Label: "z"}},
		{"a,b,y", OpenOptions{NoLabel: true}},
		{"a,a,y", OpenOptions{}},
		{"y", OpenOptions{}},
		{"a,w,b,y", OpenOptions{Weight: "w"}},
		{"a,b,w", OpenOptions{Weight: "w"}},
		{"a,b,w", OpenOptions{Weight: "x"}},
		{"a,t1,b,t2", OpenOptions{Targets: []string{"t2", "t1"}}},
		{"a,t1,b,t2", OpenOptions{Targets: []string{"t1"}}},
		{"a,t1,b,t2", OpenOptions{Targets: []string{"t1", "t2"}, Label: "a"}},
		{"a,t1,b,t2", OpenOptions{Targets: []string{"t1", "t1"}}},
		{"b,a,y", OpenOptions{Columns: []string{"a", "b"}}},
		{"b,y,a", OpenOptions{Columns: []string{"a", "b"}}},
		{"b,y,a", OpenOptions{Columns: []string{"a", "b"}, Label: "y"}},
		{"b,a,z", OpenOptions{Columns: []string{"a", "b", "c"}}},
		{"b,a,z,u,v,w,x", OpenOptions{Columns: []string{"a", "b"}, NoLabel: true}},
		{"b,a,w,y", OpenOptions{Columns: []string{"a", "b"}, Weight: "w"}},
		{"b,a,y", OpenOptions{Columns: []string{"a", "b"}, Weight: "w"}},
		{"b,t1,a,t2", OpenOptions{Columns: []string{"a", "b"}, Targets: []string{"t2", "t1"}}},
		{"b,t1,a", OpenOptions{Columns: []string{"a", "b"}, Targets: []string{"t2", "t1"}}},
		{"b,a,b", OpenOptions{Columns: []string{"a", "b"}}},
		{"a,b,y", OpenOptions{Width: 2}},
		{"a,b", OpenOptions{Width: 2}},
		{"y,a,b", OpenOptions{Width: 2, Label: "y"}},
		{"a,b,c,d", OpenOptions{Width: 2}},
		{"a,b,y", OpenOptions{Width: 2, Label: "q"}},
		{"a,w,b", OpenOptions{Width: 2, Weight: "w"}},
		{"a,b", OpenOptions{Width: 3, Columns: []string{"a", "b"}}},
	}
	matched, refused := 0, 0
	for _, c := range cases {
		name := fmt.Sprintf("%q %+v", c.header, c.opt)
		header := strings.Split(c.header, ",")
		row := make([]string, len(header))
		for i := range row {
			row[i] = fmt.Sprint(i)
		}
		text := c.header + "\n" + strings.Join(row, ",") + "\n"
		ds, oerr := read(bufio.NewReader(strings.NewReader(text)), "x.csv", c.opt, nil)
		m, merr := MatchColumns(header, c.opt)
		if oerr != nil || merr != nil {
			if oerr == nil || merr == nil || oerr.Error() != merr.Error() {
				t.Errorf("%s: MatchColumns error %v, Open's %v", name, merr, oerr)
			}
			refused++
			continue
		}
		matched++
		var feat []int
		for _, v := range ds.X.RawRowView(0) {
			feat = append(feat, int(v))
		}
		if !slices.Equal(m.Features, feat) || !slices.Equal(m.Names, ds.Names) {
			t.Errorf("%s: features %v %q, Open's %v %q", name, m.Features, m.Names, feat, ds.Names)
		}
		label := -1
		if ds.Y != nil {
			label = int(ds.Y[0])
		}
		if m.Label != label || m.LabelName != ds.Label {
			t.Errorf("%s: label %d %q, Open's %d %q", name, m.Label, m.LabelName, label, ds.Label)
		}
		weight := -1
		if ds.Weights != nil {
			weight = int(ds.Weights[0])
		}
		if m.Weight != weight {
			t.Errorf("%s: weight %d, Open's %d", name, m.Weight, weight)
		}
		var targets []int
		if ds.Targets != nil {
			for _, v := range ds.Targets.RawRowView(0) {
				targets = append(targets, int(v))
			}
		}
		if !slices.Equal(m.Targets, targets) {
			t.Errorf("%s: targets %v, Open's %v", name, m.Targets, targets)
		}
	}
	if matched < 15 || refused < 10 {
		t.Errorf("%d headers matched and %d refused, want at least 15 and 10", matched, refused)
	}
}
