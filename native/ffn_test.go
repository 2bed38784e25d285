package native

import (
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // graph DSL

	"github.com/kernelkit/kernelkit/arch"
	"github.com/kernelkit/kernelkit/nn"
)

func TestFFNMatchesGoMLX(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hidden int
		frozen bool
		B, L   int
	}{{"default hidden", 0, false, 2, 8}, {"hidden 5", 5, false, 2, 8}, {"frozen backbone", 0, true, 2, 8},
		{"several row chunks", 0, false, 3, 100}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mixConfig(t, arch.KindTransformer, false, 0, 0, tc.frozen)
			if tc.hidden > 0 {
				cfg.Hidden = tc.hidden
			}
			f := NewFFN[float64](cfg, "/block_0/ffn")
			mixCheckNames(t, cfg, "/block_0/ffn", f.Params())
			mixFill(f.Params(), 21)
			ref := func(x *Node, p map[string]*Node, _ *Node) *Node {
				return nn.FFN(x, p["w1"], p["b1"], p["w2"], p["b2"])
			}
			c := mixCase{layer: f, ref: ref, B: tc.B, L: tc.L, x: mixRand(6, 1.5, tc.B*tc.L*cfg.Width)}
			c.check(t, tc.name)
			c.check(t, tc.name+" (again)")
		})
	}
}
