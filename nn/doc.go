// Package nn holds the trainable layers of kernelkit's sequence models as
// GoMLX graph functions, so that gradients come from GoMLX's automatic
// differentiation, and the models assembled from them (Logits of an
// arch.ModelConfig, the specification, which holds no graph code). Every
// layer is checked against kernelkit's own forward operator (packages
// attention, toeplitz, snnk, features) and its gradient against central
// differences.
//
// # Toeplitz neural operators (ski-tnn paper, "SKI to go Faster")
//
// A TNO applies one Toeplitz matrix per channel, TNO(X) = (T¹x¹ … T^d x^d)
// with T^l_ij = t^l_{i−j} (Sec. 3.1). Coefficients are stored as a
// (2n−1)×d matrix, row k+n−1 holding t_k.
//
//   - TNN: t^l_k = λ^|k|·RPE_l(k/n), an MLP RPE with exponential decay
//     bias (Sec. 3.1; TNNCoefficients, the graph form of
//     toeplitz.TNNKernels).
//   - SKI-TNO (Algorithm 1): T_sparse x + W A Wᵀ x, a 1-D convolution of
//     width m plus the SKI low-rank term, A_ij = RPE(x(p_i − p_j)) on r
//     inducing points, RPE piecewise linear on [−1, 1] with RPE(0) = 0 and
//     the inverse time warp x(t) = sign(t)·λ^|t| (Sec. 3.2.2); W is the
//     linear interpolation matrix (arch.SKIPlan, applied by SKI).
//   - FD-TNO (Algorithm 2, Sec. 3.3): an RPE of cos ω gives the frequency
//     response on ω_m = mπ/n; causal: k̂ − i·H{k̂} (discrete Hilbert
//     transform, Definition 1), whose kernel is zero at negative lags;
//     bidirectional: real and imaginary parts modelled directly, the
//     imaginary part zero at ω = 0 and π (Sec. 3.3.2).
//
// GoMLX's pure-Go backend has no FFT op, so the models run there as dense
// Toeplitz products (ToeplitzDense: the coefficients gathered into d n×n
// matrices, O(n²d) per sequence), and FD-TNO's kernels come from its
// response by an inverse real DFT written as a constant matrix product
// (FDCausalCoefficients, FDBidirectionalCoefficients). The FFT forms
// (ToeplitzFFT, FDCausalFFT, FDBidirectionalFFT: circulant embedding of
// size 2n) are written once over an rFFT/irFFT pair: the backend's FFT op
// where it has one (HasFFT, e.g. XLA), elsewhere an exact DFT-matrix pair
// with the same n/2+1 bins and normalisation (O(n²) per row, sequences
// of up to 1024, tested against gonum's fourier). So the FFT-form
// algorithm is tested against the dense forms on every backend, and with
// the FFT op on XLA.
//
// Models (ModelConfig) of length n ≥ 256 take the Toeplitz products by a
// DFT over blocks instead (ToeplitzSpectral, FDBidirectionalSpectral:
// O(n^1.5) per channel, no n×n matrix; tested equal to the dense and
// operator forms to 1e-12), and SKI's sparse convolution by shifted slices
// (ski_fast.go); below 256 the dense forms are faster on the pure-Go
// backend.
//
// TNN blocks (Fig. 3): x += GTU(norm(x)), x += GLU(norm(x)), with the
// gated Toeplitz unit GTU(x) = (SiLU(xW_u) ⊙ TNO(SiLU(xW_v)))W_o and the
// gated linear unit GLU(x) = (SiLU(xW₁) ⊙ xW₂)W₃; norm is the simple RMS
// norm x/√(mean x² + ε).
//
// # Attention (analog paper Sec. II.C and Supplementary Note 2)
//
// Softmax attention softmax(QKᵀ/√d)V (Eq. 3), and FAVOR+ linear attention
// D̃⁻¹(Q'((K')ᵀV)) with positive random features φ(x) = exp(ωᵢᵀx −
// ‖x‖²/2)/√m of q, k scaled by d^(−1/4), orthogonal ω (arch.DrawFavorProjection;
// a redraw policy replaces them every so many steps). The causal form is
// chunked: a masked product inside each chunk plus prefix sums of the chunk
// states, taken by a product with a strictly lower triangular matrix over
// chunks. Numerical range: query features are divided by their row's
// largest exp, key features by the sequence's largest; the factors cancel
// and are constants to the gradient.
//
// The performer's feature family (ModelConfig.FeatureMap, FamilyAttention)
// replaces FAVOR+ by SimRF (simplex-coupled ω, SimRF paper Sec. 3), OPRF
// (FAVOR++, CRT paper Theorem 3.3) or SDERF (FAVOR#, DERF paper Theorem
// 4.3); the last two are fitted to each sequence's and head's queries and
// keys in the forward pass and held constant in the backward pass
// (FitFeatureFamily; SDERF's eigendecomposition by Jacobi sweeps in the
// graph, symEigen).
//
// # Hybrid random features attention (HRF paper)
//
// HybridAttention is linear attention on the hybrid estimator of the
// softmax kernel, SM̂(q, k) = λ̂(q, k)·SM̂⁺(q, k) + (1 − λ̂(q, k))·SM̂ᵗʳⁱᵍ(q, k)
// (Eq. 8 with the angular λ of Eq. 19 estimated by its own sign features),
// the same estimator as hybrid.Angular (projections by
// arch.DrawHybridProjections with its sampler calls and seeds). The features
// are never formed in full: the λ̂ features multiply the positive and
// trigonometric ones inside the products, so the cost stays linear in L;
// bidirectional and chunked causal forms, rows rescaled against overflow.
// The trigonometric part makes the denominators small for inputs of large
// norm, so models normalise q and k to norm r (QKNorm, default 1; the paper
// does so in App. K).
//
// # SNNK (SNNK paper, Sikka et al.)
//
// The SNNK layer y = Φ(x)ᵀA (Eq. 4, with the parameter tower A learned
// directly) with the ReLU-SNNK input tower Φ(x) = ReLU(Gx)/√m, G fixed; the
// SNNK adapter Y = v ⊙ SNNK(X) + X (App. D, Eq. 22) with the gating vector
// v initialised at zero, so the adapted model starts as the pre-trained one;
// (m+1)·d trainable parameters. The baseline is the Houlsby bottleneck
// adapter x + GELU(xW_down)W_up, W_up initialised at zero.
//
// # Gradients
//
// GoMLX v0.26 differentiates DotGeneral by broadcasting, building an
// N×k×m tensor for an (N×k)·(k×m) product; this package's products carry a
// backward pass of two DotGenerals instead (see dot.go), measured 40×
// faster on a 2048×64·64×64 layer. The pure-Go backend cannot
// differentiate Slice (its VJP needs the Pad op), so slices on the
// gradient path are gathers or 0/1 matrix products (SparseConv,
// SelectColumns), or slices with a Pad-free gradient of their own
// (toeplitz_spectral.go).
package nn
