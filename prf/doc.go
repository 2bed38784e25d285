// Package prf implements the positive random features of the softmax kernel
// SM(x, y) = exp(xᵀy) that came after FAVOR+: simplex random features
// (SimRFs), optimal positive random features (OPRFs, FAVOR++) and
// dense-exponential random features (SDERFs and ADERFs, FAVOR#). All are
// unbiased, positive and, with their fitted parameters, bounded in ω; they
// differ from FAVOR+ only in variance.
//
// # Simplex random features
//
// Reid, Choromanski, Likhosherstov and Weller, "Simplex Random Features",
// ICML 2023. The FAVOR+ map z(x) = m^(−1/2)·exp(Wx − ‖x‖²/2) with the rows
// of W coupled in blocks of d: w_i = ρ_i·R·s_i, s_i the vertices of a
// regular simplex centred at 0 (s_iᵀs_j = −1/(d−1)), R a Haar rotation,
// ρ_i iid χ(d) (Sec. 3). Every row is marginally N(0, I_d), so the
// estimate stays unbiased, and among couplings of the directions that do
// not depend on the norms it has the lowest MSE (Theorem 3.3), lower than
// orthogonal random features at the same cost. Simplex is the sampler;
// the map is the positive map of package features drawn with it (catalog
// name simrf), so model files, device forms and the projector seam come
// with it.
//
// # Generalised exponential and optimal positive features
//
// Likhosherstov, Choromanski, Dubey, Liu, Sarlos and Weller, "Chefs' Random
// Tables: Non-Trigonometric Random Features", NeurIPS 2022. For
// ω ~ N(0, I_d) the generalised exponential random feature (GERF)
//
//	f(ω, x) = D·exp(A‖ω‖² + B·ωᵀx + C‖x‖²),  B = √(1−4A), C = −1/2, D = (1−4A)^(d/4)
//
// satisfies E[f(ω, x)f(ω, y)] = exp(xᵀy) for every A < 1/4 (by
// E exp(ωᵀPω + bᵀω) = det(I−2P)^(−1/2)·exp(bᵀ(I−2P)⁻¹b/2)), A = 0 being
// FAVOR+. Its second moment is finite for A < 1/8 and equals
//
//	E[f(ω,x)²f(ω,y)²] = ((1−4A)²/(1−8A))^(d/2)·exp(2(1−4A)‖x+y‖²/(1−8A) − ‖x‖² − ‖y‖²),
//
// so the variance of the m-feature estimate is that minus exp(2xᵀy), over
// m (CRT Theorem 3.2). The mean over query/key pairs of its logarithm is
// minimised by A* of OptimalA with φ = mean ‖x+y‖²/d (CRT Theorem 3.3):
//
//	A* = (1 − 2φ − √((2φ+1)² + 8φ))/16 < 0,
//
// which gives the OPRF: positive, and bounded in ω since A* < 0: the
// exponent is largest at ω = √(1−4A)x/(−2A), so f(ω, x) ≤
// D·exp(‖x‖²((1−4A)/(−4A) − 1/2)) (Map.Bound). FitOPRF computes
// φ from the statistics of a batch (Stats): tr M_x + tr M_y + 2μ_xᵀμ_y,
// O((n+p)d) — the FAVOR++ parameter of one attention call.
//
// # Dense-exponential random features
//
// Likhosherstov et al., "Dense-Exponential Random Features: Sharp Positive
// Estimators of the Gaussian Kernel", NeurIPS 2023 (FAVOR#). The scalars
// become matrices, f⁽ᵏ⁾(ω, x) = D·exp(ωᵀAω + ωᵀB⁽ᵏ⁾x + xᵀC⁽ᵏ⁾x), unbiased
// when 8A ≺ I, B⁽¹⁾ᵀ(I−4A)⁻¹B⁽²⁾ = I, C⁽ᵏ⁾ = −½B⁽ᵏ⁾ᵀ(I−4A)⁻¹B⁽ᵏ⁾ and
// D = det(I−4A)^(1/4) (Theorem 4.1). This package uses the two closed-form
// optima, derived as follows.
//
// Symmetric (SDERF, B⁽¹⁾ = B⁽²⁾). Write A = diag(a) in ω's coordinates
// and B = diag(√(1−4a))·T with T orthogonal. The mean log second moment
// over the pairs is Σ_l [log(1−4a_l) − ½log(1−8a_l)] + 2·tr(T M₃ Tᵀ
// diag((1−4a)/(1−8a))) + const, M₃ the mean of (x+y)(x+y)ᵀ. For fixed a
// the trace is smallest with T = Qᵀ from M₃ = QΛQᵀ, which diagonalises it
// (rearrangement: large eigenvalues against small (1−4a_l)/(1−8a_l)), and
// then each direction is the one-dimensional OPRF problem with φ = λ_l:
// a_l = OptimalA(λ_l, 1) — the DERF paper's Theorem 4.3 formula. FitSDERF
// returns a and T; the feature is exp(Σ_l a_l ω_l² + Σ_l √(1−4a_l)·ω_l(Tx)_l
// − ‖x‖²/2)·D/√m. With isotropic statistics (M₃ ∝ I) SDERF is OPRF.
//
// Asymmetric (ADERF, A = aI). Then B⁽¹⁾ = √(1−4a)·P and B⁽²⁾ =
// √(1−4a)·P⁻ᵀ for an invertible P, so ADERF is the GERF of Px for queries
// and of P⁻ᵀy for keys ((Px)ᵀ(P⁻ᵀy) = xᵀy), and its variance is the
// GERF's with ‖Px + P⁻ᵀy‖² in place of ‖x+y‖². The mean of that over
// the pairs is tr(PM_xPᵀ) + tr(P⁻ᵀM_yP⁻¹) + 2μ_xᵀμ_y; with M_x = R_xR_xᵀ,
// M_y = R_yR_yᵀ and R_xᵀR_y = UΣVᵀ it is at least 2·tr Σ + 2μ_xᵀμ_y
// (‖X‖² + ‖Y‖² ≥ 2‖XᵀY‖_* for X = PR_x, Y = P⁻ᵀR_y), reached by
// P = Σ^(1/2)UᵀR_x⁻¹, P⁻ᵀ = Σ^(1/2)VᵀR_y⁻¹ (Theorem 4.2); a =
// OptimalA(2·tr Σ + 2μ_xᵀμ_y, d). FitADERF ridges the moments by a relative
// 1e-6 so that rank-deficient batches stay invertible.
//
// # Evaluation and stability
//
// Every map is evaluated in one form (side.go):
//
//	z_j(x) = exp((W_eff x)_j + off_j − ½q(x)),  W_eff = W·diag(√(1−4a))·T,
//	off_j = Σ_l a_l W_jl² + ¼Σ_l log(1−4a_l) − ½log m,  q(x) = ‖Tx‖²,
//
// one GEMM and one exponential per feature, in the log domain: nothing
// overflows before the exponential, Transform returns features.ErrOverflow
// when a feature itself is beyond float64, and TransformScaled returns
// features scaled by exp(−s_i) with s_i the row's largest exponent (the
// largest feature is 1), which linear attention cancels exactly. The fits
// are closed forms free of cancellation (OptimalA); large input norms give
// large φ and A* ≈ −φ/4, never an invalid parameter. Statistics that are
// not representable — rows or a typical norm beyond about 1.3e154, whose
// squares overflow, or a pair moment M_x + M_y + μ_xμ_yᵀ + μ_yμ_xᵀ beyond
// float64 — give an error wrapping features.ErrOverflow from NewStats,
// IsotropicStats and every fit. Variance overflows once exp(2xᵀy) does
// (xᵀy beyond about 355); RelativeVariance, the ratio Var/exp(2xᵀy),
// does not.
//
// # Where the parameters come from
//
// The fitted maps estimate exp(xᵀy) without bias for any parameters; the
// fit only has to see statistics like those of the inputs. Map.Fit and
// Pair.Fit take Stats (NewStats of sample queries and keys, or
// IsotropicStats of a typical norm). Map and Pair implement
// features.Adaptive: attention.Linear refits them to each non-causal
// call's queries and keys (FAVOR++ and FAVOR#: the parameters of a batch
// and layer), keeping the projection.
package prf
