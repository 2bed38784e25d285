package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/internal/fitflags"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/nn"
	"github.com/kernelkit/kernelkit/report"
)

// featureOptions are the flags that define a feature map (fit,
// transform): internal/fitflags's, shared with kernelkit-beam.
type featureOptions = fitflags.Features

// maxRidgeFeatures is the largest feature count of a ridge fit: its D×D
// statistics must fit limits.MaxElements.
const maxRidgeFeatures = fitflags.MaxRidgeFeatures

// fitOptions are the flags of fit: internal/fitflags's, shared with
// kernelkit-beam fit.
type fitOptions struct{ fitflags.Options }

func newFit() *cobra.Command {
	o := &fitOptions{}
	cmd := &cobra.Command{
		Use:   "fit --train A.csv [--test B.csv] [flags]",
		Short: "Fit a kernel ridge model on random features",
		Long: "fit reads a training set (CSV with a header row, label column by --label or last; or LIBSVM),\n" +
			"standardises it, maps it to random features and fits ridge regression or classification.\n" +
			"With --test it reports test accuracy (or RMSE) and the relative Gram error on the first\n" +
			"min(1000, n) test rows; --model saves the fitted model. --exact fits exact kernel ridge\n" +
			"(the dual solve the random features converge to) on up to 32768 rows; --gamma scale takes\n" +
			"γ = 1/(d·Var X) from the standardised training matrix, as scikit-learn's gamma='scale'.\n" +
			"--map NAME fits with any symmetric map of the registry instead of --kernel/--form, e.g.\n" +
			"nystrom/kmeans (Nyström features on k-means landmarks of the standardised training rows).\n" +
			"--weight-column NAME weighs each training row by that CSV column (not a feature; a test file's\n" +
			"is dropped), --class-weight balanced|class=weight,... weighs the classes (times the row\n" +
			"weights), and --targets a,b,c fits one regression per target column (multi-output).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.bind(cmd.Flags())
	return cmd
}

// bind binds fit's flags (fitflags.Options.Bind) with their domains.
func (o *fitOptions) bind(fl *pflag.FlagSet) {
	o.Bind(fl)
	adaptDomains(fl)
}

func (o *fitOptions) run(cmd *cobra.Command) error {
	if err := o.Check(); err != nil {
		return err
	}
	cfg := o.Job()
	if o.Device != device.Host {
		dev, err := openDevice(o.Device, o.Feat.Float32)
		if err != nil {
			return err
		}
		cfg.Model.Accumulator = dev.Accumulator(device.RidgeOptions{})
		cfg.Device = dev.String()
	}
	width, err := o.Open(&cfg)
	if err != nil {
		return err
	}
	if err := o.Complete(cmd.Flags(), &cfg, width); err != nil {
		return err
	}
	multi := o.Multi()
	if err := fitMemory(cfg, width, len(o.Targets)).Check(memoryBudget(cmd), "--max-memory"); err != nil {
		return err
	}
	update, finish := progress("fit")
	r, m, err := model.RunJob(cmd.Context(), cfg, update)
	finish()
	if err != nil {
		return err
	}
	var perTarget []float64
	if multi {
		eval := cfg.Test
		if eval == nil {
			eval = cfg.Train
		}
		ev, err := m.Evaluate(eval, 0)
		if err != nil {
			return err
		}
		perTarget = ev.RMSEs
	}
	if o.Model != "" {
		if err := writeOut(cmd, o.Model, m.Save); err != nil {
			return err
		}
	}
	if o.JSON {
		return report.JSON(cmd.OutOrStdout(), struct {
			*model.JobResult
			RMSEPerTarget []float64 `json:"rmse_per_target,omitempty"`
		}{r, perTarget})
	}
	text := r.Text()
	if perTarget != nil {
		parts := make([]string, len(perTarget))
		for i, v := range perTarget {
			parts[i] = fmt.Sprintf("%s %.4g", o.Targets[i], v)
		}
		text += "RMSE per target " + strings.Join(parts, ", ") + "\n"
	}
	if o.Model != "" {
		text += "model written to " + o.Model + "\n"
	}
	_, err = io.WriteString(cmd.OutOrStdout(), text)
	return err
}

// deviceUsage is the usage of a --device flag for what.
func deviceUsage(what string) string { return fitflags.DeviceUsage(what) }

// openDevice opens the device of a --device flag other than cpu, in
// float32 with --float32 (cuda always computes in float32).
func openDevice(name string, float32 bool) (*device.Device, error) {
	if name == device.CUDA && !slices.Contains(nn.Backends(), "xla") {
		return nil, errors.New("--device cuda: this program has no XLA backend (build with CGO_ENABLED=1 go build -tags xla ./cmd/kernelkit)")
	}
	d, err := device.Open(name)
	if err != nil && name == device.CUDA {
		return nil, fmt.Errorf("--device cuda: no usable GPU (plugin setup: scripts/gpu_run.sh): %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("--device: %w", err)
	}
	if float32 {
		d = d.WithFloat32()
	}
	return d, nil
}

// fitMemory estimates the memory of a fit of width input columns: the
// training and test rows held, and the fit's own arrays
// (model.Memory), with at most 1000 classes (the most a classification's
// labels give) or the target columns; an exact fit holds the n × n
// kernel matrix and its Cholesky factor.
func fitMemory(cfg model.Job, width, targets int) limits.Estimate {
	var e limits.Estimate
	for _, ds := range []*data.Dataset{cfg.Train, cfg.Test} {
		if ds != nil {
			e.Add("data", ds.Rows(), ds.Cols()+1)
		}
	}
	if cfg.Exact {
		if cfg.Train != nil {
			e.Add("kernel matrix and its factor", 2, cfg.Train.Rows(), cfg.Train.Rows())
		}
		return e
	}
	dim := cfg.Model.Features.Features
	if cfg.MapName != "" {
		dim = cfg.MapOptions.Features
	}
	e.Merge(model.Memory(cfg.Model, dim, width, max(targets, 1000)))
	return e
}
