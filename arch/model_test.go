package arch

import (
	"encoding/json"
	"testing"
)

// TestModelConfigJSON pins the JSON keys of ModelConfig: checkpoints and
// model files written before the type moved here must read back.
func TestModelConfigJSON(t *testing.T) {
	c := ModelConfig{Kind: KindHRF, Vocab: 1, Classes: 2, Length: 3, Width: 4, Depth: 5, Heads: 6, Expand: 7, Hidden: 8,
		RPEHidden: 9, RPELayers: 10, RPEAct: "gelu", Lambda: 0.5, SKIRank: 11, SKIFilter: 12, SKIGrid: 13, Features: 14,
		FeatureMap: "simrf", HRFM: 15, HRFN: 16, QKNorm: 0.25, Chunk: 17, Causal: true, Adapter: AdapterSNNK,
		AdapterSize: 18, AdapterSeed: 19, FreezeBackbone: true, FFT: true}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"kind":"hrf","vocab":1,"classes":2,"length":3,"width":4,"depth":5,"heads":6,"expand":7,"hidden":8,` +
		`"rpe_hidden":9,"rpe_layers":10,"rpe_act":"gelu","lambda":0.5,"ski_rank":11,"ski_filter":12,"ski_grid":13,` +
		`"features":14,"feature_map":"simrf","hrf_m":15,"hrf_n":16,"qk_norm":0.25,"chunk":17,"causal":true,` +
		`"adapter":"snnk","adapter_size":18,"adapter_seed":19,"freeze_backbone":true}`
	if string(js) != want {
		t.Errorf("JSON\n%s\nwant\n%s", js, want)
	}
	var back ModelConfig
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	c.FFT = false // not serialised
	if back != c {
		t.Errorf("read back %+v, want %+v", back, c)
	}
}

// TestValidate checks the defaults of every kind validate and a few
// refusals, with their messages.
func TestValidate(t *testing.T) {
	for _, k := range Kinds {
		c := ModelConfig{Kind: k, Vocab: 10, Classes: 3, Length: 16, Width: 8, Depth: 2}
		c.Defaults()
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", k, err)
		}
		if _, _, err := c.ParamCount(); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	for _, c := range []struct {
		cfg  ModelConfig
		want string
	}{
		{ModelConfig{Kind: "rnn", Vocab: 10, Classes: 3, Length: 16, Width: 8, Depth: 2}, `nn: unknown model kind "rnn" (want tnn, ski-tnn, fd-tnn, performer, transformer, hrf)`},
		{ModelConfig{Kind: KindTNN, Vocab: 10, Classes: 3, Length: 16, Width: 8, Depth: 2, RPEAct: "tanh"}, `nn: unknown activation "tanh" (want relu, gelu or silu)`},
		{ModelConfig{Kind: KindPerformer, Vocab: 10, Classes: 3, Length: 16, Width: 8, Depth: 2, FeatureMap: "favor#"}, `nn: unknown feature map "favor#" (want favor+, simrf, oprf, sderf)`},
		{ModelConfig{Kind: KindTNN, Vocab: 10, Classes: 1, Length: 16, Width: 8, Depth: 2}, "nn: need at least 2 classes, got 1"},
	} {
		cfg := c.cfg
		cfg.Defaults()
		if err := cfg.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: error %v, want %s", c.cfg, err, c.want)
		}
	}
}
