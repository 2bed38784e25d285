package main

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/internal/flagdomain"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// A domain is the declared valid set of a numeric flag (the machinery is
// internal/flagdomain's, shared with kernelkit-beam; see flagdomain.Domain):
// the closed or open interval from lo to hi, integers only where integer
// is set, and optionally the single value 0 outside that interval with a
// stated meaning (zero). Every numeric flag of every command is bound with
// its domain (intVar, floatVar, intsVar, …, or a flag set bound by a
// shared package and passed through adaptDomains): the value is checked
// while the flags are parsed, and a refusal names the flag, the value and
// the valid set in one line. The flag-walking test (domain_test.go) finds
// every flag through cobra and tries each domain's boundaries. This
// package's copy of the type keeps the fields that test reads; it converts
// to and from flagdomain.Domain without loss.
type domain struct {
	lo, hi         float64
	loOpen, hiOpen bool
	integer        bool
	zero           string // the meaning of 0 when 0 lies outside [lo, hi]; empty: 0 is not special
	unit           string // shown after the bounds, e.g. "seconds"
}

// shared returns d as flagdomain's domain.
func (d domain) shared() flagdomain.Domain {
	return flagdomain.Domain{Lo: d.lo, Hi: d.hi, LoOpen: d.loOpen, HiOpen: d.hiOpen, Integer: d.integer, Zero: d.zero, Unit: d.unit}
}

// fromShared returns flagdomain's d as this package's domain.
func fromShared(d flagdomain.Domain) domain {
	return domain{lo: d.Lo, hi: d.Hi, loOpen: d.LoOpen, hiOpen: d.HiOpen, integer: d.Integer, zero: d.Zero, unit: d.Unit}
}

// Common domains.
var (
	// anyUint64 is every seed.
	anyUint64 = fromShared(flagdomain.AnyUint64)
	// positiveFloat is (0, +∞) finite.
	positiveFloat = fromShared(flagdomain.PositiveFloat)
	// nonNegFloat is [0, +∞) finite.
	nonNegFloat = fromShared(flagdomain.NonNegFloat)
	// bandwidth is an RBF bandwidth γ: (0, 10³⁰⁰], so that the projection
	// √(2γ)·ω stays finite.
	bandwidth = fromShared(flagdomain.Bandwidth)
	// unitOpen is (0, 1).
	unitOpen = fromShared(flagdomain.UnitOpen)
	// dim is an input, feature, width or length dimension: 1…limits.MaxDim.
	dim = intRange(1, limits.MaxDim)
	// count is a number of repetitions (seeds, draws, epochs, steps
	// between evaluations): 1…limits.MaxCount.
	count = intRange(1, limits.MaxCount)
	// rows is a number of generated rows: 0…limits.MaxElements (the run's
	// memory budget bounds it further before anything is generated).
	rows = intRange(0, limits.MaxElements)
	// timeout is a server time limit: (0, 24 h].
	timeout = domain{lo: 0, loOpen: true, hi: 86400}.withUnit("seconds")
	// tInference is the time from programming an analog chip to reading
	// it: (0, 10⁸ s]. The PCM model's drift and read noise were fitted to
	// measurements up to about a year; far beyond it (--t-inference 1e308)
	// every conductance drifts to nothing and the study measures noise.
	tInference = domain{lo: 0, loOpen: true, hi: 1e8}.withUnit("seconds")
)

// intRange is the integers lo…hi.
func intRange(lo, hi int) domain { return fromShared(flagdomain.IntRange(lo, hi)) }

// orZero returns d with 0 accepted as meaning.
func (d domain) orZero(meaning string) domain { d.zero = meaning; return d }

// withUnit returns d with its unit.
func (d domain) withUnit(u string) domain { d.unit = u; return d }

// contains reports whether v lies in the domain.
func (d domain) contains(v float64) bool { return d.shared().Contains(v) }

// String describes the domain, e.g. "an integer in [1, 16777216] (0: 2·width)".
func (d domain) String() string { return d.shared().String() }

// declared is implemented by every flag value with a declared domain.
type declared interface {
	pflag.Value
	Domain() domain
}

// declaredValue is a flagdomain value seen through this package's domain
// type.
type declaredValue struct{ flagdomain.Declared }

// Domain is the value's domain.
func (v declaredValue) Domain() domain { return fromShared(v.Declared.Domain()) }

