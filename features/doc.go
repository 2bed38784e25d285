// Package features implements random feature maps z: R^d → R^D whose inner
// products estimate kernels: E[z(x)ᵀz(y)] = k(x, y).
//
// Every map follows Eq. 2 of the analog paper (and Eq. 4-6 of the HRF paper):
//
//	z(x) = h(x)/√m · [f₁(Wx+b), …, f_l(Wx+b)]
//
// with W an m×d projection drawn by a package sampler sampler (rows N(0, I)),
// b an optional bias, h a scaling function and l post-processing functions.
// The maps implemented are (D is the output dimension, m the number of
// projections):
//
//	Kernel     Form        h(x)                 f                    D     estimates
//	rbf        cos         √2                   cos(ωx+b), b~U[0,2π)  m     exp(−γ‖x−y‖²), ω~N(0,2γI)
//	rbf        sincos      1                    sin, cos             2m    exp(−γ‖x−y‖²)
//	rbf        positive    exp(−‖x'‖²)          exp                  m     exp(−γ‖x−y‖²), x' = √(2γ)x
//	rbf        hyperbolic  exp(−‖x'‖²)/√2       exp(u), exp(−u)      2m    exp(−γ‖x−y‖²)
//	softmax    trig        exp(‖x‖²/2)          sin, cos             2m    exp(xᵀy)  (HRF Eq. 2, Lemma 2.2)
//	softmax    positive    exp(−‖x‖²/2)         exp                  m     exp(xᵀy)  (FAVOR+, Performer)
//	softmax    hyperbolic  exp(−‖x‖²/2)/√2      exp(u), exp(−u)      2m    exp(xᵀy)  (HRF Eq. 3, Lemma 2.2)
//	arccos0    heaviside   √2                   Θ(u)                 m     1 − θ/π   (analog paper Supp. Table I)
//	arccos1    relu        √2                   max(u, 0)            m     ‖x‖‖y‖(sin θ+(π−θ)cos θ)/π
//	arccos2    relu2       √2                   max(u, 0)²           m     ‖x‖²‖y‖²J₂(θ)/π
//
// The Gaussian kernel is reached through softmax features by
// exp(−‖x−y‖²/2) = exp(−‖x‖²/2) SM(x, y) exp(−‖y‖²/2); with the trigonometric
// form the two exponentials cancel and the map is the sin/cos RFF map.
// (Supplementary Table I of the analog paper lists h(x) = √2·exp(−‖x‖²/2) for
// the [exp, exp(−·)] softmax map; with the 1/√m of Eq. 2 that estimates
// 4·SM(x, y), so kernelkit uses the unbiased 1/√2 of the HRF paper.)
//
// Variances (HRF Lemma 2.2, z = x+y, Δ = x−y): the trigonometric estimator of
// SM(x, y) has MSE exp(‖z‖²)SM⁻²(x,y)(1−exp(−‖Δ‖²))²/(2m), the hyperbolic
// positive estimator exp(‖z‖²)SM²(x,y)(1−exp(−‖z‖²))²/(2m), and the plain
// positive estimator SM²(x,y)(exp(‖z‖²)−1)/m. Functions TrigMSE,
// HyperbolicMSE and PositiveMSE give them.
//
// # Temperature
//
// The softmax kernel with temperature τ > 0 is
//
//	SM_τ(x, y) = exp(xᵀy/τ) = SM(x/√τ, y/√τ),
//
// so every estimator of SM gives one of SM_τ by applying the unscaled map
// to x/√τ: z_τ(x) = z(x/√τ), with E[z_τ(x)ᵀz_τ(y)] = exp(xᵀy/τ) and the
// variances above evaluated at x/√τ and y/√τ (e.g. the positive
// estimator's MSE is SM_τ²(x,y)(exp(‖x+y‖²/τ) − 1)/m). This is implemented
// once, for every map: Temper (and TemperPair) wraps a map so that it
// scales its inputs by 1/√τ; Draw tempers the map of a Config with
// Config.Temperature, and Registry.Pair the map of any softmax-kernel entry
// with Options.Temperature, fitting data-dependent maps (OPRF, DERF,
// Nyström) on the scaled rows. τ = 1 is the unscaled map itself, so maps
// without a temperature are unchanged. On standardised rows (‖x‖² ≈ d)
// the unscaled kernel exp(xᵀy) ranges over exp(±d) and the positive
// estimator's relative MSE at x = y is (exp(4‖x‖²) − 1)/m, so without a
// temperature the maps are useless beyond a few dimensions. Since
//
//	exp(xᵀy/τ) = exp(‖x‖²/2τ)·exp(−‖x−y‖²/2τ)·exp(‖y‖²/2τ),
//
// the tempered kernel is, up to the rows' own factors, the Gaussian kernel
// of γ = 1/(2τ); AutoTemperature's τ = d/2 matches the rbf default γ = 1/d
// (the Performer's d^(−1/4) on each side, τ = √d, is smaller: measured
// worse, see docs/estimators.md).
//
// Numerical stability: the positive and hyperbolic forms are computed in the
// log domain, exp(±ωᵀx − c‖x‖² − ½log m), so a large ωᵀx never overflows
// while the product with the small h(x) is representable (the naive product
// gives Inf·0 = NaN). When a feature itself is beyond float64, Transform
// returns an error and TransformScaled returns features divided by a per-row
// factor exp(s_i) together with s_i, so that z(x)ᵀz(y) = exp(s_x+s_y)·ẑ(x)ᵀẑ(y)
// exactly; attention normalisation cancels these factors (the same
// max-subtraction the Performer reference code uses, kept exact).
//
// # The feature-map contract
//
// Every package of kernelkit speaks the types of contract.go:
//
//   - Transformer: a map z: R^d → R^D on batches of rows, written into a
//     caller's matrix (Transform, Dim, InputDim); ScaledTransformer adds the
//     log-domain variant TransformScaled. *Map, the SNNK input towers
//     (package snnk) and every symmetric map of package catalog implement it;
//     model fits ridge regression on any Transformer.
//   - Pair: an asymmetric map whose estimate is Query(x)ᵀKey(y) (hybrid
//     random features, clustered estimators, attention with different query
//     and key maps). Symmetric(t) makes a Pair of a map; AsTransformer
//     recovers it.
//   - The projector seam: a map whose inputs enter only through projections
//     XWᵀ implements Projectable (or ProjectablePair); WithProjectors runs
//     every projection on a Projector made for its W by a NewProjector — an
//     emulated analog crossbar (analog.Projectors) today, an accelerator
//     next — and leaves the element-wise part unchanged.
//   - FromProjection builds a map around a given projection.
//   - Encoder and Registry: maps that can be stored implement Encoder (a
//     kind and a JSON spec); a Registry maps names to constructors and kinds
//     to decoders. catalog.Default() is the registry of every kernelkit map.
//
// # Errors
//
// One policy holds in every package of the module (as in gonum):
//
//   - Misuse of shapes by a Go caller — matrices of mismatched sizes passed
//     where the documentation states the sizes, vectors of different
//     lengths to a kernel — may panic, and the documentation says so.
//   - Everything that depends on data, files, flags or sizes returns an
//     error: a parse error, a non-finite input, an overflowing feature
//     (ErrOverflow), a singular system, a size beyond the documented limits
//     (checked, overflow included, before memory is allocated). No error is
//     discarded; functions that clean up after an error join the cleanup's
//     error to it.
//   - Errors are one short line, prefixed by the package name, naming the
//     file, line and column where they come from input, and quote at most a
//     short prefix of offending text.
//
// Transforms work on batches of rows: the projection of a chunk of rows is
// one GEMM (through gonum's blas64, so an OpenBLAS backend installed with
// package blas speeds it up) and the element-wise functions are applied
// to the chunk while it is in cache; chunks run on all cores.
package features
