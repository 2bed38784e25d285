// Package nystrom implements Nyström features, the data-dependent kernel
// approximation that scikit-learn's Nystroem provides, for every kernel of
// package kernel: RBF, softmax, the arc-cosine kernels of order 0, 1 and 2,
// the polynomial kernel and the additive and skewed χ² kernels.
//
// # The map
//
// Given m landmarks L = (l_1, …, l_m) and K_mm = k(L, L), the Nyström map
// (Williams & Seeger, NIPS 2000)
//
//	z(x) = K_mm^(−1/2)·k(x, L) ∈ R^m,   z(x)ᵀz(y) = k(x, L)ᵀK_mm⁻¹k(L, y),
//
// approximates k by its projection onto the span of the landmarks' feature
// vectors in the kernel's Hilbert space. Unlike random features it is
// deterministic given the landmarks and never overestimates: K − ZZᵀ is
// positive semi-definite, and K̂ = K on the landmarks themselves, so with
// every row a landmark the approximation is exact (to rounding). The
// inverse square root comes from the eigendecomposition
// K_mm = U·diag(s)·Uᵀ with eigenvalues below a floor raised to it,
//
//	K_mm^(−1/2) = U·diag(max(s, f)^(−1/2))·Uᵀ,   f = max(Floor, m·ε)·s_max,
//
// which is what scikit-learn computes (by an SVD, with an absolute floor
// of 1e-12): raising a tiny eigenvalue s < f to f changes K̂ by less than
// s in that direction, while 1/√s of a rounding-level s would amplify
// rounding errors. The floor m·ε·s_max is the rounding level of the
// computed eigenvalues.
//
// # Landmarks
//
// Landmarks (Landmarks, Fit) are chosen uniformly (scikit-learn's choice),
// as k-means centres (Zhang, Tsang & Kwok, ICML 2008: the Nyström error is
// bounded by the quantisation error of the landmarks; k-means++ seeding of
// Arthur & Vassilvitskii, SODA 2007, then Lloyd iterations), or by
// approximate ridge leverage scores (Alaoui & Mahoney, NeurIPS 2015;
// Musco & Musco, NeurIPS 2017): rows are sampled without replacement with
// probability proportional to
//
//	l̃_i = (K_ii − K_iS·(K_SS + (s/n)·λ·I)⁻¹·K_Si)/λ
//
// (Musco & Musco's Eq. 3 for a uniform pilot sample S of s rows weighted
// √(n/s)), which estimates the λ-ridge leverage score [K(K + λI)⁻¹]_ii:
// the "two-pass" scheme, one pass for the pilot and one for the scores, a
// single level of Musco & Musco's recursion. λ is their Theorem 3's tail
// average Σ_{i>k} σ_i/k for k = ⌈m/ln m⌉, estimated from the pilot's
// spectrum. Rows far from the bulk of the data (small clusters, outliers)
// have high leverage and are missed by uniform sampling.
//
// Streaming: a Reservoir (Vitter's Algorithm R) keeps a uniform sample of
// given size in one pass (SampleBatches reads a stream of batches into
// one); the landmarks are then chosen from that sample by any method.
// With standardised inputs the sample must be scaled as the fit scales its
// rows (model.Fit and model.FitStream standardise inside the fit, so scale
// the sample with the scaler of the same rows, e.g. data.FitScaler or a
// data.ScalerAccumulator filled in the same pass).
//
// # The feature-map contract
//
// A *Map is a features.Transformer with Dim m, a features.KernelEstimator
// (Kernel returns the exact kernel, so Gram errors work) and a
// features.Encoder: its Spec holds the kernel, the landmarks and the
// normalisation, and package catalog registers Decode for SpecKind, so a
// model file holds a Nyström model like any other. The catalog names are
// "nystrom" (RBF, γ = Options.Gamma), "nystrom/softmax" and
// "nystrom/arccos0", "nystrom/arccos1", "nystrom/arccos2", each with the
// suffix "/kmeans" or "/leverage" for those landmark methods; the
// landmarks are chosen from Options.Data.
//
// Projector seam: k(x, L) is not a projection, but the RBF, softmax,
// arc-cosine and polynomial kernels are functions of the projection xᵀl
// and the norms, so for them WithProjectors computes XLᵀ on a projector
// (W = L), evaluates the kernel from it and the digitally computed norms,
// and multiplies by K_mm^(−1/2) digitally. The χ² kernels are not
// functions of xᵀl and have no projector seam (features.ErrNoProjector).
//
// Cost: choosing the landmarks costs O(n·m·d) (uniform: O(n)), plus
// O(n·s² + s³) for leverage scores and O(iterations·n·m·d) for k-means;
// the map costs O(m³) to build and O(m·d + m²) per row to apply, and holds
// m·d + m² numbers.
package nystrom
