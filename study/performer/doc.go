// Package performer replicates the linear-attention studies of the
// Performer paper, "Rethinking attention with Performers" (Choromanski et
// al., ICLR 2021), as the analog paper's Supplementary Note 3 replicates
// them (Supplementary Fig. 21): linear attention
//
//	Att↔(Q, K, V) ≈ D̃⁻¹(Q'(K'ᵀV)),  D̃ = diag(Q'(K'ᵀ1_L)),
//
// with Q' and K' the random features of the rows of Q/d^¼ and K/d^¼,
// against exact softmax attention softmax(QKᵀ/√d)V (package attention). The
// feature maps are the maps of package catalog by name, built with a
// feature count m (the hybrids FLOP-matched to m). The package is named
// after the paper so that it does not clash with package attention, the
// implementation it measures.
//
// The studies:
//
//   - MSE: the output MSE of linear attention against exact attention on
//     random N(0, 1) Q, K, V (or given ones), mean ± standard deviation over
//     seeds, for each feature map, sampler and m; Replication is the
//     Performer's Fig. 4 setup (L = 4096, d = 16, m = 16 … 192, 15 seeds,
//     iid and orthogonal projections, positive and trigonometric
//     features), and SamplerComparisons tests whether orthogonal
//     projections beat iid ones by more than two standard errors.
//   - Timing: the wall time and bytes allocated by exact attention, O(L²d),
//     and by linear attention with m positive features, O(Lmd), over the
//     sequence length (after the Performer's Fig. 3).
//   - CompareDevice: exact and FAVOR+ attention on [B, H, L, d] inputs on
//     the CPU and on a device of package device (GoMLX's pure-Go backend,
//     or a GPU through XLA): both times, the largest difference of the
//     outputs and each side's error against exact attention.
//
// kernelkit attention runs them (--replicate, --timing, --device).
//
// Each study takes a configuration, a context and a progress callback
// (nil: none) and returns typed rows with JSON tags; the same
// configuration and seeds give the same rows (the times aside). Invalid
// configurations and sizes return errors. Each configuration's Memory
// estimates, from the configuration alone, the largest memory its run
// holds at once (limits.Estimate), so that a caller can refuse a run above
// a memory budget before anything is allocated.
package performer
