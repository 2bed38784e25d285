// Package seqmodel holds a trained sequence classifier for inference — the
// TNN, SKI-TNN, FD-TNN, Performer, Transformer and HRF models of package
// nn that package train trains — in an inference file, and scores batches
// of sequences with the native engine's forward pass.
//
// # Inference file (version 1)
//
// A file of package train's export (kernelkit export CHECKPOINT --out
// m.kks, kernelkit train --export m.kks; New and Model.WriteFile here) is
// binary, all integers little-endian:
//
//	bytes 0–7     Magic "\x89KKS\r\n\x1a\n" (a non-ASCII byte, the name and
//	              the line ends a text-mode copy would alter)
//	bytes 8–11    the format version, 1
//	bytes 12–15   the header's length H, 2 ≤ H ≤ MaxHeaderBytes
//	H bytes       the header, JSON (Header): format name, the model's kind
//	              and every setting (arch.ModelConfig, defaults applied), the
//	              vocabulary by token id (id 0 is padding), the tokenizer
//	              (split at white space, tokens dropped), the class names,
//	              the maximum length, the run's seed and step, and the
//	              variables that follow with their dimensions
//	4·N bytes     the weights: float32, the variables in the header's order
//	              (arch.ModelConfig.Variables: embeddings, blocks, classifier;
//	              random features included), each row-major
//	32 bytes      the SHA-256 digest of everything before it
//
// Only the weights are kept: no optimiser moments, step counters or
// generator state (a checkpoint holds about three times the values). The
// bytes depend on the model alone, so exporting a checkpoint twice, or
// exporting the trainer that wrote it, gives the same file, and the digest
// (Model.Digest) names the model. Load refuses, in one line, a file that
// does not begin with Magic (naming a ridge model or a checkpoint, which
// are JSON), another version, a header that is not the format's
// (unknown fields included) or does not fit the model it describes (the
// vocabulary's and classes' sizes, the variables and their dimensions), a
// truncated file, one whose digest does not match, weights that are not
// finite, and data after the end. Every size comes from the header, which
// is bounded and validated against the model's settings before the
// weights are read; LoadFile compares the file's size with the header's
// before reading them, and a stream is read in pieces, so a file that
// claims gigabytes and holds kilobytes costs kilobytes.
//
// # Scoring
//
// A Scorer runs native.Predictor, the training engine's forward pass
// (native.Model.Forward itself) without a loss, a backward pass,
// gradients or optimiser state, with two residual-stream buffers instead
// of one per sub-block. Every sequence is padded with id 0 to the model's
// length L and the padding is masked exactly as in training: the
// attention kinds mask padding keys, and mean pooling averages the real
// positions only, z = W·RMSNorm((1/n)·Σ_{t<n} x_t) + b. The TNN kinds'
// Toeplitz mixers see the padding positions, as they did in training, so
// a sequence's logits depend on the length it is padded to: a model reads
// sequences at its own length only, and length buckets (running a batch
// of short sequences at a shorter length) would change them.
//
// Numerics. For the same forward pass — the same sequences in the same
// order — the logits are those of package train's evaluation (Trainer
// Predict and Evaluate, train --evaluate) bit for bit: the same code on
// the same inputs, whose bits the engine keeps fixed on any number of
// cores. A sequence scored in a pass of other sequences, or of another
// size, may differ by float32 rounding where a matrix product or FFT call
// covering its rows sums in another order (OpenBLAS's kernels for a
// product's last rows do): by about e32, the float32 error of the logits,
// max |z32 − z64|/(1 + |z64|) against the same weights in float64, 10⁻⁷
// to 10⁻⁶ for most kinds and 10⁻⁴ for HRF, whose trigonometric features
// cancel. Labels take the first largest logit, as evaluation does, and
// probabilities are the softmax in float64, p_j = exp(z_j − max z)/
// Σ_k exp(z_k − max z).
//
// Memory. A Scorer's forward passes take at most MaxBatch sequences; their
// working memory is estimated before anything is allocated
// (Model.ForwardMemory: arch.ModelConfig.EstimateMemory of the forward
// graph, which bounds the native engine's buffers, measured 2 to 10 times
// below it) and checked against the budget (ScorerOptions.MaxMemory) for
// every replica. Replicas share the weights, read only.
//
// Input. Text is split at runs of Unicode white space, the tokenizer's
// dropped tokens (the parentheses of the LRA ListOps format) removed and
// each remaining token looked up in the vocabulary, as package tasks (and
// so training) reads LRA TSV files: an unknown token is an error, never
// mapped to padding. A sequence must have 1 to L tokens; package train
// cuts longer ones to their first L tokens, which callers may do
// themselves (kernelkit predict does, with a warning) or refuse (kernelkit
// serve answers 400).
package seqmodel
