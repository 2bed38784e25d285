// Package baseline replicates the classic kernel-approximation baselines
// that the papers of kernelkit compare against, as a ridge classifier on
// the features of each map sees them: test accuracy, the relative Gram
// error ‖K − ZZᵀ‖_F/‖K‖_F on held-out rows and the time.
//
//   - Demo: random Fourier features (Rahimi & Recht 2007) with iid,
//     orthogonal (ORF) and structured orthogonal (SORF) projections (Yu et
//     al. 2016) for the RBF kernel exp(−γ‖x − y‖²), the same kernel through
//     positive softmax features, and arc-cosine features of order 0 and 1
//     (Cho & Saul 2009), over the feature count D: the replication the
//     analog paper makes of Liu et al.'s survey in its Supplementary Note 3
//     (Supplementary Fig. 20, there on IJCNN01, here on the letter data by
//     default). kernelkit demo runs it; it is the README's quick start.
//   - Nystrom: Nyström features (Williams & Seeger 2000) with uniform,
//     k-means (Zhang, Tsang & Kwok 2008) and ridge-leverage-score
//     landmarks (Musco & Musco 2017) against RFF of the same dimension, in
//     the setting of scikit-learn's Nystroem (standardised inputs, RBF
//     kernel, ridge classification);
//     scripts/compare_nystrom.go runs it and scripts/compare_nystrom.sh
//     puts it next to scikit-learn.
//
// Each study takes a configuration and a context (Demo also a progress
// callback, nil: none) and returns typed rows with JSON tags; the same
// configuration and seeds give the same rows (the times aside). Invalid
// configurations and sizes return errors. DemoConfig.Memory estimates,
// from the configuration alone, the largest memory the demo holds at once
// (limits.Estimate), so that a caller can refuse a run above a memory
// budget before anything is allocated.
package baseline
