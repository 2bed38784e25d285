// Package native is kernelkit's native CPU training engine: the sequence
// models of package nn (ModelConfig: tnn, ski-tnn, fd-tnn, performer, hrf,
// transformer, with bottleneck or SNNK adapters) written as layers with a
// hand-written forward and backward pass on plain row-major slices, the
// products through the installed BLAS (OpenBLAS where it loads, gonum's
// pure Go otherwise) and the Toeplitz products by real FFTs. It is the
// llm.c route: each backward pass is checked against GoMLX's automatic
// differentiation of the nn graph of the same layer (float64, in the
// tests), and a whole model's loss and gradients likewise.
//
// Layers are generic over Float (float32 for training, float64 for the
// gradient tests). Work is split over batch rows in fixed chunks and
// partial sums (the parameter gradients of every affine map among them)
// are merged in chunk order, so the same seed gives the same bytes
// whatever the scheduling and the number of cores. The two input maps of
// a gate (TNN's GTU u and v, the GLU's W₁ and W₂) run as one product of
// twice the width; their parameters stay separate. The GLU, row-local,
// runs 1024-row chunks from its first product to its last (forward and
// backward) while the chunk's intermediates are in cache, and keeps only
// its pre-activations and sigmoid between the passes; the GTU does the
// same on either side of its token mixer, the one part that couples rows.
//
// Toeplitz products (the token mixers of tnn, ski-tnn and fd-tnn) embed
// each channel's Toeplitz matrix in a circulant of size N ≥ 2n − 1 and
// multiply spectra, all channels of a sequence in one batched real FFT of
// package fft (FFTW where it loads; KERNELKIT_FFT=go for gonum's), the
// rows of channels transposed to channel-major signals and back by
// vmath.Transpose32 (AVX2 8×8 blocks) in float32. Without
// FFTW, lengths up to 1024 use dense real-DFT products through the BLAS
// instead (split by the j ↔ n − j symmetry, batched over the channels),
// which measured faster than gonum's FFT there. The backward pass is the
// product with the conjugate spectrum and the coefficient gradient a
// correlation summed over the batch in the frequency domain.
//
// Training (Trainer: New, Step, Logits) follows package train's GoMLX
// path exactly: GoMLX v0.26's AdamW (β₁ 0.9, β₂ 0.999, ε 1e-7, bias
// correction, decoupled weight decay lr·wd·w on every trainable
// variable), train's warm-up and cosine schedule (ScheduleAt), the random
// features of arch.ModelConfig.FixedVariables and their redraws. Its state
// exports to and imports from the variables of a GoMLX context
// (ExportVariables, ImportVariables: weights, step counters, learning
// rate, Adam's moments under "/AdamOptimizer", the generator state), so
// one checkpoint format (train.Checkpoint) serves both engines; Variable
// converts to and from train.SavedVariable.
//
// Shapes are the caller's responsibility: a layer given slices of the
// wrong length panics (programmer error); sizes that come from flags or
// files are checked by arch.ModelConfig.Validate and package train before a
// model is built.
package native
