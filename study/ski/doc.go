// Package ski replicates the studies of the SKI-TNN paper, "SKI to go
// faster: accelerating Toeplitz neural networks via asymmetric kernels"
// (Moreno, Mei and Walters, 2023), on the operators of package toeplitz:
// a Toeplitz neural operator mixes a sequence x ∈ R^(n×d) channel by
// channel with T_ij = k(i − j), and the paper replaces the O(n log n) FFT
// product by the sparse + low-rank SKI form T ≈ S + W A Wᵀ (r inducing
// points, linear interpolation W, Sec. 3.1–3.2, Algorithm 1) or, causally,
// by a frequency-domain RPE whose kernel is the inverse DFT of an MLP of
// cos ω (Sec. 3.3, Algorithm 2). The package is named after the paper so
// that it does not clash with package toeplitz, the implementation it
// measures.
//
// The studies:
//
//   - ErrorBound: the spectral-norm error ‖T − T_SKI‖₂ of the Matérn 5/2
//     kernel's Toeplitz matrix against the bound of Theorem 1, over the
//     number of inducing points r.
//   - Impulse: the decay of the impulse responses |k[t]|/|k[0]| of random
//     frequency-domain MLPs: super-polynomial for GeLU and SiLU, slow for
//     ReLU (Theorems 2–4, Figs. 4–6).
//   - Timing: the time of the dense O(n²), FFT, SKI and causal
//     frequency-domain operators over n, the SKI error against the FFT
//     output, and the log-log slopes of time against n (Slopes) — the
//     paper's speed claims of Fig. 1a.
//   - CompareDevice: the timing study's TNO, SKI and causal FD operators on
//     the CPU and on a device of package device (GoMLX's pure-Go backend,
//     or a GPU through XLA): both times and the largest difference.
//
// Report gathers them as kernelkit toeplitz prints them.
//
// Each study takes a configuration, a context and a progress callback
// (nil: none) and returns typed rows with JSON tags; the same
// configuration and seeds give the same rows (the times aside). Invalid
// configurations and sizes return errors. Each configuration's Memory
// estimates, from the configuration alone, the largest memory its run
// holds at once (limits.Estimate), so that a caller can refuse a run above
// a memory budget before anything is allocated.
package ski
