package kkbeam

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/data"
)

// TestReadFileColumnsAsOpen: for each header and column choice, ReadFile
// takes the columns data.Open takes (the row holds each column's index,
// so the values name the columns), with the same names and label, and
// refuses a header data.Open refuses, with data.Open's message. Before
// kkbeam used data.MatchColumns it read a header with a feature column
// named twice, which kernelkit fit refuses.
func TestReadFileColumnsAsOpen(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		header string
		src    Source
	}{
		{"a,b,y", Source{}},
		{" a , b , y ", Source{Label: "a"}},
		{"a,b,y", Source{Label: "z"}},
		{"a,b,y", Source{NoLabel: true}},
		{"a,a,y", Source{}},
		{"a,y,a", Source{Label: "y"}},
		{"y", Source{}},
		{"b,a,y", Source{Columns: []string{"a", "b"}}},
		{"b,y,a", Source{Columns: []string{"a", "b"}}},
		{"b,y,a", Source{Columns: []string{"a", "b"}, Label: "y"}},
		{"b,a,z", Source{Columns: []string{"a", "b", "c"}}},
		{"b,a,b", Source{Columns: []string{"a", "b"}}},
		{"b,a,z,u,v,w,x,s,r,q,p", Source{Columns: []string{"a", "b"}, NoLabel: true}},
		{"a,b,y", Source{Width: 2}},
		{"y,a,b", Source{Width: 2, Label: "y"}},
		{"a,b,c,d", Source{Width: 2}},
		{"a,a", Source{Width: 2}},
	}
	matched, refused := 0, 0
	for k, c := range cases {
		name := fmt.Sprintf("%q %+v", c.header, c.src)
		header := strings.Split(c.header, ",")
		row := make([]string, len(header))
		for i := range row {
			row[i] = fmt.Sprint(i)
		}
		text := c.header + "\n" + strings.Join(row, ",") + "\n"
		path := filepath.Join(dir, fmt.Sprintf("f%d.csv", k))
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		ds, oerr := data.Open(path, data.OpenOptions{Label: c.src.Label, NoLabel: c.src.NoLabel, Columns: c.src.Columns, Width: c.src.Width})
		bs, _, rerr := readAllBatches(t, path, text, c.src)
		if oerr != nil || rerr != nil {
			// Both name the file, then give data's message.
			if oerr == nil || rerr == nil || oerr.Error() != rerr.Error() {
				t.Errorf("%s: ReadFile error %v, data.Open's %v", name, rerr, oerr)
			}
			refused++
			continue
		}
		matched++
		b := bs[0]
		feat := ds.X.RawRowView(0)
		if b.Cols != len(feat) || !slices.Equal(b.X, feat) || !slices.Equal(b.Header.Columns, ds.Names) {
			t.Errorf("%s: features %v %q, data.Open's %v %q", name, b.X, b.Header.Columns, feat, ds.Names)
		}
		if !slices.Equal(b.Y, ds.Y) || b.Header.Label != ds.Label {
			t.Errorf("%s: label %v %q, data.Open's %v %q", name, b.Y, b.Header.Label, ds.Y, ds.Label)
		}
	}
	if matched < 7 || refused < 7 {
		t.Errorf("%d headers matched and %d refused, want at least 7 each", matched, refused)
	}
}
