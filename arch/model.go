package arch

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/internal/limits"
)

// Model kinds.
const (
	KindTNN         = "tnn"         // TNN: RPE MLP with decay bias, Toeplitz product
	KindSKITNN      = "ski-tnn"     // SKI-TNO: sparse convolution + SKI low rank
	KindFDTNN       = "fd-tnn"      // FD-TNO: RPE on the frequency response
	KindPerformer   = "performer"   // Transformer with FAVOR+ attention
	KindTransformer = "transformer" // Transformer with softmax attention
	KindHRF         = "hrf"         // Transformer with angular hybrid random feature attention
)

// Kinds lists the model kinds.
var Kinds = []string{KindTNN, KindSKITNN, KindFDTNN, KindPerformer, KindTransformer, KindHRF}

// Adapter kinds.
const (
	AdapterNone       = ""
	AdapterBottleneck = "bottleneck" // Houlsby bottleneck adapter
	AdapterSNNK       = "snnk"       // ReLU-SNNK adapter with gating vector
)

// ModelConfig describes a sequence classifier: token embedding (plus a
// learned position embedding for the attention kinds), Depth blocks of the
// given kind, mean pooling over the real (non-padding, token ≠ 0) positions
// and a linear classifier. TNN kinds use TNN blocks x += GTU(norm(x)), x +=
// GLU(norm(x)); attention kinds use pre-norm Transformer blocks x +=
// MHA(norm(x)), x += FFN(norm(x)). Adapters, if any, act on every
// sub-block's output before the residual sum (Houlsby placement).
type ModelConfig struct {
	Kind    string `json:"kind"`
	Vocab   int    `json:"vocab"`
	Classes int    `json:"classes"`
	Length  int    `json:"length"`
	Width   int    `json:"width"`
	Depth   int    `json:"depth"`
	// Heads is the number of attention heads (attention kinds).
	Heads int `json:"heads,omitempty"`
	// Expand is the GTU expansion ratio (TNN kinds; the token mixer acts
	// on Expand·Width channels).
	Expand int `json:"expand,omitempty"`
	// Hidden is the width of the GLU (TNN kinds) or FFN (attention kinds).
	Hidden int `json:"hidden,omitempty"`
	// RPEHidden and RPELayers shape the RPE MLP of tnn and fd-tnn: RPELayers
	// hidden layers of RPEHidden units; RPEAct its activation.
	RPEHidden int    `json:"rpe_hidden,omitempty"`
	RPELayers int    `json:"rpe_layers,omitempty"`
	RPEAct    string `json:"rpe_act,omitempty"`
	// Lambda is the decay bias λ of tnn and the time-warp λ of ski-tnn.
	Lambda float64 `json:"lambda,omitempty"`
	// SKIRank (inducing points r), SKIFilter (sparse filter width m) and
	// SKIGrid (grid points of the piecewise linear RPE) shape ski-tnn.
	SKIRank   int `json:"ski_rank,omitempty"`
	SKIFilter int `json:"ski_filter,omitempty"`
	SKIGrid   int `json:"ski_grid,omitempty"`
	// Features is the number of FAVOR+ random features per head.
	Features int `json:"features,omitempty"`
	// FeatureMap names the performer's feature family (FeatureMaps:
	// favor+, simrf, oprf, sderf; see FamilyAttention). Empty is favor+,
	// to which Defaults normalises it, so that configurations written
	// before the field existed read back unchanged; other kinds must leave
	// it empty (or favor+).
	FeatureMap string `json:"feature_map,omitempty"`
	// HRFM and HRFN shape the angular hybrid attention of hrf: HRFM
	// projections for each base estimator (positive and trigonometric) and
	// HRFN sgn projections for the angular λ, 4·HRFM·(1+HRFN) features per
	// head (see HybridFeatures). Other kinds keep them at zero.
	HRFM int `json:"hrf_m,omitempty"`
	HRFN int `json:"hrf_n,omitempty"`
	// QKNorm, if positive, L2-normalises every head's queries and keys
	// (attention kinds) to norm QKNorm·d_h^(1/4), so that the attention
	// logits qᵀk/√d_h are QKNorm²·cos θ: the query/key normalisation the HRF
	// paper applies (App. K) to keep the random-feature estimators in their
	// accurate range. Zero selects the kind's default (1 for hrf, none for
	// the others); negative: none.
	QKNorm float64 `json:"qk_norm,omitempty"`
	// Chunk is the block length of causal FAVOR+ attention.
	Chunk int `json:"chunk,omitempty"`
	// Causal selects causal token mixing (tnn, fd-tnn, attention kinds).
	Causal bool `json:"causal,omitempty"`
	// Adapter, AdapterSize (bottleneck width or SNNK random features) and
	// AdapterSeed configure adapters.
	Adapter     string `json:"adapter,omitempty"`
	AdapterSize int    `json:"adapter_size,omitempty"`
	AdapterSeed uint64 `json:"adapter_seed,omitempty"`
	// FreezeBackbone makes every variable but the adapters and the
	// classifier non-trainable (adapter fine-tuning).
	FreezeBackbone bool `json:"freeze_backbone,omitempty"`
	// FFT uses the FFT forms of the Toeplitz products (XLA backends).
	FFT bool `json:"-"`
}

