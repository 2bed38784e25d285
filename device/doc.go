// Package device runs kernelkit's heavy paths as GoMLX graphs on an
// execution device: an NVIDIA GPU through GoMLX's XLA backend and the CUDA
// PJRT plugin ("cuda", in a program built with CGO_ENABLED=1 and -tags
// xla), or GoMLX's pure-Go backend ("go"), which runs the very same graphs
// on the CPU so that tests exercise them on machines with no GPU.
//
// The default build links no XLA and no cgo; Open("cuda") then returns an
// error saying how to build a program that has it. Each operation is one
// graph written once; tests compare it on the pure-Go backend with
// kernelkit's CPU path, and the same tests run on a GPU when one is present
// (scripts/gpu.sh builds them with -tags xla, scripts/gpu_run.sh runs them
// there). Nothing falls back silently to the CPU: an operation without a
// device form is an error that names it.
//
// # Feature maps
//
// Device.Map compiles a feature map z(x) = h(x)/√m·f(Wx + b) (package
// features, analog paper Eq. 2, HRF Eq. 4-6) into one graph per batch of
// rows: the projection XWᵀ and the element-wise pass, fused by XLA, with
// the formulas and, in float64, the order of operations of the CPU code.
// Forms: rbf cos and sincos, the positive and hyperbolic maps (rbf and
// softmax) and the softmax trigonometric map, computed in the log domain,
// exp(±ωᵀx + c‖x‖² + log prefactor), as on the CPU; the arc-cosine
// Heaviside, ReLU and squared-ReLU maps; the ReLU-SNNK towers; the skewed
// χ² map; the Nyström maps of the RBF, softmax and polynomial kernels; and
// the fitted positive maps of package prf, exp((W_eff x)_j + off_j −
// ½xᵀGx) of the prf package documentation (OPRF/FAVOR++ and
// SDERF/FAVOR# with G = I; Device.Pair compiles the two sides of an ADERF
// pair, G = PᵀP and P⁻¹P⁻ᵀ), evaluated with the parameters prf fitted on
// the CPU.
// Map.TransformScaled is the log-domain stabilisation of
// features.ScaledTransformer: the largest exponent of each row is
// subtracted before the exponential and returned as its log-scale s_i
// (FAVOR+'s row-max subtraction, kept exact: z(x)ᵀz(y) = exp(s_x + s_y)
// ẑ(x)ᵀẑ(y)). A Map is itself a features.Transformer, so it goes wherever
// a map does. The asymmetric hybrid estimators have no fused form; their
// projections run on the device through the projector seam
// (Device.Projectors with features.PairWithProjectors), their element-wise
// products on the host.
//
// # Ridge statistics and prediction
//
// RidgeStats (model.Options.Accumulator through Device.Accumulator)
// computes, for each batch of rows, the features Z, then ZᵀZ, ZᵀY and Σz
// in the device's float type, and adds them into float64 sums kept on the
// device, one set per fold (row i in fold i mod folds); Σy and Σy² are
// summed on the host. At the end the sums come back into linear.Stats
// (linear.Stats.AddSums) and the solve stays on the host (linear's
// Cholesky). Rounding grows with the rows of one batch, as for
// linear.Stats.AddFloat32, and the batches are added in a fixed order, so
// a given device gives the same bits on every run whatever the sizes of
// the Add calls. A Predictor runs the model's scaler, its map and the
// product with the weights in one graph.
//
// Memory is bounded by batches: a graph execution takes BatchRows rows
// (DefaultBatchRows, 4096, unless set), padded with zero rows to a power
// of two for the last one, so that a map compiles at most one graph per
// power of two (GoMLX's Exec caches them by shape); the device holds one
// batch of inputs and features and, for the statistics, D² + DK + D
// float64 values per fold. Host memory does not grow with the rows.
//
// # Attention
//
// Device.Attention and Attention32 run batched multi-head attention on the
// [B, H, L, D] tensors of package attention, with attention.ApplyTensor's
// shapes, key padding mask (true marks padding; padded rows are never
// used) and conventions (causal masks aligned bottom-right when Lq ≠ Lk,
// zero rows for queries that see no key). Exact is softmax(QKᵀ/√d)V
// (analog paper Eq. 3), the graph of nn.SoftmaxAttention, whose scores
// hold B·H·Lq·Lk values. Linear is FAVOR+ D̃⁻¹(Q'((K')ᵀV)) with positive
// features φ(x) = exp(ωᵢᵀx − ‖x‖²/2)/√m (Supplementary Note 2), the graph
// of nn.LinearAttention, with the CPU map's projection ω (FavorProjection),
// so that device and CPU agree to rounding. Causal linear attention runs
// nn's chunked form on the device: a masked C×C product inside each chunk
// and the prefix sums of the chunk states across chunks, C ≈
// (2Lm·dv/(m+dv))^(1/3) by default. Alignment pads the shorter of queries
// and keys in front, chunking pads the end; no real output row changes.
//
// # Toeplitz mixing
//
// A Mixer applies the token mixers of package toeplitz to [B, n, d]
// sequences (Seq), built from the CPU constructors' data: NewTNO (TNO(X) =
// (T¹x¹ … T^d x^d), ski-tnn Sec. 3.1), NewSKI (Algorithm 1, T_sparse x +
// W A Wᵀ x), NewCausalFD and NewBidirectionalFD (Algorithm 2, Sec. 3.3).
// Where the device has the FFT op the products are FFTs of the circulant
// embedding of size 2n (nn.ToeplitzFFT, FDCausalFFT, FDBidirectionalFFT);
// on the pure-Go backend, dense n×n products per channel (O(n²d), bounded
// by limits.MaxElements). The tests also run the FFT-form graphs on the
// pure-Go backend, where nn substitutes an exact DFT-matrix product for
// the FFT, so the graph a GPU runs is exercised in CI.
//
// Each call converts host data to the device's float type, copies it, and
// runs a graph compiled once per device, settings and input shapes; a
// Mixer keeps its parameters on the device after the first call.
//
// # Float types and tolerances
//
// Graphs compute in float64 on the pure-Go backend and in float32 on CUDA
// unless Device.WithFloat32 or WithFloat64 says otherwise; inputs are
// converted once per batch, outputs back to float64. Measured against the
// CPU code (the tests assert 1e-12 and 2e-3 of the values' scale): float64
// graphs agree to 10⁻¹⁵ (features, statistics; weights of a fit 10⁻¹³),
// float32 graphs to about 10⁻⁶ (weights of a letter fit 10⁻⁵, the same
// test accuracy). A float32 feature beyond 3.4·10³⁸ is
// features.ErrOverflow; TransformScaled avoids it.
//
// TF32: XLA's default precision for float32 dot products on an NVIDIA GPU
// uses TF32 tensor cores, which round the operands to 10 mantissa bits
// (unit roundoff 2⁻¹¹ ≈ 4.9·10⁻⁴ instead of 2⁻²⁴). A projection ωᵀx of k
// terms then errs by up to about 2⁻¹¹·Σ|ω_i x_i|, some 5·10⁻⁴ of its
// scale instead of 2⁻²⁴√k ≈ 10⁻⁶; an exponential feature exp(ωᵀx − …)
// inherits that absolute error in its exponent as a relative error, and
// ZᵀZ entries err by about 5·10⁻⁴ relative, which the solve of (ZᵀZ +
// λI)w = ZᵀY amplifies by up to the condition number: within the 2e-3
// tolerance of the feature tests, not for weights of ill-conditioned
// fits. GoMLX v0.26 offers a plugin option to force TF32 ("tf32") but
// none to ask XLA for full float32 products (precision HIGHEST), so
// scripts/gpu_run.sh turns TF32 off from outside: NVIDIA_TF32_OVERRIDE=0
// for cuBLAS and --xla_gpu_enable_triton_gemm=false for XLA's Triton
// GEMMs, which ignore that variable; TestProjectionPrecision logs the
// error a device gives (float32 ≈ 10⁻⁶, TF32 ≈ 5·10⁻⁴), and the
// benchmarks are run both ways.
//
// # Errors
//
// Feature maps, statistics and predictors follow the contract of package
// features: mismatched shapes, non-finite inputs, inputs outside a map's
// domain and overflowing features are returned errors. The attention and
// Toeplitz operators treat shapes that do not agree as programmer misuse
// and panic, as in package features' own matrix code; a device that cannot
// be opened, sizes out of range and data errors are returned.
package device
