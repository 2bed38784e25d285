// Package report renders the typed rows that kernelkit's studies return:
// as aligned text tables, as JSON, and as PNG line plots. The studies (in
// the packages under study/) compute; the CLI chooses a rendering here;
// nothing in this package computes a result.
//
// Every file is written atomically (a temporary file renamed into place),
// so an interrupted run never leaves a half-written plot.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/kernelkit/kernelkit/internal/atomicfile"
)

// JSON writes v as one JSON document followed by a newline.
func JSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}

// Table is a text table with a header row; cells are already formatted.
type Table struct {
	// Title, if not empty, is printed above the table followed by a blank
	// line.
	Title  string
	Header []string
	Rows   [][]string
	// Left aligns the columns left instead of right.
	Left bool
}

// Add appends a row of cells; values other than strings are formatted with
// fmt's %v.
func (t *Table) Add(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		if s, ok := c.(string); ok {
			row[i] = s
		} else {
			row[i] = fmt.Sprint(c)
		}
	}
	t.Rows = append(t.Rows, row)
}

// Render writes the table with columns separated by two spaces, aligned as
// a tabwriter aligns them.
func (t *Table) Render(w io.Writer) error {
	if t.Title != "" {
		if _, err := fmt.Fprintf(w, "%s\n\n", t.Title); err != nil {
			return err
		}
	}
	flags := tabwriter.AlignRight
	if t.Left {
		flags = 0
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', flags)
	line := func(cells []string) error {
		var b bytes.Buffer
		for _, c := range cells {
			b.WriteString(c)
			b.WriteByte('\t')
		}
		b.WriteByte('\n')
		_, err := tw.Write(b.Bytes())
		return err
	}
	if len(t.Header) > 0 {
		if err := line(t.Header); err != nil {
			return err
		}
	}
	for _, r := range t.Rows {
		if err := line(r); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// F formats a float with the given %g precision (e.g. F(v, 4) is %.4g).
func F(v float64, prec int) string { return strconv.FormatFloat(v, 'g', prec, 64) }

// Fixed formats a float with a fixed number of decimals (%.nf).
func Fixed(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }

// Series is one line of a plot.
type Series struct {
	Name   string
	X, Y   []float64
	Points bool // draw point markers too
}

// Plot describes a line plot.
type Plot struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	// XTicks, if set, puts labelled ticks at these x values.
	XTicks []float64
	// Series are drawn in order; points with a non-positive value on a log
	// axis are dropped.
	Series []Series
	// Width and Height in inches (default 9×6).
	Width, Height float64
	// Headroom multiplies the y maximum to leave room for the legend
	// (default 1: none).
	Headroom float64
	// LegendLeft puts the legend at the top left instead of the top right.
	LegendLeft bool
}

// Save renders the plot as PNG (or SVG, PDF by the extension of path) and
// writes it atomically.
func (pl *Plot) Save(path string) error {
	p := plot.New()
	p.Title.Text = pl.Title
	p.X.Label.Text = pl.XLabel
	p.Y.Label.Text = pl.YLabel
	if pl.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	if pl.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	if len(pl.XTicks) > 0 {
		var ts []plot.Tick
		for _, v := range pl.XTicks {
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ts)
	}
	p.Legend.Top = true
	p.Legend.Left = pl.LegendLeft
	var lines []any
	for _, s := range pl.Series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("report: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		var pts plotter.XYs
		for i := range s.X {
			if (pl.LogX && !(s.X[i] > 0)) || (pl.LogY && !(s.Y[i] > 0)) {
				continue
			}
			pts = append(pts, plotter.XY{X: s.X[i], Y: s.Y[i]})
		}
		if len(pts) == 0 {
			continue
		}
		lines = append(lines, s.Name, pts)
	}
	if len(lines) == 0 {
		return fmt.Errorf("report: plot %q has no points to draw", pl.Title)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	if pl.Headroom > 1 {
		p.Y.Max *= pl.Headroom
	}
	w, h := pl.Width, pl.Height
	if w == 0 {
		w, h = 9, 6
	}
	wt, err := p.WriterTo(vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch, format(path))
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(out io.Writer) error {
		_, err := wt.WriteTo(out)
		return err
	})
}

// logTicks are gonum's logarithmic ticks with short labels (1e-05, 0.001,
// 100) instead of the float noise of 10^k computed in floating point.
type logTicks struct{}

// Ticks returns the ticks between min and max.
func (logTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.LogTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 3, 64)
		}
	}
	return ts
}

func format(path string) string {
	for i := len(path) - 1; i >= 0 && path[i] != '/'; i-- {
		if path[i] == '.' {
			switch ext := path[i+1:]; ext {
			case "svg", "pdf", "eps", "jpg", "jpeg", "tif", "tiff":
				return ext
			}
			break
		}
	}
	return "png"
}
