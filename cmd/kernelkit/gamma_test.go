package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGammaOnlyWhereUsed checks that --gamma is refused, in one line, for
// kernels and maps without a bandwidth (it used to be accepted and
// ignored), and that fit --json reports γ only for maps that use it.
func TestGammaOnlyWhereUsed(t *testing.T) {
	dir := t.TempDir()
	train := letterCSV(t, dir, "train.csv", 0, 300)
	for _, args := range [][]string{
		{"--kernel", "softmax", "--gamma", "0.1"},
		{"--kernel", "arccos1", "--gamma", "scale"},
		{"--map", "oprf", "--gamma", "1"},
		{"--map", "chi2", "--gamma", "1"},
	} {
		_, err := run(t, append([]string{"fit", "--train", train, "--features", "16"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "has none") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line saying the kernel has no bandwidth", args, err)
		}
	}
	for _, c := range []struct {
		args []string
		want float64
	}{
		{[]string{"--map", "positive"}, 0},
		{[]string{"--map", "rbf", "--gamma", "0.25"}, 0.25},
		{[]string{"--map", "poly2", "--gamma", "0.5"}, 0.5},
	} {
		out, err := run(t, append([]string{"fit", "--train", train, "--features", "16", "--json"}, c.args...)...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		var rep struct {
			Gamma float64 `json:"gamma"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %v in %s", c.args, err, out)
		}
		if rep.Gamma != c.want {
			t.Errorf("%v: reported gamma %v, want %v", c.args, rep.Gamma, c.want)
		}
	}
}
