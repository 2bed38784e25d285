package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kernelkit/kernelkit/catalog"
)

// newMaps is the maps command: the feature maps of the registry, by name.
func newMaps() *cobra.Command {
	return &cobra.Command{
		Use:   "maps",
		Short: "List the feature maps that --map names",
		Long: "maps lists the feature maps of kernelkit's registry: the name (and aliases) that fit --map\n" +
			"and transform --map take, the kernel the map estimates and a description. Query/key pairs\n" +
			"(asymmetric estimators of the softmax kernel) serve estimate and attention, not --map.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return writeMaps(cmd.OutOrStdout()) },
	}
}

// writeMaps writes the table of the registry's maps to w.
func writeMaps(w io.Writer) error {
	reg := catalog.Default()
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	if _, err := fmt.Fprintln(tw, "NAME\tKERNEL\tALIASES\tDESCRIPTION"); err != nil {
		return err
	}
	for _, name := range reg.Names() {
		e, err := reg.Lookup(name)
		if err != nil {
			return err
		}
		doc := e.Doc
		if e.Asymmetric {
			doc += " (query/key pair: not for --map)"
		}
		aliases := strings.Join(e.Aliases, ", ")
		if aliases == "" {
			aliases = "-"
		}
		if _, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Name, e.Kernel, aliases, doc); err != nil {
			return err
		}
	}
	return tw.Flush()
}
