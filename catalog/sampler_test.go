package catalog

import (
	"testing"

	"github.com/kernelkit/kernelkit/prf"
	"github.com/kernelkit/kernelkit/sampler"
)

func TestSamplerByName(t *testing.T) {
	for name, want := range map[string]sampler.Sampler{
		"simplex": prf.Simplex{}, " Simplex ": prf.Simplex{}, "orf": sampler.Orthogonal{}, "iid": sampler.Gaussian{},
	} {
		got, err := SamplerByName(name)
		if err != nil || got != want {
			t.Errorf("SamplerByName(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	for _, name := range []string{"", "simplexx", "bogus"} {
		if _, err := SamplerByName(name); err == nil {
			t.Errorf("SamplerByName(%q): no error", name)
		}
	}
}
