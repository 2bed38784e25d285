package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kernelkit/kernelkit/report"
	"github.com/kernelkit/kernelkit/study/zoo"
)

// zooDefaults sets the flags of --study zoo the user left unset: d = 16,
// m = d (the SimRF paper's setting), 500 draws.
func (o *estimateOptions) zooDefaults(changed func(string) bool) {
	if !changed("d") {
		o.d = 16
	}
	if !changed("features") {
		o.features = o.d
	}
	if !changed("draws") {
		o.draws = 500
	}
}

// zoo runs estimate --study zoo: the study's default estimators unless
// --estimator is given (then each with --sampler), the norms of --norms
// if given, and the attention study on the rows of --data if given (the
// first min(512, n/2) rows as queries, the next as keys).
func (o *estimateOptions) zoo(cmd *cobra.Command, update func(done, total int)) (interface{ Render(io.Writer) error }, any, *report.Plot, error) {
	cfg := zoo.Config{Dim: o.d, Features: o.features, Draws: o.draws, Seed: o.seed}
	fl := cmd.Flags()
	if fl.Changed("estimator") {
		smp, err := estimateSampler(o.sampler)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, n := range o.estimators {
			cfg.Estimators = append(cfg.Estimators, zoo.Estimator{Name: n, Sampler: smp})
		}
	}
	if fl.Changed("norms") || o.tempered {
		cfg.Norms = o.norms
	}
	if o.data != "" {
		ds, err := readData(o.data, "auto", "", false)
		if err != nil {
			return nil, nil, nil, err
		}
		cfg.Data = ds.X
		n, _ := ds.X.Dims()
		cfg.Length = min(512, n/2) // queries and keys: half the rows each, at most 512
		if cfg.Length == 0 {
			return nil, nil, nil, fmt.Errorf("--data %s: the attention study needs at least 2 rows", o.data)
		}
	}
	res, err := zoo.Run(cmd.Context(), cfg, update)
	if err != nil {
		return nil, nil, nil, err
	}
	return res, res, res.Plot(), nil
}
