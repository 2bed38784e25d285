package fitflags

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// parse binds the flags of a fit and parses args.
func parse(t *testing.T, args ...string) (*Options, *pflag.FlagSet) {
	t.Helper()
	o := &Options{}
	fl := pflag.NewFlagSet("fit", pflag.ContinueOnError)
	o.Bind(fl)
	if err := fl.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return o, fl
}

// TestJobFloat32: --float32 asks for single precision in the projection
// and in the statistics (model.Options.Float32), with the model options
// of the other flags.
func TestJobFloat32(t *testing.T) {
	o, fl := parse(t, "--train", "x.csv", "--float32", "--lambda", "0.25", "--select", "gcv", "--folds", "3",
		"--no-standardize", "--calibrate", "--class-weight", "balanced", "--gamma", "scale")
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	j := o.Job()
	m := j.Model
	if !m.Float32 || m.Lambda != 0.25 || m.Select != "gcv" || m.Folds != 3 || m.Standardize || !m.Calibrate || m.ClassWeight != "balanced" || !j.GammaScale {
		t.Errorf("job %+v", j)
	}
	c, err := o.Feat.Config(fl, 4)
	if err != nil || !c.Float32 || c.Gamma != 0.25 {
		t.Errorf("config %+v, %v; want float32, γ 1/4 until the fit replaces it", c, err)
	}
}

// TestCheckRefuses: combinations no fit can run are refused before
// anything is read, in one line naming the flags.
func TestCheckRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--train is required"},
		{[]string{"--train", "x", "--map", "nope"}, `unknown map "nope"`},
		{[]string{"--train", "x", "--exact", "--stream"}, "drop --stream"},
		{[]string{"--train", "x", "--exact", "--select", "gcv"}, "--exact has no λ selection"},
		{[]string{"--train", "x", "--targets", "a,b", "--label", "y"}, "drop --label"},
		{[]string{"--train", "x", "--exact", "--calibrate"}, "drop --calibrate"},
		{[]string{"--train", "x", "--exact", "--weight-column", "w"}, "unweighted"},
		{[]string{"--train", "x", "--exact", "--device", "go"}, "--exact runs on the CPU"},
	} {
		o, _ := parse(t, tc.args...)
		if err := o.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}
