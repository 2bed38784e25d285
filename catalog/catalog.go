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
//	simrf [simplex]  FAVOR+ with simplex directions (SimRF)      exp(xᵀy)
//	oprf [favor++], sderf [favor#]  optimal positive and symmetric
//	           dense-exponential features, fitted (package prf)  exp(xᵀy)
//	aderf      asymmetric dense-exponential features, fitted    exp(xᵀy), asymmetric
//	snnk/relu  ReLU-SNNK input tower (½ arccos1)               ½K₁(x, y)
//	poly2 [tensorsketch, tensorsketch2], poly3 [tensorsketch3]
//	           TensorSketch (PolynomialCountSketch), c = 1       (γxᵀy + 1)^p
//	chi2 [additive-chi2]  sampled additive χ² map, n steps     Σ 2x_iy_i/(x_i+y_i)
//	skewed-chi2  skewed χ² random Fourier map, c = 1           Π 2√(x_i+1)√(y_i+1)/(x_i+y_i+2)
//	nystrom [nystrom/rbf], nystrom/softmax, nystrom/arccos0,
//	nystrom/arccos1, nystrom/arccos2   Nyström features of that kernel
//	           (γ = Options.Gamma for rbf), uniform landmarks; the suffix
//	           /kmeans or /leverage selects k-means or ridge-leverage-score
//	           landmarks (e.g. nystrom/kmeans, nystrom/arccos1/leverage)
//
// Maps whose dimension must be even (sincos, trig, hyperbolic) round an odd
// budget up by one. The polynomial maps take γ from Options.Gamma (which
// must be positive). The additive χ² map is deterministic: it has
// d(2n−1) features for n = max(1, ⌊(D/d + 1)/2⌋) steps (at most 1000) and
// the sample spacing of features.DefaultChi2Interval.
//
// The fitted maps (oprf, sderf, aderf) take their query/key statistics
// from Options.Data (its rows as queries and as keys) when given, else
// from isotropic inputs of norm Options.Norm (1 if unset), where SDERF is
// OPRF; linear attention refits them to each call's queries and keys
// (features.Adaptive).
//
// Temperature: every entry of the softmax kernel (positive, trig,
// hyperbolic, the hybrids, simrf, oprf, sderf, aderf, nystrom/softmax)
// takes Options.Temperature τ and then estimates exp(xᵀy/τ): Registry.Pair
// builds the entry on Options.Data, the centres and Norm scaled by 1/√τ
// (so the fitted maps are fitted on the scaled rows) and applies it to
// x/√τ (features.TemperPair); a tempered symmetric map is stored as
// features.TemperedSpecKind, which every registry decodes. Other entries
// refuse a temperature.
//
// Domains: the χ² maps need inputs in their kernels' domains
// (non-negative for chi2, above −1 for skewed-chi2); other inputs are
// errors of Transform. The Nyström entries are data-dependent: they need
// Options.Data, at least D sample rows of width d, from which they choose
// D landmarks with Options.Seed (package nystrom); without it New returns
// an error. Code that builds every entry without data (causal-attention
// tests, say) must skip the entries whose names start with "nystrom".
package catalog

import (
	"fmt"
	"math"

	"github.com/kernelkit/kernelkit/features"
	"github.com/kernelkit/kernelkit/hybrid"
	"github.com/kernelkit/kernelkit/kernel"
	"github.com/kernelkit/kernelkit/krr"
	"github.com/kernelkit/kernelkit/nystrom"
	"github.com/kernelkit/kernelkit/prf"
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
	registerPRF(r, must)
	registerSketches(r, must)
	registerNystrom(r, must)
	must(r.RegisterDecoder(features.SpecKind, features.DecodeSpec))
	must(r.RegisterDecoder(snnk.ReLUSpecKind, snnk.DecodeReLU))
	must(r.RegisterDecoder(features.TensorSketchSpecKind, features.DecodeTensorSketch))
	must(r.RegisterDecoder(features.AdditiveChi2SpecKind, features.DecodeAdditiveChi2))
	must(r.RegisterDecoder(features.SkewedChi2SpecKind, features.DecodeSkewedChi2))
	must(r.RegisterDecoder(nystrom.SpecKind, nystrom.Decode))
	must(r.RegisterDecoder(prf.SpecKind, prf.DecodeSpec))
	must(r.RegisterDecoder(krr.ColumnsSpecKind, krr.DecodeColumns))
	return r
}

