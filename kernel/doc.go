// Package kernel implements the exact kernels that kernelkit's random
// features approximate. They serve as the reference for every estimator and
// for the error measures (relative Frobenius error of a Gram matrix).
//
// The kernels are
//
//	Gaussian/RBF   k(x, y) = exp(-γ‖x−y‖²)
//	Softmax        SM(x, y) = exp(xᵀy)
//	Arc-cosine n   k_n(x, y) = (1/π) ‖x‖ⁿ‖y‖ⁿ J_n(θ)        (Cho & Saul, 2009)
//
// with θ the angle between x and y and
//
//	J_0(θ) = π − θ
//	J_1(θ) = sin θ + (π − θ) cos θ
//	J_2(θ) = 3 sin θ cos θ + (π − θ)(1 + 2 cos² θ).
//
// The Gaussian kernel with γ = 1/2 and the softmax kernel are linked by
// exp(−‖x−y‖²/2) = exp(−‖x‖²/2) SM(x, y) exp(−‖y‖²/2) (HRF paper, Sec. 1),
// which is how softmax features estimate Gaussian kernels and back.
// The arc-cosine kernel of order 0 is the ArcCos0 kernel of Supplementary
// Table I of the analog paper, 1 − θ/π.
package kernel
