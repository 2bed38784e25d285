package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/calibrate"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

// dataOptions are the flags of the rows that predict and transform read.
type dataOptions struct {
	model, data, format, label, out string
}

func (o *dataOptions) bind(fl *pflag.FlagSet, modelUsage, labelUsage string) {
	onceVar(fl, &o.model, "model", "", modelUsage)
	onceVar(fl, &o.data, "data", "", "rows to read (CSV or LIBSVM)")
	fl.StringVar(&o.format, "format", "auto", "data format: auto, csv or libsvm")
	onceVar(fl, &o.label, "label", "", labelUsage)
	onceVar(fl, &o.out, "out", "", "output file (default standard output)")
}

// load reads the model and the rows matched to its columns: by name when
// the model stores them (reordered, or refused with the names that
// differ), else by position; the width always comes from the model.
func (o *dataOptions) load() (*model.Model, *data.Dataset, error) {
	if o.model == "" {
		return nil, nil, errors.New("--model is required")
	}
	f, err := os.Open(o.model)
	if err != nil {
		return nil, nil, err
	}
	m, err := model.Load(bufio.NewReader(f))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", o.model, err)
	}
	label := o.label
	if label == "" {
		label = m.Label
	}
	ds, err := data.Open(o.data, data.OpenOptions{Format: o.format, Label: label, Columns: m.Columns, Width: m.Map.InputDim()})
	return m, ds, err
}

type predictOptions struct {
	dataOptions
	scores bool
}

