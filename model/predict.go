package model

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/parallel"
	"github.com/kernelkit/kernelkit/linear"
)

// Features returns the feature matrix of raw rows x (scaled first if the
// model has a scaler).
func (m *Model) Features(x *mat.Dense) (*mat.Dense, error) {
	_, d := x.Dims()
	if d != m.Map.InputDim() {
		return nil, fmt.Errorf("model: data has %d feature columns, model expects %d", d, m.Map.InputDim())
	}
	if m.Scaler != nil {
		var err error
		if x, err = m.Scaler.Transform(x); err != nil {
			return nil, err
		}
	}
	return features.Apply(m.Map, x)
}

// Predict returns the n×K raw model outputs (class scores, or the
// regression prediction in column 0) for raw rows x. The rows are mapped
// and multiplied by the weights in blocks of predictBlock rows on all
// cores, so the features of all rows are never held at once.
func (m *Model) Predict(x *mat.Dense) (*mat.Dense, error) {
	n, d := x.Dims()
	if d != m.Map.InputDim() {
		return nil, fmt.Errorf("model: data has %d feature columns, model expects %d", d, m.Map.InputDim())
	}
	dim, k := m.Linear.W.Dims()
	if dim != m.Map.Dim() {
		return nil, fmt.Errorf("model: weights have %d rows, the feature map %d features", dim, m.Map.Dim())
	}
	if m.Scaler != nil {
		var err error
		if x, err = m.Scaler.Transform(x); err != nil {
			return nil, err
		}
	}
	out := mat.NewDense(n, k, nil)
	rows := min(predictBlock, n)
	bufs := make([][]float64, parallel.Workers((n+rows-1)/rows))
	errs := make([]error, (n+rows-1)/rows)
	parallel.Chunks(n, rows, func(w, lo, hi int) {
		if bufs[w] == nil {
			bufs[w] = make([]float64, rows*dim)
		}
		z := mat.NewDense(hi-lo, dim, bufs[w][:(hi-lo)*dim])
		if err := m.Map.Transform(z, x.Slice(lo, hi, 0, d).(*mat.Dense)); err != nil {
			errs[lo/rows] = err
			return
		}
		errs[lo/rows] = m.Linear.PredictTo(out.Slice(lo, hi, 0, k).(*mat.Dense), z)
	})
	if err := firstError(errs); err != nil {
		return nil, err
	}
	return out, nil
}

// predictBlock is the number of rows Predict maps at a time.
const predictBlock = 256

// Classify returns predicted class indices (classification models only).
func (m *Model) Classify(x *mat.Dense) ([]int, error) {
	if m.Task != Classification {
		return nil, errors.New("model: Classify on a regression model")
	}
	s, err := m.Predict(x)
	if err != nil {
		return nil, err
	}
	return linear.Argmax(s), nil
}
