package model

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/linear"
)

// Evaluation holds the quality measures of a model on a data set.
type Evaluation struct {
	// Rows is the number of rows evaluated.
	Rows int `json:"rows"`
	// Labelled reports whether the data had labels or targets; Accuracy
	// and RMSE are set only then.
	Labelled bool `json:"labelled"`
	// Accuracy is the fraction of correctly classified rows
	// (classification).
	Accuracy float64 `json:"accuracy,omitempty"`
	// RMSE is the root mean squared error (regression); for several
	// targets the mean of the targets' RMSEs (scikit-learn's
	// root_mean_squared_error, multioutput='uniform_average').
	RMSE float64 `json:"rmse,omitempty"`
	// RMSEs holds the RMSE of each target of a multi-output regression.
	RMSEs []float64 `json:"rmse_per_target,omitempty"`
	// GramError is the relative Frobenius error ‖K − ZZᵀ‖_F/‖K‖_F of the
	// feature map against its exact kernel on the first GramRows rows
	// (scaled as the model scales them); GramNote says why it is missing
	// when GramRows is 0.
	GramError float64 `json:"gram_error,omitempty"`
	GramRows  int     `json:"gram_rows,omitempty"`
	GramNote  string  `json:"gram_note,omitempty"`
	// Scores are the raw model outputs (n×K), for callers that render
	// them; not serialised.
	Scores *mat.Dense `json:"-"`
}

// Evaluate predicts the rows of ds and measures accuracy (classification)
// or RMSE (regression) against its labels, if it has any, and the Gram
// error of the feature map on at most gramRows rows (0: skip). A Gram
// error that cannot be computed (a map with no exact kernel, an exact
// kernel beyond float64) is reported in GramNote, not as an error.
func (m *Model) Evaluate(ds *data.Dataset, gramRows int) (*Evaluation, error) {
	if ds == nil || ds.Rows() == 0 {
		return nil, errors.New("model: no rows to evaluate")
	}
	if ds.Cols() != m.Map.InputDim() {
		return nil, fmt.Errorf("model: data has %d feature columns, the model %d", ds.Cols(), m.Map.InputDim())
	}
	scores, err := m.Predict(ds.X)
	if err != nil {
		return nil, err
	}
	ev := &Evaluation{Rows: ds.Rows(), Scores: scores}
	_, k := scores.Dims()
	switch {
	case ds.Targets != nil:
		if m.Task != Regression {
			return nil, errors.New("model: data with several target columns for a classification model")
		}
		if r, c := ds.Targets.Dims(); r != ds.Rows() || c != k {
			return nil, fmt.Errorf("model: %d×%d targets for %d rows and a model of %d outputs", r, c, ds.Rows(), k)
		}
		ev.Labelled = true
		ev.RMSEs = RMSEColumns(scores, ds.Targets)
		ev.RMSE = floats.Sum(ev.RMSEs) / float64(k)
	case ds.Y != nil && m.Task == Regression && k > 1:
		return nil, fmt.Errorf("model: one target column for a model of %d outputs", k)
	case ds.Y != nil:
		if len(ds.Y) != ds.Rows() {
			return nil, fmt.Errorf("model: %d labels for %d rows", len(ds.Y), ds.Rows())
		}
		ev.Labelled = true
		switch m.Task {
		case Classification:
			ev.Accuracy = Accuracy(linear.Argmax(scores), ds.Y)
		case Regression:
			ev.RMSE = RMSE(scores, ds.Y)
		}
	}
	if gramRows > 0 {
		n := min(gramRows, ds.Rows())
		x := ds.X.Slice(0, n, 0, ds.Cols()).(*mat.Dense)
		if m.Scaler != nil {
			if x, err = m.Scaler.Transform(x); err != nil {
				return nil, err
			}
		}
		if ge, err := GramError(m.Map, x); err != nil {
			ev.GramNote = err.Error()
		} else {
			ev.GramError, ev.GramRows = ge, n
		}
	}
	return ev, nil
}

// Accuracy returns the fraction of predicted class indices equal to the
// labels (class indices stored as floats). Lengths must match (it panics
// otherwise).
func Accuracy(pred []int, labels []float64) float64 {
	if len(pred) != len(labels) {
		panic("model: Accuracy of slices of different lengths")
	}
	if len(pred) == 0 {
		return math.NaN()
	}
	c := 0
	for i, p := range pred {
		if float64(p) == labels[i] {
			c++
		}
	}
	return float64(c) / float64(len(pred))
}

// RMSEColumns returns, for each column j of targets, the root mean
// squared difference between column j of scores and of targets. Shapes
// must match (it panics otherwise).
func RMSEColumns(scores, targets *mat.Dense) []float64 {
	n, k := targets.Dims()
	if r, c := scores.Dims(); r != n || c != k {
		panic("model: RMSEColumns of score and target matrices of different shapes")
	}
	out := make([]float64, k)
	for i := 0; i < n; i++ {
		s, t := scores.RawRowView(i), targets.RawRowView(i)
		for j := range out {
			d := s[j] - t[j]
			out[j] += d * d
		}
	}
	for j := range out {
		out[j] = math.Sqrt(out[j] / float64(n))
	}
	return out
}

// RMSE returns the root mean squared difference between column 0 of
// scores and y. Lengths must match (it panics otherwise).
func RMSE(scores *mat.Dense, y []float64) float64 {
	if n, _ := scores.Dims(); n != len(y) {
		panic("model: RMSE of a score matrix and targets of different lengths")
	}
	var s float64
	for i, v := range y {
		d := scores.At(i, 0) - v
		s += d * d
	}
	return math.Sqrt(s / float64(len(y)))
}

// GramError returns ‖K − ZZᵀ‖_F/‖K‖_F for the rows of x, with K the exact
// kernel of t (t must implement features.KernelEstimator) and Z its
// features. It costs O(n²) memory: pass a sample of rows.
func GramError(t features.Transformer, x *mat.Dense) (float64, error) {
	ke, ok := t.(features.KernelEstimator)
	var exact kernel.Kernel
	if ok {
		exact = ke.Kernel()
	}
	if exact == nil {
		return 0, fmt.Errorf("model: feature map %T has no exact kernel to compare with", t)
	}
	z, err := features.Apply(t, x)
	if err != nil {
		return 0, err
	}
	var k *mat.Dense
	if tk, ok := exact.(features.TemperedKernel); ok {
		k, err = tk.Gram(x, x) // exp(xᵀy/τ) by one GEMM
	} else {
		k, err = kernel.Gram(exact, x, x)
	}
	if err != nil {
		return 0, err
	}
	var kh mat.Dense
	kh.Mul(z, z.T())
	return kernel.RelativeError(k, &kh)
}
