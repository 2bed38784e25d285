package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/internal/fitflags"
	"github.com/kernelkit/kernelkit/model"
	"github.com/kernelkit/kernelkit/nystrom"
)

// TestEveryFitFlag walks kernelkit fit's flag set (fitflags.Options, which
// `kernelkit fit` binds and nothing else: cmd/kernelkit's
// TestFitFlagsAreFitflags) and finds each flag on kernelkit-beam fit with
// the same type and default; --train and --test keep their meaning with
// usages of their own.
func TestEveryFitFlag(t *testing.T) {
	core := pflag.NewFlagSet("kernelkit fit", pflag.ContinueOnError)
	(&fitflags.Options{}).Bind(core)
	bf := pflag.NewFlagSet("kernelkit-beam fit", pflag.ContinueOnError)
	(&fitOptions{}).bind(bf)
	n := 0
	core.VisitAll(func(f *pflag.Flag) {
		n++
		g := bf.Lookup(f.Name)
		switch {
		case g == nil:
			t.Errorf("kernelkit-beam fit has no --%s", f.Name)
		case g.Value.Type() != f.Value.Type() || g.DefValue != f.DefValue:
			t.Errorf("--%s: %s default %q on Beam, %s default %q in kernelkit fit", f.Name, g.Value.Type(), g.DefValue, f.Value.Type(), f.DefValue)
		case g.Usage != f.Usage && f.Name != "train" && f.Name != "test":
			t.Errorf("--%s: usage %q on Beam, %q in kernelkit fit", f.Name, g.Usage, f.Usage)
		}
	})
	if n < 25 {
		t.Errorf("only %d flags of kernelkit fit", n)
	}
}

// TestFitRefusals: each option a Beam fit cannot do is refused in one line
// naming it, before any file is read or runner started; kernelkit fit's
// own refusals hold too.
func TestFitRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--stream"}, "--stream: a Beam fit always streams"},
		{[]string{"--exact"}, "--exact solves the n×n kernel system on one machine"},
		{[]string{"--device", "go"}, "--device go: Beam's workers accumulate on their own CPUs"},
		{[]string{"--gamma", "scale"}, "--gamma scale: kkbeam draws the feature map"},
		{[]string{"--exact", "--select", "gcv"}, "--exact has no λ selection"},
		{[]string{"--targets", "a", "--label", "y"}, "drop --label"},
		{[]string{"--map", "nope"}, `unknown map "nope"`},
		{[]string{"--train", "y/*.csv"}, "--input is --train's other name; give one"},
		{[]string{"--features", "0"}, `invalid argument "0" for "--features" flag: must be an integer in [1, 32768]`},
	} {
		var out, errOut bytes.Buffer
		args := append([]string{"fit", "--input", "x/*.csv"}, tc.args...)
		err := run(context.Background(), args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", tc.args, err, tc.want)
		}
	}
}

// TestFloat32Everywhere: --float32 asks kkbeam for what kernelkit fit
// --float32 does, the projection and each chunk's statistics in single
// precision (model.Options.Float32, which the plan carries to the
// workers' accumulators), where it used to reach the projection only.
func TestFloat32Everywhere(t *testing.T) {
	fl := pflag.NewFlagSet("fit", pflag.ContinueOnError)
	o := &fitOptions{}
	o.bind(fl)
	if err := fl.Parse([]string{"--input", "x/*.csv", "--float32", "--class-weight", "balanced", "--select", "kfold", "--folds", "3", "--grid", "0.1,1"}); err != nil {
		t.Fatal(err)
	}
	fo, err := o.fitOptions()
	if err != nil {
		t.Fatal(err)
	}
	if !fo.Model.Float32 || fo.Model.ClassWeight != "balanced" || fo.Model.Select != "kfold" || fo.Model.Folds != 3 || len(fo.Model.Grid) != 2 || fo.Model.Task != model.Auto {
		t.Errorf("model options %+v", fo.Model)
	}
	mp, err := fo.MapFor(16)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := mp.(*features.Map); !ok || !m.Spec().Float32 || m.Spec().Gamma != 1.0/16 {
		t.Errorf("map %T, want a float32 features.Map of γ 1/16", mp)
	}
}

// TestFitNewOptions runs kernelkit-beam fit on Prism with options it did
// not take before: --map (a registry map, drawn on the driver),
// --class-weight, --temperature-free kernels and --float32; the model file
// records the map and the class weights weigh the fit (the balanced and
// the unweighted fits differ).
func TestFitNewOptions(t *testing.T) {
	dir := t.TempDir()
	glob := writeLetterShards(t, dir, 600, 3)
	fit := func(name string, extra ...string) *model.Model {
		t.Helper()
		mpath := filepath.Join(dir, name)
		args := append([]string{"fit", "--train", glob, "--map", "rbf/sincos", "--features", "32", "--seed", "5", "--model", mpath, "--float32"}, extra...)
		var out, errOut bytes.Buffer
		if err := run(context.Background(), args, &out, &errOut); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if !strings.Contains(out.String(), "model written to") {
			t.Errorf("report %q", out.String())
		}
		f, err := os.Open(mpath)
		if err != nil {
			t.Fatal(err)
		}
		m, err := model.Load(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	plain := fit("plain.kk")
	weighted := fit("weighted.kk", "--class-weight", "balanced")
	for _, m := range []*model.Model{plain, weighted} {
		kind, _, err := features.Encode(m.Map)
		if err != nil {
			t.Fatal(err)
		}
		if sp, ok := m.Map.(*features.Map); !ok || sp.Spec().Form != "sincos" || !sp.Spec().Float32 || kind == "" {
			t.Errorf("map %T (%s), want rbf/sincos in float32", m.Map, kind)
		}
	}
	same := true
	for i, w := range plain.Linear.W.RawMatrix().Data {
		if w != weighted.Linear.W.RawMatrix().Data[i] {
			same = false
			break
		}
	}
	if same {
		t.Error("--class-weight balanced left the weights as they were")
	}
	// A data-dependent map: built on the driver from a sample of the rows
	// (here all 600; kkbeam's TestSampleMap checks the landmarks against
	// kernelkit fit's).
	ny := fit("ny.kk", "--map", "nystrom/kmeans", "--features", "16")
	if _, ok := ny.Map.(*nystrom.Map); !ok {
		t.Errorf("--map nystrom/kmeans: map %T", ny.Map)
	}
}
