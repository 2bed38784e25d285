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
	// Batch, when positive, is the run's training batch: SavePlot then
	// draws the curve against the training examples seen (step × Batch)
	// if every curve of the plot has one.
	Batch int
}

// SavePlot writes the training loss (a moving average over window steps)
// and the evaluation accuracy of each run against the step (against the
// examples seen when every curve has its Batch), as two plots: path (loss)
// and, when any run was evaluated more than once, accPath (accuracy;
// empty: none).
func SavePlot(path, accPath, title string, curves []Curve, window int) error {
	window = max(window, 1)
	byExamples := len(curves) > 0
	for _, c := range curves {
		byExamples = byExamples && c.Batch > 0
	}
	xl := "step"
	if byExamples {
		xl = "training examples seen"
	}
	loss := report.Plot{Title: title + ": training loss", XLabel: xl, YLabel: fmt.Sprintf("cross-entropy (mean of %d steps)", window)}
	acc := report.Plot{Title: title + ": evaluation accuracy", XLabel: xl, YLabel: "accuracy", LegendLeft: true}
	for _, c := range curves {
		scale := 1.0
		if byExamples {
			scale = float64(c.Batch)
		}
		l, a := curveSeries(c, window, scale)
		loss.Series = append(loss.Series, l)
		if len(a.X) > 0 {
			acc.Series = append(acc.Series, a)
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

// curveSeries returns a run's moving-average loss and its evaluation
// accuracies, at x = step·scale: the whole run's curve where the result
// has it (a resumed run's earlier steps included), else this run's steps.
func curveSeries(c Curve, window int, scale float64) (loss, acc report.Series) {
	h := History{LossFrom: c.Res.StartStep, Loss: c.Res.Loss, EvalStep: c.Res.EvalStep, EvalAccuracy: c.Res.EvalAccuracy}
	if c.Res.History != nil {
		h = *c.Res.History
	}
	loss = report.Series{Name: c.Name}
	var sum float64
	for i, l := range h.Loss {
		sum += l
		if i >= window {
			sum -= h.Loss[i-window]
		}
		if i+1 >= window {
			loss.X = append(loss.X, float64(h.LossFrom+i+1)*scale)
			loss.Y = append(loss.Y, sum/float64(window))
		}
	}
	acc = report.Series{Name: c.Name, Points: true, Y: h.EvalAccuracy}
	for _, s := range h.EvalStep {
		acc.X = append(acc.X, float64(s)*scale)
	}
	return loss, acc
}
