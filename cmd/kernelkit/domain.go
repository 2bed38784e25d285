package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// A domain is the declared valid set of a numeric flag: the closed or
// open interval from lo to hi, integers only where integer is set, and
// optionally the single value 0 outside that interval with a stated
// meaning (zero), e.g. "--hidden 0" for 2·width. Every numeric flag of
// every command is bound with its domain (intVar, floatVar, intsVar, …):
// the value is checked while the flags are parsed, before the command
// reads or allocates anything, and a refusal names the flag, the value
// and the valid set in one line. Zero is never a hidden default: it is
// either inside the interval (a value like any other), declared with its
// meaning, or refused. The flag-walking test (domain_test.go) finds every
// flag through cobra and tries each domain's boundaries.
type domain struct {
	lo, hi         float64
	loOpen, hiOpen bool
	integer        bool
	zero           string // the meaning of 0 when 0 lies outside [lo, hi]; empty: 0 is not special
	unit           string // shown after the bounds, e.g. "seconds"
}

// Common domains.
var (
	// anyUint64 is every seed.
	anyUint64 = domain{lo: 0, hi: math.MaxUint64, integer: true}
	// positiveFloat is (0, +∞) finite.
	positiveFloat = domain{lo: 0, loOpen: true, hi: math.MaxFloat64}
	// nonNegFloat is [0, +∞) finite.
	nonNegFloat = domain{lo: 0, hi: math.MaxFloat64}
	// bandwidth is an RBF bandwidth γ: (0, 10³⁰⁰], so that the projection
	// √(2γ)·ω stays finite.
	bandwidth = domain{lo: 0, loOpen: true, hi: 1e300}
	// unitOpen is (0, 1).
	unitOpen = domain{lo: 0, hi: 1, loOpen: true, hiOpen: true}
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
func intRange(lo, hi int) domain { return domain{lo: float64(lo), hi: float64(hi), integer: true} }

// orZero returns d with 0 accepted as meaning.
func (d domain) orZero(meaning string) domain { d.zero = meaning; return d }

// withUnit returns d with its unit.
func (d domain) withUnit(u string) domain { d.unit = u; return d }

// contains reports whether v lies in the domain.
func (d domain) contains(v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	if v == 0 && d.zero != "" {
		return true
	}
	if d.integer && v != math.Trunc(v) {
		return false
	}
	if v < d.lo || (d.loOpen && v == d.lo) || v > d.hi || (d.hiOpen && v == d.hi) {
		return false
	}
	return true
}

// String describes the domain, e.g. "an integer in [1, 16777216] (0: 2·width)".
func (d domain) String() string {
	l, r := "[", "]"
	if d.loOpen {
		l = "("
	}
	if d.hiOpen {
		r = ")"
	}
	hi := bound(d.hi)
	if !d.integer && d.hi == math.MaxFloat64 {
		hi, r = "∞", ")"
	}
	kind := "a finite number"
	if d.integer {
		kind = "an integer"
	}
	s := fmt.Sprintf("%s in %s%s, %s%s", kind, l, bound(d.lo), hi, r)
	if d.unit != "" {
		s += " " + d.unit
	}
	if d.zero != "" {
		s += ", or 0 (" + d.zero + ")"
	}
	return s
}

// bound formats an interval end.
func bound(v float64) string {
	if v == math.MaxUint64 {
		return "18446744073709551615"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1<<63 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// check returns the refusal of v, or nil.
func (d domain) check(v float64) error {
	if !d.contains(v) {
		return fmt.Errorf("must be %s", d)
	}
	return nil
}

// declared is implemented by every flag value with a declared domain.
type declared interface {
	pflag.Value
	Domain() domain
}

// usageWith appends the domain to a flag's usage.
func usageWith(usage string, d domain) string {
	return usage + " [" + d.String() + "]"
}

// intValue is an int flag with a domain.
type intValue struct {
	p *int
	d domain
}

func (v intValue) String() string { return strconv.Itoa(*v.p) }
func (v intValue) Type() string   { return "int" }
func (v intValue) Domain() domain { return v.d }
func (v intValue) Set(s string) error {
	n, err := parseInt(s, v.d)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}

// parseInt parses an integer of domain d ("1e6" is accepted when it is
// an integer).
func parseInt(s string, d domain) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<62 {
			return 0, fmt.Errorf("must be %s", d)
		}
		n = int64(f)
	}
	if err := d.check(float64(n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// int64Value is an int64 flag with a domain.
type int64Value struct {
	p *int64
	d domain
}

func (v int64Value) String() string { return strconv.FormatInt(*v.p, 10) }
func (v int64Value) Type() string   { return "int64" }
func (v int64Value) Domain() domain { return v.d }
func (v int64Value) Set(s string) error {
	n, err := parseInt(s, v.d)
	if err != nil {
		return err
	}
	*v.p = int64(n)
	return nil
}

// uintValue is a uint64 flag (a seed: every value is valid).
type uintValue struct{ p *uint64 }

func (v uintValue) String() string { return strconv.FormatUint(*v.p, 10) }
func (v uintValue) Type() string   { return "uint64" }
func (v uintValue) Domain() domain { return anyUint64 }
func (v uintValue) Set(s string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
	if err != nil {
		return fmt.Errorf("must be %s", anyUint64)
	}
	*v.p = n
	return nil
}

// floatValue is a float64 flag with a domain (never NaN or ±Inf).
type floatValue struct {
	p *float64
	d domain
}

func (v floatValue) String() string { return strconv.FormatFloat(*v.p, 'g', -1, 64) }
func (v floatValue) Type() string   { return "float" }
func (v floatValue) Domain() domain { return v.d }
func (v floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return fmt.Errorf("must be %s", v.d)
	}
	if err := v.d.check(f); err != nil {
		return err
	}
	*v.p = f
	return nil
}

// durationValue is a time.Duration flag with a domain in seconds.
type durationValue struct {
	p *time.Duration
	d domain
}

func (v durationValue) String() string { return v.p.String() }
func (v durationValue) Type() string   { return "duration" }
func (v durationValue) Domain() domain { return v.d }
func (v durationValue) Set(s string) error {
	t, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("must be a duration such as 30s or 2m, %s", v.d)
	}
	if err := v.d.check(t.Seconds()); err != nil {
		return err
	}
	*v.p = t
	return nil
}

// maxListLen is the most values a list flag takes.
const maxListLen = 1024

// intsValue is an int list flag (comma-separated; the first use replaces
// the default, later ones append) whose every value lies in a domain.
type intsValue struct {
	p       *[]int
	d       domain
	changed bool
}

func (v *intsValue) String() string {
	parts := make([]string, len(*v.p))
	for i, n := range *v.p {
		parts[i] = strconv.Itoa(n)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
func (v *intsValue) Type() string   { return "ints" }
func (v *intsValue) Domain() domain { return v.d }
func (v *intsValue) Set(s string) error {
	var out []int
	if v.changed {
		out = append(out, *v.p...)
	}
	for _, f := range strings.Split(s, ",") {
		n, err := parseInt(f, v.d)
		if err != nil {
			return fmt.Errorf("%.40q: %w", f, err)
		}
		out = append(out, n)
	}
	if len(out) > maxListLen {
		return fmt.Errorf("at most %d values", maxListLen)
	}
	*v.p, v.changed = out, true
	return nil
}

// floatsValue is a float list flag, as intsValue.
type floatsValue struct {
	p       *[]float64
	d       domain
	changed bool
}

func (v *floatsValue) String() string {
	parts := make([]string, len(*v.p))
	for i, f := range *v.p {
		parts[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
func (v *floatsValue) Type() string   { return "floats" }
func (v *floatsValue) Domain() domain { return v.d }
func (v *floatsValue) Set(s string) error {
	var out []float64
	if v.changed {
		out = append(out, *v.p...)
	}
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err == nil {
			err = v.d.check(x)
		} else {
			err = fmt.Errorf("must be %s", v.d)
		}
		if err != nil {
			return fmt.Errorf("%.40q: %w", f, err)
		}
		out = append(out, x)
	}
	if len(out) > maxListLen {
		return fmt.Errorf("at most %d values", maxListLen)
	}
	*v.p, v.changed = out, true
	return nil
}

// intVar binds an int flag with its domain; the default must lie in it.
func intVar(fl *pflag.FlagSet, p *int, name string, value int, d domain, usage string) {
	mustContain(name, d, float64(value))
	*p = value
	fl.Var(intValue{p, d}, name, usageWith(usage, d))
}

// int64Var binds an int64 flag with its domain.
func int64Var(fl *pflag.FlagSet, p *int64, name string, value int64, d domain, usage string) {
	mustContain(name, d, float64(value))
	*p = value
	fl.Var(int64Value{p, d}, name, usageWith(usage, d))
}

// seedVar binds a uint64 seed flag (every value is valid).
func seedVar(fl *pflag.FlagSet, p *uint64, name string, value uint64, usage string) {
	*p = value
	fl.Var(uintValue{p}, name, usageWith(usage, anyUint64))
}

// floatVar binds a float flag with its domain (finite numbers only).
func floatVar(fl *pflag.FlagSet, p *float64, name string, value float64, d domain, usage string) {
	mustContain(name, d, value)
	*p = value
	fl.Var(floatValue{p, d}, name, usageWith(usage, d))
}

// durationVar binds a duration flag with its domain in seconds.
func durationVar(fl *pflag.FlagSet, p *time.Duration, name string, value time.Duration, d domain, usage string) {
	mustContain(name, d, value.Seconds())
	*p = value
	fl.Var(durationValue{p, d}, name, usageWith(usage, d))
}

// intsVar binds an int list flag whose every value lies in d.
func intsVar(fl *pflag.FlagSet, p *[]int, name string, value []int, d domain, usage string) {
	for _, v := range value {
		mustContain(name, d, float64(v))
	}
	*p = value
	fl.Var(&intsValue{p: p, d: d}, name, usageWith(usage, d))
}

// floatsVar binds a float list flag whose every value lies in d.
func floatsVar(fl *pflag.FlagSet, p *[]float64, name string, value []float64, d domain, usage string) {
	for _, v := range value {
		mustContain(name, d, v)
	}
	*p = value
	fl.Var(&floatsValue{p: p, d: d}, name, usageWith(usage, d))
}

// mustContain panics when a flag's own default lies outside its domain:
// a programming error of this package, caught by every test.
func mustContain(name string, d domain, v float64) {
	if !d.contains(v) {
		panic(fmt.Sprintf("flag --%s: default %v outside its domain %s", name, v, d))
	}
}

// parseBytes parses a memory size: a non-negative decimal number with an
// optional unit (K, M, G, T or KiB… binary; KB, MB, GB, TB decimal; B).
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || v*mult >= 1<<62 || strings.ContainsAny(t, "xXpP_") || strings.EqualFold(t, "inf") || strings.EqualFold(t, "infinity") {
		return 0, fmt.Errorf("must be a size in [1 B, 4 EiB) such as 8GiB or 512MiB")
	}
	return int64(v * mult), nil
}

// bytesValue is a memory size flag: bytes, or a number with a unit.
type bytesValue struct{ p *int64 }

// bytesDomain is the domain of a memory size in bytes.
var bytesDomain = domain{lo: 1, hi: 1 << 62, integer: true, unit: "bytes (or with a unit: KiB, MiB, GiB, TiB; KB, MB, GB, TB)"}

func (v bytesValue) String() string { return limits.Bytes(float64(*v.p)) }
func (v bytesValue) Type() string   { return "size" }
func (v bytesValue) Domain() domain { return bytesDomain }
func (v bytesValue) Set(s string) error {
	n, err := parseBytes(s)
	if err != nil {
		return fmt.Errorf("must be %s", bytesDomain)
	}
	*v.p = n
	return nil
}

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
