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
// partial sums are merged in chunk order, so the same seed gives the same
// bytes whatever the scheduling.
//
// Shapes are the caller's responsibility: a layer given slices of the
// wrong length panics (programmer error); sizes that come from flags or
// files are checked by nn.ModelConfig.Validate and package train before a
// model is built.
package native
