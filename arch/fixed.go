package arch

import (
	"fmt"

	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/sampler"
)

// FixedVariable is a non-trainable random-feature variable of a model:
// its scope and name, the seed-derived value it must hold (float32,
// row-major, of dimensions Dims) and whether a redraw policy replaces it
// (attention projections) or not (SNNK towers).
type FixedVariable struct {
	Scope, Name string
	Dims        []int
	Value       []float32
	Redrawn     bool
}

// fixedNames are the names of the random-feature variables.
var fixedNames = map[string]bool{"omega": true, "omega_trig": true, "tau": true, "tower": true}

// IsFixedName reports whether a variable name is that of a random-feature
// variable (FixedVariables), which parameter counts leave out.
func IsFixedName(name string) bool { return fixedNames[name] }

// FixedVariables returns the random features of the model for the given
// seed and redraw count: the projection of every performer layer (drawn
// from seed, layer and redraw by the feature family's sampler; see
// DrawFeatureProjection), the three
// projections of every hrf layer (DrawHybridProjections with orthogonal
// rows and independent base projections, hybrid.Angular's variant I) and
// the SNNK adapter towers (from AdapterSeed and the adapter's position;
// never redrawn). Scopes are those of Variables (those nn.Logits
// creates under the root scope).
func (c *ModelConfig) FixedVariables(seed uint64, redraw int) ([]FixedVariable, error) {
	var out []FixedVariable
	for i := 0; i < c.Depth; i++ {
		block := fmt.Sprintf("/block_%d", i)
		switch c.Kind {
		case KindPerformer:
			om, err := DrawFeatureProjection(c.FeatureMap, c.Features, c.Width/c.Heads, mix(seed, uint64(i), uint64(redraw), 0x6661766f72))
			if err != nil {
				return nil, err
			}
			out = append(out, FixedVariable{block + "/mix", "omega", []int{c.Features, c.Width / c.Heads}, f32(om), true})
		case KindHRF:
			dh := c.Width / c.Heads
			p, err := DrawHybridProjections(dh, hybrid.Options{M: c.HRFM, N: c.HRFN, Sampler: sampler.Orthogonal{},
				Seed: mix(seed, uint64(i), uint64(redraw), 0x687266)})
			if err != nil {
				return nil, err
			}
			out = append(out,
				FixedVariable{block + "/mix", "omega", []int{c.HRFM, dh}, f32(p.Pos), true},
				FixedVariable{block + "/mix", "omega_trig", []int{c.HRFM, dh}, f32(p.Trig), true},
				FixedVariable{block + "/mix", "tau", []int{c.HRFN, dh}, f32(p.Tau), true})
		}
		if c.Adapter == AdapterSNNK {
			for j, sub := range []string{"/adapter_mix", "/adapter_ffn"} {
				g, err := SNNKTower(c.AdapterSize, c.Width, mix(c.AdapterSeed, uint64(i), uint64(j), 0x736e6e6b))
				if err != nil {
					return nil, err
				}
				out = append(out, FixedVariable{block + sub, "tower", []int{c.AdapterSize, c.Width}, f32(g), false})
			}
		}
	}
	return out, nil
}

// mix derives a seed from several values (splitmix64 steps).
func mix(vs ...uint64) uint64 {
	var h uint64 = 0x9e3779b97f4a7c15
	for _, v := range vs {
		h ^= v + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

// f32 converts values to float32, the dtype of the models' variables.
func f32(v []float64) []float32 {
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return f
}
