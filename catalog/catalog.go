// Package catalog is the registry of every feature map kernelkit provides,
// by name: the plain random feature maps of package features, the hybrid
// estimators of package hybrid and the SNNK towers of package snnk. The CLI,
// the studies and the model files look maps up here, so a name means the
// same map everywhere, and a model file can hold any map whose kind has a
// decoder here.
//
// Names (case-insensitive; aliases in brackets):
//
//	rbf [rbf/cos], rbf/sincos, rbf/positive, rbf/hyperbolic   exp(−γ‖x−y‖²)
//	positive [softmax/positive, favor+], trig [softmax/trig],
//	hyperbolic [softmax/hyperbolic]                          exp(xᵀy)
//	arccos0, arccos1 [relu], arccos2                          arc-cosine kernels
//	angular    HRF Eq. 19, FLOP-matched to the budget          exp(xᵀy), asymmetric
//	gaussian   HRF Eq. 20 with M = I, c = 1, FLOP-matched       exp(xᵀy), asymmetric
//	bipolar    HRF App. F, σ = 1, r = Options.Norm              exp(xᵀy), asymmetric
//	clustered  HRF App. H zero-one, Options.Query/KeyCentres    exp(xᵀy), asymmetric
//	snnk/relu  ReLU-SNNK input tower (½ arccos1)               ½K₁(x, y)
//
// Maps whose dimension must be even (sincos, trig, hyperbolic) round an odd
// budget up by one.
package catalog

import (
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/sampler"
	"github.com/kernelkit/kernelkit/snnk"
)

// Default returns a new registry holding every map of kernelkit and the
// decoders of every stored map kind. Each call builds a fresh registry, so
// callers may add their own entries without affecting others.
func Default() *features.Registry {
	r := features.NewRegistry()
	must := func(err error) {
		if err != nil {
			panic(err) // a duplicate name here is a programming error
		}
	}
	plain := []struct {
		name, kernel, form, doc string
		aliases                 []string
	}{
		{"rbf", "rbf", "cos", "random Fourier features √2cos(ωᵀx+b)", []string{"rbf/cos"}},
		{"rbf/sincos", "rbf", "sincos", "random Fourier features [sin, cos]", nil},
		{"rbf/positive", "rbf", "positive", "positive features of the Gaussian kernel", nil},
		{"rbf/hyperbolic", "rbf", "hyperbolic", "hyperbolic positive features of the Gaussian kernel", nil},
		{"positive", "softmax", "positive", "FAVOR+ positive softmax features (Performer)", []string{"softmax/positive", "favor+", "softmax"}},
		{"trig", "softmax", "trig", "trigonometric softmax features (HRF Eq. 2)", []string{"softmax/trig"}},
		{"hyperbolic", "softmax", "hyperbolic", "hyperbolic positive softmax features (HRF Eq. 3)", []string{"softmax/hyperbolic"}},
		{"arccos0", "arccos0", "heaviside", "Heaviside features of the order-0 arc-cosine kernel", nil},
		{"arccos1", "arccos1", "relu", "ReLU features of the order-1 arc-cosine kernel", []string{"relu"}},
		{"arccos2", "arccos2", "relu2", "squared-ReLU features of the order-2 arc-cosine kernel", nil},
	}
	for _, p := range plain {
		p := p
		must(r.Register(features.Entry{Name: p.name, Aliases: p.aliases, Kernel: p.kernel, Doc: p.doc,
			New: func(o features.Options) (features.Pair, error) {
				D := o.Features
				if (p.form == "sincos" || p.form == "trig" || p.form == "hyperbolic") && D%2 == 1 {
					D++
				}
				mp, err := features.New(features.Config{Kernel: p.kernel, Form: p.form, Gamma: o.Gamma, Features: D,
					Sampler: o.Sampler, Seed: o.Seed, Float32: o.Float32}, o.InputDim)
				if err != nil {
					return nil, err
				}
				return features.Symmetric(mp), nil
			}}))
	}
	hyb := func(o features.Options) hybrid.Options {
		h := hybrid.MatchFLOPs(o.InputDim, o.Features)
		h.Sampler, h.Seed = o.Sampler, o.Seed
		return h
	}
	must(r.Register(features.Entry{Name: "angular", Kernel: "softmax", Asymmetric: true,
		Doc: "angular hybrid λ·FAVOR+ + (1−λ)·trig (HRF Eq. 19), FLOP-matched",
		New: func(o features.Options) (features.Pair, error) { return hybrid.Angular(o.InputDim, hyb(o)) }}))
	must(r.Register(features.Entry{Name: "gaussian", Kernel: "softmax", Asymmetric: true,
		Doc: "Gaussian hybrid with λ = exp(−‖x+y‖²/2) (HRF Eq. 20, M = I, c = 1), FLOP-matched",
		New: func(o features.Options) (features.Pair, error) { return hybrid.Gaussian(o.InputDim, 1, hyb(o)) }}))
	must(r.Register(features.Entry{Name: "bipolar", Kernel: "softmax", Asymmetric: true,
		Doc: "normalised bipolar Gaussian hybrid (HRF App. F, σ = 1, r = typical input norm), FLOP-matched",
		New: func(o features.Options) (features.Pair, error) {
			r := o.Norm
			if r == 0 {
				r = 1
			}
			return hybrid.GaussianBipolar(o.InputDim, 1, math.Max(r, 1e-3), hyb(o))
		}}))
	must(r.Register(features.Entry{Name: "clustered", Kernel: "softmax", Asymmetric: true,
		Doc: "zero-one clustered hybrid (HRF App. H), per-pair projections sized to the budget",
		New: func(o features.Options) (features.Pair, error) {
			if o.QueryCentres == nil || o.KeyCentres == nil {
				return nil, fmt.Errorf("catalog: the clustered estimator needs query and key cluster centres")
			}
			nk, _ := o.KeyCentres.Dims()
			// Each query evaluates nk per-pair estimators of M projections:
			// M = D/(2 nk) keeps the projection cost at that of D/2 projections.
			m := max(1, o.Features/(2*nk))
			return hybrid.NewClustered(o.QueryCentres, o.KeyCentres, hybrid.ClusterOptions{M: m, Sampler: o.Sampler, Seed: o.Seed})
		}}))
	must(r.Register(features.Entry{Name: "snnk/relu", Kernel: "arccos1",
		Doc: "ReLU-SNNK input tower ReLU(Gx)/√m, estimating ½K₁",
		New: func(o features.Options) (features.Pair, error) {
			t, err := snnk.NewReLU(o.InputDim, o.Features, sampler.Or(o.Sampler), o.Seed)
			if err != nil {
				return nil, err
			}
			return features.Symmetric(t), nil
		}}))
	must(r.RegisterDecoder(features.SpecKind, features.DecodeSpec))
	must(r.RegisterDecoder(snnk.ReLUSpecKind, snnk.DecodeReLU))
	return r
}
