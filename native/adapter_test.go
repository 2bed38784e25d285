package native

import (
	"fmt"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/nn"
)

func TestAdaptersMatchGoMLX(t *testing.T) {
	for _, tc := range []struct {
		adapter, scope string
		size           int
		frozen         bool
		B, L           int
	}{
		{arch.AdapterBottleneck, "/block_0/adapter_mix", 4, false, 2, 8},
		{arch.AdapterBottleneck, "/block_0/adapter_ffn", 3, true, 2, 8},
		{arch.AdapterBottleneck, "/block_0/adapter_ffn", 6, false, 3, 100},
		{arch.AdapterSNNK, "/block_0/adapter_mix", 16, false, 2, 8},
		{arch.AdapterSNNK, "/block_0/adapter_ffn", 5, true, 2, 8},
		{arch.AdapterSNNK, "/block_0/adapter_mix", 12, false, 3, 100},
	} {
		name := fmt.Sprintf("%s %s size %d rows %d", tc.adapter, tc.scope, tc.size, tc.B*tc.L)
		t.Run(name, func(t *testing.T) {
			cfg := mixConfig(t, arch.KindPerformer, false, 0, 0, tc.frozen)
			cfg.Adapter, cfg.AdapterSize, cfg.AdapterSeed = tc.adapter, tc.size, 4
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			ad := NewAdapter[float64](cfg, tc.scope)
			mixCheckNames(t, cfg, tc.scope, ad.Params())
			mixFill(ad.Params(), 31)
			setFixed(t, cfg, ad.Params())
			ref := func(x *Node, p map[string]*Node, _ *Node) *Node {
				if tc.adapter == arch.AdapterSNNK {
					return nn.SNNKAdapter(x, p["tower"], p["a"], p["v"])
				}
				return nn.BottleneckAdapter(x, p["w_down"], p["b_down"], p["w_up"], p["b_up"])
			}
			c := mixCase{layer: ad, ref: ref, B: tc.B, L: tc.L, x: mixRand(7, 1, tc.B*tc.L*cfg.Width)}
			c.check(t, name)
			c.check(t, name+" (again)")
		})
	}
	cfg := mixConfig(t, arch.KindHRF, false, 0, 0, false)
	if NewAdapter[float32](cfg, "/block_0/adapter_mix") != nil {
		t.Error("a configuration without adapter got one")
	}
}
