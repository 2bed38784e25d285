package arch

import (
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/prf"
	"github.com/kernelkit/kernelkit/sampler"
)

// Feature families of the performer's attention (ModelConfig.FeatureMap).
// All four estimate the softmax kernel exp(qᵀk) without bias with
// positive features; they differ in variance (package prf).
const (
	// FeatureFavor is FAVOR+: φ(x) = exp(ωᵢᵀx − ‖x‖²/2)/√m with
	// orthogonal random features (the default; "" means the same).
	FeatureFavor = "favor+"
	// FeatureSimRF is FAVOR+'s map with simplex-coupled directions
	// (prf.Simplex, SimRF paper Sec. 3): only the draw of ω changes.
	FeatureSimRF = "simrf"
	// FeatureOPRF is the optimal positive random feature map (FAVOR++, CRT
	// paper Theorem 3.3): its scalar parameter A is fitted to the queries
	// and keys of each sequence and head (FitFeatureFamily).
	FeatureOPRF = "oprf"
	// FeatureSDERF is the symmetric dense-exponential map (FAVOR#, DERF
	// paper Theorem 4.3): per-direction parameters in the eigenbasis of
	// the queries' and keys' pair moment, fitted per sequence and head.
	FeatureSDERF = "sderf"
)

// FeatureMaps lists the feature families of the performer.
var FeatureMaps = []string{FeatureFavor, FeatureSimRF, FeatureOPRF, FeatureSDERF}

// FeatureFamily returns the family a ModelConfig.FeatureMap value names
// ("" is FeatureFavor), or an error for an unknown name.
func FeatureFamily(name string) (string, error) {
	switch n := strings.ToLower(strings.TrimSpace(name)); n {
	case "", FeatureFavor:
		return FeatureFavor, nil
	case FeatureSimRF, FeatureOPRF, FeatureSDERF:
		return n, nil
	}
	return "", fmt.Errorf("nn: unknown feature map %q (want %s)", name, strings.Join(FeatureMaps, ", "))
}

// FittedFamily reports whether the family has parameters fitted to the
// data (oprf, sderf), which the attention computes from each sequence's
// queries and keys.
func FittedFamily(family string) bool { return family == FeatureOPRF || family == FeatureSDERF }

// DrawFeatureProjection draws the m×d projection ω of the performer's
// feature family for the given seed (row-major): simplex random features
// (prf.Simplex) for simrf, orthogonal random features for the others, the
// matrix DrawFavorProjection draws (so that favor+, oprf and sderf models
// of one seed share their draws). A redraw policy calls it with a new
// seed.
func DrawFeatureProjection(family string, m, d int, seed uint64) ([]float64, error) {
	fam, err := FeatureFamily(family)
	if err != nil {
		return nil, err
	}
	if fam != FeatureSimRF {
		return DrawFavorProjection(m, d, seed)
	}
	mp, err := features.New(features.Config{Kernel: "softmax", Features: m, Sampler: prf.Simplex{}, Seed: seed}, d)
	if err != nil {
		return nil, err
	}
	return append([]float64(nil), mat.DenseCopyOf(mp.W()).RawMatrix().Data...), nil
}

// DrawFavorProjection draws the FAVOR+ projection (m×d) for the given
// seed: orthogonal random features (blocks of d orthogonal Gaussian rows
// with χ-distributed norms, sampler.Orthogonal), the same matrix as
// features.New(Config{Kernel: "softmax", Sampler: sampler.Orthogonal{}})
// draws. A redraw policy calls it with a new seed.
func DrawFavorProjection(m, d int, seed uint64) ([]float64, error) {
	mp, err := features.New(features.Config{Kernel: "softmax", Features: m, Sampler: sampler.Orthogonal{}, Seed: seed}, d)
	if err != nil {
		return nil, err
	}
	return append([]float64(nil), mat.DenseCopyOf(mp.W()).RawMatrix().Data...), nil
}

// HybridProjections are the fixed random projections of angular hybrid
// attention for inputs of dimension D: Pos (M×D) of the positive base
// estimator, Trig (M×D) of the trigonometric one and Tau (N×D) of the sgn
// features of the angular λ, row-major, drawn exactly as hybrid.Angular
// draws them.
type HybridProjections struct {
	M, N, D        int
	Pos, Trig, Tau []float64
}

// DrawHybridProjections draws the projections of hybrid.Angular(d, o):
// the positive base from o.Seed, the trigonometric base from o.Seed+1 (the
// same matrix when o.Shared) and the λ estimator's τ from o.Seed+2, all by
// o.Sampler (nil: iid Gaussian). A redraw policy calls it with a new seed.
// It returns an error when a count is not positive or the sampler fails.
func DrawHybridProjections(d int, o hybrid.Options) (*HybridProjections, error) {
	if o.M <= 0 || o.N <= 0 || d <= 0 {
		return nil, fmt.Errorf("nn: hybrid projections need positive M, N and d, got %d, %d, %d", o.M, o.N, d)
	}
	s := sampler.Or(o.Sampler)
	w1, err := s.Sample(o.M, d, o.Seed)
	if err != nil {
		return nil, err
	}
	w2 := w1
	if !o.Shared {
		if w2, err = s.Sample(o.M, d, o.Seed+1); err != nil {
			return nil, err
		}
	}
	tau, err := s.Sample(o.N, d, o.Seed+2)
	if err != nil {
		return nil, err
	}
	flat := func(r, c int, at func(i, j int) float64) []float64 {
		out := make([]float64, 0, r*c)
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				out = append(out, at(i, j))
			}
		}
		return out
	}
	return &HybridProjections{M: o.M, N: o.N, D: d,
		Pos:  flat(o.M, d, w1.At),
		Trig: flat(o.M, d, w2.At),
		Tau:  flat(o.N, d, tau.At)}, nil
}

// HybridFeatureDim returns the feature dimension 4M(1+N) of angular hybrid
// attention with M projections per base estimator and N sgn projections.
func HybridFeatureDim(m, n int) int { return 4 * m * (1 + n) }

// SNNKTower draws the fixed projection G (m×d, row-major) of the
// ReLU-SNNK input tower: the arc-cosine order-1 map's projection that
// snnk.NewReLU(d, m, nil, seed) draws.
func SNNKTower(m, d int, seed uint64) ([]float64, error) {
	mp, err := features.New(features.Config{Kernel: "arccos1", Features: m, Seed: seed}, d)
	if err != nil {
		return nil, err
	}
	return append([]float64(nil), mat.DenseCopyOf(mp.W()).RawMatrix().Data...), nil
}
