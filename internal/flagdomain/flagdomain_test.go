package flagdomain

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestDomainRefusesOutside: a bound flag takes the values of its domain
// (0 where it has a declared meaning) and refuses the others while the
// flags are parsed, naming the valid set.
func TestDomainRefusesOutside(t *testing.T) {
	fl := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var n int
	var f float64
	IntVar(fl, &n, "n", 1, IntRange(1, 10).OrZero("none"), "a count")
	FloatVar(fl, &f, "f", 1, PositiveFloat, "a positive number")
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"--n", "10"}, true}, {[]string{"--n", "0"}, true}, {[]string{"--n", "11"}, false},
		{[]string{"--n", "1.5"}, false}, {[]string{"--n", "1e1"}, true},
		{[]string{"--f", "0"}, false}, {[]string{"--f", "NaN"}, false}, {[]string{"--f", "Inf"}, false}, {[]string{"--f", "1e-300"}, true},
	} {
		err := fl.Parse(c.args)
		if (err == nil) != c.ok {
			t.Errorf("%v: error %v, want ok %v", c.args, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "must be ") {
			t.Errorf("%v: %v does not state the domain", c.args, err)
		}
	}
	if got := IntRange(1, 10).OrZero("none").String(); got != "an integer in [1, 10], or 0 (none)" {
		t.Errorf("String %q", got)
	}
	if v, ok := fl.Lookup("n").Value.(Declared); !ok || v.Domain() != IntRange(1, 10).OrZero("none") {
		t.Errorf("--n is not declared with its domain")
	}
}

// TestParseBytes: sizes with units, and the refusals.
func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"512MiB": 512 << 20, "8GiB": 8 << 30, "1KB": 1000, "100": 100} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-1", "inf", "0x10", "8EiB", "1e30"} {
		if got, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", in, got)
		}
	}
}