// adaptDomains makes every flagdomain value of fl a declared value of this
// package (the values of a flag set bound by a shared package, such as
// internal/fitflags, and this file's own bindings), keeping its parsing.
func adaptDomains(fl *pflag.FlagSet) {
	fl.VisitAll(func(f *pflag.Flag) {
		if v, ok := f.Value.(flagdomain.Declared); ok {
			f.Value = declaredValue{v}
		}
	})
}

// adaptOne adapts the flag just bound as name.
func adaptOne(fl *pflag.FlagSet, name string) {
	f := fl.Lookup(name)
	if v, ok := f.Value.(flagdomain.Declared); ok {
		f.Value = declaredValue{v}
	}
}

// usageWith appends the domain to a flag's usage.
func usageWith(usage string, d domain) string { return flagdomain.UsageWith(usage, d.shared()) }

// intVar binds an int flag with its domain; the default must lie in it.
func intVar(fl *pflag.FlagSet, p *int, name string, value int, d domain, usage string) {
	flagdomain.IntVar(fl, p, name, value, d.shared(), usage)
	adaptOne(fl, name)
}

// int64Var binds an int64 flag with its domain.
func int64Var(fl *pflag.FlagSet, p *int64, name string, value int64, d domain, usage string) {
	flagdomain.Int64Var(fl, p, name, value, d.shared(), usage)
	adaptOne(fl, name)
}

// seedVar binds a uint64 seed flag (every value is valid).
func seedVar(fl *pflag.FlagSet, p *uint64, name string, value uint64, usage string) {
	flagdomain.SeedVar(fl, p, name, value, usage)
	adaptOne(fl, name)
}

// floatVar binds a float flag with its domain (finite numbers only).
func floatVar(fl *pflag.FlagSet, p *float64, name string, value float64, d domain, usage string) {
	flagdomain.FloatVar(fl, p, name, value, d.shared(), usage)
	adaptOne(fl, name)
}

// durationVar binds a duration flag with its domain in seconds.
func durationVar(fl *pflag.FlagSet, p *time.Duration, name string, value time.Duration, d domain, usage string) {
	flagdomain.DurationVar(fl, p, name, value, d.shared(), usage)
	adaptOne(fl, name)
}

// intsVar binds an int list flag whose every value lies in d.
func intsVar(fl *pflag.FlagSet, p *[]int, name string, value []int, d domain, usage string) {
	flagdomain.IntsVar(fl, p, name, value, d.shared(), usage)
	adaptOne(fl, name)
}

// floatsVar binds a float list flag whose every value lies in d.
func floatsVar(fl *pflag.FlagSet, p *[]float64, name string, value []float64, d domain, usage string) {
	flagdomain.FloatsVar(fl, p, name, value, d.shared(), usage)
	adaptOne(fl, name)
}

// parseBytes parses a memory size (flagdomain.ParseBytes).
func parseBytes(s string) (int64, error) { return flagdomain.ParseBytes(s) }

// bytesValue is a memory size flag: bytes, or a number with a unit.
type bytesValue struct{ p *int64 }

// bytesDomain is the domain of a memory size in bytes.
var bytesDomain = fromShared(flagdomain.BytesDomain)

func (v bytesValue) String() string     { return flagdomain.BytesValue{P: v.p}.String() }
func (v bytesValue) Type() string       { return flagdomain.BytesValue{P: v.p}.Type() }
func (v bytesValue) Domain() domain     { return bytesDomain }
func (v bytesValue) Set(s string) error { return flagdomain.BytesValue{P: v.p}.Set(s) }

// defaultMaxMemory is the default of --max-memory.
const defaultMaxMemory = 8 << 30

// memoryBudget returns the --max-memory of the command (the root's
// persistent flag), or its default where a command is run without the
// root (tests).
func memoryBudget(cmd *cobra.Command) int64 {
	if f := cmd.Flags().Lookup("max-memory"); f != nil {
		if v, ok := f.Value.(bytesValue); ok {
			return *v.p
		}
	}
	return defaultMaxMemory
}

// checkMemory refuses a run whose estimate exceeds the command's
// --max-memory, before anything is allocated.
func checkMemory(cmd *cobra.Command, e limits.Estimate) error {
	return e.Check(memoryBudget(cmd), "--max-memory")
}

// largest returns the estimate of the most bytes (studies that run one
// after another hold their memory in turn).
func largest(es ...limits.Estimate) limits.Estimate {
	var m limits.Estimate
	for _, e := range es {
		if e.Bytes() > m.Bytes() {
			m = e
		}
	}
	return m
}
