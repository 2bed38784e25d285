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
//
// # Precision of the arc-cosine kernels
//
// The angle is never taken as acos of a rounded cosine, which loses half
// the digits for nearly parallel or antiparallel inputs. Angle and
// ArcCos.Eval use θ = 2·atan2(‖x̂−ŷ‖, ‖x̂+ŷ‖) and δ = π − θ =
// 2·atan2(‖x̂+ŷ‖, ‖x̂−ŷ‖), with the chords evaluated in double-double
// arithmetic, and write J_n in terms of δ,
//
//	J_0 = δ,  J_1 = sin δ − δ cos δ,  J_2 = δ(1 + 2cos²δ) − 3 sin δ cos δ,
//
// summing the Taylor series of J_1 (≈ δ³/3) and J_2 (≈ 4δ⁵/15) for δ < 1,
// where the closed forms cancel. The kernels are then accurate to a few ulps
// at every angle, also where their values are tiny (antiparallel inputs).
// Gram takes inner products from one GEMM and uses acos only for pairs with
// |cos θ| ≤ 0.99, whose angle then has an absolute error of about
// d·ε/sin θ ≤ 7·d·ε (d the input dimension) from the rounding of the inner
// product; it recomputes the other pairs from the vectors as Eval does.
package kernel
