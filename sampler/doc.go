// Package sampler draws the random projection matrices W (m rows of length
// d) on which kernelkit's random feature maps are built.
//
// Every sampler produces rows whose marginal distribution is N(0, I_d), or,
// for the truncated sampler, the documented truncation of it, so that the
// feature maps of package features stay unbiased (Bochner's theorem, Eq. 2 of
// the analog paper; Eq. 4-6 of the HRF paper). They differ in the joint law
// of the rows:
//
//   - Gaussian: iid rows (random Fourier features, RFF).
//   - Orthogonal: orthogonal random features (ORF, Yu et al. 2016): blocks of
//     d exactly orthogonal directions from the QR decomposition of a Gaussian
//     matrix, each row rescaled by an independent χ(d)-distributed norm so
//     that rows are marginally N(0, I_d). Any number of rows: ⌈m/d⌉
//     independent blocks, the last one cut. The QR factor is made unique by
//     a positive diagonal of R, which makes it Haar distributed (Mezzadri,
//     "How to generate random matrices from the classical compact groups",
//     2007), and is computed by Householder reflections in pure Go, not
//     through the BLAS backend.
//   - Structured: structured orthogonal random features (SORF), blocks
//     √n·H D₁ H D₂ H D₃ with H the normalised n×n Walsh-Hadamard matrix,
//     D_i diagonal with random ±1 entries and n the smallest power of two at
//     least d; the input is padded with zeros to length n, so only the first
//     d columns are kept. Each row is then rescaled to an independent χ(d)
//     norm as for ORF: the plain construction gives every row the norm √n,
//     which biases the RBF estimate by several percent at d = 16 (measured:
//     −5.7% at d = 16, −13% at d = 4); with the rescaling the bias is below
//     the Monte Carlo resolution of the tests. The matrix is materialised,
//     so the feature maps use one GEMM regardless of sampler.
//   - Truncated: iid N(0,1) entries conditioned on |w| ≤ K (Supplementary
//     Table I of the analog paper, K = 3, which keeps conductances bounded
//     on analog hardware). The entries' variance is then
//     1 − 2Kφ(K)/(2Φ(K)−1) < 1, so the kernel estimated is slightly
//     different from the Gaussian one; TruncatedVariance gives it.
//   - Halton: randomised quasi-Monte Carlo: the Halton sequence on the first
//     d primes, randomised by a uniform random shift modulo 1
//     (Cranley-Patterson rotation) and a random start index, mapped through
//     the normal quantile function. Each row is marginally N(0, I_d).
//     gonum's stat/samplemv.Halton is not used: it randomises by Owen's
//     digit permutations instead (another distribution of point sets, so
//     other projections for the same seed), supports at most 1000
//     dimensions (this one 10000) and always starts at index 0.
//
// All samplers take an explicit seed; the generator is math/rand/v2's PCG
// (package internal/rng). No sampler calls the BLAS implementation
// installed in gonum's blas64 (package blas may install OpenBLAS), so a
// seed gives the same matrix, bit for bit, with every backend, and on
// every machine of the same architecture. (On architectures where the Go
// compiler fuses multiply-adds, such as arm64, the last bits of the
// orthogonal and Halton samplers may differ from amd64.)
//
// Sizes are checked before anything is allocated: d must lie in
// 1…limits.MaxDim (2²⁴) and the m×d matrix, and for ORF the d×d block, must
// hold at most limits.MaxElements (2³⁰) values; larger or overflowing sizes
// give an error that states the memory they would need.
package sampler
