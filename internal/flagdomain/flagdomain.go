// Package flagdomain binds numeric command-line flags with their declared
// valid sets. A flag bound here (IntVar, FloatVar, IntsVar, …) checks its
// value while the flags are parsed, before a command reads or allocates
// anything, and refuses a value outside its domain in one line that names
// the value and the valid set. Both kernelkit and kernelkit-beam bind
// their flags through it, so that a flag means the same in both.
//
// A domain is an interval of the real line,
//
//	{v ∈ ℝ finite : lo ≤ v ≤ hi} (either end possibly open),
//
// intersected with ℤ for integer flags, and optionally joined with {0}
// when 0 has a stated meaning outside the interval.
package flagdomain

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// A Domain is the declared valid set of a numeric flag: the closed or
// open interval from Lo to Hi, integers only where Integer is set, and
// optionally the single value 0 outside that interval with a stated
// meaning (Zero), e.g. "--hidden 0" for 2·width. Every numeric flag of
// every command is bound with its domain (IntVar, FloatVar, IntsVar, …):
// the value is checked while the flags are parsed, before the command
// reads or allocates anything, and a refusal names the flag, the value
// and the valid set in one line. Zero is never a hidden default: it is
// either inside the interval (a value like any other), declared with its
// meaning, or refused. The flag-walking tests (cmd/kernelkit/domain_test.go) find every
// flag through cobra and try each domain's boundaries.
type Domain struct {
	Lo, Hi         float64
	LoOpen, HiOpen bool
	Integer        bool
	Zero           string // the meaning of 0 when 0 lies outside [Lo, Hi]; empty: 0 is not special
	Unit           string // shown after the bounds, e.g. "seconds"
}

// Common domains.
var (
	// AnyUint64 is every seed.
	AnyUint64 = Domain{Lo: 0, Hi: math.MaxUint64, Integer: true}
	// PositiveFloat is (0, +∞) finite.
	PositiveFloat = Domain{Lo: 0, LoOpen: true, Hi: math.MaxFloat64}
	// NonNegFloat is [0, +∞) finite.
	NonNegFloat = Domain{Lo: 0, Hi: math.MaxFloat64}
	// Bandwidth is an RBF bandwidth γ: (0, 10³⁰⁰], so that the projection
	// √(2γ)·ω stays finite.
	Bandwidth = Domain{Lo: 0, LoOpen: true, Hi: 1e300}
	// UnitOpen is (0, 1).
	UnitOpen = Domain{Lo: 0, Hi: 1, LoOpen: true, HiOpen: true}
)

// IntRange is the integers lo…hi.
func IntRange(lo, hi int) Domain { return Domain{Lo: float64(lo), Hi: float64(hi), Integer: true} }

// OrZero returns d with 0 accepted as meaning.
func (d Domain) OrZero(meaning string) Domain { d.Zero = meaning; return d }

// WithUnit returns d with its unit.
func (d Domain) WithUnit(u string) Domain { d.Unit = u; return d }

// Contains reports whether v lies in the domain.
func (d Domain) Contains(v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	if v == 0 && d.Zero != "" {
		return true
	}
	if d.Integer && v != math.Trunc(v) {
		return false
	}
	if v < d.Lo || (d.LoOpen && v == d.Lo) || v > d.Hi || (d.HiOpen && v == d.Hi) {
		return false
	}
	return true
}