// Defaults fills unset fields with the defaults: Heads 2, Expand 1,
// Hidden = 2·Width, RPE 1 hidden layer of 32 ReLU units, λ = 0.99, SKI r
// = 32 (at most Length), m = 16, 33 grid points, 32 FAVOR+ features, chunk
// 64, 16 adapter features or bottleneck units; for hrf, HRFM and HRFN
// FLOP-matched to Features per head by hybrid.MatchFLOPs (as catalog's
// "angular": 6 and 4 for heads of width 16 and 32 features; other kinds:
// both set to zero, so that configurations compare equal whatever the
// flags) and query/key normalisation to norm 1 (QKNorm).
func (c *ModelConfig) Defaults() {
	set := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	set(&c.Heads, 2)
	set(&c.Expand, 1)
	set(&c.Hidden, 2*c.Width)
	set(&c.RPEHidden, 32)
	set(&c.RPELayers, 1)
	if c.RPEAct == "" {
		c.RPEAct = "relu"
	}
	if c.Lambda == 0 {
		c.Lambda = 0.99
	}
	set(&c.SKIRank, min(32, c.Length))
	set(&c.SKIFilter, 16)
	set(&c.SKIGrid, 33)
	set(&c.Features, 32)
	set(&c.Chunk, 64)
	set(&c.AdapterSize, 16)
	if fam, err := FeatureFamily(c.FeatureMap); err == nil && fam == FeatureFavor {
		c.FeatureMap = "" // favor+, as before the field existed
	} else if err == nil {
		c.FeatureMap = fam
	}
	if c.Kind == KindHRF && c.QKNorm == 0 {
		c.QKNorm = 1
	}
	if c.Kind == KindHRF {
		if c.HRFM == 0 || c.HRFN == 0 {
			o := hybrid.MatchFLOPs(c.Width/max(c.Heads, 1), c.Features)
			set(&c.HRFM, o.M)
			set(&c.HRFN, o.N)
		}
	} else {
		c.HRFM, c.HRFN = 0, 0
	}
}

// MaxRPELayers is the largest number of hidden layers of a TNO's RPE MLP
// that Validate accepts: the TNN papers use 1 to 6, and the model's
// variables are listed layer by layer before anything is allocated.
const MaxRPELayers = 1024

// MaxDepth is the largest number of blocks Validate accepts: the papers'
// models have 2 to 12, and the variables are listed block by block before
// anything is allocated.
const MaxDepth = 1024

// checkListed checks the counts by which the variables are listed, one
// by one: RPELayers against [0, MaxRPELayers] and Depth against
// [0, MaxDepth] (Validate requires a positive depth).
func (c *ModelConfig) checkListed() error {
	if c.RPELayers < 0 || c.RPELayers > MaxRPELayers {
		return fmt.Errorf("nn: RPE layers must lie in [0, %d], got %d", MaxRPELayers, c.RPELayers)
	}
	if c.Depth < 0 || c.Depth > MaxDepth {
		return fmt.Errorf("nn: depth must lie in [1, %d], got %d", MaxDepth, c.Depth)
	}
	return nil
}

