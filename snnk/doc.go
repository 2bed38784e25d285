// Package snnk implements scalable neural network kernels (SNNKs, Sikka,
// Choromanski et al., "Scalable Neural Network Kernels", ICLR 2024): a
// feed-forward layer f(Wx + b) rewritten as a dot product of an input tower
// Φ_f(x) and a parameter tower Ψ_f(w, b),
//
//	SNNK_f(x, (w, b)) = Φ_f(x)ᵀ Ψ_f(w, b) ≈ f(wᵀx + b)          (Eq. 4)
//
// through universal random features (URFs, Sec. 3.1).
//
// URFs. Writing f(z) = ∫ FT_f(ξ) exp(2πiξz) dξ (Eq. 5-6) as an expectation
// over frequencies ξ, each term contains the softmax kernel
// exp(x̂ᵀŵ) with x̂ = ρ(ξ)x, ŵ = η(ξ)w, ρη = 2πiξ (Eq. 7), linearised by the
// positive map of Eq. 8,
//
//	Λ_g(z) = (1−4A)^(d/4) exp(A‖g‖² + √(1−4A) gᵀz − z²/2),  g ~ N(0, I_d),
//
// with z² = Σ z_k² (complex arguments allowed) and E[Λ_g(x)Λ_g(y)] =
// exp(xᵀy) for A < 1/4; for A < 0 the features are bounded when x, w and b
// are (Remark 3.1). kernelkit uses ρ(ξ) = 2πiξ and η = 1 (as the paper's
// experiments), so Φ gets the complex argument and Ψ the real one, and the
// m samples (ξ_i, g_i) give (Eq. 9-10)
//
//	Φ(x)_i = Λ_{g_i}(2πiξ_i x)/√m,  Ψ(w, b)_i = c_i S(ξ_i, b) Λ_{g_i}(w)/√m,
//
// with S(ξ, b) = exp(2πiξb) times the importance weight. Complex features
// are returned as real vectors [Re, Im] and [Re, −Im], whose dot product is
// the real part of the complex estimate (f is real, so the estimate's real
// part is unbiased).
//
// Activations are given by a finite sum of exponentials f(z) = Σ_k a_k
// exp(i s_k z) (sin and cos: two atoms s = ±1, Sec. 3.1 and App. M), or by
// a spectral density sampled with importance weights (Spectral).
//
// ReLU-SNNK (Sec. 3.2): Φ(x) = ReLU(Gx)/√m, Ψ(w) = ReLU(Gw)/√m, whose
// product estimates ½K₁(x, w), half the order-1 arc-cosine kernel
// (Theorem 3.2 has K₁ = 2E[ReLU(ωᵀx)ReLU(ωᵀy)]).
//
// Bundling (Sec. 3.3, Eq. 13-14): a stack x_{i+1} = f_{i+1}(W_i x_i + b_i)
// becomes x̄ = Φ_{f_L}(…Φ_{f_1}(x)) and one matrix W̄ = Ψ_{f_L}(W_{L−1}
// Ψ_{f_{L−1}}(…W_1Ψ_{f_1}(W_0, b_0)…), b_{L−1}), y ≈ W̄x̄; for the fully
// bundled network W̄ can be fitted in closed form by ridge regression on x̄.
package snnk