// prfStats returns the statistics the prf maps are fitted to: those of
// Options.Data (as queries and as keys) when given, else isotropic ones of
// norm Options.Norm (1 if unset).
func prfStats(o features.Options) (*prf.Stats, error) {
	if o.Data != nil {
		if _, d := o.Data.Dims(); d != o.InputDim {
			return nil, fmt.Errorf("catalog: sample rows have %d columns, input dimension is %d", d, o.InputDim)
		}
		return prf.NewStats(o.Data, o.Data)
	}
	r := o.Norm
	if r == 0 {
		r = 1
	}
	return prf.IsotropicStats(o.InputDim, r)
}

// registerPRF adds the positive random features of package prf: simplex,
// optimal positive and dense-exponential.
func registerPRF(r *features.Registry, must func(error)) {
	must(r.Register(features.Entry{Name: "simrf", Aliases: []string{"softmax/simrf", "simplex"}, Kernel: "softmax",
		Doc: "simplex random features: FAVOR+ with simplex-coupled directions (Reid et al. 2023); ignores the sampler",
		New: func(o features.Options) (features.Pair, error) {
			mp, err := features.New(features.Config{Kernel: "softmax", Form: "positive", Features: o.Features,
				Sampler: prf.Simplex{}, Seed: o.Seed, Float32: o.Float32}, o.InputDim)
			if err != nil {
				return nil, err
			}
			return features.Symmetric(mp), nil
		}}))
	for _, p := range []struct {
		name, doc string
		aliases   []string
	}{
		{prf.OPRF, "optimal positive random features, FAVOR++ (CRT, Likhosherstov et al. 2022); A fitted to Options.Data or Norm, refitted per attention call", []string{"softmax/oprf", "favor++"}},
		{prf.SDERF, "symmetric dense-exponential random features, FAVOR# (Likhosherstov et al. 2023); fitted to Options.Data or Norm, refitted per attention call", []string{"softmax/sderf", "favor#"}},
	} {
		must(r.Register(features.Entry{Name: p.name, Aliases: p.aliases, Kernel: "softmax", Doc: p.doc,
			New: func(o features.Options) (features.Pair, error) {
				st, err := prfStats(o)
				if err != nil {
					return nil, err
				}
				mp, err := prf.New(prf.Config{Family: p.name, Features: o.Features, Sampler: o.Sampler, Seed: o.Seed}, st)
				if err != nil {
					return nil, err
				}
				return features.Symmetric(mp), nil
			}}))
	}
	must(r.Register(features.Entry{Name: prf.ADERF, Aliases: []string{"softmax/aderf"}, Kernel: "softmax", Asymmetric: true,
		Doc: "asymmetric dense-exponential random features (Likhosherstov et al. 2023); fitted to Options.Data or Norm, refitted per attention call",
		New: func(o features.Options) (features.Pair, error) {
			st, err := prfStats(o)
			if err != nil {
				return nil, err
			}
			return prf.NewPair(prf.Config{Family: prf.ADERF, Features: o.Features, Sampler: o.Sampler, Seed: o.Seed}, st)
		}}))
}

