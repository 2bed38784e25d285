package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTableRender(t *testing.T) {
	tb := Table{Title: "demo", Header: []string{"D", "error"}}
	tb.Add(64, F(0.123456, 3))
	tb.Add(1024, "0.02")
	var b bytes.Buffer
	if err := tb.Render(&b); err != nil {
		t.Fatal(err)
	}
	want := "demo\n\n     D  error\n    64  0.123\n  1024   0.02\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestPlotSave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.png")
	pl := Plot{Title: "t", LogY: true, Series: []Series{{Name: "a", X: []float64{1, 2, 3}, Y: []float64{1, 0, 3}}}}
	if err := pl.Save(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("not a PNG (%v)", err)
	}
	empty := Plot{Title: "none", LogY: true, Series: []Series{{Name: "z", X: []float64{1}, Y: []float64{0}}}}
	if err := empty.Save(path); err == nil || !strings.Contains(err.Error(), "no points") {
		t.Errorf("empty plot: %v", err)
	}
}

func TestLogTickLabels(t *testing.T) {
	for _, tk := range (logTicks{}).Ticks(1e-7, 300) {
		if len(tk.Label) > 6 {
			t.Errorf("tick %g labelled %q", tk.Value, tk.Label)
		}
	}
}
