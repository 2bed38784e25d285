// Package nnkernel replicates the studies of the SNNK paper, "Scalable
// neural network kernels" (Sehanobish, Choromanski, Zhao, Dubey and
// Likhosherstov, ICLR 2024), on the towers and layers of package snnk. An
// SNNK replaces a feedforward layer f(Wx + b) by the dot product of an
// input tower and a parameter tower,
//
//	f(wᵀx + b) ≈ Φ(x)ᵀΨ(w, b),
//
// built from universal random features (URFs, Sec. 3.1) or the ReLU kernel
// (ReLU-SNNK); bundling (Sec. 3.3) folds a whole network into one matrix W̄
// acting on the input tower. The package is named after the paper's
// subject, neural network kernels, so that it does not clash with package
// snnk, the implementation it measures.
//
// The studies:
//
//   - Pointwise: the mean relative error of the URF estimate of
//     sin(wᵀx + 0.5) and of the ReLU-SNNK estimate of ½K₁(x, w) at
//     d = 2000 over the number of random features m, which falls like 1/√m
//     (Sec. 4.1).
//   - Bundle: the relative error of a bundled random two-layer network
//     W̄x̄ against the network itself, over m (Sec. 3.3).
//   - Classify: an MLP baseline against the same MLP with its hidden layer
//     replaced by ReLU-SNNK or cos-SNNK towers, and the fully bundled
//     closed-form model, by test accuracy and trainable parameters
//     (Sec. 4.2, App. J).
//
// kernelkit snnk --study pointwise|bundle|classify runs them.
//
// Each study takes a configuration, a context and a progress callback
// (nil: none) and returns typed rows with JSON tags. The same
// configuration and seeds give the same rows, except the GoMLX-trained
// MLPs of Classify, which are not bit-reproducible (their training runs in
// parallel). Invalid configurations and sizes return errors. Each
// configuration's Memory estimates, from the configuration alone (and the
// sizes of the data sets given), the largest memory its run holds at once
// (limits.Estimate), so that a caller can refuse a run above a memory
// budget before anything is allocated.
package nnkernel