func newPredict() *cobra.Command {
	o := &predictOptions{}
	cmd := &cobra.Command{
		Use:   "predict --model m.kk --data C.csv",
		Short: "Predict with a saved model",
		Long: "predict writes one prediction per row as CSV (class index, or value for regression).\n" +
			"Columns are matched to the model's by name. If the data has a label column, the\n" +
			"accuracy (or RMSE) goes to standard error, with the log-loss and expected calibration\n" +
			"error of the probabilities of a model fitted with --calibrate. The prediction is the\n" +
			"class of the largest score; --scores adds the scores and, for a calibrated model, the\n" +
			"probabilities (Platt sigmoids normalised to sum to one per row).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.bind(cmd.Flags(), "model file written by fit --model", "name of the label column, if any (default: the model's)")
	cmd.Flags().BoolVar(&o.scores, "scores", false, "also write the class scores (score0…) and, for a model fitted with --calibrate, the calibrated class probabilities (prob0…)")
	return cmd
}

func (o *predictOptions) run(cmd *cobra.Command) error {
	m, ds, err := o.load()
	if err != nil {
		return err
	}
	ev, err := m.Evaluate(ds, 0)
	if err != nil {
		return err
	}
	s := ev.Scores
	_, k := s.Dims()
	classify := m.Task == model.Classification
	var probs *mat.Dense // calibrated class probabilities (fit --calibrate)
	if classify && m.Calibration != nil {
		if probs, err = m.Calibration.Probabilities(s); err != nil {
			return err
		}
	}
	header := "prediction"
	if o.scores && classify {
		for j := range k {
			header += ",score" + strconv.Itoa(j)
		}
		for j := 0; probs != nil && j < k; j++ {
			header += ",prob" + strconv.Itoa(j)
		}
	}
	pred := linear.Argmax(s)
	if err := writeOut(cmd, o.out, func(w io.Writer) error {
		return writeRows(w, header, ds.Rows(), func(b []byte, i int) []byte {
			if !classify {
				return strconv.AppendFloat(b, s.At(i, 0), 'g', -1, 64)
			}
			b = strconv.AppendInt(b, int64(pred[i]), 10)
			for j := 0; o.scores && j < k; j++ {
				b = strconv.AppendFloat(append(b, ','), s.At(i, j), 'g', -1, 64)
			}
			for j := 0; o.scores && probs != nil && j < k; j++ {
				b = strconv.AppendFloat(append(b, ','), probs.At(i, j), 'g', -1, 64)
			}
			return b
		})
	}); err != nil || !ev.Labelled {
		return err
	}
	if classify {
		if probs != nil {
			// With labels that are all classes of the model, the
			// probabilities' quality as well (other labels only count
			// as misses in the accuracy).
			if labels, kl, lerr := ds.Labels(); lerr == nil && kl <= k {
				ll, err := calibrate.LogLoss(probs, labels)
				if err != nil {
					return err
				}
				ece, err := calibrate.ECE(probs, labels, 15)
				if err != nil {
					return err
				}
				return notice(cmd, "accuracy %.4f, log-loss %.4f, ECE %.4f (15 bins) on %d rows", ev.Accuracy, ll, ece, ev.Rows)
			}
		}
		return notice(cmd, "accuracy %.4f on %d rows", ev.Accuracy, ev.Rows)
	}
	return notice(cmd, "RMSE %.6g on %d rows", ev.RMSE, ev.Rows)
}

type transformOptions struct {
	dataOptions
	feat   featureOptions
	scaled bool
	device string // --device
}

func newTransform() *cobra.Command {
	o := &transformOptions{}
	cmd := &cobra.Command{
		Use:   "transform --data C.csv (--model m.kk | --kernel K --features D ... | --map NAME ...)",
		Short: "Write the random features of rows as CSV",
		Long: "transform maps rows to random features: with --model, the model's scaler and feature map;\n" +
			"otherwise a map drawn from the feature flags (or --map NAME of the registry, whose Nyström\n" +
			"maps take their landmarks from these rows), applied to the raw columns. A label column\n" +
			"(--label, or one column more than a model expects) is dropped.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	fl := cmd.Flags()
	o.feat.bind(fl)
	o.bind(fl, "use this model's scaler and feature map", "name of a label column to drop")
	fl.BoolVar(&o.scaled, "scaled", false, "write row-scaled features and a log_scale column (exponential maps never overflow)")
	fl.StringVar(&o.device, "device", device.Host, deviceUsage("the features"))
	return cmd
}

func (o *transformOptions) run(cmd *cobra.Command) error {
	var z *mat.Dense
	var logScale []float64
	if o.model != "" && o.feat.mapName != "" {
		return errors.New("--model brings its own feature map; drop --map")
	}
	var dev *device.Device
	if o.device != device.Host {
		var err error
		if dev, err = openDevice(o.device, o.feat.float32); err != nil {
			return err
		}
	}
	if o.model != "" {
		m, ds, err := o.load()
		if err != nil {
			return err
		}
		if dev != nil {
			if m.Map, err = dev.Map(m.Map); err != nil {
				return err
			}
		}
		if z, err = m.Features(ds.X); err != nil {
			return err
		}
	} else {
		ds, err := data.Open(o.data, data.OpenOptions{Format: o.format, Label: o.label, NoLabel: o.label == ""})
		if err != nil {
			return err
		}
		mp, err := o.newMap(cmd.Flags(), ds)
		if err != nil {
			return err
		}
		if _, scaled := mp.(features.ScaledTransformer); dev != nil && (scaled || !o.scaled) {
			// Every device Map has log-scales; with --scaled only maps whose
			// CPU form has them go to the device, so that --scaled accepts
			// the same maps with and without --device.
			if mp, err = dev.Map(mp); err != nil {
				return err
			}
		}
		z = mat.NewDense(ds.Rows(), mp.Dim(), nil)
		if o.scaled {
			st, ok := mp.(features.ScaledTransformer)
			if !ok {
				return fmt.Errorf("--scaled needs a map with log-scales; %.40q has none", o.feat.mapName)
			}
			logScale, err = st.TransformScaled(z, ds.X)
		} else if err = mp.Transform(z, ds.X); errors.Is(err, features.ErrOverflow) {
			err = fmt.Errorf("%w; --scaled writes row-scaled features with a log_scale column", err)
		}
		if err != nil {
			return err
		}
	}
	n, d := z.Dims()
	header := make([]byte, 0, 8*d)
	for j := range d {
		if j > 0 {
			header = append(header, ',')
		}
		header = strconv.AppendInt(append(header, 'z'), int64(j), 10)
	}
	if logScale != nil {
		header = append(header, ",log_scale"...)
	}
	return writeOut(cmd, o.out, func(w io.Writer) error {
		return writeRows(w, string(header), n, func(b []byte, i int) []byte {
			for j, v := range z.RawRowView(i) {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, v, 'g', -1, 64)
			}
			if logScale != nil {
				b = strconv.AppendFloat(append(b, ','), logScale[i], 'g', -1, 64)
			}
			return b
		})
	})
}

// newMap returns the map of the feature flags for the rows of ds: drawn
// from --kernel/--form, or the registry's --map, whose data-dependent maps
// (Nyström) take their landmarks from these rows.
func (o *transformOptions) newMap(fl *pflag.FlagSet, ds *data.Dataset) (features.Transformer, error) {
	if o.feat.mapName == "" {
		fc, err := o.feat.config(fl, ds.Cols())
		if err != nil {
			return nil, err
		}
		return features.New(fc, ds.Cols())
	}
	opt, err := o.feat.mapOptions(fl, ds.Cols())
	if err != nil {
		return nil, err
	}
	opt.Data = ds.X
	return catalog.Default().Map(o.feat.mapName, opt)
}

// writeRows writes a header line and the n lines that row appends to a
// buffer, through a buffered writer whose errors it returns.
func writeRows(w io.Writer, header string, n int, row func(b []byte, i int) []byte) error {
	bw := bufio.NewWriter(w)
	b := append([]byte(header), '\n')
	for i := 0; ; i++ {
		if _, err := bw.Write(b); err != nil {
			return err
		}
		if i == n {
			return bw.Flush()
		}
		b = append(row(b[:0], i), '\n')
	}
}
