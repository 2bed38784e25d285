package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kernelkit/kernelkit/seqmodel"
	"github.com/kernelkit/kernelkit/train"
)

// exportOptions are the flags of kernelkit export.
type exportOptions struct {
	out string
}

func newExport() *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export CHECKPOINT --out m.kks",
		Short: "Write a trained sequence model's inference file from a training checkpoint",
		Long: "export reads a checkpoint of kernelkit train and writes the model's inference file: the\n" +
			"model's kind and settings, its weights (parameters and random features; no optimiser state),\n" +
			"the vocabulary and how text is tokenised (white space; the parentheses of the LRA ListOps\n" +
			"format dropped), the maximum length and the class names, with a SHA-256 digest, written\n" +
			"atomically; reading a checkpoint that needs more than --max-memory is refused before it is read.\n" +
			"train --export m.kks writes the same file at the end of a run.\n" +
			"kernelkit predict --model m.kks --data rows.tsv scores LRA TSV rows or one sequence per line;\n" +
			"kernelkit serve --model NAME=m.kks serves it beside ridge models (REST, binary, gRPC).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, args[0]) },
	}
	onceVar(cmd.Flags(), &o.out, "out", "", "inference file to write (by convention "+seqmodel.Ext+")")
	return cmd
}

func (o *exportOptions) run(cmd *cobra.Command, checkpoint string) error {
	if o.out == "" {
		return errors.New("--out is required: the inference file to write")
	}
	if err := train.ExportFile(checkpoint, o.out, memoryBudget(cmd)); err != nil {
		return err
	}
	m, err := seqmodel.LoadFile(o.out)
	if err != nil {
		return fmt.Errorf("reading back %s: %w", o.out, err)
	}
	c, h := m.Config(), m.Header()
	params, fixed, err := c.ParamCount()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s, length %d, width %d, depth %d, %d classes, %d parameters and %d random-feature values, step %d; sha256 %s\n",
		o.out, c.Kind, c.Length, c.Width, c.Depth, c.Classes, params, fixed, h.Step, m.Digest())
	return err
}
