// Package linear fits ridge regression and ridge classification on feature
// matrices, in closed form and in one pass over the rows.
//
// A fit only needs the sufficient statistics of the rows (z_i, y_i):
//
//	ZᵀZ (D×D), Zᵀy (D×K), Σz (D), Σy (K), Σy² (K) and the row count n,
//
// which Stats accumulates chunk by chunk (Add) and combines across workers
// or machines (Merge): memory does not grow with the number of rows, and a
// distributed fit is a reduction of Stats values. With an intercept the
// statistics are centred, C = ZᵀZ − n·z̄z̄ᵀ and c = Zᵀy − n·z̄ȳᵀ, and the
// weights solve
//
//	(C + λI) w = c,  b = ȳ − z̄ᵀw,
//
// by Cholesky factorisation when λ > 0. This is
// kernel ridge regression in the primal, on the random features of Eq. 2 of
// the analog paper; classification regresses one-hot targets and predicts
// the argmax, as scikit-learn's RidgeClassifier does (targets ±1).
//
// # Sample weights
//
// Weighted ridge, min Σ w_i‖y_i − Wᵀz_i − b‖² + λ‖W‖², needs the same
// statistics with every row counted w_i times — ZᵀWZ, ZᵀWY, Σw_i z_i,
// Σw_i y_i, Σw_i y_i² and Σw_i in place of n (Stats.AddWeighted, Stats.SumW)
// — and the solve above with the weighted means z̄ = Σw_i z_i/Σw_i,
// ȳ = Σw_i y_i/Σw_i (scikit-learn's Ridge with sample_weight). AddWeighted
// scales each row by √w_i and runs the BLAS calls of Add, so that
// ZᵀWZ = (W^½Z)ᵀ(W^½Z) is a SYRK; a row of weight zero is left out, as if
// it were not there, and integer weights equal repeated rows to rounding
// (tested to 1e-10 for the statistics, the fitted weights and GCV).
//
// # λ = 0 and singular systems
//
// With λ = 0 Fit returns the minimum-norm least-squares solution,
// w = C⁺c, the solution that numpy's lstsq and scikit-learn's
// Ridge(alpha=0) return, also when C is singular (more features than rows,
// duplicated or constant features). It is computed from the statistics by
// the eigendecomposition C = V S Vᵀ (gonum's mat.EigenSym):
//
//	w = Σ_i v_i (v_iᵀc) / s_i   over the eigenvalues s_i > ε·max(D, 16)·s_max,
//
// ε = 2⁻⁵² the float64 machine epsilon; eigenvalues at or below the cutoff
// are treated as zero. The cutoff is the rounding level of the computed
// eigenvalues of C = ZᵀZ: the eigensolver's backward error is p(D)·ε·s_max
// with p growing modestly with D and a constant factor that dominates for
// small D (a feature duplicated among four leaves a null eigenvalue of
// 0.9·ε·s_max with OpenBLAS's Zen kernels, and other CPUs' kernels round
// differently), hence the floor of 16, 18 times that. The cutoff
// corresponds to dropping singular values of the centred feature matrix
// below √(ε·max(D, 16))·σ_max, where lstsq drops those below
// ε·max(n, D)·σ_max: the two agree wherever the normal equations can
// resolve the problem at all, and differ only for features that are
// linearly dependent to within about 10⁻⁷ relative, which statistics of
// the form ZᵀZ cannot tell from exactly dependent ones. When C is well
// conditioned (condition number estimate ≤ 10⁸), C⁺ = C⁻¹ and the λ = 0
// fit uses the Cholesky factorisation, which gives the same solution to
// rounding at a small fraction of the cost. For λ > 0 a Cholesky factorisation that
// fails or reports a near-singular system falls back to the same
// eigendecomposition with s_i + λ in place of s_i. No jitter is added;
// Model.Jitter is always 0.
//
// # Speed and reproducibility
//
// The statistics, n·D²/2 multiply-adds, are the cost of a fit. Add computes
// each chunk's ZᵀZ as square tiles of one BLAS call each (a SYRK on the
// diagonal, a GEMM elsewhere), handed to all cores as they become free;
// AddFloat32 does the same in single precision, at about twice the rate,
// adding each tile into the float64 statistics. AddSerial and
// AddFloat32Serial make the whole of ZᵀZ one call on the calling
// goroutine, the BLAS's best rate on one core, for callers that fill
// several Stats at once (package model fills two, one chunk each, and adds
// them up at the end). The Cholesky
// factorisation is LAPACK's blocked right-looking algorithm with its
// panel solves and trailing updates split into tiles the same way, and
// its diagonal blocks factored by lapack64.Potrf (OpenBLAS's dpotrf when
// package blas has installed it). Tiles are fixed by D alone, so every
// entry is computed by the same call on any number of cores: the same
// rows give the same bits on one core or many. Only the BLAS backend
// changes the rounding.
//
// λ can be chosen from a grid by generalised cross-validation, computed from
// the eigendecomposition of C in O(D³ + |grid|·D·K), or by k-fold
// cross-validation, whose fold statistics are differences of Stats values,
// so neither needs a second pass over the data.
package linear
