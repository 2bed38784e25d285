package main

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/internal/fitflags"
)

// TestFitFlagsAreFitflags: kernelkit fit's flags are exactly
// internal/fitflags's (same names, types, defaults and usages), so that
// kernelkit-beam fit, which binds fitflags.Options too, takes every flag of
// kernelkit fit (beam/cmd/kernelkit-beam's TestEveryFitFlag).
func TestFitFlagsAreFitflags(t *testing.T) {
	shared := pflag.NewFlagSet("fitflags", pflag.ContinueOnError)
	(&fitflags.Options{}).Bind(shared)
	fit := newFit().LocalFlags()
	n := 0
	fit.VisitAll(func(f *pflag.Flag) {
		n++
		g := shared.Lookup(f.Name)
		if g == nil {
			t.Errorf("kernelkit fit --%s is not a flag of fitflags.Options", f.Name)
			return
		}
		if g.Value.Type() != f.Value.Type() || g.DefValue != f.DefValue || g.Usage != f.Usage {
			t.Errorf("--%s differs from fitflags.Options's", f.Name)
		}
	})
	shared.VisitAll(func(f *pflag.Flag) {
		if fit.Lookup(f.Name) == nil {
			t.Errorf("fitflags.Options --%s is not a flag of kernelkit fit", f.Name)
		}
	})
	if n < 25 {
		t.Errorf("only %d flags", n)
	}
}