// registerSketches adds the TensorSketch polynomial maps and the χ² maps.
func registerSketches(r *features.Registry, must func(error)) {
	for _, p := range []struct {
		name    string
		degree  int
		aliases []string
	}{
		{"poly2", 2, []string{"tensorsketch", "tensorsketch2"}},
		{"poly3", 3, []string{"tensorsketch3"}},
	} {
		must(r.Register(features.Entry{Name: p.name, Aliases: p.aliases, Kernel: p.name,
			Doc: fmt.Sprintf("TensorSketch of the polynomial kernel (γxᵀy + 1)^%d (Pham & Pagh; PolynomialCountSketch)", p.degree),
			New: func(o features.Options) (features.Pair, error) {
				if !(o.Gamma > 0) || math.IsInf(o.Gamma, 0) {
					return nil, fmt.Errorf("catalog: %s needs a positive gamma, got %v", p.name, o.Gamma)
				}
				t, err := features.NewTensorSketch(features.TensorSketchConfig{Degree: p.degree, Gamma: o.Gamma, Coef0: 1,
					Features: o.Features, Seed: o.Seed}, o.InputDim)
				if err != nil {
					return nil, err
				}
				return features.Symmetric(t), nil
			}}))
	}
	must(r.Register(features.Entry{Name: "chi2", Aliases: []string{"additive-chi2"}, Kernel: "chi2",
		Doc: "sampled additive χ² map (Vedaldi & Zisserman; AdditiveChi2Sampler), deterministic, inputs ≥ 0",
		New: func(o features.Options) (features.Pair, error) {
			steps := min(1000, max(1, (o.Features/o.InputDim+1)/2))
			t, err := features.NewAdditiveChi2(o.InputDim, steps, 0)
			if err != nil {
				return nil, err
			}
			return features.Symmetric(t), nil
		}}))
	must(r.Register(features.Entry{Name: "skewed-chi2", Kernel: "skewed-chi2",
		Doc: "skewed χ² random Fourier map with c = 1 (Li et al.; SkewedChi2Sampler), inputs > −1",
		New: func(o features.Options) (features.Pair, error) {
			t, err := features.NewSkewedChi2(features.SkewedChi2Config{C: 1, Features: o.Features, Seed: o.Seed}, o.InputDim)
			if err != nil {
				return nil, err
			}
			return features.Symmetric(t), nil
		}}))
}

// registerNystrom adds the Nyström entries: one per kernel and landmark
// method, with landmarks chosen from Options.Data.
func registerNystrom(r *features.Registry, must func(error)) {
	kernels := []struct {
		name string
		k    func(o features.Options) kernel.Kernel
	}{
		{"rbf", func(o features.Options) kernel.Kernel { return kernel.RBF{Gamma: o.Gamma} }},
		{"softmax", func(features.Options) kernel.Kernel { return kernel.Softmax{} }},
		{"arccos0", func(features.Options) kernel.Kernel { return kernel.ArcCos{Order: 0} }},
		{"arccos1", func(features.Options) kernel.Kernel { return kernel.ArcCos{Order: 1} }},
		{"arccos2", func(features.Options) kernel.Kernel { return kernel.ArcCos{Order: 2} }},
	}
	for _, kc := range kernels {
		for _, method := range []nystrom.Method{nystrom.Uniform, nystrom.KMeans, nystrom.Leverage} {
			base := "nystrom/" + kc.name
			if kc.name == "rbf" {
				base = "nystrom"
			}
			name, aliases := base, []string{base + "/uniform"}
			if kc.name == "rbf" {
				aliases = append(aliases, "nystrom/rbf", "nystrom/rbf/uniform")
			}
			if method != nystrom.Uniform {
				name, aliases = base+"/"+string(method), nil
				if kc.name == "rbf" {
					aliases = []string{"nystrom/rbf/" + string(method)}
				}
			}
			must(r.Register(features.Entry{Name: name, Aliases: aliases, Kernel: kc.name,
				Doc: fmt.Sprintf("Nyström features of the %s kernel, %s landmarks from the (training) rows of Options.Data", kc.name, method),
				New: func(o features.Options) (features.Pair, error) {
					if o.Data == nil {
						return nil, fmt.Errorf("catalog: %s chooses its landmarks from sample rows: Options.Data is empty", name)
					}
					if _, d := o.Data.Dims(); d != o.InputDim {
						return nil, fmt.Errorf("catalog: %s: sample rows have %d columns, input dimension is %d", name, d, o.InputDim)
					}
					mp, err := nystrom.Fit(o.Data, nystrom.Config{Kernel: kc.k(o), Components: o.Features, Method: method, Seed: o.Seed})
					if err != nil {
						return nil, err
					}
					return features.Symmetric(mp), nil
				}}))
		}
	}
}
