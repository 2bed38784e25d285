package nn

import "github.com/kernelkit/kernelkit/arch"

// The model specification lives in package arch (no GoMLX import), so that
// the native engine and package train build without GoMLX; the names
// below keep it reachable from this package, whose graph functions build
// the models it describes (Logits).

// ModelConfig describes a sequence classifier (arch.ModelConfig).
type ModelConfig = arch.ModelConfig

// SKIPlan holds the constants of a SKI-TNO (arch.SKIPlan; SKI applies it).
type SKIPlan = arch.SKIPlan

// Model kinds (arch.Kinds).
const (
	KindTNN         = arch.KindTNN
	KindSKITNN      = arch.KindSKITNN
	KindFDTNN       = arch.KindFDTNN
	KindPerformer   = arch.KindPerformer
	KindTransformer = arch.KindTransformer
	KindHRF         = arch.KindHRF
)

// Adapter kinds (ModelConfig.Adapter).
const (
	AdapterNone       = arch.AdapterNone
	AdapterBottleneck = arch.AdapterBottleneck
	AdapterSNNK       = arch.AdapterSNNK
)

// Feature families of the performer's attention (arch.FeatureMaps).
const (
	FeatureFavor = arch.FeatureFavor
	FeatureSimRF = arch.FeatureSimRF
	FeatureOPRF  = arch.FeatureOPRF
	FeatureSDERF = arch.FeatureSDERF
)
