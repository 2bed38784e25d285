// Package aimc replicates the hardware studies of the analog paper,
// "Kernel approximation using analog in-memory computing" (Büchel et al.,
// Nature Machine Intelligence 2025): random-feature kernel approximation
// whose projection Wx runs on an analog in-memory computing (AIMC) chip,
// emulated here by package analog (tiled PCM crossbars, INT8 inputs,
// programming noise, drift and read noise, ADC, affine correction) through
// the projector seam of package features. The package is named after the
// paper's subject so that it does not clash with package analog, the
// emulator it drives.
//
// The studies:
//
//   - Ridge: ridge classification (Eq. 4–5) on exact fp64 features and on
//     the same features with the projection computed on the emulated chip,
//     at D/d = 2^ratio; test accuracies and the Gram error
//     ‖K − ZZᵀ‖_F/‖K‖_F of both (Fig. 2a and 2b).
//   - Attention: FAVOR+ attention D̃⁻¹(Q'(K'ᵀV)) (Eq. 3) with digital and
//     emulated projections against exact softmax attention, the relative
//     error against the feature count m (Fig. 3b).
//   - Cost: the projection cost model, 2·L·d·m operations at each device's
//     peak throughput and power (Supplementary Note 4, Table VIII).
//
// Report gathers the three as kernelkit analog prints them. The paper's
// replications of earlier baselines (Supplementary Note 3) live in
// package study/baseline (RFF, ORF and SORF, Fig. 20) and package
// study/performer (the Performer's Fig. 4, Fig. 21).
//
// Each study takes a configuration, a context and a progress callback
// (nil: none) and returns typed rows with JSON tags; the same
// configuration and seeds give the same rows. Invalid configurations and
// sizes return errors. RidgeConfig.Memory and AttentionConfig.Memory
// estimate, from the configuration alone (and the sizes of the data sets
// given), the largest memory the run holds at once (limits.Estimate), so
// that a caller can refuse a run above a memory budget before anything is
// allocated; the cost model allocates nothing that grows with L, d or m.
package aimc
