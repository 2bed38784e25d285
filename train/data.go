package train

import (
	"errors"
	"fmt"

	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/tasks"
)

// FromSamples tokenises task samples (tasks.Tokenize: white space, the
// parentheses of the LRA format dropped) into examples of the shared
// vocabulary (tasks.Encode). An unknown token is reported with its line
// (samples read by tasks.ReadTSV) or sample index and its position.
func FromSamples(samples []tasks.Sample) ([]Example, error) {
	return fromSamples(samples, "")
}

// fromSamples is FromSamples for samples read from the file path (empty:
// generated), which errors name.
func fromSamples(samples []tasks.Sample, path string) ([]Example, error) {
	out := make([]Example, len(samples))
	for i, s := range samples {
		where := fmt.Sprintf("sample %d", i+1)
		if s.Line > 0 {
			where = fmt.Sprintf("line %d", s.Line)
		}
		if path != "" {
			where = path + ": " + where
		}
		ids, err := tasks.Encode(tasks.Tokenize(s.Source))
		if err != nil {
			var ute *tasks.UnknownTokenError
			if errors.As(err, &ute) {
				return nil, fmt.Errorf("train: %s, token %d: unknown token %.20q (not in the vocabulary of the ListOps and recall tasks)", where, ute.Index+1, ute.Token)
			}
			return nil, fmt.Errorf("train: %s: %w", where, err)
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("train: %s is empty", where)
		}
		out[i] = Example{Tokens: ids, Label: s.Target}
	}
	return out, nil
}

// Truncated counts the examples longer than length (the trainer cuts them,
// as the LRA input pipeline does).
func Truncated(exs []Example, length int) int {
	n := 0
	for _, e := range exs {
		if len(e.Tokens) > length {
			n++
		}
	}
	return n
}

// Curve is one run's training curve for a plot.
type Curve struct {
	Name string
	Res  *Result
}

// SavePlot writes the training loss (a moving average over window steps)
// and the evaluation accuracy of each run against the step, as two plots:
// path (loss) and, when any run was evaluated more than once, accPath
// (accuracy; empty: none).
func SavePlot(path, accPath, title string, curves []Curve, window int) error {
	window = max(window, 1)
	loss := report.Plot{Title: title + ": training loss", XLabel: "step", YLabel: fmt.Sprintf("cross-entropy (mean of %d steps)", window)}
	acc := report.Plot{Title: title + ": evaluation accuracy", XLabel: "step", YLabel: "accuracy", LegendLeft: true}
	for _, c := range curves {
		// The whole run's curve where the result has it (a resumed run's
		// earlier steps included), else this run's steps.
		h := History{LossFrom: c.Res.StartStep, Loss: c.Res.Loss, EvalStep: c.Res.EvalStep, EvalAccuracy: c.Res.EvalAccuracy}
		if c.Res.History != nil {
			h = *c.Res.History
		}
		var xs, ys []float64
		var sum float64
		for i, l := range h.Loss {
			sum += l
			if i >= window {
				sum -= h.Loss[i-window]
			}
			if i+1 >= window {
				xs = append(xs, float64(h.LossFrom+i+1))
				ys = append(ys, sum/float64(window))
			}
		}
		loss.Series = append(loss.Series, report.Series{Name: c.Name, X: xs, Y: ys})
		if len(h.EvalStep) > 0 {
			var ex []float64
			for _, s := range h.EvalStep {
				ex = append(ex, float64(s))
			}
			acc.Series = append(acc.Series, report.Series{Name: c.Name, X: ex, Y: h.EvalAccuracy, Points: true})
		}
	}
	if err := loss.Save(path); err != nil {
		return err
	}
	if accPath != "" && len(acc.Series) > 0 {
		return acc.Save(accPath)
	}
	return nil
}
