// Package arch is the specification of kernelkit's sequence classifiers,
// shared by the GoMLX graph models (package nn), the native CPU engine
// (package native), training (package train) and the model files
// (package seqmodel). It imports no GoMLX package, so that everything
// but the graph models builds without GoMLX.
//
// It holds the model kinds (tnn, ski-tnn, fd-tnn, performer, transformer,
// hrf) and adapter kinds, ModelConfig with its defaults and validation,
// the list of a model's variables (Variables: scope, name, dimensions,
// in the order the graph model creates them), its parameter count and
// memory estimate, the seed-derived random features (FixedVariables), the
// constants of the SKI and FD token mixers (SKIPlan, FDMatrices) and the
// random-number state a training run starts from (RNGStateFromSeed).
//
// # Parameter count
//
// A model of width d, depth D, vocabulary V and C classes has the token
// embedding V·d (plus the learned positions L·d for the attention kinds),
// D blocks and the classifier d·C + C. An attention block holds the
// query, key, value and output projections 4(d² + d) and the FFN 2dh +
// h + d (h = Hidden); a TNN block the GTU 3de + 2e + d (e = Expand·d),
// the token mixer's RPE (an MLP 1 → RPEHidden (× RPELayers) → e, or 2e for
// bidirectional fd-tnn; for ski-tnn Grid·e RPE values and a filter of
// SKIFilter·e taps) and the GLU 3dh + 2h + d. Adapters add per sub-block
// 2dk + k + d (bottleneck, k = AdapterSize) or kd + d (SNNK; its tower of
// k·d random features is counted apart). ParamCount counts one block
// times D, in float64, and refuses counts beyond 2⁵³.
//
// # Random features
//
// The performer's projection ω (Features × d/Heads) of layer i at draw r
// is drawn from mix(seed, i, r, tag) by its family's sampler (orthogonal
// random features; simplex-coupled for simrf), hrf's three projections
// likewise by hybrid.Angular's draws, and the SNNK towers from
// AdapterSeed and the adapter's position (never redrawn); mix is a chain
// of splitmix64 steps. Values are float32, the dtype of the variables.
//
// # Generator state
//
// GoMLX keeps its random-number state in the context variable /#rngState,
// three uint64 words that graph.RNGStateFromSeed(s) fills with the first
// three values of math/rand's generator seeded with s. A training run of
// seed s starts from the state of s>>1 (RunRNGState); the native engine
// draws nothing from it but writes it into its checkpoints, so that a
// GoMLX run resumes them byte for byte.
//
// Error messages keep the prefix "nn:" of the package the specification
// came from, so that they read as before.
package arch
