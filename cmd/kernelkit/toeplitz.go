package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/device"
	"github.com/kernelkit/kernelkit/internal/limits"
	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/study/ski"
)

type toeplitzOptions struct {
	d, r, m, maxN, maxDense int
	lambda                  float64
	json, noTiming, noDiag  bool
	plot, device            string
	seed                    uint64
}

func newToeplitz() *cobra.Command {
	o := &toeplitzOptions{}
	cmd := &cobra.Command{
		Use:   "toeplitz",
		Short: "Toeplitz neural operator diagnostics and timing (FFT, SKI, frequency-domain)",
		Long: "toeplitz runs the diagnostics of the ski-tnn paper: the SKI spectral-norm error against the\n" +
			"bound of Theorem 1 (Matérn 5/2 kernel, n = 256), impulse responses of GeLU, SiLU and ReLU\n" +
			"frequency-domain MLPs (Theorems 2-4), and the timing study over n = 512 … --max-n with d\n" +
			"channels: dense O(n²) products up to --max-dense, FFT O(n log n), SKI with r inducing points\n" +
			"and a sparse filter of width m, and the causal FD operator.\n" +
			"--device go|cuda replaces the timing study by a comparison of the FFT (TNO), SKI and causal FD\n" +
			"operators on the CPU and on that device (GoMLX's pure-Go backend, dense forms up to --max-dense;\n" +
			"or an NVIDIA GPU in a build with -tags xla, FFT forms): both times and the largest difference.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runToeplitz(cmd, o) },
	}
	o.bind(cmd.Flags())
	return cmd
}

func (o *toeplitzOptions) bind(fl *pflag.FlagSet) {
	intVar(fl, &o.d, "d", 64, dim, "channels")
	intVar(fl, &o.r, "r", 64, intRange(2, limits.MaxDim), "SKI inducing points")
	intVar(fl, &o.m, "m", 32, dim.orZero("no sparse filter"), "sparse filter width")
	floatVar(fl, &o.lambda, "lambda", 0.99, unitOpen, "inverse time warp λ at n = 512 (λ^(512/n) at length n)")
	intVar(fl, &o.maxN, "max-n", 1<<20, dim, "longest sequence in the timing study")
	intVar(fl, &o.maxDense, "max-dense", 4096, dim, "longest sequence for the dense O(n²) product")
	seedVar(fl, &o.seed, "seed", 0, "random seed")
	fl.BoolVar(&o.noTiming, "no-timing", false, "skip the timing study")
	fl.BoolVar(&o.noDiag, "no-diagnostics", false, "skip the error and decay diagnostics")
	fl.StringVar(&o.plot, "plot", "", "PNG plot of the impulse responses")
	fl.BoolVar(&o.json, "json", false, "print JSON")
	fl.StringVar(&o.device, "device", device.Host, deviceUsage("the timed operators (go and cuda are compared with the CPU)"))
}

func (o *toeplitzOptions) validate() error {
	if o.d <= 0 || o.m < 0 || o.r < 2 || o.maxN < 512 {
		return fmt.Errorf("need d > 0, m ≥ 0, r ≥ 2 and --max-n ≥ 512 (got d=%d, m=%d, r=%d, max-n=%d)", o.d, o.m, o.r, o.maxN)
	}
	if !(o.lambda > 0 && o.lambda < 1) {
		return fmt.Errorf("--lambda must lie in (0, 1), got %v", o.lambda)
	}
	return nil
}

func runToeplitz(cmd *cobra.Command, o *toeplitzOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	dev, err := openSeqDevice(o.device)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	rep := &ski.Report{
		ImpulseSetup: ski.ImpulseConfig{Seed: o.seed},
		TimingSetup: ski.TimingConfig{Channels: o.d, Inducing: o.r, FilterWidth: o.m, Lambda: o.lambda,
			MaxN: o.maxN, MaxDense: o.maxDense, Seed: o.seed},
	}
	var need limits.Estimate // the largest study that runs
	if !o.noDiag {
		need = largest(need, rep.ErrorSetup.Memory(), rep.ImpulseSetup.Memory())
	}
	if !o.noTiming && dev != nil {
		need = largest(need, ski.DeviceConfig{Device: dev, Timing: rep.TimingSetup}.Memory())
	} else if !o.noTiming {
		need = largest(need, rep.TimingSetup.Memory())
	}
	if err := checkMemory(cmd, need); err != nil {
		return err
	}
	if !o.noDiag {
		if rep.SKIError, err = ski.ErrorBound(ctx, rep.ErrorSetup, nil); err != nil {
			return err
		}
		if rep.Decay, err = ski.Impulse(ctx, rep.ImpulseSetup, nil); err != nil {
			return err
		}
	}
	var devRes *ski.DeviceResult
	if !o.noTiming && dev != nil {
		update, finish := progress("toeplitz on " + dev.Name())
		devRes, err = ski.CompareDevice(ctx, ski.DeviceConfig{Device: dev, Timing: rep.TimingSetup}, update)
		finish()
		if err != nil {
			return err
		}
	}
	if !o.noTiming && dev == nil {
		update, finish := progress("toeplitz")
		rep.Timing, err = ski.Timing(ctx, rep.TimingSetup, update)
		finish()
		if err != nil {
			return err
		}
		rep.Slopes = ski.Slopes(rep.Timing)
	}
	w := cmd.OutOrStdout()
	if o.json {
		if devRes != nil {
			return report.JSON(w, struct {
				*ski.Report
				Device []ski.DeviceRow `json:"device"`
			}{rep, devRes.Rows})
		}
		return report.JSON(w, rep)
	}
	if err := rep.Render(w); err != nil {
		return err
	}
	if devRes != nil {
		if len(rep.SKIError) > 0 || len(rep.Decay) > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		if err := devRes.Render(w); err != nil {
			return err
		}
	}
	if o.plot == "" || len(rep.Decay) == 0 {
		return nil
	}
	if err := rep.Plot().Save(o.plot); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nimpulse-response plot written to %s\n", o.plot)
	return err
}
