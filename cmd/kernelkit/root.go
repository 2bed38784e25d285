package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kernelkit/kernelkit/backend"
	"github.com/kernelkit/kernelkit/data"
	"github.com/kernelkit/kernelkit/sampler"
)

// version is the program version, set at build time with -ldflags.
var version = "dev"

func newRoot() *cobra.Command {
	var blasFlag string
	root := &cobra.Command{
		Use:           "kernelkit",
		Short:         "Scalable kernel methods through random features",
		Long:          "kernelkit fits kernel ridge models on random features (RFF, ORF, SORF, FAVOR+, arc-cosine)\nand measures how well the features approximate the exact kernels.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			switch blasFlag {
			case "auto":
				if err := backend.UseOpenBLAS(); err != nil {
					notice(cmd, "notice: using pure-Go BLAS (%v)", err)
				}
			case "openblas":
				if err := backend.UseOpenBLAS(); err != nil {
					return err
				}
			case "gonum":
				backend.UseGonum()
			default:
				return fmt.Errorf("unknown --blas %q (want auto, openblas or gonum)", blasFlag)
			}
			return nil
		},
	}
	root.PersistentFlags().StringVar(&blasFlag, "blas", "auto", "BLAS backend: auto (OpenBLAS if installed, else pure Go), openblas or gonum")
	root.AddCommand(newDemo(), newFit(), newPredict(), newTransform(), newAttention(), newEstimate(), newToeplitz(), newAnalog(), newSNNK())
	return root
}

func notice(cmd *cobra.Command, format string, args ...any) {
	fmt.Fprintf(cmd.ErrOrStderr(), format+"\n", args...)
}

// newBar returns a progress bar on stderr, hidden when stderr is not a
// terminal.
func newBar(total int, desc string) *progressbar.ProgressBar {
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetVisibility(term.IsTerminal(int(os.Stderr.Fd()))),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionShowCount(),
	)
}

// readData reads a CSV (header row) or LIBSVM file; format "auto" picks
// LIBSVM for the extensions .svm, .libsvm and .svmlight.
func readData(path, format, label string, noLabel bool) (*data.Dataset, error) {
	if path == "" {
		return nil, errors.New("no data file given")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if format == "auto" {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".svm", ".libsvm", ".svmlight":
			format = "libsvm"
		default:
			format = "csv"
		}
	}
	var d *data.Dataset
	switch format {
	case "csv":
		d, err = data.ReadCSV(f, data.CSVOptions{Label: label, NoLabel: noLabel})
	case "libsvm":
		d, err = data.ReadLIBSVM(f, 0)
	default:
		return nil, fmt.Errorf("unknown --format %q (want auto, csv or libsvm)", format)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// parseSamplers parses a comma-separated list of sampler names.
func parseSamplers(list string) ([]sampler.Sampler, error) {
	var out []sampler.Sampler
	for _, name := range strings.Split(list, ",") {
		s, err := sampler.ByName(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// writeOut calls fn with the file at path, or with the command's standard
// output when path is empty or "-".
func writeOut(cmd *cobra.Command, path string, fn func(w io.Writer) error) error {
	if path == "" || path == "-" {
		return fn(cmd.OutOrStdout())
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
