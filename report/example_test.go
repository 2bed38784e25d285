package report_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/kernelkit/kernelkit/report"
)

// A study's rows become a text table: cells are formatted by the caller
// (Fixed, F) and the columns aligned right.
func ExampleTable() {
	t := &report.Table{
		Title:  "relative error against D",
		Header: []string{"D", "error", "1/√D"},
	}
	for _, d := range []int{16, 256, 4096} {
		t.Add(d, report.Fixed(1.1/math.Sqrt(float64(d)), 4), report.F(1/math.Sqrt(float64(d)), 3))
	}
	if err := t.Render(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// relative error against D
	//
	//      D   error    1/√D
	//     16  0.2750    0.25
	//    256  0.0688  0.0625
	//   4096  0.0172  0.0156
}

// JSON writes the same rows as one JSON document, for programs.
func ExampleJSON() {
	type row struct {
		D     int     `json:"features"`
		Error float64 `json:"error"`
	}
	if err := report.JSON(os.Stdout, []row{{16, 0.275}, {256, 0.06875}}); err != nil {
		panic(err)
	}
	// Output:
	// [{"features":16,"error":0.275},{"features":256,"error":0.06875}]
}

// Plot.Save renders a line plot as PNG (or SVG or PDF, by the extension)
// and writes it atomically.
func ExamplePlot_Save() {
	dir, err := os.MkdirTemp("", "report")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	p := &report.Plot{
		Title: "relative error against D", XLabel: "D", YLabel: "error",
		LogX: true, LogY: true,
		Series: []report.Series{{Name: "measured", X: []float64{16, 256, 4096}, Y: []float64{0.275, 0.0688, 0.0172}, Points: true}},
	}
	path := filepath.Join(dir, "error.png")
	if err := p.Save(path); err != nil {
		panic(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	fmt.Printf("PNG signature: %q\n", b[:8])
	// Output: PNG signature: "\x89PNG\r\n\x1a\n"
}
