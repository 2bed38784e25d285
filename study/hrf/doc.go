// Package hrf replicates the estimator studies of the Hybrid Random
// Features paper (Choromanski et al., ICLR 2022): how well each random
// feature map estimates the softmax kernel
//
//	SM(x, y) = exp(xᵀy)
//
// pointwise, on data and inside a softmax distribution. The estimators are
// the maps of package catalog whose kernel is "softmax" (trig, positive or
// FAVOR+, hyperbolic, the angular, Gaussian, bipolar and clustered hybrids
// of package hybrid, and the positive maps of package prf), looked up by
// name with a feature budget D: the plain maps use D features, the hybrids
// are FLOP-matched to D (hybrid.MatchFLOPs). The data-fitted maps (oprf,
// sderf, aderf) are fitted to the inputs of each experiment — the x's as
// queries and the y's as keys, by their means and second moments, as the
// FAVOR++ and FAVOR# papers fit them — not to isotropic statistics, under
// which SDERF and ADERF reduce to OPRF.
//
// Input norms are at most MaxNorm (18.82): with |xᵀy| ≤ r² the kernel
// values lie in [exp(−r²), exp(r²)], and the squared errors (up to
// 4·exp(2r²)) and relative errors (up to about exp(2r²)) are representable
// in float64 exactly when 2r² + ln 4 ≤ ln MaxFloat64. Larger norms are
// refused, and an estimator whose estimates or errors overflow at an
// accepted norm makes the study return an error wrapping
// features.ErrOverflow naming it; no study returns NaN or ±Inf.
//
// The studies, one per figure or table of the paper:
//
//   - Angles: same-length inputs ‖x‖ = ‖y‖ = r ∈ {1, 1.25, 1.5} (or Radii) in R^64 at
//     angles θ = 0, π/12, …, π; the true value, the 5th–95th percentiles of
//     the estimates and the relative error √MSE/SM (Fig. 2 and Fig. 5).
//   - Data: the MSE of SM(x, y) over random pairs of standardised data rows
//     scaled to norm r, mean ± standard deviation over independent maps
//     (Table 1, there on wine and Boston).
//   - Clustered: the clustered hybrid (k-means, real diagonal A of Eq. 88,
//     zero-one λ) against FAVOR+ and trigonometric features on synthetic
//     clustered data built as in App. H.3 (ClusteredData), the MSE against
//     the feature count m (App. H.1, Fig. 6).
//   - SoftmaxSampling: the softmax distribution p_ij ∝ exp(q_iᵀc_j) over
//     1000 classes against its estimate p̂_ij ∝ SM̂(q_i, c_j): the 1-D
//     Wasserstein distance Σ_j |P_ij − P̂_ij|, the Kolmogorov–Smirnov
//     statistic max_j |P_ij − P̂_ij| of the cumulative distributions and the
//     fraction of negative estimates (Sec. 4.2, Fig. 3; SoftmaxQuality
//     computes them for one estimator).
//
// kernelkit estimate --study angle|data|clustered|softmax runs them.
//
// Each study takes a configuration, a context (long studies stop early
// with its error) and a progress callback (nil: none), and returns typed
// rows with JSON tags whose Table, Render and Plot methods build the
// renderings of package report; the same configuration and seeds give the
// same rows. Invalid configurations and sizes return errors.
package hrf
