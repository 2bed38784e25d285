package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/kernelkit/kernelkit/blas"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/fft"
	"github.com/kernelkit/kernelkit/internal/atomicfile"
	"github.com/kernelkit/kernelkit/internal/flagdomain"
)

// version is the program version, set at build time with -ldflags.
var version = "dev"

type rootOptions struct {
	blas      string
	fft       string
	verbose   bool
	maxMemory int64
}

func newRoot() *cobra.Command {
	o := &rootOptions{}
	root := &cobra.Command{
		Use:           "kernelkit",
		Short:         "Scalable kernel methods through random features",
		Long:          "kernelkit fits kernel ridge models on random features (RFF, ORF, SORF, FAVOR+, arc-cosine)\nand measures how well the features approximate the exact kernels.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := blas.CheckEnv(); err != nil {
				return err
			}
			if cmd.Flags().Changed("fft") {
				// The process's FFT choice: the flag stands for KERNELKIT_FFT.
				if err := os.Setenv(fft.EnvFFT, o.fft); err != nil {
					return err
				}
			}
			if err := fft.CheckEnv(); err != nil {
				if cmd.Flags().Changed("fft") {
					return fmt.Errorf("--fft: %w", err)
				}
				return err
			}
			return o.useBLAS(cmd)
		},
	}
	fl := root.PersistentFlags()
	fl.StringVar(&o.blas, "blas", "auto", "BLAS backend: auto (OpenBLAS if installed, else pure Go), openblas or gonum")
	fl.StringVar(&o.fft, "fft", "auto", "FFT of the sequence operators: auto (FFTW where it loads, else gonum's), fftw or go (as KERNELKIT_FFT, which it overrides)")
	fl.BoolVarP(&o.verbose, "verbose", "v", false, "print notices (the BLAS backend chosen by --blas auto)")
	o.maxMemory = defaultMaxMemory
	fl.Var(bytesValue{&o.maxMemory}, "max-memory", usageWith("memory budget: a run whose data and largest arrays are estimated above it is refused before they are allocated", bytesDomain)+" (default 8GiB)")
	root.AddCommand(newDemo(), newFit(), newPredict(), newTransform(), newAttention(), newEstimate(), newToeplitz(), newAnalog(), newSNNK(), newServeCmd(), newTrainCmd(), newExport(), newMaps())
	groupCommands(root)
	return root
}

// commandGroups are the groups "kernelkit --help" lists the commands in, in
// this order, and commandGroup the group of each command by name. A command
// missing from commandGroup is listed under cobra's "Additional Commands"
// (with help and completion).
var (
	commandGroups = []*cobra.Group{
		{ID: "model", Title: "Fit, predict, transform:"},
		{ID: "study", Title: "Studies (the papers' experiments):"},
		{ID: "train", Title: "Training:"},
		{ID: "serve", Title: "Serving:"},
	}
	commandGroup = map[string]string{
		"demo": "model", "fit": "model", "predict": "model", "transform": "model", "maps": "model",
		"attention": "study", "estimate": "study", "toeplitz": "study", "analog": "study", "snnk": "study",
		"train": "train", "export": "train",
		"serve": "serve",
	}
)

// groupCommands puts root's subcommands into commandGroups.
func groupCommands(root *cobra.Command) {
	root.AddGroup(commandGroups...)
	for _, c := range root.Commands() {
		if id, ok := commandGroup[c.Name()]; ok {
			c.GroupID = id
		}
	}
}

// useBLAS selects the BLAS backend. The pure-Go fallback of --blas auto is
// reported only with --verbose or --timing, where it matters.
func (o *rootOptions) useBLAS(cmd *cobra.Command) error {
	switch o.blas {
	case "auto":
		if err := blas.UseOpenBLAS(); err != nil {
			if timing, ferr := cmd.Flags().GetBool("timing"); o.verbose || (ferr == nil && timing) {
				return notice(cmd, "notice: using pure-Go BLAS (%v)", err)
			}
		}
	case "openblas":
		return blas.UseOpenBLAS()
	case "gonum":
		blas.UseGonum()
	default:
		return fmt.Errorf("unknown --blas %.40q (want auto, openblas or gonum)", o.blas)
	}
	return nil
}

// notice writes one line to the command's standard error.
func notice(cmd *cobra.Command, format string, args ...any) error {
	_, err := fmt.Fprintf(cmd.ErrOrStderr(), format+"\n", args...)
	return err
}

// progress returns a progress callback drawing a bar on standard error
// (hidden when it is not a terminal) and the function that ends the bar.
// The bar is a display, not an output: a failed terminal write cannot
// corrupt a result and is no reason to stop a long run, so its first error
// switches the bar off instead of being returned. update may be called
// from several goroutines.
func progress(desc string) (update func(done, total int), finish func()) {
	bar := progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetVisibility(term.IsTerminal(int(os.Stderr.Fd()))),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionShowCount(),
	)
	var mu sync.Mutex
	failed := false
	update = func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if failed {
			return
		}
		if total != bar.GetMax() {
			bar.ChangeMax(total)
		}
		failed = bar.Set(done) != nil
	}
	finish = func() {
		mu.Lock()
		defer mu.Unlock()
		if !failed {
			failed = bar.Finish() != nil
		}
	}
	return update, finish
}

// readData reads a CSV (header row) or LIBSVM file with data.Open.
func readData(path, format, label string, noLabel bool) (*data.Dataset, error) {
	return data.Open(path, data.OpenOptions{Format: format, Label: label, NoLabel: noLabel})
}

// writeOut calls fn with the command's standard output when path is empty
// or "-", and otherwise writes the file at path atomically: the old file
// stays in place unless fn and every file operation succeed, and writing
// stops with the context's error when the command is interrupted.
func writeOut(cmd *cobra.Command, path string, fn func(w io.Writer) error) error {
	if path == "" || path == "-" {
		return fn(cmd.OutOrStdout())
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		if err := fn(ctxWriter{ctx, w}); err != nil {
			return err
		}
		return ctx.Err()
	})
}

// ctxWriter fails once its context is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// onceVar binds a string flag that may be given once (flagdomain.OnceVar).
func onceVar(fl *pflag.FlagSet, p *string, name, value, usage string) {
	flagdomain.OnceVar(fl, p, name, value, usage)
}
