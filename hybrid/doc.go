// Package hybrid implements hybrid random features (HRFs, Choromanski et
// al., ICLR 2022) for the softmax kernel SM(x, y) = exp(xᵀy): complex
// exponential base estimators, the general HRF combination of base
// estimators by linearised λ-coefficients, and its angular, Gaussian and
// clustered instantiations, with the closed-form mean squared errors.
//
// Every estimator here is a Pair of feature maps (Φ₁ for x, Φ₂ for y) whose
// dot product Φ₁(x)ᵀΦ₂(y) is the estimate, so hybrids plug into linear
// attention and any other linear algebra on features.
//
// Complex exponential estimators (Sec. 2.3, Eq. 13-16). For ω ~ N(0, I_d)
// and z ∈ C^d, E[exp(ωᵀz)] = exp(z²/2) with z² = Σ z_k² (Lemma 2.4), so for
// an invertible A ∈ C^{d×d}
//
//	SM(x, y) = E[Ψ_A(x)ᵀ Ψ_{(Aᵀ)⁻¹}(y)],  Ψ_M(u) = m^(−1/2) exp(−(Mu)²/2) (exp(ω_iᵀMu))_i.
//
// A = I gives positive (FAVOR+) features and A = iI trigonometric ones.
// kernelkit returns the real part of the complex estimate (also unbiased)
// as the dot product of real features [Re Ψ, Im Ψ] and [Re Ψ', −Im Ψ'].
// The variance is zero when Ax + (Aᵀ)⁻¹y = 0 (Eq. 17-18).
//
// The HRF estimator (Eq. 8-11, Lemma 2.3). With base estimators SM̂_1 …
// SM̂_{p+1} and λ-coefficient estimators λ̂_k(x, y) = a_k + ρ₁ₖ(x)ᵀρ₂ₖ(y),
//
//	SM̂(x, y) = Σ_k λ̂_k SM̂_k + (1 − Σ_k λ̂_k) SM̂_{p+1},
//
// which is again a dot product, of the concatenations of a_k·φ₁ₖ, ρ₁ₖ⊗φ₁ₖ,
// (1−Σa)·φ₁,p+1 and −ρ₁ₖ⊗φ₁,p+1 with the matching key features
// (compositional, outer-product features). Building them costs
// O(nd + md + mn) per input against O(mnd) for a plain map of the same
// dimension mn (App. L).
//
// Instantiations:
//
//   - Angular hybrid (Eq. 19): SM̂⁺⁺ and SM̂ᵗʳⁱᵍ with λ = θ/π, estimated by
//     λ̂ = 1/2 − (1/2n)Σ sgn(τᵢᵀx)sgn(τᵢᵀy). Its MSE (Theorem 3.1 with Lemma
//     3.2, Theorem D.1) vanishes at θ = 0 and θ = π for same-length inputs.
//   - Gaussian hybrid (Eq. 20): λ_k(x, y) = exp(−‖x + M_k y‖²/(2c_k)) through
//     softmax features of x/√c_k and −M_k y/√c_k; and the normalised bipolar
//     variant of App. F, λ = (1 − exp(−σ²‖x−y‖²/2))/ρ, ρ = 1 − exp(−2σ²r²),
//     with trigonometric features (Theorem F.1).
//   - Clustered HRF (Sec. 2.4, App. H): k-means on queries and on keys, a
//     complex exponential estimator per pair of centres (r_i, r_j) with A
//     diagonal from Eq. 85 (complex, exact zero variance at the centres) or
//     Eq. 88 (real), combined by zero-one λs (cluster indicators, Def. H.2)
//     or Gaussian-mixture λs (Def. H.1, with the real-diagonal A of Eq. 88
//     inside the Gaussian so that the coefficient is a real kernel value).
//
// Throughout, SM̂⁺⁺ is the positive estimator with features
// [exp(ωᵀx), exp(−ωᵀx)] (the HRF paper's convention, Sec. 2.1), m the number
// of its projections, and n the number of projections of a λ-estimator.
// Base estimators may share projections (Theorem 3.1 variant II) or draw
// their own (variant I).
package hybrid
