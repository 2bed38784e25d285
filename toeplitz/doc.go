// Package toeplitz implements the Toeplitz neural operators of "SKI to go
// Faster: Accelerating Toeplitz Neural Networks via Asymmetric Kernels"
// (the ski-tnn paper): Toeplitz products in O(n log n) by FFT, the sparse
// plus low-rank SKI operator in O(n + r log r), and frequency-domain
// operators made causal by a discrete Hilbert transform.
//
// A Toeplitz matrix has T_ij = t_{i−j}; a Toeplitz neural operator (TNO)
// applies one per channel: TNO(X) = (T¹x¹ … T^d x^d) for X ∈ R^{n×d}
// (Sec. 3.1). In a TNN the coefficients come from a relative positional
// encoder, t_l(i−j) = λ^|i−j|·RPE_l(i−j) with an MLP RPE (the baseline,
// MLPRPE here).
//
// Products (Sec. 3.1): T is embedded in a circulant matrix of size
// L ≥ 2n−1 (a power of two), whose action is a pointwise product of real
// FFTs (gonum's dsp/fourier).
//
// SKI-TNO (Sec. 3.2, Algorithm 1): T ≈ T_sparse + W A Wᵀ, where T_sparse has
// m non-zero diagonals (a 1-D convolution of width m), A_ij = k(p_i − p_j)
// is the r×r Toeplitz Gram matrix of the kernel at r evenly spaced inducing
// points p on [0, n−1] and W the sparse interpolation matrix (linear: two
// non-negative weights per row summing to 1; cubic: Keys' cubic
// convolution, four weights summing to 1). Wᵀx and W(·) cost O(n) and the
// product with A costs O(r log r). The smooth kernel is a piecewise linear
// RPE on [−1, 1] with RPE(0) = 0, read through the inverse time warp
// x(t) = sign(t)·λ^|t| (Sec. 3.2.2), so every offset, also beyond the
// lengths seen in training, maps into [−1, 1]. SKI is bidirectional only:
// W interpolates every position from the inducing points on both sides of
// it, so W A Wᵀ is not lower triangular even for a kernel that vanishes at
// negative lags, and masking it afterwards would cost the O(n²) that SKI
// avoids (the paper uses FD-TNO for causal models, Sec. 3.3).
//
// FD-TNO (Sec. 3.3, Algorithm 2): an RPE gives the kernel's frequency
// response on ω = mπ/n, m = 0…n. For causal operators the response is a
// real even function k̂ and k̂_causal = k̂ − i·H{k̂}, with H the discrete
// Hilbert transform (Definition 1), computed by irFFT → causal window
// (1, 2, …, 2, 1, 0, …, 0) → rFFT; the kernel is then zero at negative
// lags, so output t depends on inputs 0…t only (to the roundoff of the
// FFTs). A Toeplitz matrix with t_k = 0 for k < 0 is causal in the same
// sense when applied by Spectrum or Operator. The bidirectional variant models real and imaginary parts directly,
// with the response forced real at ω = 0 and π. Either way the kernel acts
// as a Toeplitz product of length 2n spectra, one FFT fewer than TNO.
//
// Diagnostics: the spectral-norm error of SKI against the bound of Theorem
// 1 for smooth kernels (SKIError), and impulse responses of GeLU, SiLU and
// ReLU frequency-domain MLPs (Theorems 2-4).
package toeplitz
