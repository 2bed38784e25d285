// Package attention implements softmax attention exactly and in linear time
// through random features (Performer / FAVOR+, Choromanski et al. 2021; the
// analog paper's Sec. II.C and Supplementary Notes 2-3).
//
// Exact attention (analog paper Eq. 3) is
//
//	Attn(Q, K, V) = softmax(QKᵀ/√d) V,
//
// computed here in blocks of query rows with the row maximum subtracted
// before exp, so memory is O(B·L) for a block of B rows and never L×L.
//
// Linear attention replaces exp(qᵀk/√d) by φ(q')ᵀφ(k') with q' = d^(−1/4)q,
// k' = d^(−1/4)k and φ a softmax-kernel feature map of package features, and
// reorders the product:
//
//	Attn(Q, K, V) ≈ D̃⁻¹ (Q'(K'ᵀV)),  D̃ = diag(Q'(K'ᵀ1_L)),
//
// in O(L·m·d) time and O(L(m+d)) memory. The causal (unidirectional)
// variant keeps the prefix sums S_t = Σ_{s≤t} φ(k'_s)v_sᵀ and z_t = Σ_{s≤t}
// φ(k'_s); the chunked form processes C rows at a time: one C×C masked
// product inside the chunk plus the carried prefix state, which is the fast
// form for CPUs. Any map with non-negative features works the same way, e.g.
// the ReLU map Q' = ReLU(QΩ) of the analog paper's Discussion (features
// arccos1), whose "kernel" is the order-1 arc-cosine kernel.
//
// Stabilisation, without bias: features come from TransformScaled, so each
// query row is divided by its own factor exp(s_q) — which cancels between
// numerator and denominator of that row — and each key row by exp(s_k)
// relative to a reference c. Bidirectional attention uses one reference,
// c = max_s s_k,s. Causal attention gives row t its own reference, the
// running maximum c_t = max_{s≤t} s_k,s, so that row t depends on keys
// 0…t only, also through its numerics: a later key of much larger scale
// cannot shrink the earlier rows' terms into underflow or below the
// denominator guard. In the chunked form the carried prefix state is kept
// relative to the reference of the last row before the chunk and
// multiplied by exp(c_old − c_new) when the reference rises (as in online
// softmax); inside a chunk term (t, s) gets the factor
// exp(s_k,s − c_s)·exp(c_s − c_t) ≤ 1. The reference of a row cancels
// between its numerator and denominator, so the estimate is the same as
// without stabilisation, at every chunk size; only overflow and underflow
// are avoided. Denominators whose magnitude is below Eps (the
// trigonometric map's can cross zero) are clamped to ±Eps, as the
// reference implementations guard them.
//
// # Masks
//
// Every attention of the package (Exact, Kernelized, *Linear) implements
// Masked: ApplyMasked takes a key padding mask of one bool per key, true
// marking padding (PyTorch's key_padding_mask convention). A padded key
// and its value take no part in any output: exact attention drops them
// before the product, linear attention never computes their features and
// gives them zero rows of K' (and log-scale −∞, so they do not move the
// causal references). Their rows are not even read, so they may hold any
// value, NaN included; changing them changes no output bit.
//
// Queries and keys may differ in number (cross-attention, Lq ≠ Lk). The
// causal mask is then aligned bottom-right, the convention of PyTorch's
// causal_lower_right and xFormers' LowerTriangularFromBottomRightMask:
//
//	query i (0 ≤ i < Lq) attends keys s ≤ i + (Lk − Lq),
//
// so that the last query sees every key, Lq = Lk is the usual
// lower-triangular mask, and Lq new queries after Lk − Lq cached keys see
// the whole cache plus their own prefix — exactly the decoding case. With
// Lq > Lk the first Lq − Lk queries see no key. A query that sees no key
// (that, or every key padded) gets an output row of zeros, as the fused
// kernels of xFormers and FlashAttention return. In linear causal
// attention the Lk − Lq keys before the aligned block are summed into the
// carried state first (State.Append) and the aligned block runs the
// chunked form from it (State.Extend).
//
// # Decoding with a cache
//
// The causal state of linear attention — S = Σ_s φ(k'_s)v_sᵀ (m×dv) and
// z = Σ_s φ(k'_s) (m), kept relative to the reference c = max_s s_k,s —
// is all that the next token needs: its output is φ(q')ᵀS / φ(q')ᵀz. A
// State (Linear.NewState) carries it from one call to the next: Step adds
// one token (key and value in, the output of its query out) with a
// rank-one update, O(m·(d+dv)) time and memory per token however long the
// sequence, where exact attention with a KV cache costs O(L·d) per token;
// Extend adds a block of tokens (a prompt) by the chunked form; Append adds
// keys and values without queries. If a token's key log-scale exceeds the
// reference, S and z are first multiplied by exp(c_old − c_new), so a
// State never overflows, as the full causal call does not. Decoding token
// by token, or in blocks of any size, gives the rows of the full causal
// call to rounding: the tests measure at most 3.1e-14·κ_t relative to
// max|v| over every map of package catalog but the χ² ones, where κ_t ≥ 1
// is the condition number of row t's sums of feature products (1 for maps
// with non-negative features, up to about 3000 for the hybrid estimators
// on keys of norm 30). On the 2-core reference machine a step with
// positive ORF features, m = 256, d = dv = 64, takes about 41 µs of CPU
// time with OpenBLAS, about 24000 steps per CPU second, and about 90 µs
// with the pure-Go BLAS (BenchmarkDecode), whatever the number of tokens
// before it.
//
// # Batched multi-head calls
//
// ApplyTensor runs any Masked attention on queries [B, H, Lq, d], keys
// [B, H, Lk, d] and values [B, H, Lk, dv] stored as Tensor (row-major,
// the layout of PyTorch's scaled_dot_product_attention, each (sequence,
// head) pair one contiguous Lq×d matrix) with a key padding mask of B·Lk
// entries, and returns [B, H, Lq, dv]. The B·H pairs run in parallel, each
// on views of its own rows with no reduction across pairs, so the result
// is bit for bit the loop over pairs on any number of cores. One feature
// map serves every head (draw one Linear per head, or per layer, as the
// model needs). MultiHead and Batch keep the [L, H·d] column-block layout.
//
// # Single precision
//
// Linear.Apply32, Linear.ApplyTensor32 (on Tensor32), State.Extend32 and
// State.Step32 take and return float32. The features are computed by the
// map in float64 — in the log domain, the exponentials need its range —
// and rounded once to float32 (rows of maps without log-scales, the
// hybrid pairs, are first scaled to a largest magnitude of 1 so that they
// fit); K'ᵀV, Q'(K'ᵀV), the causal C×C blocks and each chunk's update of
// the state are float32 products (blas32, OpenBLAS's SGEMM when package
// backend installed it), while the denominators and the carried causal
// state S, z are summed in float64, so the error does not grow with the
// number of chunks. Step32 converts at the boundary only: a step costs
// O(m·(d+dv)) either way and it updates the float64 state. Measured on
// L = 1024, d = dv = 64, m = 256 positive ORF features (TestFloat32Error),
// the relative error of the float32 path against float64 on the same
// inputs is 2.3e-7 bidirectional and 2.0e-7 causal (Frobenius), against
// a random-feature error of 1.8e-2 with respect to exact softmax
// attention; on the small masked cases of the tests it stays below 3.4e-7
// of max|v|. The time is dominated by the map's features (float64 exp),
// so the CPU time of the float32 path is within a few per cent of
// float64's (BenchmarkTensor); what it saves a float32 model is converting
// its tensors to float64 and back. Exact attention has no float32 path.
package attention
