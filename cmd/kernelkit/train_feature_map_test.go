package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernelkit/kernelkit/train"
)

// TestTrainFeatureMap trains a performer with each non-default feature
// family (with redraws), records the family in the checkpoint and the
// report (names are case-insensitive), and refuses an unknown family or one given to another kind with
// a one-line error.
func TestTrainFeatureMap(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--task", "listops", "--model", "performer", "--length", "16", "--width", "8", "--depth", "1",
		"--features", "4", "--n-train", "16", "--n-eval", "0", "--n-test", "8", "--batch", "8", "--warmup", "1", "--steps", "2", "--redraw", "1"}
	for _, fm := range []string{"simrf", "oprf", "sderf"} {
		ck := filepath.Join(dir, fm+".ckpt")
		out, err := runTrain(t, append(base, "--feature-map", fm, "--checkpoint", ck, "--json")...)
		if err != nil {
			t.Fatalf("%s: %v", fm, err)
		}
		var rep struct {
			Kind       string `json:"model"`
			FeatureMap string `json:"feature_map"`
			Steps      int    `json:"steps"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Kind != "performer" || rep.FeatureMap != fm || rep.Steps != 2 {
			t.Fatalf("%s: report %+v (%v): %s", fm, rep, err, out)
		}
		c, err := train.ReadCheckpoint(ck)
		if err != nil {
			t.Fatal(err)
		}
		if c.Model.FeatureMap != fm {
			t.Errorf("checkpoint holds feature map %q, want %s", c.Model.FeatureMap, fm)
		}
		out, err = runTrain(t, append(base, "--feature-map", strings.ToUpper(fm))...)
		if err != nil || !strings.Contains(out, "performer ("+fm+" features)") {
			t.Errorf("%s: text report (%v):\n%s", fm, err, out)
		}
	}
	for _, bad := range [][]string{{"--feature-map", "favor#"}, {"--feature-map", "oprf", "--model", "transformer"}} {
		_, err := runTrain(t, append(append([]string(nil), base...), bad...)...)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("train %v: error %v, want one line", bad, err)
		}
	}
}
