package catalog

import (
	"fmt"
	"strings"

	"github.com/kernelkit/kernelkit/prf"
	"github.com/kernelkit/kernelkit/sampler"
)

// SamplerByName returns the projection sampler of a name: the samplers of
// package sampler (sampler.ByName: iid, orf, sorf, halton, truncated) and
// simplex, prf.Simplex (the SimRF paper's simplex-coupled directions),
// which package sampler cannot name because prf builds on it. Every map of
// the catalog accepts every one of them.
func SamplerByName(name string) (sampler.Sampler, error) {
	if strings.EqualFold(strings.TrimSpace(name), "simplex") {
		return prf.Simplex{}, nil
	}
	s, err := sampler.ByName(strings.TrimSpace(name))
	if err != nil {
		return nil, fmt.Errorf("unknown sampler %.40q (want iid, orf, sorf, halton, truncated or simplex)", name)
	}
	return s, nil
}
