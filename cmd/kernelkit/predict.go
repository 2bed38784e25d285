package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/model"
)

func loadModel(path string) (*model.Model, error) {
	if path == "" {
		return nil, errors.New("--model is required")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := model.Load(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// readForModel reads data whose feature columns match the model; a label
// column (named by label, or one extra last column) is optional.
func readForModel(path, format, label string, d int) (*data.Dataset, error) {
	if label != "" {
		return readData(path, format, label, false)
	}
	ds, err := readData(path, format, "", true)
	if err != nil {
		return nil, err
	}
	switch ds.Cols() {
	case d:
		return ds, nil
	case d + 1:
		return readData(path, format, "", false)
	}
	return nil, fmt.Errorf("%s has %d columns, the model expects %d features (plus an optional label)", path, ds.Cols(), d)
}

func newPredict() *cobra.Command {
	var modelPath, dataPath, format, label, out string
	var scores bool
	cmd := &cobra.Command{
		Use:   "predict --model m.kk --data C.csv",
		Short: "Predict with a saved model",
		Long: "predict writes one prediction per row as CSV (class index, or value for regression).\n" +
			"If the data has a label column, the accuracy (or RMSE) goes to standard error.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := loadModel(modelPath)
			if err != nil {
				return err
			}
			ds, err := readForModel(dataPath, format, label, m.Map.InputDim())
			if err != nil {
				return err
			}
			s, err := m.Predict(ds.X)
			if err != nil {
				return err
			}
			n, k := s.Dims()
			pred := argmax(s)
			if err := writeOut(cmd, out, func(w io.Writer) error {
				bw := bufio.NewWriter(w)
				bw.WriteString("prediction")
				if scores && m.Task == model.Classification {
					for j := 0; j < k; j++ {
						fmt.Fprintf(bw, ",score%d", j)
					}
				}
				bw.WriteByte('\n')
				for i := 0; i < n; i++ {
					if m.Task == model.Classification {
						bw.WriteString(strconv.Itoa(pred[i]))
						if scores {
							for j := 0; j < k; j++ {
								bw.WriteByte(',')
								bw.WriteString(strconv.FormatFloat(s.At(i, j), 'g', -1, 64))
							}
						}
					} else {
						bw.WriteString(strconv.FormatFloat(s.At(i, 0), 'g', -1, 64))
					}
					bw.WriteByte('\n')
				}
				return bw.Flush()
			}); err != nil {
				return err
			}
			if ds.Y != nil {
				if m.Task == model.Classification {
					c := 0
					for i, p := range pred {
						if float64(p) == ds.Y[i] {
							c++
						}
					}
					notice(cmd, "accuracy %.4f on %d rows", float64(c)/float64(n), n)
				} else {
					var e float64
					for i, y := range ds.Y {
						e += (s.At(i, 0) - y) * (s.At(i, 0) - y)
					}
					notice(cmd, "RMSE %.6g on %d rows", math.Sqrt(e/float64(n)), n)
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&modelPath, "model", "", "model file written by fit --model")
	fl.StringVar(&dataPath, "data", "", "rows to predict (CSV or LIBSVM)")
	fl.StringVar(&format, "format", "auto", "data format: auto, csv or libsvm")
	fl.StringVar(&label, "label", "", "name of the label column, if any")
	fl.StringVar(&out, "out", "", "output file (default standard output)")
	fl.BoolVar(&scores, "scores", false, "also write the class scores")
	return cmd
}

func newTransform() *cobra.Command {
	var ff featureFlags
	var modelPath, dataPath, format, label, out string
	var scaled bool
	cmd := &cobra.Command{
		Use:   "transform --data C.csv (--model m.kk | --kernel K --features D ...)",
		Short: "Write the random features of rows as CSV",
		Long: "transform maps rows to random features: with --model, the model's scaler and feature map;\n" +
			"otherwise a map drawn from the feature flags, applied to the raw columns. A label column\n" +
			"(--label, or one column more than a model expects) is dropped.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var z *mat.Dense
			var logScale []float64
			if modelPath != "" {
				m, err := loadModel(modelPath)
				if err != nil {
					return err
				}
				ds, err := readForModel(dataPath, format, label, m.Map.InputDim())
				if err != nil {
					return err
				}
				if z, err = m.Features(ds.X); err != nil {
					return err
				}
			} else {
				ds, err := readData(dataPath, format, label, label == "")
				if err != nil {
					return err
				}
				fc, err := ff.config(cmd, ds.Cols())
				if err != nil {
					return err
				}
				mp, err := features.New(fc, ds.Cols())
				if err != nil {
					return err
				}
				n, _ := ds.X.Dims()
				z = mat.NewDense(n, mp.Dim(), nil)
				if scaled {
					if logScale, err = mp.TransformScaled(z, ds.X); err != nil {
						return err
					}
				} else if err := mp.Transform(z, ds.X); err != nil {
					if errors.Is(err, features.ErrOverflow) {
						return fmt.Errorf("%w; --scaled writes row-scaled features with a log_scale column", err)
					}
					return err
				}
			}
			return writeOut(cmd, out, func(w io.Writer) error { return writeMatrix(w, z, logScale) })
		},
	}
	ff.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&modelPath, "model", "", "use this model's scaler and feature map")
	fl.StringVar(&dataPath, "data", "", "rows to transform (CSV or LIBSVM)")
	fl.StringVar(&format, "format", "auto", "data format: auto, csv or libsvm")
	fl.StringVar(&label, "label", "", "name of a label column to drop")
	fl.StringVar(&out, "out", "", "output file (default standard output)")
	fl.BoolVar(&scaled, "scaled", false, "write row-scaled features and a log_scale column (exponential maps never overflow)")
	return cmd
}

func writeMatrix(w io.Writer, z *mat.Dense, logScale []float64) error {
	bw := bufio.NewWriter(w)
	n, d := z.Dims()
	for j := 0; j < d; j++ {
		if j > 0 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, "z%d", j)
	}
	if logScale != nil {
		bw.WriteString(",log_scale")
	}
	bw.WriteByte('\n')
	buf := make([]byte, 0, 32)
	for i := 0; i < n; i++ {
		for j, v := range z.RawRowView(i) {
			if j > 0 {
				bw.WriteByte(',')
			}
			bw.Write(strconv.AppendFloat(buf[:0], v, 'g', -1, 64))
		}
		if logScale != nil {
			bw.WriteByte(',')
			bw.Write(strconv.AppendFloat(buf[:0], logScale[i], 'g', -1, 64))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
