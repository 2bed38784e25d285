package study_test

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/study/hrf"
)

// Every study has one shape: a configuration struct, a context and a
// progress callback in; typed rows with JSON tags out, with Table (and
// Render, Plot) methods for package report's renderings. Here the HRF
// paper's angle study for FAVOR+ ("positive") at the norm r = 1: 13
// angles from 0 to π, one row each, with progress reported after each of
// the 10 draws. A cancelled context stops a study with the context's
// error.
func Example() {
	cfg := hrf.AnglesConfig{Estimators: []string{"positive"}, Features: 64, Draws: 10, Seed: 1, Radii: []float64{1}}
	var done, total int
	res, err := hrf.Angles(context.Background(), cfg, func(d, t int) { done, total = d, t })
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d rows; progress %d of %d\n", len(res.Rows), done, total)
	t := res.Table()
	fmt.Println("table columns:", t.Header)
	if err := t.Render(io.Discard); err != nil {
		panic(err)
	}
	if err := report.JSON(io.Discard, res); err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = hrf.Angles(ctx, cfg, nil)
	fmt.Println("cancelled:", errors.Is(err, context.Canceled))
	// Output:
	// 13 rows; progress 10 of 10
	// table columns: [r θ/π SM(x,y) positive rel.err best]
	// cancelled: true
}
