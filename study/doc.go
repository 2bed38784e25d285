// Package study is the index of kernelkit's replications: one package per
// paper below it, each holding that paper's studies as library functions
// the command-line tool runs. It has no code of its own.
//
//   - study/hrf: the Hybrid Random Features paper (Choromanski et al.,
//     ICLR 2022): pointwise softmax-kernel estimation by angle (Fig. 2, 5),
//     on data (Table 1), on clustered data (App. H.1) and in softmax
//     sampling (Sec. 4.2). kernelkit estimate.
//   - study/aimc: the analog in-memory computing paper (Büchel et al.,
//     2025): ridge classification (Fig. 2) and FAVOR+ attention (Fig. 3b)
//     with projections on emulated PCM crossbars, and the cost model of
//     Supp. Table VIII. kernelkit analog.
//   - study/performer: the Performer paper's linear-attention error (Fig. 4,
//     as the analog paper's Supp. Note 3 replicates it) and timing, and
//     their comparison on a device. kernelkit attention.
//   - study/ski: the SKI-TNN paper (Moreno et al., 2023): the SKI error
//     bound (Theorem 1), impulse-response decay (Theorems 2–4), operator
//     timing, and their comparison on a device. kernelkit toeplitz.
//   - study/nnkernel: the Scalable Neural Network Kernels paper (Sehanobish
//     et al., ICLR 2024): pointwise URF estimation (Sec. 4.1), bundling
//     (Sec. 3.3) and classification (Sec. 4.2). kernelkit snnk.
//   - study/zoo: the headline comparisons of the papers that introduced
//     simplex random features, OPRF (FAVOR++) and SDERF/ADERF (FAVOR#):
//     every softmax-kernel estimator side by side. kernelkit estimate
//     --study zoo.
//   - study/baseline: the classic baselines — RFF, ORF and SORF and
//     arc-cosine features over D (the analog paper's Supp. Fig. 20), and
//     Nyström landmarks against RFF. kernelkit demo and
//     scripts/compare_nystrom.go.
//
// The packages are named after their papers (hrf, performer, ski) or the
// papers' subjects (aimc, nnkernel), never after the package they measure
// (hybrid, attention, toeplitz, analog, snnk), so a caller imports both
// without aliases.
//
// Every study takes a configuration struct, a context (long studies stop
// early with its error) and, where it reports progress, a callback (nil:
// none), and returns typed rows with JSON tags; the rows' Table, Render
// and Plot methods build the text and PNG renderings of package report.
// Studies are deterministic functions of their configuration and seeds
// (times aside). Errors follow the policy of the whole module: invalid
// configurations, data and sizes return errors; only misuse of shapes by a
// Go caller may panic.
package study
