package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/calibrate"
	"github.com/kernelkit/kernelkit/catalog"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/linear"
	"github.com/kernelkit/kernelkit/model"
)

// dataOptions are the flags of the rows that predict and transform read.
type dataOptions struct {
	model, data, format, label, out string
	weight                          string // --weight-column: a column of row weights to skip
}

func (o *dataOptions) bind(fl *pflag.FlagSet, modelUsage, labelUsage string) {
	onceVar(fl, &o.model, "model", "", modelUsage)
	onceVar(fl, &o.data, "data", "", "rows to read (CSV, LIBSVM or Parquet)")
	fl.StringVar(&o.format, "format", "auto", "data format: auto, csv, libsvm or parquet (for a sequence model: auto, tsv or lines)")
	onceVar(fl, &o.label, "label", "", labelUsage)
	onceVar(fl, &o.out, "out", "", "output file (default standard output); Parquet for the extension .parquet")
	onceVar(fl, &o.weight, "weight-column", "", "a CSV column of row weights (as fit --weight-column) to skip if the data has it")
}

// load reads the model and the rows matched to its columns: by name when
// the model stores them (reordered, or refused with the names that
// differ), else by position; the width always comes from the model.
func (o *dataOptions) load() (*model.Model, *data.Dataset, error) {
	m, err := o.loadModel()
	if err != nil {
		return nil, nil, err
	}
	ds, err := o.open(m)
	return m, ds, err
}

// loadModel reads the model file of --model.
func (o *dataOptions) loadModel() (*model.Model, error) {
	if o.model == "" {
		return nil, errors.New("--model is required")
	}
	f, err := os.Open(o.model)
	if err != nil {
		return nil, err
	}
	m, err := model.LoadWith(bufio.NewReader(f), catalog.Default())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.model, err)
	}
	return m, nil
}

