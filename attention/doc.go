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
package attention