// String describes the domain, e.g. "an integer in [1, 16777216] (0: 2·width)".
func (d Domain) String() string {
	l, r := "[", "]"
	if d.LoOpen {
		l = "("
	}
	if d.HiOpen {
		r = ")"
	}
	Hi := bound(d.Hi)
	if !d.Integer && d.Hi == math.MaxFloat64 {
		Hi, r = "∞", ")"
	}
	kind := "a finite number"
	if d.Integer {
		kind = "an integer"
	}
	s := fmt.Sprintf("%s in %s%s, %s%s", kind, l, bound(d.Lo), Hi, r)
	if d.Unit != "" {
		s += " " + d.Unit
	}
	if d.Zero != "" {
		s += ", or 0 (" + d.Zero + ")"
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

// Check returns the refusal of v, or nil.
func (d Domain) Check(v float64) error {
	if !d.Contains(v) {
		return fmt.Errorf("must be %s", d)
	}
	return nil
}

// Declared is implemented by every flag value with a declared domain.
type Declared interface {
	pflag.Value
	Domain() Domain
}

// UsageWith appends the domain to a flag's usage.
func UsageWith(usage string, d Domain) string {
	return usage + " [" + d.String() + "]"
}

// IntValue is an int flag with a domain.
type IntValue struct {
	p *int
	d Domain
}

func (v IntValue) String() string { return strconv.Itoa(*v.p) }
func (v IntValue) Type() string   { return "int" }
func (v IntValue) Domain() Domain { return v.d }
func (v IntValue) Set(s string) error {
	n, err := parseInt(s, v.d)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}

// parseInt parses an integer of domain d ("1e6" is accepted when it is
// an integer).
func parseInt(s string, d Domain) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<62 {
			return 0, fmt.Errorf("must be %s", d)
		}
		n = int64(f)
	}
	if err := d.Check(float64(n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Int64Value is an int64 flag with a domain.
type Int64Value struct {
	p *int64
	d Domain
}

func (v Int64Value) String() string { return strconv.FormatInt(*v.p, 10) }
func (v Int64Value) Type() string   { return "int64" }
func (v Int64Value) Domain() Domain { return v.d }
func (v Int64Value) Set(s string) error {
	n, err := parseInt(s, v.d)
	if err != nil {
		return err
	}
	*v.p = int64(n)
	return nil
}

// UintValue is a uint64 flag (a seed: every value is valid).
type UintValue struct{ p *uint64 }

func (v UintValue) String() string { return strconv.FormatUint(*v.p, 10) }
func (v UintValue) Type() string   { return "uint64" }
func (v UintValue) Domain() Domain { return AnyUint64 }
func (v UintValue) Set(s string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
	if err != nil {
		return fmt.Errorf("must be %s", AnyUint64)
	}
	*v.p = n
	return nil
}

// FloatValue is a float64 flag with a domain (never NaN or ±Inf).
type FloatValue struct {
	p *float64
	d Domain
}

func (v FloatValue) String() string { return strconv.FormatFloat(*v.p, 'g', -1, 64) }
func (v FloatValue) Type() string   { return "float" }
func (v FloatValue) Domain() Domain { return v.d }
func (v FloatValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return fmt.Errorf("must be %s", v.d)
	}
	if err := v.d.Check(f); err != nil {
		return err
	}
	*v.p = f
	return nil
}

// DurationValue is a time.Duration flag with a domain in seconds.
type DurationValue struct {
	p *time.Duration
	d Domain
}

func (v DurationValue) String() string { return v.p.String() }
func (v DurationValue) Type() string   { return "duration" }
func (v DurationValue) Domain() Domain { return v.d }
func (v DurationValue) Set(s string) error {
	t, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("must be a duration such as 30s or 2m, %s", v.d)
	}
	if err := v.d.Check(t.Seconds()); err != nil {
		return err
	}
	*v.p = t
	return nil
}

// MaxListLen is the most values a list flag takes.
const MaxListLen = 1024

// IntsValue is an int list flag (comma-separated; the first use replaces
// the default, later ones append) whose every value lies in a domain.
type IntsValue struct {
	p       *[]int
	d       Domain
	changed bool
}

func (v *IntsValue) String() string {
	parts := make([]string, len(*v.p))
	for i, n := range *v.p {
		parts[i] = strconv.Itoa(n)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
func (v *IntsValue) Type() string   { return "ints" }
func (v *IntsValue) Domain() Domain { return v.d }
func (v *IntsValue) Set(s string) error {
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
	if len(out) > MaxListLen {
		return fmt.Errorf("at most %d values", MaxListLen)
	}
	*v.p, v.changed = out, true
	return nil
}

// FloatsValue is a float list flag, as IntsValue.
type FloatsValue struct {
	p       *[]float64
	d       Domain
	changed bool
}

func (v *FloatsValue) String() string {
	parts := make([]string, len(*v.p))
	for i, f := range *v.p {
		parts[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
func (v *FloatsValue) Type() string   { return "floats" }
func (v *FloatsValue) Domain() Domain { return v.d }
func (v *FloatsValue) Set(s string) error {
	var out []float64
	if v.changed {
		out = append(out, *v.p...)
	}
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err == nil {
			err = v.d.Check(x)
		} else {
			err = fmt.Errorf("must be %s", v.d)
		}
		if err != nil {
			return fmt.Errorf("%.40q: %w", f, err)
		}
		out = append(out, x)
	}
	if len(out) > MaxListLen {
		return fmt.Errorf("at most %d values", MaxListLen)
	}
	*v.p, v.changed = out, true
	return nil
}

// IntVar binds an int flag with its domain; the default must lie in it.
func IntVar(fl *pflag.FlagSet, p *int, name string, value int, d Domain, usage string) {
	mustContain(name, d, float64(value))
	*p = value
	fl.Var(IntValue{p, d}, name, UsageWith(usage, d))
}

// Int64Var binds an int64 flag with its domain.
func Int64Var(fl *pflag.FlagSet, p *int64, name string, value int64, d Domain, usage string) {
	mustContain(name, d, float64(value))
	*p = value
	fl.Var(Int64Value{p, d}, name, UsageWith(usage, d))
}

// SeedVar binds a uint64 seed flag (every value is valid).
func SeedVar(fl *pflag.FlagSet, p *uint64, name string, value uint64, usage string) {
	*p = value
	fl.Var(UintValue{p}, name, UsageWith(usage, AnyUint64))
}

// FloatVar binds a float flag with its domain (finite numbers only).
func FloatVar(fl *pflag.FlagSet, p *float64, name string, value float64, d Domain, usage string) {
	mustContain(name, d, value)
	*p = value
	fl.Var(FloatValue{p, d}, name, UsageWith(usage, d))
}

// DurationVar binds a duration flag with its domain in seconds.
func DurationVar(fl *pflag.FlagSet, p *time.Duration, name string, value time.Duration, d Domain, usage string) {
	mustContain(name, d, value.Seconds())
	*p = value
	fl.Var(DurationValue{p, d}, name, UsageWith(usage, d))
}

// IntsVar binds an int list flag whose every value lies in d.
func IntsVar(fl *pflag.FlagSet, p *[]int, name string, value []int, d Domain, usage string) {
	for _, v := range value {
		mustContain(name, d, float64(v))
	}
	*p = value
	fl.Var(&IntsValue{p: p, d: d}, name, UsageWith(usage, d))
}

// FloatsVar binds a float list flag whose every value lies in d.
func FloatsVar(fl *pflag.FlagSet, p *[]float64, name string, value []float64, d Domain, usage string) {
	for _, v := range value {
		mustContain(name, d, v)
	}
	*p = value
	fl.Var(&FloatsValue{p: p, d: d}, name, UsageWith(usage, d))
}

// mustContain panics when a flag's own default lies outside its domain:
// a programming error of this package, caught by every test.
func mustContain(name string, d Domain, v float64) {
	if !d.Contains(v) {
		panic(fmt.Sprintf("flag --%s: default %v outside its domain %s", name, v, d))
	}
}

// ParseBytes parses a memory size: a non-negative decimal number with an
// optional unit (K, M, G, T or KiB… binary; KB, MB, GB, TB decimal; B).
func ParseBytes(s string) (int64, error) {
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

// BytesValue is a memory size flag: bytes, or a number with a unit.
type BytesValue struct{ P *int64 }

// BytesDomain is the domain of a memory size in bytes.
var BytesDomain = Domain{Lo: 1, Hi: 1 << 62, Integer: true, Unit: "bytes (or with a unit: KiB, MiB, GiB, TiB; KB, MB, GB, TB)"}

func (v BytesValue) String() string { return limits.Bytes(float64(*v.P)) }
func (v BytesValue) Type() string   { return "size" }
func (v BytesValue) Domain() Domain { return BytesDomain }
func (v BytesValue) Set(s string) error {
	n, err := ParseBytes(s)
	if err != nil {
		return fmt.Errorf("must be %s", BytesDomain)
	}
	*v.P = n
	return nil
}

// once is a string flag that may be given once: a repeated flag (two
// --label values, say) is an error, not a silent last-one-wins.
type once struct {
	p   *string
	set bool
}

func (o *once) String() string { return *o.p }
func (o *once) Type() string   { return "string" }
func (o *once) Set(s string) error {
	if o.set {
		return fmt.Errorf("given twice (%.40q and %.40q)", *o.p, s)
	}
	*o.p, o.set = s, true
	return nil
}

// OnceVar binds a string flag that may be given once: a second --NAME is
// refused (given twice) instead of replacing the first.
func OnceVar(fl *pflag.FlagSet, p *string, name, value, usage string) {
	*p = value
	fl.Var(&once{p: p}, name, usage)
}