// open reads the rows of --data matched to m's columns. The label column
// is --label, else the model's; the target columns of a multi-output
// model (Model.Targets) are read by name, when the file has them all,
// unless --label is given.
func (o *dataOptions) open(m *model.Model) (*data.Dataset, error) {
	opt := data.OpenOptions{Format: o.format, Label: o.label, Columns: m.Columns, Width: m.Map.InputDim(), Weight: o.weight}
	if opt.Label == "" {
		opt.Label = m.Label
		if len(m.Targets) > 1 {
			opt.Label, opt.Targets = "", m.Targets
		}
	}
	return data.Open(o.data, opt)
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
		Long: "predict writes one prediction per row as CSV (class index, or value for regression;\n" +
			"a multi-output regression model writes one column per target, named as its targets).\n" +
			"Columns are matched to the model's by name. If the data has a label column (all target\n" +
			"columns for a multi-output model), the accuracy (or RMSE, per target and their mean)\n" +
			"goes to standard error, with the log-loss and expected calibration\n" +
			"error of the probabilities of a model fitted with --calibrate. The prediction is the\n" +
			"class of the largest score; --scores adds the scores and, for a calibrated model, the\n" +
			"probabilities (Platt sigmoids normalised to sum to one per row).\n" +
			"A sequence model's inference file (kernelkit export, train --export; .kks) reads an LRA TSV file\n" +
			"(Source and, for the accuracy, Target columns) or one sequence per line, tokenised as in\n" +
			"training; --scores adds its logits (score0…) and softmax probabilities (prob0…).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.bind(cmd.Flags(), "model file written by fit --model", "name of the label column, if any (default: the model's)")
	cmd.Flags().BoolVar(&o.scores, "scores", false, "also write the class scores (score0…) and, for a model fitted with --calibrate, the calibrated class probabilities (prob0…)")
	return cmd
}

func (o *predictOptions) run(cmd *cobra.Command) error {
	if isSequenceModel(o.model) {
		return o.runSeq(cmd)
	}
	m, err := o.loadModel()
	if err != nil {
		return err
	}
	_, k := m.Linear.W.Dims()
	classify := m.Task == model.Classification
	if !classify && k > 1 && o.label != "" {
		return fmt.Errorf("--label: the model has %d outputs (%s), not one label column; drop --label",
			k, strings.Join(outputNames(m, k), ", "))
	}
	ds, err := o.open(m)
	if err != nil {
		return err
	}
	ev, err := m.Evaluate(ds, 0)
	if err != nil {
		return err
	}
	s := ev.Scores
	var probs *mat.Dense // calibrated class probabilities (fit --calibrate)
	if classify && m.Calibration != nil {
		if probs, err = m.Calibration.Probabilities(s); err != nil {
			return err
		}
	}
	header := "prediction"
	if !classify && k > 1 {
		if header, err = csvLine(outputNames(m, k)); err != nil {
			return err
		}
	}
	if o.scores && classify {
		// Appended in place: concatenating strings copied the header once
		// per class (13 s for 65,536 classes).
		b := model.AppendClassColumns([]byte(header), "score", k)
		if probs != nil {
			b = model.AppendClassColumns(b, "prob", k)
		}
		header = string(b)
	}
	pred := linear.Argmax(s)
	out := parquetOut(o.out, ds.Rows(), func() []data.ParquetColumn { return predictColumns(m, s, pred, probs, o.scores) })
	if err := out(cmd, o.out, func(w io.Writer) error {
		return writeRows(commandContext(cmd), w, header, ds.Rows(), func(b []byte, i int) []byte {
			if !classify {
				for j, v := range s.RawRowView(i) {
					if j > 0 {
						b = append(b, ',')
					}
					b = strconv.AppendFloat(b, v, 'g', -1, 64)
				}
				return b
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
			// probabilities' quality as well. Other labels only count as
			// misses in the accuracy, as for an uncalibrated model; the
			// notice says why the probabilities' measures are missing.
			labels, kl, lerr := ds.Labels()
			if lerr == nil && kl > k {
				lerr = fmt.Errorf("label %d is not a class of the model (0 to %d)", kl-1, k-1)
			}
			if lerr != nil {
				return notice(cmd, "accuracy %.4f on %d rows; no log-loss or ECE: %v", ev.Accuracy, ev.Rows, lerr)
			}
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
		return notice(cmd, "accuracy %.4f on %d rows", ev.Accuracy, ev.Rows)
	}
	if ev.RMSEs != nil {
		names := outputNames(m, k)
		parts := make([]string, len(ev.RMSEs))
		for j, v := range ev.RMSEs {
			parts[j] = fmt.Sprintf("%s %.6g", names[j], v)
		}
		return notice(cmd, "RMSE %.6g (mean of %d targets) on %d rows; RMSE per target %s", ev.RMSE, k, ev.Rows, strings.Join(parts, ", "))
	}
	return notice(cmd, "RMSE %.6g on %d rows", ev.RMSE, ev.Rows)
}

// outputNames returns the names of the k outputs of a regression model:
// its target names, or prediction0…prediction(k−1) when it has none.
func outputNames(m *model.Model, k int) []string {
	if len(m.Targets) == k {
		return m.Targets
	}
	names := make([]string, k)
	for j := range names {
		names[j] = "prediction" + strconv.Itoa(j)
	}
	return names
}

// csvLine returns fields as one CSV record without its line end, quoted
// where a field needs it (a target name with a comma or a quote).
func csvLine(fields []string) (string, error) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.Write(fields); err != nil {
		return "", err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
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
	o.feat.Bind(fl, dim.shared())
	adaptDomains(fl)
	o.bind(fl, "use this model's scaler and feature map", "name of a label column to drop")
	fl.BoolVar(&o.scaled, "scaled", false, "write row-scaled features and a log_scale column (exponential maps never overflow)")
	fl.StringVar(&o.device, "device", device.Host, deviceUsage("the features"))
	return cmd
}

func (o *transformOptions) run(cmd *cobra.Command) error {
	var z *mat.Dense
	var logScale []float64
	if o.model != "" && o.feat.MapName != "" {
		return errors.New("--model brings its own feature map; drop --map")
	}
	if o.model != "" && cmd.Flags().Changed("temperature") {
		return errors.New("--model brings its own feature map and temperature; drop --temperature")
	}
	var dev *device.Device
	if o.device != device.Host {
		var err error
		if dev, err = openDevice(o.device, o.feat.Float32); err != nil {
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
		if err := transformMemory(ds.Rows(), ds.Cols(), m.Map.Dim()).Check(memoryBudget(cmd), "--max-memory"); err != nil {
			return err
		}
		if z, err = m.Features(ds.X); err != nil {
			return err
		}
	} else {
		ds, err := data.Open(o.data, data.OpenOptions{Format: o.format, Label: o.label, NoLabel: o.label == ""})
		if err != nil {
			return err
		}
		if err := transformMemory(ds.Rows(), ds.Cols(), o.feat.Features).Check(memoryBudget(cmd), "--max-memory"); err != nil {
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
				return fmt.Errorf("--scaled needs a map with log-scales; %.40q has none", o.feat.MapName)
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
	out := parquetOut(o.out, n, func() []data.ParquetColumn { return transformColumns(z, logScale) })
	return out(cmd, o.out, func(w io.Writer) error {
		return writeRows(commandContext(cmd), w, string(header), n, func(b []byte, i int) []byte {
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
	if o.feat.MapName == "" {
		fc, err := o.feat.Config(fl, ds.Cols())
		if err != nil {
			return nil, err
		}
		return features.Draw(fc, ds.Cols())
	}
	opt, err := o.feat.MapOptions(fl, ds.Cols())
	if err != nil {
		return nil, err
	}
	opt.Data = ds.X
	return catalog.Default().Map(o.feat.MapName, opt)
}

// writeRows writes a header line and the n lines that row appends to a
// buffer, through a buffered writer whose errors it returns. It stops with
// the context's error once ctx is done (SIGINT or SIGTERM), checked before
// every line, so that an interrupted command stops within a row's work
// whether it writes to a file or to standard output.
func writeRows(ctx context.Context, w io.Writer, header string, n int, row func(b []byte, i int) []byte) error {
	bw := bufio.NewWriter(w)
	b := append([]byte(header), '\n')
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
		if i == n {
			return bw.Flush()
		}
		b = append(row(b[:0], i), '\n')
	}
}

// commandContext returns the command's context (cancelled by SIGINT and
// SIGTERM), or the background context when it has none.
func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// transformMemory estimates the memory of transform on rows × cols
// inputs with dim features: the rows, the projection and the feature
// matrix written out (two values per projection for the sin/cos and
// hyperbolic forms).
func transformMemory(rows, cols, dim int) limits.Estimate {
	var e limits.Estimate
	e.Add("data", rows, cols)
	e.Add("projection", dim, cols)
	e.Add("features", 2, rows, dim)
	return e
}