// Validate checks the configuration (after Defaults).
func (c *ModelConfig) Validate() error {
	known := false
	for _, k := range Kinds {
		known = known || c.Kind == k
	}
	if !known {
		return fmt.Errorf("nn: unknown model kind %q (want %s)", c.Kind, strings.Join(Kinds, ", "))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"vocabulary", c.Vocab}, {"classes", c.Classes}, {"length", c.Length}, {"width", c.Width}, {"depth", c.Depth},
		{"heads", c.Heads}, {"expand", c.Expand}, {"hidden", c.Hidden}, {"RPE hidden", c.RPEHidden},
		{"SKI rank", c.SKIRank}, {"SKI filter", c.SKIFilter}, {"SKI grid", c.SKIGrid}, {"features", c.Features},
		{"chunk", c.Chunk}, {"adapter size", c.AdapterSize}} {
		if f.v <= 0 {
			return fmt.Errorf("nn: %s must be positive, got %d", f.name, f.v)
		}
		if err := limits.Dim("nn: "+f.name, f.v); err != nil {
			return err
		}
	}
	if fam, err := FeatureFamily(c.FeatureMap); err != nil {
		return err
	} else if fam != FeatureFavor && c.Kind != KindPerformer {
		return fmt.Errorf("nn: feature map %s applies to the performer only, not %s", fam, c.Kind)
	}
	if c.Classes < 2 {
		return fmt.Errorf("nn: need at least 2 classes, got %d", c.Classes)
	}
	if err := c.checkListed(); err != nil {
		return err
	}
	if err := CheckActivation(c.RPEAct); err != nil {
		return err
	}
	if math.IsNaN(c.QKNorm) || math.IsInf(c.QKNorm, 0) {
		return fmt.Errorf("nn: query/key norm must be finite, got %v", c.QKNorm)
	}
	if !(c.Lambda > 0 && c.Lambda < 1) {
		return fmt.Errorf("nn: λ must lie in (0, 1), got %v", c.Lambda)
	}
	if c.IsAttention() && c.Width%c.Heads != 0 {
		return fmt.Errorf("nn: width %d is not a multiple of %d heads", c.Width, c.Heads)
	}
	switch c.Kind {
	case KindSKITNN:
		if c.Causal {
			return errors.New("nn: ski-tnn is bidirectional only (the SKI paper's App. B: causal masking negates SKI's benefits); use fd-tnn")
		}
		if c.SKIRank < 2 || c.SKIRank > c.Length {
			return fmt.Errorf("nn: SKI rank must lie in [2, length %d], got %d", c.Length, c.SKIRank)
		}
		if c.SKIGrid < 3 || c.SKIGrid%2 == 0 {
			return fmt.Errorf("nn: SKI grid must be odd and ≥ 3, got %d", c.SKIGrid)
		}
	case KindPerformer, KindHRF:
		if c.Causal && c.Length%min(c.Chunk, c.Length) != 0 {
			return fmt.Errorf("nn: causal chunk %d must divide the length %d", c.Chunk, c.Length)
		}
	}
	if c.Kind == KindHRF {
		for _, f := range []struct {
			name string
			v    int
		}{{"HRF projections M", c.HRFM}, {"HRF sgn projections N", c.HRFN}} {
			if f.v <= 0 {
				return fmt.Errorf("nn: %s must be positive, got %d", f.name, f.v)
			}
			if err := limits.Dim("nn: "+f.name, f.v); err != nil {
				return err
			}
		}
		if _, err := limits.Matrix("nn: HRF features", HybridFeatureDim(c.HRFM, c.HRFN), c.Length); err != nil {
			return err
		}
	}
	if !c.IsAttention() { // the attention kinds have no Toeplitz matrices
		if _, err := limits.Matrix("nn: Toeplitz matrices", c.Length*c.Length, c.Width*c.Expand); err != nil {
			return err
		}
	}
	switch c.Adapter {
	case AdapterNone, AdapterBottleneck, AdapterSNNK:
	default:
		return fmt.Errorf("nn: unknown adapter %q (want bottleneck or snnk)", c.Adapter)
	}
	return nil
}

// IsAttention reports whether the kind is an attention model.
func (c *ModelConfig) IsAttention() bool {
	return c.Kind == KindPerformer || c.Kind == KindTransformer || c.Kind == KindHRF
}

// CheckActivation returns an error unless name (in any case) names an
// activation of the RPE MLP (ModelConfig.RPEAct): relu, gelu (exact, by
// erf) or silu (x·σ(x), also named swish), the activations of package
// toeplitz's MLPs and of nn.ActivationByName.
func CheckActivation(name string) error {
	switch strings.ToLower(name) {
	case "relu", "gelu", "silu", "swish":
		return nil
	}
	return fmt.Errorf("nn: unknown activation %q (want relu, gelu or silu)", name)
}
